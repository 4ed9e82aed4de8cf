/* test_prom.c — Prometheus' text format as plumb writes it (os/prom.h) and an artifact rendered into it
 * (bench/push.h): names sanitised to the format's rules, label values redacted, made valid UTF-8 and escaped,
 * grouping paths the Pushgateway reads (base64 for anything not plain), the statistics equal to bench_summarize's,
 * a tag a label only when every sample shares it, and URLs with credentials refused (os/http.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/http.h"
#include "os/prom.h"
#include "os/prom_rw.h"
#include "bench/evidence.h"
#include "bench/push.h"
#include "bench/stats.h"

static char *metric_name(const char *in)
{
	struct sbuf sb = SBUF_INIT;
	prom_metric_name(&sb, in);
	return sbuf_detach(&sb, NULL);
}

static char *label_name(const char *in)
{
	struct sbuf sb = SBUF_INIT;
	prom_label_name(&sb, in);
	return sbuf_detach(&sb, NULL);
}

static char *label_value(const char *in)
{
	struct sbuf sb = SBUF_INIT;
	prom_label_value(&sb, in);
	return sbuf_detach(&sb, NULL);
}

static void test_prom__names_are_sanitised(void **state)
{
	(void)state;
	static const struct { const char *in, *metric, *label; } cases[] = {
		{ "plumb_bench_wall_ms", "plumb_bench_wall_ms", "plumb_bench_wall_ms" },
		{ "app.ready-ms", "app_ready_ms", "app_ready_ms" },
		{ "hit-rate.%", "hit_rate__", "hit_rate__" },
		{ "9lives", "_9lives", "_9lives" },
		{ "a:b", "a:b", "a_b" },
		{ "", "_", "_" },
		{ "µs", "__s", "x__s" },  /* two bytes of UTF-8 and an s; a label may not begin "__" */
		{ "__name__", "__name__", "x__name__" }, /* a label name beginning __ is Prometheus' own */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *m = metric_name(cases[i].in), *l = label_name(cases[i].in);
		assert_string_equal(m, cases[i].metric);
		assert_string_equal(l, cases[i].label);
		assert_true(prom_is_label_name(l));
		free(m);
		free(l);
	}
	assert_false(prom_is_label_name("a-b"));
	assert_false(prom_is_label_name("__x"));
	assert_false(prom_is_label_name("1a"));
	assert_true(prom_is_label_name("branch"));
}

static void test_prom__label_values_redacted_and_escaped(void **state)
{
	(void)state;
	char *v = label_value("say \"hi\"\\ now\nnext");
	assert_string_equal(v, "say \\\"hi\\\"\\\\ now\\nnext");
	free(v);
	v = label_value("https://ci.example/hook?token=abc123def456&x=1");
	assert_null(strstr(v, "abc123def456"));
	assert_non_null(strstr(v, "[REDACTED]"));
	free(v);
	v = label_value("key ghp_1234567890abcdefghijABCDEFGHIJ123456");
	assert_null(strstr(v, "ghp_1234567890"));
	free(v);
	v = label_value("bad \xff\xfe utf8 \xc3\xa9");
	assert_string_equal(v, "bad ?? utf8 \xc3\xa9");
	free(v);
}

static void test_prom__sample_lines(void **state)
{
	(void)state;
	struct sbuf sb = SBUF_INIT;
	prom_family(&sb, "x.y", "gauge", "two\nlines \\ here");
	const struct prom_label l[] = { { "a", "1" }, { "empty", "" }, { "b-c", "2" }, { "b_c", "dropped" }, { "n", NULL } };
	prom_sample(&sb, "x.y", l, 5, 1.5);
	prom_sample(&sb, "x.y", NULL, 0, NAN);
	prom_sample(&sb, "x.y", l, 1, INFINITY);
	prom_sample(&sb, "x.y", l, 1, -INFINITY);
	prom_sample(&sb, "x.y", l, 1, 0.1);
	assert_string_equal(sb.buf, "# HELP x_y two\\nlines \\\\ here\n"
				    "# TYPE x_y gauge\n"
				    "x_y{a=\"1\",b_c=\"2\"} 1.5\n"
				    "x_y NaN\n"
				    "x_y{a=\"1\"} +Inf\n"
				    "x_y{a=\"1\"} -Inf\n"
				    "x_y{a=\"1\"} 0.10000000000000001\n");
	sbuf_release(&sb);
}

