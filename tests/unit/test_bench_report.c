/* test_bench_report.c — the library half of plumb bench's commands: the baseline store (save, list, find,
 * remove, and what each says when it cannot), where an artifact argument and its catalog are, the required-set
 * coverage check, the SLO checks and the writers of the report, comparison and owners tables, the repeat policy
 * and the program list of a suite. */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/artifact.h"
#include "bench/baseline.h"
#include "bench/compare.h"
#include "bench/config.h"
#include "bench/coverage.h"
#include "bench/evidence.h"
#include "bench/machine.h"
#include "bench/report.h"
#include "bench/runner.h"

static char home[64];

static int make_home(void **state)
{
	(void)state;
	snprintf(home, sizeof home, "/tmp/plumb-test-bench-XXXXXX");
	if (!mkdtemp(home))
		return -1;
	setenv("PLUMB_HOME", home, 1);
	return 0;
}

static int remove_home(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
	return system(cmd) == 0 ? 0 : -1;
}

/* An artifact of one case `c` with n samples of c.wall_ms from base by step, and the given trust. */
static void artifact(struct bench_evidence *ev, const char *trust, double base, double step, int n)
{
	bench_evidence_init(ev);
	ev->suite = strdup("s");
	ev->created = strdup("2026-12-01T00:00:00Z");
	ev->trust = strdup(trust);
	ev->cases = calloc(1, sizeof *ev->cases);
	ev->ncases = 1;
	ev->cases[0].name = strdup("c");
	ev->cases[0].trust = strdup(trust);
	ev->cases[0].status = strdup("ok");
	for (int i = 0; i < n; i++)
		assert_true(bench_evidence_add_sample(ev, "c.wall_ms", "latency", "ms", base + step * i, i, NULL));
}

