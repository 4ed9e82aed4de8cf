/* test_analyze.c — hot tables with known answers: generic folding, leaf/inclusive counts with
 * recursion, grouping by file/module/library, filters, thread selection, stage slices, the plumb.hot.v1
 * round trip, diff order, the repository walk of --repo-only and the baseline store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/baseline.h"
#include "analyze/repo.h"
#include "os/store.h"
#include "format/hot_json.h"
#include "profile/profile.h"

static uint32_t frame_of(struct profile *p, const char *func, const char *file, const char *module)
{
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, func);
	f.file = profile_intern_cstr(p, file);
	f.module = profile_intern_cstr(p, module);
	f.line = file[0] ? 7 : 0;
	return profile_frame(p, &f);
}

static void add(struct profile *p, uint32_t thread, const uint32_t *frames, size_t n, uint64_t w, uint64_t t_ms)
{
	uint32_t s = profile_stack_from(p, frames, n);
	assert_true(profile_add_sample(p, s, thread, t_ms * 1000000ull, w));
}

/* main (x.c) -> f (y.c) 30; main -> memcpy (libc) 20; main -> crate::mod::sub::f 10; main -> rec -> rec -> rec 5 */
static struct profile *sample_profile(bool timeline)
{
	struct profile *p = profile_new();
	profile_keep_timeline(p, timeline);
	uint32_t t = profile_thread(p, 1, 1, "main-thread");
	uint32_t t2 = profile_thread(p, 1, 2, "helper");
	uint32_t m = frame_of(p, "main", "/repo/src/a/x.c", "/bin/app");
	uint32_t f = frame_of(p, "f", "/repo/src/b/y.c", "/bin/app");
	uint32_t mc = frame_of(p, "memcpy", "", "/lib/libc.so.6");
	uint32_t r = frame_of(p, "crate::mod::sub::f<u8>", "", "/bin/app");
	uint32_t rec = frame_of(p, "rec", "/usr/include/z.h", "/bin/app");
	uint32_t s1[] = { m, f }, s2[] = { m, mc }, s3[] = { m, r }, s4[] = { m, rec, rec, rec };
	add(p, t, s1, 2, 30, 10);
	add(p, t, s2, 2, 20, 20);
	add(p, t, s3, 2, 10, 150);
	add(p, t, s4, 4, 5, 160);
	add(p, t2, s1, 2, 3, 170);
	return p;
}

static uint64_t count_of(const struct hot_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->rows[i].name, name) == 0)
			return t->rows[i].count;
	return 0;
}

static struct hot_summary *analyze(const struct profile *p, const struct hot_opts *o)
{
	struct hot_summary *s = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(hot_analyze(p, o, &s, &e), PLUMB_OK);
	return s;
}

static void test_analyze__collapse_generics(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{ "std::vector<int, std::allocator<int>>::push_back", "std::vector<...>::push_back" },
		{ "operator<<", "operator<<" },
		{ "a<b", "a<b" },
		{ "<T as core::fmt::Debug>::fmt", "<...>::fmt" },
		{ "x->y<z>", "x->y<...>" },
		{ "plain", "plain" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sbuf sb = SBUF_INIT;
		hot_collapse_generics(&sb, cases[i][0], strlen(cases[i][0]));
		assert_string_equal(sb.buf, cases[i][1]);
		sbuf_release(&sb);
	}
}

static void test_analyze__leaf_and_inclusive_count_recursion_once(void **state)
{
	(void)state;
	struct profile *p = sample_profile(false);
	struct hot_summary *s = analyze(p, NULL);
	const struct hot_table *leaf = &s->all.tables[HOT_LEAF], *incl = &s->all.tables[HOT_INCLUSIVE];
	assert_int_equal(s->all.total, 68);
	uint64_t sum = 0;
	for (size_t i = 0; i < leaf->n; i++)
		sum += leaf->rows[i].count;
	assert_int_equal(sum, 68);
	assert_int_equal(count_of(leaf, "f (b/y.c)"), 33);
	assert_int_equal(count_of(leaf, "memcpy (libc.so.6)"), 20);
	assert_int_equal(count_of(leaf, "rec (include/z.h)"), 5);
	assert_int_equal(count_of(incl, "main (a/x.c)"), 68);
	assert_int_equal(count_of(incl, "rec (include/z.h)"), 5); /* three frames deep, counted once */
	assert_string_equal(incl->rows[0].name, "main (a/x.c)");
	assert_string_equal(leaf->rows[0].name, "f (b/y.c)");
	hot_summary_free(s);
	profile_free(p);
}