static void test_prom__grouping_path(void **state)
{
	(void)state;
	struct sbuf sb = SBUF_INIT;
	const struct prom_label key[] = { { "suite", "core" }, { "machine", "ci/7" }, { "branch", "" },
					  { "note", "token=abc123def456" } };
	prom_grouping_path(&sb, "plumb_bench", key, 4);
	/* "ci/7" in base64url is Y2kvNw==; "token=[REDACTED]" is dG9rZW49W1JFREFDVEVEXQ== */
	assert_string_equal(sb.buf, "/metrics/job/plumb_bench/suite/core/machine@base64/Y2kvNw==/branch@base64/="
				    "/note@base64/dG9rZW49W1JFREFDVEVEXQ==");
	sbuf_release(&sb);
}

static void test_prom__urls(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	assert_int_equal(http_check_url("http://127.0.0.1:9091", &e), PLUMB_OK);
	assert_int_equal(http_check_url("https://gw.example/prefix/", &e), PLUMB_OK);
	assert_int_equal(http_check_url("https://u:pw@gw.example/", &e), PLUMB_EINVAL);
	assert_null(strstr(e.msg, "pw"));
	assert_int_equal(http_check_url("ftp://gw.example/", &e), PLUMB_EINVAL);
	assert_int_equal(http_check_url("file:///etc/passwd", &e), PLUMB_EINVAL);
	assert_int_equal(http_check_url("http://", &e), PLUMB_EINVAL);
	assert_int_equal(http_check_url("http://h/?token=x", &e), PLUMB_EINVAL);
	assert_int_equal(http_check_url("http://h/a b", &e), PLUMB_EINVAL);
	assert_int_equal(http_check_url(NULL, &e), PLUMB_EINVAL);
}

/* An artifact of two cases: wall times of `c1`, a program sample with a shared and a varying tag. */
static void make_artifact(struct bench_evidence *ev)
{
	bench_evidence_init(ev);
	ev->suite = strdup("s");
	ev->git_commit = strdup("0123456789abcdef0123456789abcdef01234567");
	ev->git_dirty = 0;
	ev->hostname = strdup("box");
	ev->trust = strdup("optimized");
	ev->created = strdup("2026-12-01T10:00:00Z");
	ev->ncases = 2;
	ev->cases = calloc(2, sizeof *ev->cases);
	ev->cases[0].name = strdup("c1");
	ev->cases[0].trust = strdup("optimized");
	ev->cases[1].name = strdup("c2");
	ev->cases[1].trust = strdup("harness-only");
	static const double wall[] = { 5, 1, 4, 2, 3, 10 };
	for (long i = 0; i < 6; i++)
		assert_true(bench_evidence_add_sample(ev, "c1.wall_ms", "latency", "ms", wall[i], i, NULL));
	for (long i = 0; i < 6; i++) /* the runner's own figure of a sleeping case (b26gate's core metric) */
		assert_true(bench_evidence_add_sample(ev, "c1.unqueued_ms", "latency", "ms", wall[i] - 0.5, i, NULL));
	assert_true(bench_evidence_add_sample(ev, "c2.app.x", "latency", "ms", 7, 0, "{\"k\":\"same\",\"run\":0}"));
	assert_true(bench_evidence_add_sample(ev, "c2.app.x", "latency", "ms", 9, 1, "{\"k\":\"same\",\"run\":1}"));
}

