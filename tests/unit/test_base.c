/* test_base.c — the debug gate, the exit-code table, the option parser, the atomic writer, the string tests and
 * the monotonic clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "os/atomic.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/gate.h"
#include "base/opt.h"
#include "base/rand.h"
#include "base/shown.h"
#include "base/str.h"

static void test_base__gate_values(void **state)
{
	(void)state;
	static const char *const off[] = { NULL, "", "0", "false", "FALSE", "No", "off", "OFF", " off ", "  " };
	static const char *const on[] = { "1", "true", "yes", "on", "TRUE", "Yes", " On " };
	/* only the documented on-values turn it on (issue 27): anything else is off, and reads as not understood */
	static const char *const unknown[] = { "disabled", "nope", "junk", "-1", "00", "2", "debug", "1x", "+1" };
	for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
		assert_false(gate_value_enabled(off[i]));
		assert_int_equal(gate_value_read(off[i]), GATE_OFF);
	}
	for (size_t i = 0; i < sizeof on / sizeof on[0]; i++)
		assert_true(gate_value_enabled(on[i]));
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		assert_false(gate_value_enabled(unknown[i]));
		assert_int_equal(gate_value_read(unknown[i]), GATE_UNKNOWN);
	}
}

static void test_base__gate_env(void **state)
{
	(void)state;
	unsetenv("PLUMB_DEBUG");
	assert_false(gate_enabled());
	setenv("PLUMB_DEBUG", "0", 1);
	assert_false(gate_enabled());
	setenv("PLUMB_DEBUG", "1", 1);
	assert_true(gate_enabled());
	unsetenv("PLUMB_DEBUG");
}

static void test_base__exit_codes(void **state)
{
	(void)state;
	/* docs/design.md §3.2's table */
	assert_int_equal(perr_exit_code(PLUMB_OK), 0);
	assert_int_equal(perr_exit_code(PLUMB_EGATE), 1);
	assert_int_equal(perr_exit_code(PLUMB_EEMPTY), 1);
	assert_int_equal(perr_exit_code(PLUMB_ECHECK), 1);
	assert_int_equal(perr_exit_code(PLUMB_EINVAL), 2);
	assert_int_equal(perr_exit_code(PLUMB_ENOENT), 3);
	assert_int_equal(perr_exit_code(PLUMB_EUNSUPPORTED), 3);
	assert_int_equal(perr_exit_code(PLUMB_ETIMEDOUT), 4);
	assert_int_equal(perr_exit_code(PLUMB_EFORMAT), 5);
	assert_int_equal(perr_exit_code(PLUMB_EIO), 5);
	assert_int_equal(perr_exit_code(PLUMB_EOUTPUT), 6);
	struct perr e = PERR_INIT;
	assert_int_equal(perr_set(&e, PLUMB_EFORMAT, "line %d", 7), PLUMB_EFORMAT);
	assert_string_equal(e.msg, "line 7");
}

static void test_base__options(void **state)
{
	(void)state;
	const char *out = NULL;
	long top = 0;
	double interval = 0;
	bool json = false, seen_top = false;
	struct opt_list arts = { 0 };
	const struct opt table[] = {
		{ "output", 'o', OPT_STRING, &out, "PATH", "where", NULL },
		{ "top", 0, OPT_INT, &top, "N", "rows", &seen_top },
		{ "interval", 0, OPT_DOUBLE, &interval, "S", "seconds", NULL },
		{ "json", 0, OPT_FLAG, &json, NULL, "json", NULL },
		{ "artifact", 0, OPT_LIST, &arts, "A", "artifact", NULL },
		{ 0 },
	};
	char *argv[] = { "cmd", "in.json", "-o", "x.folded", "--top=5", "--json", "--interval", "0.5", "--artifact",
			 "a", "--artifact=b", "--", "--not-an-option", NULL };
	struct opt_result r;
	struct perr e = PERR_INIT;
	assert_int_equal(opt_parse(table, 13, argv, &r, &e), OPT_OK);
	assert_string_equal(out, "x.folded");
	assert_int_equal(top, 5);
	assert_true(seen_top);
	assert_true(json);
	assert_true(interval > 0.49 && interval < 0.51);
	assert_int_equal(arts.n, 2);
	assert_string_equal(arts.v[1], "b");
	assert_int_equal(r.npos, 2);
	assert_string_equal(r.pos[0], "in.json");
	assert_int_equal(r.dashdash, 1);
	assert_string_equal(r.pos[1], "--not-an-option");
	opt_result_release(&r);
	opt_list_release(&arts);

	char *bad1[] = { "cmd", "--top", "12x", NULL };
	assert_int_equal(opt_parse(table, 3, bad1, &r, &e), OPT_ERROR);
	assert_int_equal(e.code, PLUMB_EINVAL);
	assert_non_null(strstr(e.msg, "--top"));
	opt_result_release(&r);
	char *bad2[] = { "cmd", "--nope", NULL };
	assert_int_equal(opt_parse(table, 2, bad2, &r, &e), OPT_ERROR);
	opt_result_release(&r);
	char *bad3[] = { "cmd", "-o", NULL };
	assert_int_equal(opt_parse(table, 2, bad3, &r, &e), OPT_ERROR);
	opt_result_release(&r);
	char *help[] = { "cmd", "--help", NULL };
	assert_int_equal(opt_parse(table, 2, help, &r, &e), OPT_HELP);
	opt_result_release(&r);

	double s;
	assert_true(opt_parse_seconds("20s", &s) && s == 20);
	assert_true(opt_parse_seconds("250ms", &s) && s > 0.249 && s < 0.251);
	assert_true(opt_parse_seconds("2m", &s) && s == 120);
	assert_false(opt_parse_seconds("abc", &s));
	assert_false(opt_parse_seconds("5x", &s));
}

