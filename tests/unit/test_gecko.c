/* test_gecko.c — the Firefox Profiler reader on small hand-made documents with known answers: key order,
 * shared tables with prefixOffset and timeDeltas, string escapes, number forms, weights, null stacks, and the
 * errors (byte offset and schema path) on malformed input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "format/format.h"
#include "profile/label.h"
#include "profile/profile.h"

#include "fmt_unit.h"

static struct profile *read_doc(const char *doc, bool timeline, enum plumb_err want, struct perr *e)
{
	return unit_read_doc(doc, FMT_GECKO, timeline, want, e);
}

/* v66 layout, keys in reverse order, shared tables after the threads. */
static const char v66[] =
	"{\"threads\": [{\"tid\": \"12\", \"samples\": {\"weight\": [1, 2.0, 1e0, 3], \"stack\": [2, null, 1, 2],"
	" \"timeDeltas\": [0.5, 1, 1.5E0, -0.0], \"weightType\": \"samples\"}, \"pid\": 3, \"name\": \"w\\u00e9\\ud83d\\ude00\"}],"
	" \"shared\": {\"stringArray\": [\"ma\\\"in\", \"le\\/af\", \"lib\", \"src/x.c\"],"
	"  \"stackTable\": {\"prefixOffset\": [0, 1, 1], \"frame\": [0, 1, 2], \"length\": 3},"
	"  \"frameTable\": {\"line\": [null, 4, null], \"func\": [0, 1, 1], \"address\": [-1, 16, 32],"
	"   \"inlineDepth\": [0, 0, 1]},"
	"  \"funcTable\": {\"source\": [null, 0], \"name\": [0, 1], \"resource\": [-1, 0]},"
	"  \"sources\": {\"filename\": [3], \"length\": 1},"
	"  \"resourceTable\": {\"name\": [2], \"lib\": [0]}},"
	" \"libs\": [{\"path\": \"/usr/lib/libx.so\", \"name\": \"libx.so\"}],"
	" \"meta\": {\"interval\": 1, \"preprocessedProfileVersion\": 66}}";

static void test_gecko__v66_shared_tables_any_key_order(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(v66, true, PLUMB_OK, &e);
	assert_non_null(p);
	assert_int_equal(profile_total_weight(p), 1 + 3 + 1); /* the null stack is not a sample */
	const struct profile_thread *t = profile_thread_get(p, 0);
	assert_int_equal(t->tid, 12);
	assert_int_equal(t->pid, 3);
	assert_string_equal(profile_str(p, t->name), "w\xc3\xa9\xf0\x9f\x98\x80");
	char *text = unit_folded(p);
	/* prefixOffset: stack 2's prefix is 2 - 1 = 1, stack 1's is 0, stack 0 has none */
	/* frame 2 has an inline depth: an inlined frame, marked _[i] */
	assert_string_equal(text, "ma\"in;le/af (src/x.c:4);le/af (src/x.c)_[i] 4\nma\"in;le/af (src/x.c:4) 1\n");
	free(text);
	size_t n;
	const struct profile_sample *tl = profile_timeline(p, &n);
	assert_int_equal(n, 3);
	assert_int_equal(tl[0].time_ns, 500000);   /* 0.5 ms */
	assert_int_equal(tl[1].time_ns, 3000000);  /* 0.5 + 1 + 1.5 */
	assert_int_equal(tl[2].time_ns, 3000000);
	assert_int_equal(tl[0].weight, 1);
	assert_int_equal(tl[2].weight, 3);
	profile_free(p);
}

static void test_gecko__v49_per_thread_tables(void **state)
{
	(void)state;
	const char *doc =
		"{\"meta\": {\"preprocessedProfileVersion\": 49}, \"libs\": [],"
		" \"threads\": [{\"name\": \"a\", \"tid\": 1, \"pid\": 1, \"stringArray\": [\"f\", \"g\"],"
		"  \"stackTable\": {\"prefix\": [null, 0, 1], \"frame\": [0, 1, 1]},"
		"  \"frameTable\": {\"func\": [0, 1], \"address\": [1, 2]},"
		"  \"funcTable\": {\"name\": [0, 1], \"resource\": [null, null], \"fileName\": [null, 0]},"
		"  \"resourceTable\": {\"lib\": [], \"name\": []},"
		"  \"samples\": {\"stack\": [2, 2, 0], \"time\": [1.0, 2.0, 3.0], \"weight\": null}}]}";
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(doc, false, PLUMB_OK, &e);
	char *text = unit_folded(p);
	assert_string_equal(text, "f;g (f);g (f) 2\nf 1\n");
	free(text);
	assert_false(profile_has_timeline(p));
	profile_free(p);
}