static void test_prom__artifact_rendered(void **state)
{
	(void)state;
	struct bench_evidence ev;
	make_artifact(&ev);
	const struct prom_label extra[] = { { "branch", "main" } };
	struct bench_push_opts o = { NULL, extra, 1 };
	struct sbuf body = SBUF_INIT, path = SBUF_INIT;
	struct perr e = PERR_INIT;
	assert_int_equal(bench_push_render(&ev, &o, &body, &path, &e), PLUMB_OK);
	assert_string_equal(path.buf, "/metrics/job/plumb_bench/suite/s/machine/box/branch/main");
	static const double wall[] = { 5, 1, 4, 2, 3, 10 };
	struct bench_summary s;
	assert_true(bench_summarize(wall, 6, &s));
	char want[512];
	snprintf(want, sizeof want,
		 "plumb_bench_wall_ms{suite=\"s\",case=\"c1\",stat=\"p50\",git_commit=\"0123456789abcdef0123456789abcdef01234567\","
		 "git_dirty=\"false\",machine=\"box\",trust=\"optimized\",branch=\"main\"} %.17g\n", s.p50);
	assert_non_null(strstr(body.buf, want));
	assert_non_null(strstr(body.buf, "# TYPE plumb_bench_wall_ms gauge\n"));
	assert_non_null(strstr(body.buf, "stat=\"count\",git_commit"));
	/* every figure the runner writes is a family of its own, never a sample the program emitted */
	assert_non_null(strstr(body.buf, "# TYPE plumb_bench_unqueued_ms gauge\n"));
	assert_non_null(strstr(body.buf, "plumb_bench_unqueued_ms{suite=\"s\",case=\"c1\",stat=\"count\",git_commit="));
	assert_null(strstr(body.buf, "name=\"unqueued_ms\""));
	/* the shared tag is a label, the one that differs by run is not */
	assert_non_null(strstr(body.buf, "plumb_bench_sample{suite=\"s\",case=\"c2\",stat=\"mean\",name=\"app.x\",unit=\"ms\","
					 "kind=\"latency\",git_commit="));
	assert_non_null(strstr(body.buf, "trust=\"harness-only\",branch=\"main\",tag_k=\"same\"} 8\n"));
	assert_null(strstr(body.buf, "tag_run"));
	assert_non_null(strstr(body.buf, "plumb_bench_run_timestamp_seconds{suite=\"s\",git_commit="));
	assert_non_null(strstr(body.buf, "} 1796119200\n"));
	/* a family is written once: its samples are together */
	const char *first = strstr(body.buf, "# TYPE plumb_bench_sample");
	assert_non_null(first);
	assert_null(strstr(first + 1, "# TYPE plumb_bench_sample"));
	sbuf_release(&body);
	sbuf_release(&path);

	const struct prom_label bad[] = { { "case", "x" } };
	o = (struct bench_push_opts){ NULL, bad, 1 };
	assert_int_equal(bench_push_render(&ev, &o, &body, &path, &e), PLUMB_EINVAL);
	sbuf_release(&body);
	sbuf_release(&path);
	bench_evidence_release(&ev);
	assert_false(bench_push_label_allowed("tag_x"));
	assert_false(bench_push_label_allowed("git_commit"));
	assert_true(bench_push_label_allowed("pipeline"));
}

static void test_prom__remote_write_encoding(void **state)
{
	(void)state;
	struct sbuf text = SBUF_INIT, out = SBUF_INIT;
	sbuf_addstr(&text, "# HELP m x\n# TYPE m gauge\nm{a=\"x\\\"y\"} 1\n");
	const struct prom_label add[] = { { "job", "j" } };
	struct perr e = PERR_INIT;
	assert_int_equal(prom_rw_encode(&text, add, 1, 5, &out, &e), PLUMB_OK);
	/* one TimeSeries: labels __name__=m, a=x"y, job=j (sorted by name), one sample 1.0 at 5 ms */
	static const unsigned char want[] = {
		0x0a, 48,
		0x0a, 13, 0x0a, 8, '_', '_', 'n', 'a', 'm', 'e', '_', '_', 0x12, 1, 'm',
		0x0a, 8, 0x0a, 1, 'a', 0x12, 3, 'x', '"', 'y',
		0x0a, 8, 0x0a, 3, 'j', 'o', 'b', 0x12, 1, 'j',
		0x12, 11, 0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x10, 5,
	};
	assert_int_equal(out.len, sizeof want);
	assert_memory_equal(out.buf, want, sizeof want);
	sbuf_reset(&text);
	sbuf_addstr(&text, "not a sample\n");
	assert_int_equal(prom_rw_encode(&text, add, 1, 5, &out, &e), PLUMB_EFORMAT);
	sbuf_release(&text);
	sbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prom__names_are_sanitised),
		cmocka_unit_test(test_prom__label_values_redacted_and_escaped),
		cmocka_unit_test(test_prom__sample_lines),
		cmocka_unit_test(test_prom__grouping_path),
		cmocka_unit_test(test_prom__urls),
		cmocka_unit_test(test_prom__artifact_rendered),
		cmocka_unit_test(test_prom__remote_write_encoding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
