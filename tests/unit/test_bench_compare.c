/* test_bench_compare.c — verdicts (significance and threshold both needed, inconclusive with too few samples,
 * the metric's better direction), ranking, the artifact's write/read round trip, the runner's duration policy
 * and its PLUMB_SAMPLES line parser. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/redact.h"
#include "bench/compare.h"
#include "bench/config.h"
#include "bench/evidence.h"
#include "bench/machine.h"
#include "bench/runner.h"

static void add_series(struct bench_evidence *ev, const char *name, const char *unit, double base, double step,
		       int n)
{
	for (int i = 0; i < n; i++)
		assert_true(bench_evidence_add_sample(ev, name, "latency", unit, base + step * i, i, NULL));
}

static const struct bench_cmp_row *row(const struct bench_cmp *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->rows[i].metric, name) == 0)
			return &c->rows[i];
	fail_msg("no row %s", name);
	return NULL;
}

static void test_bench_compare__verdicts(void **state)
{
	(void)state;
	struct bench_evidence b, c;
	bench_evidence_init(&b);
	bench_evidence_init(&c);
	/* 10 vs 10, fully separated: p = 2/C(20,10) */
	add_series(&b, "a.wall_ms", "ms", 100, 0.1, 10);
	add_series(&c, "a.wall_ms", "ms", 120, 0.1, 10); /* +20%: slower */
	add_series(&b, "a.tiny_ms", "ms", 100, 0.1, 10);
	add_series(&c, "a.tiny_ms", "ms", 102, 0.1, 10); /* significant but +2% < 5%: ~ */
	add_series(&b, "a.ops", "ops", 100, 1, 10);
	add_series(&c, "a.ops", "ops", 80, 1, 10);       /* higher is better: down 20% is slower */
	add_series(&b, "a.few_ms", "ms", 100, 1, 3);
	add_series(&c, "a.few_ms", "ms", 200, 1, 3);     /* 3 vs 3 can never reach p < 0.05 */
	add_series(&b, "a.fast_ms", "ms", 100, 0.1, 10);
	add_series(&c, "a.fast_ms", "ms", 50, 0.1, 10);  /* -50%: faster */
	add_series(&b, "a.gone_ms", "ms", 1, 0, 5);
	add_series(&c, "a.new_ms", "ms", 1, 0, 5);
	struct bench_catalog cat;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_catalog_parse("[metric a.ops]\nbetter = higher\ntier = core\n"
					     "[metric a.fast_ms]\nowner = src/fast.c\n",
					     "c.ini", &cat, &e),
			 PLUMB_OK);
	struct bench_cmp cmp;
	assert_true(bench_compare(&b, &c, &cat, 5, 0.05, BENCH_RANK_BOTTLENECKS, &cmp));
	assert_int_equal(cmp.n, 7);
	const struct bench_cmp_row *r = row(&cmp, "a.wall_ms");
	assert_string_equal(r->verdict, BENCH_VERDICT_SLOWER);
	assert_true(fabs(r->p - 2.0 / 184756) < 1e-12);
	assert_true(fabs(r->change_pct - 20 * 100 / 100.45) < 0.5);
	assert_true(fabs(r->time_added_ms - 20) < 1e-9);
	assert_true(r->core); /* CASE.wall_ms is core without a catalog entry */
	assert_string_equal(row(&cmp, "a.tiny_ms")->verdict, BENCH_VERDICT_SAME);
	assert_true(row(&cmp, "a.tiny_ms")->p < 0.05);
	assert_string_equal(row(&cmp, "a.ops")->verdict, BENCH_VERDICT_SLOWER);
	assert_true(isnan(row(&cmp, "a.ops")->time_added_ms));
	assert_string_equal(row(&cmp, "a.few_ms")->verdict, BENCH_VERDICT_INCONCLUSIVE);
	assert_string_equal(row(&cmp, "a.fast_ms")->verdict, BENCH_VERDICT_FASTER);
	assert_string_equal(row(&cmp, "a.fast_ms")->def->owner, "src/fast.c");
	assert_string_equal(row(&cmp, "a.gone_ms")->verdict, BENCH_VERDICT_GONE);
	assert_string_equal(row(&cmp, "a.new_ms")->verdict, BENCH_VERDICT_NEW);
	/* bottlenecks: the regressions first, core first (a.ops is core, a.wall_ms core by default: both core;
	 * a.wall_ms added 20 ms, a.ops no time), then the rest; one-sided rows last */
	assert_string_equal(cmp.rows[0].metric, "a.wall_ms");
	assert_string_equal(cmp.rows[1].metric, "a.ops");
	assert_string_equal(cmp.rows[cmp.n - 1].verdict + 0, strcmp(cmp.rows[cmp.n - 1].metric, "a.new_ms") == 0
								     ? BENCH_VERDICT_NEW
								     : BENCH_VERDICT_GONE);
	bench_cmp_release(&cmp);
	/* a higher threshold turns the 20% into ~ */
	assert_true(bench_compare(&b, &c, &cat, 25, 0.05, BENCH_RANK_NAME, &cmp));
	assert_string_equal(row(&cmp, "a.wall_ms")->verdict, BENCH_VERDICT_SAME);
	for (size_t i = 1; i < cmp.n; i++)
		assert_true(strcmp(cmp.rows[i - 1].metric, cmp.rows[i].metric) < 0);
	bench_cmp_release(&cmp);
	bench_catalog_release(&cat);
	bench_evidence_release(&b);
	bench_evidence_release(&c);
}