/* What a writer wrote, through a memory stream (the caller frees it). */
struct captured {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *capture_open(struct captured *c)
{
	c->text = NULL;
	c->len = 0;
	c->f = open_memstream(&c->text, &c->len);
	assert_non_null(c->f);
	return c->f;
}

static char *capture_close(struct captured *c)
{
	fclose(c->f);
	return c->text;
}

static void test_bench_report__baseline_store(void **state)
{
	(void)state;
	struct bench_evidence ev, harness;
	artifact(&ev, BENCH_TRUST_OPTIMIZED, 10, 1, 5);
	artifact(&harness, BENCH_TRUST_HARNESS, 10, 1, 5);
	char path[PATH_MAX], want[PATH_MAX];
	const char *which;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_baseline_path("b1", path, sizeof path), BENCH_BASELINE_MISSING);
	snprintf(want, sizeof want, "%s/baselines/evidence/b1.json", home);
	assert_string_equal(path, want); /* where it was looked for */
	assert_int_equal(bench_baseline_save(&ev, "b1", false, path, sizeof path, &which, &e), BENCH_BASELINE_OK);
	assert_string_equal(path, want);
	assert_int_equal(bench_baseline_path("b1", path, sizeof path), BENCH_BASELINE_OK);
	assert_int_equal(bench_baseline_save(&ev, "b1", false, path, sizeof path, &which, &e), BENCH_BASELINE_EXISTS);
	assert_int_equal(bench_baseline_save(&ev, "b1", true, path, sizeof path, &which, &e), BENCH_BASELINE_OK);
	assert_int_equal(bench_baseline_save(&harness, "h", false, path, sizeof path, &which, &e), BENCH_BASELINE_HARNESS);
	assert_string_equal(which, "c");
	assert_int_equal(bench_baseline_path("h", path, sizeof path), BENCH_BASELINE_MISSING); /* nothing was written */
	assert_int_equal(bench_baseline_path("-x", path, sizeof path), BENCH_BASELINE_BAD_NAME);
	assert_int_equal(bench_baseline_path("../x", path, sizeof path), BENCH_BASELINE_BAD_NAME);
	/* the listing reads each one; a broken one is listed with the reason */
	snprintf(path, sizeof path, "%s/baselines/evidence/a-broken.json", home);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{ not json", f);
	fclose(f);
	struct bench_baseline_summary *list;
	size_t n;
	assert_int_equal(bench_baseline_list(&list, &n, &e), BENCH_BASELINE_OK);
	assert_int_equal(n, 2);
	assert_string_equal(list[0].name, "a-broken");
	assert_non_null(list[0].unreadable);
	assert_null(list[0].suite);
	assert_string_equal(list[1].name, "b1");
	assert_null(list[1].unreadable);
	assert_string_equal(list[1].suite, "s");
	assert_string_equal(list[1].trust, BENCH_TRUST_OPTIMIZED);
	assert_int_equal(list[1].nsamples, 5);
	struct captured cap;
	bench_baselines_write(capture_open(&cap), list, n);
	char *text = capture_close(&cap);
	assert_non_null(strstr(text, "a-broken                         (unreadable: "));
	assert_non_null(strstr(text, "b1                               s                    2026-12-01T00:00:00Z  -"));
	free(text);
	bench_baseline_list_free(list, n);
	/* removing */
	assert_int_equal(bench_baseline_remove("b1", &e), BENCH_BASELINE_OK);
	assert_int_equal(bench_baseline_remove("b1", &e), BENCH_BASELINE_MISSING);
	assert_int_equal(bench_baseline_remove("a-broken", &e), BENCH_BASELINE_OK);
	assert_int_equal(bench_baseline_list(&list, &n, &e), BENCH_BASELINE_OK);
	assert_int_equal(n, 0);
	assert_null(list);
	/* without a home nothing can be kept */
	char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	unsetenv("PLUMB_HOME");
	unsetenv("HOME");
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(bench_baseline_path("b1", path, sizeof path), BENCH_BASELINE_NO_HOME);
	assert_int_equal(bench_baseline_list(&list, &n, &e), BENCH_BASELINE_NO_HOME);
	assert_int_equal(bench_baseline_save(&ev, "b1", false, path, sizeof path, &which, &e), BENCH_BASELINE_NO_HOME);
	assert_int_equal(bench_baseline_remove("b1", &e), BENCH_BASELINE_NO_HOME);
	if (saved_home)
		setenv("HOME", saved_home, 1);
	free(saved_home);
	setenv("PLUMB_HOME", home, 1);
	bench_evidence_release(&ev);
	bench_evidence_release(&harness);
}

static void test_bench_report__artifact_and_catalog_lookup(void **state)
{
	(void)state;
	struct bench_evidence ev;
	artifact(&ev, BENCH_TRUST_OPTIMIZED, 10, 1, 5);
	char path[PATH_MAX], *found;
	const char *which;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_baseline_save(&ev, "kept", false, path, sizeof path, &which, &e), BENCH_BASELINE_OK);
	static const struct {
		const char *arg;
		bool may_be_baseline;
		enum bench_baseline_status want;
		const char *want_path; /* NULL: the stored baseline's file */
	} cases[] = {
		{ "kept", true, BENCH_BASELINE_OK, NULL },
		{ "kept", false, BENCH_BASELINE_OK, "kept" },           /* not looked up: a path */
		{ "out.json", true, BENCH_BASELINE_OK, "out.json" },     /* a .json name is a file */
		{ "dir/kept", true, BENCH_BASELINE_OK, "dir/kept" },     /* so is anything with a '/' */
		{ "gone", true, BENCH_BASELINE_MISSING, NULL },
		{ "-x", true, BENCH_BASELINE_BAD_NAME, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		enum bench_baseline_status st = bench_artifact_locate(cases[i].arg, cases[i].may_be_baseline, &found);
		if (st != cases[i].want)
			fail_msg("%s: status %d, want %d", cases[i].arg, st, cases[i].want);
		if (st == BENCH_BASELINE_BAD_NAME) {
			assert_null(found);
			continue;
		}
		char want[PATH_MAX];
		if (cases[i].want_path)
			snprintf(want, sizeof want, "%s", cases[i].want_path);
		else
			snprintf(want, sizeof want, "%s/baselines/evidence/%s.json", home, cases[i].arg);
		assert_string_equal(found, want);
		free(found);
	}
	/* the catalog: none, the one given, the artifact's own, or the artifact's own gone */
	struct bench_catalog cat;
	enum bench_catalog_source src;
	assert_int_equal(bench_catalog_for(NULL, &ev, &cat, &src, &e), PLUMB_OK);
	assert_int_equal(src, BENCH_CATALOG_NONE);
	char cat_path[PATH_MAX];
	snprintf(cat_path, sizeof cat_path, "%s/catalog.ini", home);
	FILE *f = fopen(cat_path, "w");
	assert_non_null(f);
	fputs("[metric c.wall_ms]\ntier = core\n", f);
	fclose(f);
	assert_int_equal(bench_catalog_for(cat_path, NULL, &cat, &src, &e), PLUMB_OK);
	assert_int_equal(src, BENCH_CATALOG_GIVEN);
	bench_catalog_release(&cat);
	ev.catalog_path = strdup(cat_path);
	assert_int_equal(bench_catalog_for(NULL, &ev, &cat, &src, &e), PLUMB_OK);
	assert_int_equal(src, BENCH_CATALOG_SUITES);
	assert_int_equal(cat.n, 1);
	bench_catalog_release(&cat);
	unlink(cat_path);
	assert_int_equal(bench_catalog_for(NULL, &ev, &cat, &src, &e), PLUMB_OK);
	assert_int_equal(src, BENCH_CATALOG_GONE);
	assert_int_equal(bench_catalog_for(cat_path, &ev, &cat, &src, &e), PLUMB_ENOENT); /* given: must be there */
	bench_evidence_release(&ev);
	assert_int_equal(bench_baseline_remove("kept", &e), BENCH_BASELINE_OK);
}

static void test_bench_report__coverage(void **state)
{
	(void)state;
	struct bench_evidence evs[2]; /* the lookups cache an index in each: not copied, released in place */
	artifact(&evs[0], BENCH_TRUST_OPTIMIZED, 10, 1, 6);
	artifact(&evs[1], BENCH_TRUST_HARNESS, 10, 1, 2);
	free(evs[1].cases[0].name);
	evs[1].cases[0].name = strdup("d");
	for (int i = 0; i < 7; i++)
		assert_true(bench_evidence_add_sample(&evs[1], "d.wall_ms", "latency", "ms", i, i, NULL));
	struct bench_catalog cat;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_catalog_parse("[catalog]\nmin_samples = 5\n"
					     "[metric c.wall_ms]\nrequired = smoke, full\n"
					     "[metric c.other]\nrequired = full\n"
					     "[metric *.wall_ms]\nrequired = all\n"
					     "[metric x.*]\nrequired = all\n"
					     "[metric c.unrequired]\ntier = core\n",
					     "c.ini", &cat, &e),
			 PLUMB_OK);
	struct bench_coverage cov;
	assert_int_equal(bench_coverage_check(&cat, evs, 2, &cov, &e), PLUMB_OK);
	static const struct {
		const char *name, *sets, *status;
		size_t count;
	} want[] = {
		{ "c.wall_ms", "smoke,full", "ok", 6 },      /* the artifact with the most samples speaks */
		{ "c.other", "full", "missing", 0 },
		{ "d.wall_ms", "all", "harness-only (unoptimized build)", 7 }, /* c.wall_ms has its own entry */
		{ "x.*", "all", "missing", 0 },              /* a pattern that matches nothing is missing itself */
	};
	assert_int_equal(cov.n, 4);
	assert_int_equal(cov.problems, 3);
	for (size_t i = 0; i < cov.n; i++) {
		assert_string_equal(cov.rows[i].name, want[i].name);
		assert_string_equal(cov.rows[i].required_by, want[i].sets);
		assert_string_equal(cov.rows[i].status, want[i].status);
		assert_int_equal(cov.rows[i].count, want[i].count);
		assert_int_equal(cov.rows[i].ok, strcmp(want[i].status, "ok") == 0);
	}
	struct captured cap;
	assert_int_equal(bench_coverage_write(capture_open(&cap), &cov, true, BENCH_STYLE_JSON, &e), PLUMB_OK);
	char *text = capture_close(&cap);
	json_t *doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "schema")), "plumb.bench.coverage.v1");
	assert_int_equal(json_integer_value(json_object_get(doc, "required")), 4);
	assert_int_equal(json_integer_value(json_object_get(doc, "problems")), 3);
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(doc, "metrics"), 1), "trust")));
	json_decref(doc);
	free(text);
	assert_int_equal(bench_coverage_write(capture_open(&cap), &cov, false, BENCH_STYLE_TEXT, &e), PLUMB_OK);
	text = capture_close(&cap);
	assert_non_null(strstr(text, "\n4 required metrics, 3 with a problem\n"));
	free(text);
	/* (a too-few-samples verdict: the floor is the entry's, else the catalog's) */
	bench_coverage_release(&cov);
	assert_int_equal(bench_coverage_check(&cat, evs + 1, 1, &cov, &e), PLUMB_OK);
	assert_string_equal(cov.rows[0].status, "too few samples (2 < 5)");
	bench_coverage_release(&cov);
	bench_catalog_release(&cat);
	bench_evidence_release(&evs[0]);
	bench_evidence_release(&evs[1]);
}