static void test_analyze__grouping(void **state)
{
	(void)state;
	struct profile *p = sample_profile(false);
	struct hot_opts o = HOT_OPTS_INIT;
	o.root = "/repo";
	o.group_by = HOT_GROUP_FILE;
	struct hot_summary *s = analyze(p, &o);
	const struct hot_table *gl = &s->all.tables[HOT_GROUPED_LEAF], *gi = &s->all.tables[HOT_GROUPED_INCLUSIVE];
	assert_int_equal(count_of(gl, "src/b/y.c"), 33);
	assert_int_equal(count_of(gl, "[libc.so.6]"), 20);
	assert_int_equal(count_of(gl, "/usr/include/z.h"), 5);
	assert_int_equal(count_of(gi, "src/a/x.c"), 68);
	hot_summary_free(s);

	o.group_by = HOT_GROUP_MODULE;
	o.module_depth = 2;
	o.collapse_generics = true;
	s = analyze(p, &o);
	gl = &s->all.tables[HOT_GROUPED_LEAF];
	gi = &s->all.tables[HOT_GROUPED_INCLUSIVE];
	assert_int_equal(count_of(gl, "src/b"), 33);
	assert_int_equal(count_of(gl, "crate::mod"), 10);
	assert_int_equal(count_of(gl, "[libc.so.6]"), 20);
	assert_int_equal(count_of(gl, "/usr/include"), 5);
	assert_int_equal(count_of(gi, "src/a"), 68);
	assert_int_equal(count_of(&s->all.tables[HOT_LEAF], "crate::mod::sub::f<...> (app)"), 10);
	hot_summary_free(s);

	o.module_depth = 9; /* never the function itself */
	s = analyze(p, &o);
	assert_int_equal(count_of(&s->all.tables[HOT_GROUPED_LEAF], "crate::mod::sub"), 10);
	hot_summary_free(s);

	o.group_by = HOT_GROUP_LIBRARY;
	s = analyze(p, &o);
	assert_int_equal(count_of(&s->all.tables[HOT_GROUPED_LEAF], "app"), 48);
	assert_int_equal(count_of(&s->all.tables[HOT_GROUPED_LEAF], "libc.so.6"), 20);
	assert_int_equal(count_of(&s->all.tables[HOT_GROUPED_INCLUSIVE], "app"), 68);
	hot_summary_free(s);
	profile_free(p);
}

static void test_analyze__filters(void **state)
{
	(void)state;
	struct profile *p = sample_profile(false);
	struct hot_opts o = HOT_OPTS_INIT;
	const char *inc[] = { "^(f|memcpy) " };
	o.include = inc;
	o.ninclude = 1;
	struct hot_summary *s = analyze(p, &o);
	assert_int_equal(s->all.total, 68);
	assert_int_equal(s->all.attributed, 53);
	assert_int_equal(s->all.tables[HOT_LEAF].n, 2);
	assert_int_equal(count_of(&s->all.tables[HOT_INCLUSIVE], "main (a/x.c)"), 0);
	hot_summary_free(s);

	struct hot_opts x = HOT_OPTS_INIT;
	const char *exc[] = { "memcpy" };
	x.exclude = exc;
	x.nexclude = 1;
	s = analyze(p, &x);
	assert_int_equal(count_of(&s->all.tables[HOT_LEAF], "main (a/x.c)"), 20); /* the caller becomes the leaf */
	assert_int_equal(count_of(&s->all.tables[HOT_LEAF], "memcpy (libc.so.6)"), 0);
	hot_summary_free(s);

	struct hot_opts r = HOT_OPTS_INIT;
	r.repo_only = true;
	r.root = "/repo";
	s = analyze(p, &r);
	assert_int_equal(count_of(&s->all.tables[HOT_LEAF], "main (a/x.c)"), 35); /* memcpy, crate::, rec dropped */
	assert_int_equal(count_of(&s->all.tables[HOT_LEAF], "f (b/y.c)"), 33);
	assert_int_equal(s->all.attributed, 68);
	hot_summary_free(s);

	struct hot_opts bad = HOT_OPTS_INIT;
	const char *broken[] = { "(" };
	bad.include = broken;
	bad.ninclude = 1;
	struct perr e = PERR_INIT;
	struct hot_summary *none = NULL;
	assert_int_equal(hot_analyze(p, &bad, &none, &e), PLUMB_EINVAL);
	assert_non_null(strstr(e.msg, "--include"));
	profile_free(p);
}

