/* test_profile.c — the profile model (interning, prefix tree, aggregation), frame labels, and the folded
 * writer's order (hottest first, ties by stack text). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "profile/label.h"
#include "profile/profile.h"

static uint32_t user_frame(struct profile *p, const char *func, const char *file, uint32_t line, const char *module)
{
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, func);
	f.file = profile_intern_cstr(p, file);
	f.module = profile_intern_cstr(p, module);
	f.line = line;
	return profile_frame(p, &f);
}

static void test_profile__interning(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	assert_non_null(p);
	str_id a = profile_intern_cstr(p, "burn");
	str_id b = profile_intern_cstr(p, "burn");
	str_id c = profile_intern_cstr(p, "path_a");
	assert_int_equal(a, b);
	assert_int_not_equal(a, c);
	assert_string_equal(profile_str(p, c), "path_a");
	assert_int_equal(profile_intern_cstr(p, ""), 0);
	/* many strings keep their ids and text */
	char buf[32];
	for (int i = 0; i < 100000; i++) {
		snprintf(buf, sizeof buf, "s%d", i);
		profile_intern_cstr(p, buf);
	}
	assert_string_equal(profile_str(p, a), "burn");
	assert_int_equal(profile_intern_cstr(p, "s77777"), profile_intern_cstr(p, "s77777"));
	assert_string_equal(profile_str(p, profile_intern_cstr(p, "s77777")), "s77777");
	/* a string past PROFILE_STR_MAX is its first PROFILE_STR_MAX bytes, cut at a character, and "..." (§4.1) */
	size_t big = 3 * PROFILE_STR_MAX;
	char *huge = malloc(big + 1);
	assert_non_null(huge);
	huge[0] = 'x'; /* one ASCII byte, then "é" over and over: PROFILE_STR_MAX (even) falls inside a character */
	for (size_t i = 1; i + 1 < big; i += 2) {
		huge[i] = (char)0xc3;
		huge[i + 1] = (char)0xa9;
	}
	huge[big - 1] = 'x';
	huge[big] = '\0';
	const char *s = profile_str(p, profile_intern(p, huge, big));
	size_t n = strlen(s);
	assert_int_equal(n, PROFILE_STR_MAX - 1 + strlen(PROFILE_STR_CUT)); /* the split "é" is left out whole */
	assert_memory_equal(s + n - 3, "...", 3);
	assert_memory_equal(s, huge, n - 3);
	assert_int_equal((unsigned char)s[n - 4], 0xa9); /* the last kept byte ends a character */
	free(huge);
	profile_free(p);
}

static void test_profile__aggregation_is_bounded_by_distinct_stacks(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	uint32_t fm = user_frame(p, "main", "/src/app/main.c", 10, "/bin/app");
	uint32_t fa = user_frame(p, "path_a", "/src/app/main.c", 20, "/bin/app");
	uint32_t fb = user_frame(p, "burn", "/src/app/burn.c", 5, "/bin/app");
	uint32_t t1 = profile_thread(p, 100, 100, "app");
	uint32_t t2 = profile_thread(p, 100, 101, "worker");
	uint32_t s1[] = { fm, fa, fb };
	uint32_t s2[] = { fm, fb };
	for (int i = 0; i < 100000; i++) {
		uint32_t st = profile_stack_from(p, (i % 3) ? s1 : s2, (i % 3) ? 3 : 2);
		assert_true(profile_add_sample(p, st, (i % 2) ? t1 : t2, (uint64_t)i, 1));
	}
	size_t n;
	const struct profile_count *c = profile_counts(p, &n);
	assert_int_equal(n, 4); /* 2 stacks x 2 threads, however many samples */
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += c[i].weight;
	assert_int_equal(total, 100000);
	assert_int_equal(profile_total_weight(p), 100000);
	assert_int_equal(profile_nstacks(p), 5); /* root, main, main;path_a, main;path_a;burn, main;burn */
	size_t nt;
	profile_timeline(p, &nt);
	assert_int_equal(nt, 0); /* no timeline unless asked for */
	uint32_t leaf = profile_stack_from(p, s1, 3);
	assert_int_equal(profile_stack_depth(p, leaf), 3);
	assert_int_equal(profile_stack_frame(p, leaf), fb);
	assert_int_equal(profile_stack_frame(p, profile_stack_parent(p, leaf)), fa);
	profile_free(p);
}