static void test_base__atomic_writer(void **state)
{
	(void)state;
	char dir[] = "/tmp/plumb-unit-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof path, "%s/out.txt", dir);
	struct perr e = PERR_INIT;
	/* old content survives an aborted write */
	assert_int_equal(atomic_write_file(path, "old\n", 4, &e), PLUMB_OK);
	struct atomic_file af;
	assert_int_equal(atomic_open(&af, path, &e), PLUMB_OK);
	fputs("half a new fi", af.fp);
	atomic_abort(&af);
	char buf[64] = { 0 };
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, sizeof buf, f), 4);
	fclose(f);
	assert_string_equal(buf, "old\n");
	/* a committed write replaces it whole, mode 0600 */
	assert_int_equal(atomic_write_file(path, "new content\n", 12, &e), PLUMB_OK);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, 12);
	/* no temporary files are left behind */
	char cmd[300];
	snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", dir);
	assert_int_equal(system(cmd), 0);
	/* an unwritable place is PLUMB_EOUTPUT with the errno text */
	assert_int_equal(atomic_write_file("/nonexistent-dir/x", "x", 1, &e), PLUMB_EOUTPUT);
	assert_non_null(strstr(e.msg, "No such file"));
	assert_int_equal(atomic_check_writable(dir, &e), PLUMB_EOUTPUT);
	unlink(path);
	rmdir(dir);
}

static void test_base__str(void **state)
{
	(void)state;
	static const struct {
		const char *s, *affix;
		bool starts, ends;
	} cases[] = {
		{ "profile.json.gz", ".gz", false, true }, { "profile.json.gz", "profile", true, false },
		{ "x", "", true, true },                   { "", "", true, true },
		{ "", "a", false, false },                 { "ab", "abc", false, false },
		{ ".gz", ".gz", true, true },              { "a.GZ", ".gz", false, false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(str_starts_with(cases[i].s, cases[i].affix), cases[i].starts);
		assert_int_equal(str_ends_with(cases[i].s, cases[i].affix), cases[i].ends);
	}
	assert_true(mem_ends_with("main_[k]xyz", 8, "_[k]"));
	assert_false(mem_ends_with("main_[k]xyz", 7, "_[k]"));
	assert_false(mem_ends_with("k]", 2, "_[k]"));
	static const struct {
		uint64_t v;
		const char *text;
	} nums[] = { { 0, "0" },           { 999, "999" },         { 1000, "1,000" }, { 9870, "9,870" },
		     { 123456, "123,456" }, { 1234567, "1,234,567" }, { UINT64_MAX, "18,446,744,073,709,551,615" } };
	char buf[32];
	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
		str_commas(buf, sizeof buf, nums[i].v);
		assert_string_equal(buf, nums[i].text);
	}
	char small[4]; /* cut short to fit, always terminated */
	str_commas(small, sizeof small, 1234567);
	assert_string_equal(small, "1,2");
}

/* The one escaper (base/shown.h): control bytes, C1 controls, direction overrides and bytes that are not UTF-8
 * are escaped, printable UTF-8 passes, and a long text is cut with a marker. */