static void test_analyze__threads(void **state)
{
	(void)state;
	struct profile *p = sample_profile(false);
	struct hot_opts o = HOT_OPTS_INIT;
	struct hot_summary *s = analyze(p, &o);
	assert_int_equal(s->nthreads, 2);
	assert_string_equal(s->threads[0].name, "main-thread");
	assert_int_equal(s->threads[0].count, 65);
	hot_summary_free(s);
	o.top_threads = 1;
	s = analyze(p, &o);
	assert_int_equal(s->nthreads, 1);
	assert_int_equal(s->all.total, 65);
	hot_summary_free(s);
	o.top_threads = 0;
	o.thread_re = "^help";
	s = analyze(p, &o);
	assert_int_equal(s->all.total, 3);
	assert_string_equal(s->threads[0].name, "helper");
	hot_summary_free(s);
	profile_free(p);
}

static void test_analyze__window(void **state)
{
	(void)state;
	/* a window of the samples (what `plumb top` draws): only its counts, threads ranked by their weight in it */
	struct profile *p = sample_profile(false);
	size_t nc;
	const struct profile_count *all = profile_counts(p, &nc);
	assert_int_equal(nc, 5);
	struct profile_count window[2] = { all[3], all[4] }; /* main -> rec x3 (5), helper's main -> f (3) */
	window[1].weight = 9;
	struct hot_summary *s = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(hot_analyze_counts(p, NULL, window, 2, &s, &e), PLUMB_OK);
	assert_int_equal(s->all.total, 14);
	assert_int_equal(s->nthreads, 2);
	assert_string_equal(s->threads[0].name, "helper"); /* 9 in the window against main-thread's 5 */
	assert_int_equal(count_of(&s->all.tables[HOT_INCLUSIVE], "rec (include/z.h)"), 5);
	assert_int_equal(count_of(&s->all.tables[HOT_LEAF], "f (b/y.c)"), 9);
	assert_int_equal(count_of(&s->all.tables[HOT_LEAF], "memcpy (libc.so.6)"), 0);
	hot_summary_free(s);
	/* an empty window is an empty summary */
	assert_int_equal(hot_analyze_counts(p, NULL, window, 0, &s, &e), PLUMB_OK);
	assert_int_equal(s->all.total, 0);
	hot_summary_free(s);
	profile_free(p);
}

static void test_analyze__stages(void **state)
{
	(void)state;
	struct profile *p = sample_profile(true);
	struct hot_summary *s = analyze(p, NULL);
	struct fmt_stage st[] = { { (char *)"early", 0, 100 }, { (char *)"late", 100, 1000 } };
	struct perr e = PERR_INIT;
	assert_int_equal(hot_analyze_stages(p, NULL, st, 2, s, &e), PLUMB_OK);
	assert_int_equal(s->nstages, 2);
	assert_int_equal(s->stages[0].total, 50);
	assert_int_equal(s->stages[1].total, 18);
	assert_string_equal(s->stages[0].tables[HOT_LEAF].rows[0].name, "f (b/y.c)");
	assert_string_equal(s->stages[1].tables[HOT_LEAF].rows[0].name, "crate::mod::sub::f<u8> (app)");
	hot_summary_free(s);
	profile_free(p);

	p = sample_profile(false);
	s = analyze(p, NULL);
	assert_int_equal(hot_analyze_stages(p, NULL, st, 2, s, &e), PLUMB_EINVAL);
	hot_summary_free(s);
	profile_free(p);
}