static void test_profile__timeline_when_asked(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	profile_keep_timeline(p, true);
	uint32_t f = user_frame(p, "f", "", 0, "");
	uint32_t t = profile_thread(p, 1, 1, "");
	uint32_t s = profile_stack_from(p, &f, 1);
	profile_add_sample(p, s, t, 5, 1);
	profile_add_sample(p, s, t, 9, 2);
	size_t n;
	const struct profile_sample *tl = profile_timeline(p, &n);
	assert_int_equal(n, 2);
	assert_int_equal(tl[1].time_ns, 9);
	assert_int_equal(tl[1].weight, 2);
	profile_free(p);
}

static void test_profile__spread_samples(void **state)
{
	(void)state;
	/* weights in nanoseconds over 7 samples: shared by weight, exactly 7 in all, each within one of its share */
	struct profile *p = profile_new();
	uint32_t f[3] = { user_frame(p, "a", "", 0, ""), user_frame(p, "b", "", 0, ""), user_frame(p, "c", "", 0, "") };
	uint32_t t = profile_thread(p, 1, 1, "");
	uint64_t w[3] = { 3000, 2500, 1500 };
	for (int i = 0; i < 3; i++)
		assert_true(profile_add_weighted(p, profile_stack_from(p, &f[i], 1), t, 0, w[i], w[i]));
	profile_spread_samples(p, 7);
	size_t n;
	const struct profile_count *c = profile_counts(p, &n);
	assert_int_equal(n, 3);
	assert_int_equal(c[0].samples + c[1].samples + c[2].samples, 7);
	assert_int_equal(c[0].samples, 3);
	assert_true(c[1].samples >= 2 && c[1].samples <= 3 && c[2].samples >= 1 && c[2].samples <= 2);
	assert_int_equal(profile_total_samples(p), 7);
	assert_int_equal(profile_total_weight(p), 7000);
	profile_free(p);
}

static char *label_of(struct profile *p, uint32_t frame, unsigned flags)
{
	struct sbuf sb = SBUF_INIT;
	label_append(&sb, p, frame, flags);
	return sbuf_detach(&sb, NULL);
}

