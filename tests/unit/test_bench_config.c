/* test_bench_config.c — suite and catalog INI files: what loads, and the one-line error (with the line) for
 * each kind of mistake. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "bench/config.h"

static void test_bench_config__suite_loads(void **state)
{
	(void)state;
	const char *text = "# a suite\n"
			   "[suite]\n"
			   "name = parser\n"
			   "repeats = 10          ; a comment\n"
			   "warmup = 2\n"
			   "catalog = cat.ini\n"
			   "\n"
			   "[case cold-start]\n"
			   "run = ./build/app --selftest; echo done\n"
			   "env = MODE=cold  LEVEL=3\n"
			   "env = EXTRA=x=y\n"
			   "cwd = sub\n"
			   "timeout = 1.5m\n"
			   "[case warm]\n"
			   "run = true\n";
	struct bench_suite s;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_suite_parse(text, "/srv/x/suite.ini", &s, &e), PLUMB_OK);
	assert_string_equal(s.name, "parser");
	assert_int_equal(s.repeats, 10);
	assert_int_equal(s.warmup, 2);
	assert_string_equal(s.dir, "/srv/x");
	assert_string_equal(s.catalog, "/srv/x/cat.ini");
	assert_int_equal(s.ncases, 2);
	assert_string_equal(s.cases[0].name, "cold-start");
	/* ';' after a non-blank is part of the command, not a comment */
	assert_string_equal(s.cases[0].run, "./build/app --selftest; echo done");
	assert_int_equal(s.cases[0].nenv, 3);
	assert_string_equal(s.cases[0].env[0], "MODE=cold");
	assert_string_equal(s.cases[0].env[1], "LEVEL=3");
	assert_string_equal(s.cases[0].env[2], "EXTRA=x=y");
	assert_string_equal(s.cases[0].cwd, "/srv/x/sub");
	assert_true(fabs(s.cases[0].timeout_s - 90) < 1e-9);
	assert_string_equal(s.cases[1].cwd, "/srv/x");
	assert_true(s.cases[1].timeout_s == 0);
	bench_suite_release(&s);

	/* the name defaults to the file name; a long run line (beyond inih's default 200 bytes) is kept whole */
	char longrun[2000];
	memset(longrun, 'a', sizeof longrun);
	memcpy(longrun, "[case a]\nrun = echo ", 20);
	longrun[sizeof longrun - 2] = '\n';
	longrun[sizeof longrun - 1] = '\0';
	assert_int_equal(bench_suite_parse(longrun, "rel/dir/mysuite.ini", &s, &e), PLUMB_OK);
	assert_string_equal(s.name, "mysuite");
	assert_int_equal(strlen(s.cases[0].run), sizeof longrun - 2 - 15);
	bench_suite_release(&s);
}

static const struct {
	const char *text;
	const char *want; /* a substring of the message, which starts with the file and line */
} bad_suites[] = {
	{ "[suite]\nrepeats = ten\n[case a]\nrun = x\n", "s.ini:2: [suite] repeats must be a whole number" },
	{ "[suite]\nrepeats = 0\n", "s.ini:2:" },
	{ "[suite]\nduration = soon\n", "s.ini:2: [suite] duration must be a positive time" },
	{ "[suite]\nrepeatz = 3\n", "s.ini:2: unknown key 'repeatz' in [suite]" },
	{ "[case a]\nrun = x\n[cases b]\nrun = y\n", "s.ini:4: unknown section [cases b]" },
	{ "run = x\n", "s.ini:1: 'run' is outside any section" },
	{ "[case a.b]\nrun = x\n", "s.ini:2: [case a.b]: a case name is letters" },
	{ "[case a]\nrun = x\nrun = y\n", "s.ini:3: [case a] sets 'run' twice" },
	{ "[case a]\nrun = x\nenv = NOVALUE\n", "s.ini:3: [case a] env wants KEY=VALUE words, not 'NOVALUE'" },
	{ "[case a]\nrun = x\ntimeout = -3s\n", "s.ini:3: [case a] timeout must be a positive time" },
	{ "[case a]\nrun = x\njust words here\n", "s.ini:3: not a KEY = VALUE line" },
	{ "[case a\nrun = x\n", "s.ini:1:" },
	{ "[suite]\nname = n\n", "s.ini: no [case NAME] section" },
	{ "[case a]\ncwd = /tmp\n", "s.ini: [case a] has no run = command" },
	{ "[suite]\nrepeats = 3\nduration = 60s\n[case a]\nrun = x\n", "sets both repeats and duration" },
};