static void test_analyze__json_round_trip(void **state)
{
	(void)state;
	struct profile *p = sample_profile(true);
	struct hot_opts o = HOT_OPTS_INIT;
	o.group_by = HOT_GROUP_LIBRARY;
	struct hot_summary *s = analyze(p, &o);
	struct fmt_stage st[] = { { (char *)"early", 0, 100 } };
	struct perr e = PERR_INIT;
	assert_int_equal(hot_analyze_stages(p, &o, st, 1, s, &e), PLUMB_OK);
	s->source = strdup("x \"quoted\".json");
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;
	fmt_hot_json_write(&a, s, 0);
	assert_non_null(strstr(a.buf, "\"schema\": \"plumb.hot.v1\""));
	struct hot_summary *back = NULL;
	assert_int_equal(fmt_hot_json_read(a.buf, a.len, &back, &e), PLUMB_OK);
	assert_int_equal(back->all.total, 68);
	assert_int_equal(back->group_by, HOT_GROUP_LIBRARY);
	assert_int_equal(back->nstages, 1);
	assert_int_equal(back->stages[0].total, 50);
	assert_string_equal(back->source, "x \"quoted\".json");
	for (int k = 0; k < HOT_NTABLES; k++) {
		assert_int_equal(back->all.tables[k].n, s->all.tables[k].n);
		for (size_t i = 0; i < s->all.tables[k].n; i++) {
			assert_string_equal(back->all.tables[k].rows[i].name, s->all.tables[k].rows[i].name);
			assert_int_equal(back->all.tables[k].rows[i].count, s->all.tables[k].rows[i].count);
		}
	}
	fmt_hot_json_write(&b, back, 0);
	assert_string_equal(a.buf, b.buf); /* the writer is deterministic */
	/* --top keeps that many rows */
	sbuf_reset(&b);
	fmt_hot_json_write(&b, s, 1);
	struct hot_summary *top = NULL;
	assert_int_equal(fmt_hot_json_read(b.buf, b.len, &top, &e), PLUMB_OK);
	assert_int_equal(top->all.tables[HOT_INCLUSIVE].n, 1);
	hot_summary_free(top);
	const char *other = "{\"schema\": \"plumb.hot.v2\", \"total\": 1}";
	struct hot_summary *none = NULL;
	assert_int_equal(fmt_hot_json_read(other, strlen(other), &none, &e), PLUMB_EFORMAT);
	sbuf_release(&a);
	sbuf_release(&b);
	hot_summary_free(back);
	hot_summary_free(s);
	profile_free(p);
}

static void test_analyze__diff_order(void **state)
{
	(void)state;
	struct hot_row br[] = { { (char *)"slow", 60 }, { (char *)"fast", 40 } };
	struct hot_row ar[] = { { (char *)"fast", 60 }, { (char *)"slow", 30 }, { (char *)"new", 10 } };
	struct hot_table before = { br, 2 }, after = { ar, 3 };
	struct hot_diff_row *rows;
	size_t n;
	struct perr e = PERR_INIT;
	assert_int_equal(hot_diff(&before, 100, &after, 100, &rows, &n, &e), PLUMB_OK);
	assert_int_equal(n, 3);
	assert_string_equal(rows[0].name, "slow");
	assert_true(rows[0].delta_points < -29.99 && rows[0].delta_points > -30.01);
	assert_int_equal(rows[0].delta_count, -30);
	assert_string_equal(rows[1].name, "fast");
	assert_string_equal(rows[2].name, "new");
	assert_int_equal(rows[2].before, 0);
	free(rows);
	/* different totals: shares, not counts, decide */
	struct hot_row cr[] = { { (char *)"slow", 120 }, { (char *)"fast", 80 } };
	struct hot_table after2 = { cr, 2 };
	assert_int_equal(hot_diff(&before, 100, &after2, 200, &rows, &n, &e), PLUMB_OK);
	assert_true(rows[0].delta_points < 1e-9 && rows[0].delta_points > -1e-9);
	free(rows);
}

static void test_analyze__baseline_store(void **state)
{
	(void)state;
	char dir[] = "/tmp/plumb-baseline-XXXXXX";
	assert_non_null(mkdtemp(dir));
	setenv("PLUMB_HOME", dir, 1);
	assert_true(store_name_valid("main-2024.1_x")); /* the rule itself: test_store.c */
	struct perr e = PERR_INIT;
	char *path = NULL;
	assert_int_equal(baseline_profile_lookup("nope", &path, &e), PLUMB_ENOENT);
	assert_null(path);
	const char *doc = "{\"schema\": \"plumb.hot.v1\"}\n", *doc2 = "{\"schema\": \"plumb.hot.v1\", \"x\": 1}\n";
	char saved[PATH_MAX], expect[256];
	snprintf(expect, sizeof expect, "%s/baselines/profiles/before.json", dir);
	assert_int_equal(baseline_profile_save("before", doc, strlen(doc), false, saved, sizeof saved, &e), PLUMB_OK);
	assert_string_equal(saved, expect); /* where it went */
	/* a taken name is kept unless forced */
	assert_int_equal(baseline_profile_save("before", doc2, strlen(doc2), false, saved, sizeof saved, &e),
			 PLUMB_EINVAL);
	assert_non_null(strstr(e.msg, "--force"));
	assert_int_equal(baseline_profile_lookup("before", &path, &e), PLUMB_OK);
	assert_string_equal(path, expect);
	char *data = NULL;
	size_t len = 0;
	assert_int_equal(store_load(&STORE_PROFILE_BASELINES, "before", &data, &len, &e), PLUMB_OK);
	assert_string_equal(data, doc);
	free(data);
	assert_int_equal(baseline_profile_save("before", doc2, strlen(doc2), true, saved, sizeof saved, &e), PLUMB_OK);
	assert_int_equal(store_load(&STORE_PROFILE_BASELINES, "before", &data, &len, &e), PLUMB_OK);
	assert_string_equal(data, doc2); /* replaced */
	free(data);
	free(path);
	assert_int_equal(baseline_profile_lookup("other", &path, &e), PLUMB_ENOENT);
	assert_non_null(strstr(e.msg, "before")); /* lists what is saved */
	assert_int_equal(baseline_profile_save("../evil", doc, strlen(doc), true, saved, sizeof saved, &e), PLUMB_EINVAL);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	unsetenv("PLUMB_HOME");
}