static void test_profile__labels(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	static const struct {
		const char *func, *file, *module;
		uint32_t line;
		uint8_t kind;
		unsigned flags;
		const char *want;
	} cases[] = {
		{ "burn", "/work/main/tests/targets/split.c", "/bin/split", 42, FRAME_USER, 0, "burn (targets/split.c:42)" },
		{ "burn", "/work/main/tests/targets/split.c", "/bin/split", 42, FRAME_USER, LABEL_NO_LINES,
		  "burn (targets/split.c)" },
		{ "main", "main.c", "/bin/x", 3, FRAME_USER, 0, "main (main.c:3)" },
		{ "memcpy", "", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0, FRAME_USER, 0, "memcpy (libc.so.6)" },
		{ "", "", "/usr/lib/libfoo.so.1", 0, FRAME_USER, 0, "[unknown] (libfoo.so.1)" },
		{ "schedule", "", "", 0, FRAME_KERNEL, 0, "schedule_[k]" },
		{ "LazyCompile:foo", "", "", 0, FRAME_JIT, 0, "LazyCompile:foo_[j]" },
		{ "f", "/a.c", "", 7, FRAME_USER, 0, "f (a.c:7)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct frame f = { 0 };
		f.func = profile_intern_cstr(p, cases[i].func);
		f.file = profile_intern_cstr(p, cases[i].file);
		f.module = profile_intern_cstr(p, cases[i].module);
		f.line = cases[i].line;
		f.kind = cases[i].kind;
		char *l = label_of(p, profile_frame(p, &f), cases[i].flags);
		assert_string_equal(l, cases[i].want);
		free(l);
	}
	assert_string_equal(label_short_path("/usr/src/a/b/c.c"), "b/c.c");
	assert_string_equal(label_short_path("c.c"), "c.c");
	profile_free(p);
}

static void test_profile__folded_order_and_merge(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	uint32_t fm = user_frame(p, "main", "m.c", 1, "");
	uint32_t fx = user_frame(p, "x", "m.c", 2, "");
	uint32_t fy = user_frame(p, "y", "m.c", 3, "");
	/* a second frame with the same label (another address) must merge into one line */
	struct frame fy2 = *profile_frame_get(p, fy);
	fy2.addr = 0x1234;
	uint32_t fy_other = profile_frame(p, &fy2);
	uint32_t t = profile_thread(p, 1, 1, "t");
	uint32_t t2 = profile_thread(p, 1, 2, "t2");
	uint32_t sx[] = { fm, fx }, sy[] = { fm, fy }, sy2[] = { fm, fy_other };
	profile_add_sample(p, profile_stack_from(p, sx, 2), t, 0, 5);
	profile_add_sample(p, profile_stack_from(p, sy, 2), t, 0, 3);
	profile_add_sample(p, profile_stack_from(p, sy2, 2), t2, 0, 2);
	profile_add_sample(p, profile_stack_from(p, &fm, 1), t, 0, 5);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct fmt_write_opts wo = { 0 };
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_folded_write(p, out, &wo, &e), PLUMB_OK);
	fclose(out);
	/* 5 and 5 tie: broken by text; y merged to 5 as well */
	assert_string_equal(buf, "main (m.c:1) 5\n"
				 "main (m.c:1);x (m.c:2) 5\n"
				 "main (m.c:1);y (m.c:3) 5\n");
	free(buf);
	/* with --threads, a root frame per thread */
	out = open_memstream(&buf, &len);
	wo.threads = true;
	assert_int_equal(fmt_folded_write(p, out, &wo, &e), PLUMB_OK);
	fclose(out);
	assert_non_null(strstr(buf, "t2 (2);main (m.c:1);y (m.c:3) 2\n"));
	free(buf);
	profile_free(p);
}

static uint32_t name_frame(struct profile *p, const char *label)
{
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, label);
	return profile_frame(p, &f);
}

/* Ties are broken in byte order of the whole text, which is not the order of the frames one by one: "b" < "b!" <
 * "b0" < "b;X" < "ba". A label holding ';' prints like two frames and merges with them. */
static void test_profile__folded_ties_in_byte_order(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	uint32_t t = profile_thread(p, 1, 1, "t");
	const char *stacks[][2] = { { "ba", NULL }, { "b", "X" }, { "b0", NULL }, { "a;b", NULL },
				    { "b!", NULL }, { "a", "b" }, { "b", NULL } };
	for (size_t i = 0; i < sizeof stacks / sizeof stacks[0]; i++) {
		uint32_t fr[2];
		size_t n = 0;
		for (size_t k = 0; k < 2 && stacks[i][k]; k++)
			fr[n++] = name_frame(p, stacks[i][k]);
		profile_add_sample(p, profile_stack_from(p, fr, n), t, 0, 1);
	}
	for (int threads = 0; threads < 2; threads++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		struct fmt_write_opts wo = { 0 };
		wo.threads = threads;
		struct perr e = PERR_INIT;
		assert_int_equal(fmt_folded_write(p, out, &wo, &e), PLUMB_OK);
		fclose(out);
		assert_string_equal(buf, threads ? "t (1);a;b 2\nt (1);b 1\nt (1);b! 1\nt (1);b0 1\nt (1);b;X 1\nt (1);ba 1\n"
						 : "a;b 2\nb 1\nb! 1\nb0 1\nb;X 1\nba 1\n");
		free(buf);
	}
	profile_free(p);
}