static void test_bench_compare__artifact_round_trip(void **state)
{
	(void)state;
	struct bench_evidence ev, back;
	bench_evidence_init(&ev);
	ev.suite = strdup("s");
	ev.trust = strdup(BENCH_TRUST_OPTIMIZED);
	ev.repeats = 3;
	ev.warmup = 1;
	ev.git_commit = strdup("0123456789abcdef0123456789abcdef01234567");
	ev.git_dirty = 1;
	ev.cases = calloc(1, sizeof *ev.cases);
	ev.ncases = 1;
	ev.cases[0].name = strdup("c");
	ev.cases[0].trust = strdup(BENCH_TRUST_HARNESS);
	ev.cases[0].command = strdup("run \xff bytes"); /* not UTF-8: kept as '?' */
	ev.cases[0].cwd = strdup("/caf\xc3\xa9/\xff"); /* only the bytes that are not UTF-8 become '?' */
	assert_true(bench_evidence_add_sample(&ev, "c.wall_ms", "latency", "ms", 12.25, 0, NULL));
	assert_true(bench_evidence_add_sample(&ev, "c.app.x", "latency", "ms", 0.5, 1, "{\"k\":\"v\"}"));
	char path[] = "/tmp/plumb-test-evXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct perr e = PERR_INIT;
	assert_int_equal(bench_evidence_write(&ev, path, &e), PLUMB_OK);
	assert_int_equal(bench_evidence_read(path, &back, &e), PLUMB_OK);
	unlink(path);
	assert_string_equal(back.suite, "s");
	assert_int_equal(back.git_dirty, 1);
	assert_int_equal(back.repeats, 3);
	assert_int_equal(back.nsamples, 2);
	assert_string_equal(back.samples[1].name, "c.app.x");
	assert_string_equal(back.samples[1].tags, "{\"k\":\"v\"}");
	assert_true(back.samples[0].value == 12.25);
	assert_string_equal(back.cases[0].trust, BENCH_TRUST_HARNESS);
	assert_string_equal(back.cases[0].command, "run ? bytes");
	assert_string_equal(back.cases[0].cwd, "/caf\xc3\xa9/?");
	assert_ptr_equal(bench_evidence_case_of(&back, "c.app.x"), &back.cases[0]);
	assert_null(bench_evidence_case_of(&back, "cc.wall_ms"));
	bench_evidence_release(&back);
	bench_evidence_release(&ev);
	/* malformed artifacts name the field */
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "[1]", "the top level is not an object" },
		{ "{\"schema\": \"plumb.evidence.v2\"}", "schema 'plumb.evidence.v2'" },
		{ "{\"schema\": \"plumb.evidence.v1\", \"cases\": []}", "samples is not an array" },
		{ "{\"schema\": \"plumb.evidence.v1\", \"cases\": [{\"name\": \"a\", \"trust\": \"great\"}], \"samples\": []}",
		  "cases[0] has a trust" },
		{ "{\"schema\": \"plumb.evidence.v1\", \"cases\": [], \"samples\": [{\"name\": \"a\", \"value\": \"1\"}]}",
		  "samples[0] has a value" },
		{ "{\"schema\": ", "fuzz:1: not JSON" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct perr pe = PERR_INIT;
		assert_int_equal(bench_evidence_parse(bad[i].text, strlen(bad[i].text), "fuzz", &back, &pe), PLUMB_EFORMAT);
		if (!strstr(pe.msg, bad[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, pe.msg, bad[i].want);
	}
}

static void test_bench_compare__streaming_reader(void **state)
{
	(void)state;
	/* many samples (several 64 KiB read chunks) survive a write/read round trip, tags included */
	struct bench_evidence ev, back;
	bench_evidence_init(&ev);
	ev.trust = strdup(BENCH_TRUST_UNKNOWN);
	for (int i = 0; i < 5000; i++)
		assert_true(bench_evidence_add_sample(&ev, i % 2 ? "c.a_ms" : "c.b_ms", "latency", "ms", i * 0.001 + 1e-9, i,
						      i % 7 ? NULL : "{\"k\":\"v\"}"));
	char path[] = "/tmp/plumb-test-evXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct perr e = PERR_INIT;
	assert_int_equal(bench_evidence_write(&ev, path, &e), PLUMB_OK);
	assert_int_equal(bench_evidence_read(path, &back, &e), PLUMB_OK);
	assert_int_equal(back.nsamples, 5000);
	for (size_t i = 0; i < 5000; i++) {
		assert_true(back.samples[i].value == ev.samples[i].value); /* exact: 15 digits, else 17 */
		assert_int_equal(back.samples[i].run, (long)i);
		assert_true((back.samples[i].tags == NULL) == (i % 7 != 0));
	}
	size_t n;
	double *v = bench_evidence_values(&back, "c.a_ms", &n);
	assert_int_equal(n, 2500);
	free(v);
	bench_evidence_release(&back);
	bench_evidence_release(&ev);
	/* a syntax error far into the file names its line */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schema\": \"plumb.evidence.v1\", \"cases\": [],\n \"samples\": [\n", f);
	for (int i = 0; i < 3000; i++)
		fprintf(f, "  {\"name\": \"c.x\", \"value\": %d, \"tags\": {\"a\": [1, {\"b\": null}]}},\n", i);
	fputs("  {\"name\": \"c.x\", \"value\": 1,, }\n ]\n}\n", f); /* line 3003 */
	fclose(f);
	assert_int_equal(bench_evidence_read(path, &back, &e), PLUMB_EFORMAT);
	char want[64];
	snprintf(want, sizeof want, "%s:3003: not JSON", path);
	if (!strstr(e.msg, want))
		fail_msg("'%s' lacks '%s'", e.msg, want);
	unlink(path);
	/* the samples may come before the schema; members nest; the reader keeps none of the tree */
	static const char *const good[] = {
		"{\"samples\": [{\"name\": \"a.b\", \"value\": 2, \"x\": {\"y\": [[], {}]}}], \"cases\": [],"
		" \"schema\": \"plumb.evidence.v1\", \"extra\": [1, 2, {\"z\": true}]}",
	};
	assert_int_equal(bench_evidence_parse(good[0], strlen(good[0]), "t", &back, &e), PLUMB_OK);
	assert_int_equal(back.nsamples, 1);
	bench_evidence_release(&back);
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "{\"schema\": \"plumb.evidence.v1\", \"cases\": [], \"samples\": [], \"samples\": []}", "appears twice" },
		{ "{\"schema\": \"plumb.evidence.v1\", \"cases\": [], \"samples\": {}}", "samples is not an array" },
		{ "{\"schema\": \"plumb.evidence.v1\", \"cases\": [], \"samples\": [7]}", "samples[0] is not an object" },
		{ "{\"schema\": \"plumb.evidence.v1\", \"cases\": [], \"samples\": [{\"name\": \"a\", \"value\": 1e999}]}",
		  "out of range" },
		{ "\"just a string\"", "the top level is not an object" },
		{ "{\"cases\": [], \"samples\": []}", "schema is missing" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct perr pe = PERR_INIT;
		assert_int_equal(bench_evidence_parse(bad[i].text, strlen(bad[i].text), "t", &back, &pe), PLUMB_EFORMAT);
		if (!strstr(pe.msg, bad[i].want))
			fail_msg("case %zu: '%s' lacks '%s'", i, pe.msg, bad[i].want);
	}
}