static void test_bench_report__slo_and_writers(void **state)
{
	(void)state;
	struct bench_catalog cat;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_catalog_parse("[metric c.wall_ms]\nslo_p50 = 12\nslo_max = 13.5\nowner = src/c.c\n"
					     "phase = load\nhint = look\ntier = core\n"
					     "[metric c.ops]\nbetter = higher\nslo_p95 = 100\n",
					     "c.ini", &cat, &e),
			 PLUMB_OK);
	struct bench_summary s = { .n = 3, .p50 = 12, .p95 = 15, .max = 16 };
	struct bench_slo_check sc[3];
	assert_int_equal(bench_slo_checks(&cat.metrics[0], &s, sc), 2);
	assert_string_equal(sc[0].stat, "p50");
	assert_true(sc[0].pass); /* at the limit holds */
	assert_string_equal(sc[1].stat, "max");
	assert_false(sc[1].pass);
	assert_int_equal(bench_slo_checks(&cat.metrics[1], &s, sc), 1);
	assert_false(sc[0].pass); /* higher is better: 15 < 100 */
	assert_int_equal(bench_slo_checks(NULL, &s, sc), 0);
	s.n = 0;
	assert_int_equal(bench_slo_checks(&cat.metrics[0], &s, sc), 0);

	struct bench_evidence base, cur;
	artifact(&base, BENCH_TRUST_OPTIMIZED, 10, 0.1, 10);
	artifact(&cur, BENCH_TRUST_OPTIMIZED, 20, 0.1, 10);
	struct captured cap;
	assert_int_equal(bench_report_write(capture_open(&cap), &base, "b.json", &cat, BENCH_STYLE_TEXT, &e), PLUMB_OK);
	char *text = capture_close(&cap);
	assert_non_null(strstr(text, "b.json: suite s, 2026-12-01T00:00:00Z, commit no git, trust optimized"));
	assert_non_null(strstr(text, "p50 <= 12.0: pass, max <= 13.500: pass"));
	free(text);
	assert_int_equal(bench_report_write(capture_open(&cap), &base, "b.json", &cat, BENCH_STYLE_MARKDOWN, &e),
			 PLUMB_OK);
	text = capture_close(&cap);
	assert_non_null(strstr(text, "| c.wall_ms | 10 | 10.00 | 10.45 |")); /* one row, one number of decimals */
	assert_non_null(strstr(text, "**b.json: suite s, ")); /* the bold header closes on its line */
	assert_non_null(strstr(text, " warm-up**\n"));
	free(text);
	assert_int_equal(bench_report_write(capture_open(&cap), &base, "b.json", &cat, BENCH_STYLE_JSON, &e), PLUMB_OK);
	text = capture_close(&cap);
	json_t *doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	json_t *m = json_array_get(json_object_get(doc, "metrics"), 0);
	assert_string_equal(json_string_value(json_object_get(m, "name")), "c.wall_ms");
	assert_int_equal(json_array_size(json_object_get(m, "slo")), 2);
	assert_string_equal(json_string_value(json_object_get(json_object_get(m, "owner"), "owner")), "src/c.c");
	json_decref(doc);
	free(text);

	/* the comparison: the gate's count and first regression come with the table */
	struct bench_cmp cmp;
	enum bench_rank rank;
	assert_true(bench_rank_parse("regressions", &rank));
	assert_false(bench_rank_parse("speed", &rank));
	assert_string_equal(bench_rank_name(rank), "regressions");
	assert_true(bench_compare(&base, &cur, &cat, 5, 0.05, rank, &cmp));
	assert_int_equal(cmp.regressions, 1);
	assert_string_equal(cmp.first_regression->metric, "c.wall_ms");
	struct bench_compare_view v = { "b", "c.json", "/x/b.json", 5, 0.05, rank };
	assert_int_equal(bench_compare_write(capture_open(&cap), &cmp, &base, &cur, &v, BENCH_STYLE_TEXT, &e), PLUMB_OK);
	text = capture_close(&cap);
	assert_non_null(strstr(text, "baseline /x/b.json (2026-12-01T00:00:00Z, no git, trust optimized)\n"
				     "current  c.json (2026-12-01T00:00:00Z, no git, trust optimized)\n"
				     "ranked by regressions; a verdict needs p < 0.05, a median change beyond the noise floor "
				     "(5% or the baseline's own spread) and its 95% interval clear of 0\n"));
	assert_non_null(strstr(text, "slower       src/c.c (load): look"));
	free(text);
	assert_int_equal(bench_compare_write(capture_open(&cap), &cmp, &base, &cur, &v, BENCH_STYLE_JSON, &e), PLUMB_OK);
	text = capture_close(&cap);
	doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "baseline")), "b");
	assert_string_equal(json_string_value(json_object_get(doc, "rank")), "regressions");
	assert_int_equal(json_integer_value(json_object_get(doc, "regressions")), 1);
	json_decref(doc);
	free(text);
	bench_cmp_release(&cmp);

	/* owners: the table and the catalog document */
	assert_int_equal(bench_owners_write(capture_open(&cap), &cat, BENCH_STYLE_TEXT, &e), PLUMB_OK);
	text = capture_close(&cap);
	assert_non_null(strstr(text, "c.wall_ms core      load  src/c.c look\n"));
	assert_non_null(strstr(text, "c.ops     drilldown -     -       -\n"));
	free(text);
	assert_int_equal(bench_owners_write(capture_open(&cap), &cat, BENCH_STYLE_JSON, &e), PLUMB_OK);
	text = capture_close(&cap);
	doc = json_loads(text, 0, NULL);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "schema")), BENCH_CATALOG_SCHEMA);
	m = json_array_get(json_object_get(doc, "metrics"), 1);
	assert_string_equal(json_string_value(json_object_get(m, "better")), "higher");
	assert_true(json_real_value(json_object_get(json_object_get(m, "slo"), "p95")) == 100);
	json_decref(doc);
	free(text);
	bench_catalog_release(&cat);
	bench_evidence_release(&base);
	bench_evidence_release(&cur);
}