static void test_profile__folded_roundtrip(void **state)
{
	(void)state;
	const char *in = "a;b;c 10\n# comment\n\na;b 3\na;b;c 2\nk;sched_[k] 1\n";
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_read_buf(in, strlen(in), FMT_UNKNOWN, NULL, &p, &e), PLUMB_OK);
	assert_int_equal(profile_total_weight(p), 16);
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct fmt_write_opts wo = { 0 };
	assert_int_equal(fmt_folded_write(p, out, &wo, &e), PLUMB_OK);
	fclose(out);
	assert_string_equal(buf, "a;b;c 12\na;b 3\nk;sched_[k] 1\n");
	free(buf);
	profile_free(p);
	const char *bad = "a;b;c 10\nno count here\n";
	assert_int_equal(fmt_read_buf(bad, strlen(bad), FMT_FOLDED, NULL, &p, &e), PLUMB_EFORMAT);
	assert_non_null(strstr(e.msg, "line 2"));
}

/* Value columns (an allocation profile's): kept per (stack, thread) beside the weight, written as pprof sample
 * types, and one of them made the weight by name or index. */
static void test_profile__value_columns(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	const char *names[] = { "alloc_space", "inuse_space" }, *units[] = { "bytes", "bytes" };
	assert_true(profile_set_values(p, 2, names, units, 4096));
	assert_false(profile_set_values(p, 2, names, units, 4096)); /* once */
	uint32_t a = profile_stack(p, PROFILE_ROOT, user_frame(p, "a", "", 0, "m"));
	uint32_t b = profile_stack(p, PROFILE_ROOT, user_frame(p, "b", "", 0, "m"));
	uint32_t t = profile_thread(p, 1, 1, "t");
	assert_true(profile_add_weighted(p, a, t, 0, 300, 1));
	assert_true(profile_add_values(p, a, t, (const uint64_t[]){ 300, 0 }));
	assert_true(profile_add_values(p, a, t, (const uint64_t[]){ 100, 100 }));
	assert_true(profile_add_values(p, b, t, (const uint64_t[]){ 50, 50 })); /* makes its count, weight 0 */
	size_t n;
	const struct profile_count *c = profile_counts(p, &n);
	assert_int_equal(n, 2);
	assert_int_equal(profile_count_values(p, 0)[0], 400);
	assert_int_equal(profile_count_values(p, 0)[1], 100);
	assert_int_equal(c[1].weight, 0);
	assert_int_equal(profile_values_period(p), 4096);
	assert_string_equal(profile_value_name(p, 1), "inuse_space");
	assert_false(profile_use_value(p, "peak_space"));
	assert_true(profile_use_value(p, "inuse_space"));
	c = profile_counts(p, &n);
	assert_int_equal(c[0].weight, 100);
	assert_int_equal(c[1].weight, 50);
	assert_int_equal(profile_total_weight(p), 150);
	assert_string_equal(profile_str(p, profile_meta(p)->weight_unit), "bytes");
	assert_true(profile_use_value(p, "0"));
	assert_int_equal(profile_total_weight(p), 450);
	profile_free(p);
}

/* Mappings: one per (start, path, pid) however often added, the program's preferred for its module, a frame's
 * address in the process through its module's bias, copied with their strings; the timeline in time order
 * (ties in insertion order); a worker thread's process named for its main thread, else for the command. */