static void touch(const char *dir, const char *rel)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

/* The walk keeps every file (by path and by short path) and skips links and directories starting with '.'. */
static void test_analyze__repo_files(void **state)
{
	(void)state;
	char root[] = "/tmp/plumb-repo-XXXXXX", path[512];
	assert_non_null(mkdtemp(root));
	static const char *const dirs[] = { "src", "src/deep", "src/deep/er", ".git", ".hidden", "empty" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", root, dirs[i]);
		assert_int_equal(mkdir(path, 0700), 0);
	}
	touch(root, "top.c");
	touch(root, ".clang-format");
	touch(root, "src/deep/er/parse.c");
	touch(root, ".git/config");
	touch(root, ".hidden/secret.c");
	snprintf(path, sizeof path, "%s/linked", root);
	assert_int_equal(symlink("/usr/include", path), 0);
	snprintf(path, sizeof path, "%s/src/link.c", root);
	assert_int_equal(symlink("../top.c", path), 0);

	struct hot_repo_files rf = HOT_REPO_FILES_INIT;
	assert_true(hot_repo_files_load(&rf, root));
	static const struct {
		const char *path;
		bool has;
	} cases[] = {
		{ "top.c", true }, { ".clang-format", true }, { "src/deep/er/parse.c", true },
		{ "er/parse.c", true }, { "parse.c", false }, { ".git/config", false },
		{ ".hidden/secret.c", false }, { "hidden/secret.c", false }, { "linked/stdio.h", false },
		{ "src/link.c", false }, { "src", false }, { "empty", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_int_equal(hot_repo_files_has(&rf, cases[i].path, strlen(cases[i].path)), cases[i].has);
	/* tails of the absolute path: a label's two components may include the root's own name */
	char tail[600];
	snprintf(tail, sizeof tail, "%s/top.c", strrchr(root, '/') + 1);
	assert_true(hot_repo_files_has(&rf, tail, strlen(tail)));
	snprintf(tail, sizeof tail, "%s/src/deep/er/parse.c", root + 1);
	assert_true(hot_repo_files_has(&rf, tail, strlen(tail)));
	assert_string_equal(hot_repo_files_rel(&rf, tail, strlen(tail)), "src/deep/er/parse.c");
	assert_string_equal(hot_repo_files_rel(&rf, "er/parse.c", 10), "src/deep/er/parse.c");
	assert_string_equal(hot_repo_files_rel(&rf, tail + strlen(tail) - 10, 10), "src/deep/er/parse.c");
	assert_null(hot_repo_files_rel(&rf, "x/parse.c", 9));
	hot_repo_files_release(&rf);

	/* a root that cannot be read: nothing, and no failure */
	struct hot_repo_files none = HOT_REPO_FILES_INIT;
	snprintf(path, sizeof path, "%s/no-such-dir", root);
	assert_true(hot_repo_files_load(&none, path));
	assert_false(hot_repo_files_has(&none, "top.c", 5));
	hot_repo_files_release(&none);

	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_analyze__collapse_generics),
		cmocka_unit_test(test_analyze__leaf_and_inclusive_count_recursion_once),
		cmocka_unit_test(test_analyze__grouping),
		cmocka_unit_test(test_analyze__filters),
		cmocka_unit_test(test_analyze__threads),
		cmocka_unit_test(test_analyze__window),
		cmocka_unit_test(test_analyze__stages),
		cmocka_unit_test(test_analyze__json_round_trip),
		cmocka_unit_test(test_analyze__diff_order),
		cmocka_unit_test(test_analyze__repo_files),
		cmocka_unit_test(test_analyze__baseline_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