/* The cautions a comparison comes with, each through the callback. */
static void collect(void *ctx, const char *msg)
{
	char *all = ctx;
	strncat(all, msg, 2047 - strlen(all));
	strncat(all, "\n", 2047 - strlen(all));
}

static void test_bench_report__compare_cautions(void **state)
{
	(void)state;
	struct bench_evidence a, b;
	artifact(&a, BENCH_TRUST_OPTIMIZED, 10, 1, 3);
	artifact(&b, BENCH_TRUST_HARNESS, 10, 1, 3);
	char all[2048] = "";
	bench_compare_cautions(&a, &a, collect, all);
	assert_string_equal(all, "");
	free(b.suite);
	b.suite = strdup("t");
	a.cores = 2;
	b.cores = 4;
	bench_compare_cautions(&a, &b, collect, all);
	assert_string_equal(all, "the current artifact is harness-only (an unoptimized build): treat the verdicts as a "
				 "harness check, not performance evidence\n"
				 "the baseline ran suite 's', the current one 't'\n"
				 "measured on different machines (?, 2 CPUs vs ?, 4 CPUs): differences may be the machine's\n");
	bench_evidence_release(&a);
	bench_evidence_release(&b);
}

static void no_program(void *ctx, const struct bench_case *c)
{
	char *all = ctx;
	strncat(all, c->name, 255 - strlen(all));
	strncat(all, " ", 255 - strlen(all));
}