static void test_bench_config__suite_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_suites / sizeof bad_suites[0]; i++) {
		struct bench_suite s;
		struct perr e = PERR_INIT;
		enum plumb_err rc = bench_suite_parse(bad_suites[i].text, "s.ini", &s, &e);
		if (rc != PLUMB_EFORMAT || !strstr(e.msg, bad_suites[i].want) || strncmp(e.msg, "s.ini", 5) != 0)
			fail_msg("case %zu: rc %d, message '%s', want '%s'", i, rc, e.msg, bad_suites[i].want);
	}
}

static void test_bench_config__suite_missing_file(void **state)
{
	(void)state;
	struct bench_suite s;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_suite_load("/nonexistent/suite.ini", &s, &e), PLUMB_ENOENT);
	assert_non_null(strstr(e.msg, "/nonexistent/suite.ini"));
}

static void test_bench_config__catalog(void **state)
{
	(void)state;
	const char *text = "[catalog]\nschema = plumb.catalog.v1\nmin_samples = 4\n"
			   "[metric cold-start.wall_ms]\nkind = latency\nunit = ms\nbetter = lower\ntier = core\n"
			   "required = lifecycle, smoke\nslo_p95 = 50\nphase = startup\nowner = src/app/start.c\n"
			   "hint = inspect the config parse\n"
			   "[metric *.max_rss_bytes]\nunit = bytes\nmin_samples = 2\n"
			   "[metric app.ops]\nbetter = higher\n";
	struct bench_catalog c;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_catalog_parse(text, "c.ini", &c, &e), PLUMB_OK);
	assert_int_equal(c.n, 3);
	const struct bench_metric_def *m = bench_catalog_find(&c, "cold-start.wall_ms");
	assert_non_null(m);
	assert_true(m->core);
	assert_int_equal(m->nrequired, 2);
	assert_string_equal(m->required[1], "smoke");
	assert_true(m->slo_p95 == 50);
	assert_true(isnan(m->slo_p50));
	assert_string_equal(m->owner, "src/app/start.c");
	m = bench_catalog_find(&c, "warm.max_rss_bytes");
	assert_non_null(m);
	assert_string_equal(m->name, "*.max_rss_bytes");
	assert_int_equal(bench_metric_min_samples(&c, "warm.max_rss_bytes"), 2);
	assert_int_equal(bench_metric_min_samples(&c, "warm.user_ms"), 4);
	assert_int_equal(bench_catalog_find(&c, "app.ops")->better, BENCH_HIGHER_IS_BETTER);
	assert_null(bench_catalog_find(&c, "warm.user_ms"));
	/* without an entry, only CASE.wall_ms is core */
	assert_true(bench_metric_is_core(&c, "warm.wall_ms"));
	assert_false(bench_metric_is_core(&c, "warm.user_ms"));
	bench_catalog_release(&c);
}

static const struct {
	const char *text;
	const char *want;
} bad_catalogs[] = {
	{ "[catalog]\nschema = plumb.catalog.v9\n", "c.ini:2: schema 'plumb.catalog.v9' is not one this build reads" },
	{ "[metric a.b]\nbetter = faster\n", "c.ini:2: [metric a.b] better is lower or higher" },
	{ "[metric a.b]\ntier = gold\n", "c.ini:2: [metric a.b] tier is core or drilldown" },
	{ "[metric a.b]\nslo_p95 = fast\n", "c.ini:2: [metric a.b] slo_p95 must be a number" },
	{ "[metric a.b]\nownr = me\n", "c.ini:2: unknown key 'ownr' in [metric a.b]" },
	{ "[metric a.b]\nowner = me\nowner = you\n", "c.ini:3: [metric a.b] sets 'owner' twice" },
	{ "[metrics a.b]\nowner = me\n", "c.ini:2: unknown section [metrics a.b]" },
};

static void test_bench_config__catalog_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad_catalogs / sizeof bad_catalogs[0]; i++) {
		struct bench_catalog c;
		struct perr e = PERR_INIT;
		enum plumb_err rc = bench_catalog_parse(bad_catalogs[i].text, "c.ini", &c, &e);
		if (rc != PLUMB_EFORMAT || !strstr(e.msg, bad_catalogs[i].want))
			fail_msg("case %zu: rc %d, message '%s', want '%s'", i, rc, e.msg, bad_catalogs[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bench_config__suite_loads),
		cmocka_unit_test(test_bench_config__suite_errors),
		cmocka_unit_test(test_bench_config__suite_missing_file),
		cmocka_unit_test(test_bench_config__catalog),
		cmocka_unit_test(test_bench_config__catalog_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