static void test_gecko__number_forms_agree_with_strtod(void **state)
{
	(void)state;
	static const char *const times[] = { "0.1",	"123456789.123456", "1.5E0",	   "1e-3",     "1234567890.1234567",
					     "0.000001", "9999999999.99999", "7",		     "12.50",	   "3.14159265358979", "0.0",
					     "2e2",	"1234567.1234567",  "10.000000001" };
	size_t n = sizeof times / sizeof times[0];
	struct sbuf doc = SBUF_INIT;
	sbuf_addstr(&doc, "{\"meta\": {\"preprocessedProfileVersion\": 49}, \"threads\": [{\"stringArray\": [\"f\"],"
			  " \"stackTable\": {\"prefix\": [null], \"frame\": [0]}, \"frameTable\": {\"func\": [0]},"
			  " \"funcTable\": {\"name\": [0]}, \"samples\": {\"stack\": [");
	for (size_t i = 0; i < n; i++)
		sbuf_addstr(&doc, i ? ", 0" : "0");
	sbuf_addstr(&doc, "], \"time\": [");
	for (size_t i = 0; i < n; i++)
		sbuf_addf(&doc, "%s%s", i ? ", " : "", times[i]);
	sbuf_addstr(&doc, "]}}]}");
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(doc.buf, true, PLUMB_OK, &e);
	size_t nt;
	const struct profile_sample *tl = profile_timeline(p, &nt);
	assert_int_equal(nt, n);
	for (size_t i = 0; i < n; i++) {
		uint64_t want = (uint64_t)llround(strtod(times[i], NULL) * 1e6);
		if (tl[i].time_ns != want)
			fail_msg("%s ms read as %llu ns, not %llu", times[i], (unsigned long long)tl[i].time_ns,
				 (unsigned long long)want);
	}
	profile_free(p);
	sbuf_release(&doc);
}

/* Every string empty: the string text buffer is never allocated (UBSan found pointer arithmetic on NULL). */
static void test_gecko__only_empty_strings(void **state)
{
	(void)state;
	const char *doc = "{\"meta\": {\"preprocessedProfileVersion\": 49}, \"threads\": [{\"stringArray\": [\"\"],"
			  " \"stackTable\": {\"prefix\": [null], \"frame\": [0]}, \"frameTable\": {\"func\": [0]},"
			  " \"funcTable\": {\"name\": [0], \"fileName\": [0]}, \"samples\": {\"stack\": [0, 0]}}]}";
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(doc, false, PLUMB_OK, &e);
	assert_int_equal(profile_total_weight(p), 2);
	profile_free(p);
}