static void test_bench_report__policy_and_programs(void **state)
{
	(void)state;
	struct bench_suite s;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_suite_parse("[suite]\nrepeats = 4\nwarmup = 2\n"
					   "[case a]\nrun = /bin/true x\n[case b]\nrun = exec /bin/true\n"
					   "[case c]\nrun = cd /\n[case d]\nrun = x\nbinary = /bin/sh\n",
					   "/tmp/s.ini", &s, &e),
			 PLUMB_OK);
	struct bench_run_opts o;
	struct bench_policy_request none = { 0, 0, -1, BENCH_ORDER_UNSET, -1, -1 };
	struct bench_policy_request cli = { 7, 0, 0, BENCH_ORDER_ROUND_ROBIN, 11, 0 };
	struct bench_policy_request dur = { 0, 90, -1, BENCH_ORDER_UNSET, -1, -1 };
	bench_run_policy(&s, &none, &o);
	assert_int_equal(o.repeats, 4);
	assert_int_equal(o.warmup, 2);
	assert_string_equal(o.policy_source, "suite repeats");
	/* the repeats interleave by default, shuffled with a seed of the clock's; contended ones re-run twice */
	assert_int_equal(o.order, BENCH_ORDER_SHUFFLE);
	assert_true(o.seed >= 0 && o.seed < 1000000000);
	assert_int_equal(o.retries, BENCH_DEFAULT_RETRIES);
	bench_run_policy(&s, &cli, &o);
	assert_int_equal(o.repeats, 7);
	assert_int_equal(o.warmup, 0);
	assert_string_equal(o.policy_source, "--repeats");
	assert_int_equal(o.order, BENCH_ORDER_ROUND_ROBIN);
	assert_int_equal(o.seed, 11);
	assert_int_equal(o.retries, 0);
	bench_run_policy(&s, &dur, &o);
	assert_int_equal(o.repeats, 5);
	assert_true(o.duration_s == 90);
	assert_string_equal(o.policy_source, "--duration");
	s.repeats = 0;
	s.warmup = -1;
	bench_run_policy(&s, &none, &o);
	assert_int_equal(o.repeats, BENCH_DEFAULT_REPEATS);
	assert_int_equal(o.warmup, BENCH_DEFAULT_WARMUP);
	assert_string_equal(o.policy_source, "default");
	/* each program once, in case order; a builtin is said */
	char **programs;
	size_t n;
	char unknown[256] = "";
	assert_true(bench_suite_programs(&s, &programs, &n, no_program, unknown));
	assert_int_equal(n, 2);
	assert_string_equal(programs[0], "/bin/true");
	assert_string_equal(programs[1], "/bin/sh");
	assert_string_equal(unknown, "c ");
	bench_programs_free(programs, n);
	bench_suite_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bench_report__baseline_store),
		cmocka_unit_test(test_bench_report__artifact_and_catalog_lookup),
		cmocka_unit_test(test_bench_report__coverage),
		cmocka_unit_test(test_bench_report__slo_and_writers),
		cmocka_unit_test(test_bench_report__compare_cautions),
		cmocka_unit_test(test_bench_report__policy_and_programs),
	};
	return cmocka_run_group_tests(tests, make_home, remove_home);
}