static void test_bench_compare__duration_policy_and_sample_lines(void **state)
{
	(void)state;
	assert_int_equal(bench_repeats_for_duration(20), 1);
	assert_int_equal(bench_repeats_for_duration(30), 2);
	assert_int_equal(bench_repeats_for_duration(60), 3);
	assert_int_equal(bench_repeats_for_duration(600), 30);
	assert_int_equal(bench_repeats_for_duration(1), 1);
	struct bench_evidence ev;
	bench_evidence_init(&ev);
	const char *good = "{\"name\": \"app.ready_ms\", \"kind\": \"latency\", \"unit\": \"ms\", \"value\": 12.5, "
			   "\"tags\": {\"k\": \"v\"}}";
	assert_true(bench_parse_sample_line(&ev, "cold-start", 4, good, strlen(good)));
	assert_string_equal(ev.samples[0].name, "cold-start.app.ready_ms");
	assert_string_equal(ev.samples[0].unit, "ms");
	assert_int_equal(ev.samples[0].run, 4);
	assert_string_equal(ev.samples[0].tags, "{\"k\":\"v\"}");
	const char *minimal = "{\"name\": \"n\", \"value\": 3}";
	assert_true(bench_parse_sample_line(&ev, "c", 0, minimal, strlen(minimal)));
	static const char *const bad[] = {
		"not json", "[1, 2]", "{\"value\": 1}", "{\"name\": \"\", \"value\": 1}", "{\"name\": \"n\"}",
		"{\"name\": \"n\", \"value\": \"1\"}", "{\"name\": \"n\", \"value\": 1, \"tags\": [1]}",
		"{\"name\": \"n\", \"value\": 1, \"unit\": 5}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (bench_parse_sample_line(&ev, "c", 0, bad[i], strlen(bad[i])))
			fail_msg("accepted %s", bad[i]);
	assert_int_equal(ev.nsamples, 2);
	bench_evidence_release(&ev);
}

/* Tags are free text a program attaches to a sample: every string in them (nested too) is redacted when the
 * line is parsed, keys and numbers are kept. */
static void test_bench_compare__sample_tags_redacted(void **state)
{
	(void)state;
	struct bench_evidence ev;
	bench_evidence_init(&ev);
	const char *line = "{\"name\": \"t_ms\", \"value\": 1, \"tags\": {\"url\": \"https://u:hunter2@h.example/p?token=abc\", "
			   "\"args\": [\"--password=hunter2\", 7], \"plain\": \"src/a.c\"}}";
	assert_true(bench_parse_sample_line(&ev, "c", 0, line, strlen(line)));
	assert_string_equal(ev.samples[0].tags, "{\"args\":[\"--password=[REDACTED]\",7],\"plain\":\"src/a.c\","
						"\"url\":\"https://[REDACTED]@h.example/p?[REDACTED]\"}");
	bench_evidence_release(&ev);
}

static void test_bench_compare__redact_path(void **state)
{
	(void)state;
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "/home/alice", "~" },            /* the home directory itself: the redactor alone leaves it whole */
		{ "/home/alice/", "~" },
		{ "/home/alice/proj", "proj" },    /* the prefix dropped, no slash added */
		{ "/home/alice/proj/", "proj/" },
		{ "/home/bob", "~" },              /* another user's home hides its name too */
		{ "/srv/data", "/srv/data" },
		{ "/", "/" },
		{ "/srv/x?token=abc", "/srv/x?token=[REDACTED]" },
	};
	redact_set_home("/home/alice");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *r = bench_redact_path(cases[i].in);
		assert_non_null(r);
		if (strcmp(r, cases[i].want) != 0)
			fail_msg("'%s' -> '%s', want '%s'", cases[i].in, r, cases[i].want);
		free(r);
	}
	redact_set_home(NULL);
}