static void test_gecko__malformed_says_where(void **state)
{
	(void)state;
	static const struct {
		const char *doc, *where;
	} cases[] = {
		{ "{\"meta\": {\"preprocessedProfileVersion\": 49}, \"threads\": [{\"samples\": {\"stack\": [1,, 2]}}]}",
		  "byte 82 in threads[0].samples" },
		{ "{\"meta\": {\"preprocessedProfileVersion\": 49}, \"threads\": [", "unexpected end of input" },
		{ "{\"meta\": {\"preprocessedProfileVersion\": 49}} x", "trailing data" },
		{ "{\"meta\": {\"preprocessedProfileVersion\": 70}, \"threads\": []}", "version 70" },
		{ "{\"meta\": {}, \"threads\": []}", "preprocessedProfileVersion" },
		{ "{\"meta\": {\"preprocessedProfileVersion\": 49}, \"threads\": [{\"stringArray\": [\"\\x\"]}]}",
		  "bad escape" },
		{ "{\"meta\": {\"preprocessedProfileVersion\": 49}, \"threads\": [{\"stringArray\": [],"
		  " \"stackTable\": {\"prefix\": [null], \"frame\": [0]}, \"frameTable\": {\"func\": [0]},"
		  " \"funcTable\": {\"name\": [0]}, \"samples\": {\"stack\": [0]}}]}",
		  "funcTable.name[0]" },
		{ "{\"meta\": {\"preprocessedProfileVersion\": 49}, \"threads\": [{\"stringArray\": [\"f\"],"
		  " \"stackTable\": {\"prefix\": [0], \"frame\": [0]}, \"frameTable\": {\"func\": [0]},"
		  " \"funcTable\": {\"name\": [0]}, \"samples\": {\"stack\": [0]}}]}",
		  "not an earlier row" },
		{ "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
		  "expected an object" },
		{ "{\"meta\": {\"preprocessedProfileVersion\": 49}, \"threads\": [{\"samples\": {\"stack\": [01]}}]}",
		  "expected ',' or ']'" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct perr e = PERR_INIT;
		struct profile *p = read_doc(cases[i].doc, false, PLUMB_EFORMAT, &e);
		assert_null(p);
		if (!strstr(e.msg, cases[i].where))
			fail_msg("case %zu: '%s' does not say '%s'", i, e.msg, cases[i].where);
	}
	/* deep nesting in skipped values is refused, not a stack overflow */
	size_t depth = 100000;
	char *deep = malloc(depth * 2 + 100);
	strcpy(deep, "{\"meta\": {\"preprocessedProfileVersion\": 49}, \"x\": ");
	size_t len = strlen(deep);
	memset(deep + len, '[', depth);
	memset(deep + len + depth, ']', depth);
	strcpy(deep + len + 2 * depth, "}");
	struct perr e = PERR_INIT;
	assert_null(read_doc(deep, false, PLUMB_EFORMAT, &e));
	assert_non_null(strstr(e.msg, "nested too deeply"));
	free(deep);
}

/* The writer puts each thread's samples in time order whatever order they were added in (per-CPU rings drain
 * out of order; the profiler takes a thread's range from its first and last sample), names the process for its
 * main thread, and states the profile's range; read back, the times are in order. */
static void test_gecko__writer_orders_samples_and_names_the_process(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	profile_keep_timeline(p, true);
	uint32_t main_t = profile_thread(p, 5, 5, "prog"), worker = profile_thread(p, 5, 6, "worker");
	struct frame f = { .func = profile_intern_cstr(p, "spin") };
	uint32_t st = profile_stack(p, PROFILE_ROOT, profile_frame(p, &f));
	static const uint64_t ms[] = { 90, 10, 50, 30, 70 };
	for (size_t i = 0; i < 5; i++)
		assert_true(profile_add_sample(p, st, i == 2 ? main_t : worker, ms[i] * 1000000, 1));
	profile_meta(p)->interval_ns = 1000000;
	char *text = unit_written(p, fmt_gecko_write);
	struct perr e = PERR_INIT;
	assert_non_null(strstr(text, "\"name\":\"worker\",\"processName\":\"prog\""));
	const char *range = strstr(text, "\"profilingStartTime\":0,\"profilingEndTime\":");
	if (!range)
		fail_msg("no range in %.300s", text);
	assert_true(strtod(range + strlen("\"profilingStartTime\":0,\"profilingEndTime\":"), NULL) >= 91.0);
	struct profile *q = read_doc(text, true, PLUMB_OK, &e);
	size_t n;
	const struct profile_sample *tl = profile_timeline(q, &n);
	assert_int_equal(n, 5);
	uint64_t last[8] = { 0 };
	for (size_t i = 0; i < n; i++) {
		assert_true(tl[i].thread < 8);
		assert_true(tl[i].time_ns >= last[tl[i].thread]);
		last[tl[i].thread] = tl[i].time_ns;
	}
	profile_free(q);
	profile_free(p);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gecko__v66_shared_tables_any_key_order),
		cmocka_unit_test(test_gecko__v49_per_thread_tables),
		cmocka_unit_test(test_gecko__number_forms_agree_with_strtod),
		cmocka_unit_test(test_gecko__only_empty_strings),
		cmocka_unit_test(test_gecko__malformed_says_where),
		cmocka_unit_test(test_gecko__writer_orders_samples_and_names_the_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