static void test_profile__mappings_order_and_process_names(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	assert_non_null(p);
	str_id exe = profile_intern_cstr(p, "/bin/prog"), libc = profile_intern_cstr(p, "/lib/libc.so.6");
	struct profile_mapping a = { .start = 0x7f0000001000, .limit = 0x7f0000009000, .offset = 0x1000,
				     .bias = 0x7f0000000000, .path = libc, .pid = 7, .has_bias = 1 };
	struct profile_mapping b = { .start = 0x555500001000, .limit = 0x555500002000, .offset = 0x1000,
				     .bias = 0x555500000000, .path = exe, .pid = 7, .has_bias = 1 };
	struct profile_mapping b2 = b;
	b2.pid = 8; /* a child's copy at another address: the program's own stays the one */
	b2.start += 0x10000;
	b2.limit += 0x10000;
	b2.bias += 0x10000;
	assert_int_equal(profile_add_mapping(p, &a), 0);
	assert_int_equal(profile_add_mapping(p, &b2), 1);
	assert_int_equal(profile_add_mapping(p, &b), 2);
	b.main = 1;
	b.build_id = profile_intern_cstr(p, "abcd");
	assert_int_equal(profile_add_mapping(p, &b), 2); /* the same mapping: its mark and build ID merged */
	size_t n;
	const struct profile_mapping *m = profile_mappings(p, &n);
	assert_int_equal(n, 3);
	assert_true(m[2].main);
	assert_string_equal(profile_str(p, m[2].build_id), "abcd");
	assert_ptr_equal(profile_mapping_of(p, exe), &m[2]);
	assert_ptr_equal(profile_mapping_of(p, libc), &m[0]);
	struct frame f = { .module = exe, .addr = 0x1234, .kind = FRAME_USER };
	uint64_t addr;
	assert_true(profile_mapping_addr(p, &f, &addr));
	assert_int_equal(addr, 0x555500001234);
	f.kind = FRAME_KERNEL;
	assert_false(profile_mapping_addr(p, &f, &addr));
	struct profile *q = profile_new();
	assert_true(profile_mappings_copy(q, p));
	const struct profile_mapping *qm = profile_mappings(q, &n);
	assert_int_equal(n, 3);
	assert_string_equal(profile_str(q, qm[2].path), "/bin/prog");
	assert_string_equal(profile_str(q, qm[2].build_id), "abcd");
	assert_true(qm[2].main);
	profile_free(q);

	profile_keep_timeline(p, true);
	uint32_t main_t = profile_thread(p, 7, 7, "prog"), worker = profile_thread(p, 7, 9, "worker");
	uint32_t other = profile_thread(p, 12, 13, "lonely");
	uint32_t st = profile_stack(p, PROFILE_ROOT, profile_frame(p, &(struct frame){ .func = exe }));
	static const uint64_t times[] = { 30, 10, 20, 10 };
	for (size_t i = 0; i < 4; i++)
		assert_true(profile_add_sample(p, st, i == 3 ? main_t : worker, times[i], 1));
	size_t *order = profile_timeline_order(p, &n);
	assert_non_null(order);
	assert_int_equal(n, 4);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 3);
	assert_int_equal(order[2], 2);
	assert_int_equal(order[3], 0);
	free(order);
	assert_string_equal(profile_process_name(p, worker), "prog");
	profile_meta(p)->command = profile_intern_cstr(p, "/usr/bin/lonelyprog --flag");
	assert_string_equal(profile_process_name(p, other), "lonelyprog");
	assert_true(profile_thread_set_process(p, other, "named", 5));
	assert_string_equal(profile_process_name(p, other), "named");
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile__interning),
		cmocka_unit_test(test_profile__aggregation_is_bounded_by_distinct_stacks),
		cmocka_unit_test(test_profile__timeline_when_asked),
		cmocka_unit_test(test_profile__spread_samples),
		cmocka_unit_test(test_profile__labels),
		cmocka_unit_test(test_profile__folded_order_and_merge),
		cmocka_unit_test(test_profile__folded_ties_in_byte_order),
		cmocka_unit_test(test_profile__folded_roundtrip),
		cmocka_unit_test(test_profile__value_columns),
		cmocka_unit_test(test_profile__mappings_order_and_process_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