static void test_bench_compare__producer_flags(void **state)
{
	(void)state;
	static const struct {
		const char *producer;
		int want;
	} cases[] = {
		/* GCC records its switches (-grecord-gcc-switches is the default) */
		{ "GNU C11 12.2.0 -mtune=generic -march=x86-64 -g -O2 -std=gnu11", 1 },
		{ "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O0", 0 },
		{ "GNU C17 12.2.0 -mtune=generic -march=x86-64 -g", 0 }, /* GCC's default is -O0 */
		{ "GNU C17 12.2.0 -g -Og", 0 },                          /* a debug build */
		{ "GNU C17 12.2.0 -g -O", 1 },                           /* -O is -O1 */
		{ "GNU C17 12.2.0 -Os", 1 },
		{ "GNU C++17 12.2.0 -Ofast -g", 1 },
		{ "GNU C17 12.2.0 -O3 -g -O0", 0 },                      /* the last -O wins */
		{ "GNU C17 12.2.0 -O0 -O2", 1 },
		{ "GNU AS 2.40", -1 },
		{ "Debian clang version 14.0.6", -1 },                   /* clang records no flags by default */
		{ "GNU C17 12.2.0 -fno-omit-frame-pointer -g", 0 },      /* "-fno-o..." is not an -O */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (bench_producer_optimized(cases[i].producer) != cases[i].want)
			fail_msg("'%s': got %d, want %d", cases[i].producer, bench_producer_optimized(cases[i].producer),
				 cases[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bench_compare__verdicts),
		cmocka_unit_test(test_bench_compare__artifact_round_trip),
		cmocka_unit_test(test_bench_compare__streaming_reader),
		cmocka_unit_test(test_bench_compare__duration_policy_and_sample_lines),
		cmocka_unit_test(test_bench_compare__producer_flags),
		cmocka_unit_test(test_bench_compare__sample_tags_redacted),
		cmocka_unit_test(test_bench_compare__redact_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