static void test_base__shown(void **state)
{
	(void)state;
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "plumb.evidence.v\x1b[2J\x1b]0;PWN\x07", "plumb.evidence.v\\x1b[2J\\x1b]0;PWN\\x07" },
		{ "a\nb\tc\rd", "a\\nb\\tc\\rd" },
		{ "del\x7f", "del\\x7f" },
		{ "csi\xc2\x9b", "csi\\u009b" },
		{ "rlo\xe2\x80\xae", "rlo\\u202e" },
		{ "bad\xff\xc3", "bad\\xff\\xc3" },
		{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" },
		{ "", "" },
	};
	char buf[256];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		shown_escape(buf, sizeof buf, cases[i].in, strlen(cases[i].in), SHOWN_LINE_MAX);
		assert_string_equal(buf, cases[i].out);
	}
	/* cut at max, never inside a character or an escape, with the marker */
	shown_escape(buf, sizeof buf, "abcdef", 6, 3);
	assert_string_equal(buf, "abc [... 3 more bytes]");
	shown_escape(buf, sizeof buf, "\xc3\xa9\xc3\xa9", 4, 3);
	assert_string_equal(buf, "\xc3\xa9 [... 2 more bytes]");
	/* a buffer too small for the text: cut to fit, still with the marker, still terminated */
	char big[5000];
	memset(big, 'A', sizeof big);
	char small[100];
	size_t n = shown_escape(small, sizeof small, big, sizeof big, SHOWN_LINE_MAX);
	assert_true(n < sizeof small);
	assert_non_null(strstr(small, " more bytes]"));
	memset(big, 0x1b, sizeof big);
	n = shown_escape(small, sizeof small, big, sizeof big, SHOWN_LINE_MAX);
	assert_null(strchr(small, 0x1b));
	assert_true(n < sizeof small);
}

static void test_base__clock(void **state)
{
	(void)state;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t before = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	uint64_t a = mono_ns(), b = mono_ns();
	assert_true(a >= before && b >= a);
	assert_true(mono_seconds() * 1e9 >= (double)b - 1e3);
	struct timespec t = ns_timespec(3000000007ULL);
	assert_int_equal(t.tv_sec, 3);
	assert_int_equal(t.tv_nsec, 7);
}

/* The sampling intervals (base/rand.h): mean/2 plus an exponential of mean/2, so a mean of the interval, a
 * standard deviation of half of it, nothing below half (the bounds are 6 standard errors of 200,000 draws); the
 * log without libm agrees with libm's to 1e-6; a seed gives its sequence again. */
static void test_base__rand_intervals(void **state)
{
	(void)state;
	struct rand64 r, again;
	rand64_seed(&r, 42);
	rand64_seed(&again, 42);
	const uint64_t mean = 5000000;
	double sum = 0, sum2 = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	const int n = 200000;
	for (int i = 0; i < n; i++) {
		uint64_t x = rand64_interval_ns(&r, mean);
		assert_int_equal(x, rand64_interval_ns(&again, mean));
		sum += (double)x;
		sum2 += (double)x * (double)x;
		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	double m = sum / n, sd = __builtin_sqrt(sum2 / n - m * m);
	assert_true(m > mean * (1 - 6 * 0.5 / 447.2) && m < mean * (1 + 6 * 0.5 / 447.2));
	assert_true(sd > mean * 0.48 && sd < mean * 0.52);
	assert_true(lo >= mean / 2 && hi <= mean * RAND_MAX_FACTOR);
	for (double u = 1e-9; u < 1; u *= 1.7) {
		double want = -__builtin_log(u), got = rand64_neg_log(u);
		assert_true(got - want < 1e-6 * (1 + want) && want - got < 1e-6 * (1 + want));
	}
	assert_true(rand64_neg_log(1.0) < 1e-12 && rand64_neg_log(1.0) > -1e-12);
	assert_true(rand64_interval_ns(&r, 10) >= RAND_MIN_INTERVAL_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base__gate_values),
		cmocka_unit_test(test_base__rand_intervals),
		cmocka_unit_test(test_base__gate_env),
		cmocka_unit_test(test_base__exit_codes),
		cmocka_unit_test(test_base__options),
		cmocka_unit_test(test_base__atomic_writer),
		cmocka_unit_test(test_base__str),
		cmocka_unit_test(test_base__shown),
		cmocka_unit_test(test_base__clock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
