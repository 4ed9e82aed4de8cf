/* test_diff_folded.c — the differential folded library against inferno's diff-folded cases (default, normalize,
 * strip-hex, fractional counts with exactly one warning, an unparsable line with exactly one warning, both given
 * to the warning callback, nothing printed), the line writer, and reading a two-column file back into two
 * profiles (format/diff_folded.h). Run from the repository root (make check does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/diff_folded.h"
#include "base/sbuf.h"
#include "format/diff_folded.h"
#include "format/folded_line.h"
#include "format/stream.h"

#define DIR "tests/fixtures/inferno/diff-folded/"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, trailing-space-trimmed non-empty lines of a text (modifies it). */
static size_t lines_of(char *text, char **out, size_t max)
{
	size_t n = 0;
	for (char *l = strtok(text, "\n"); l && n < max; l = strtok(NULL, "\n")) {
		size_t len = strlen(l);
		while (len && (l[len - 1] == ' ' || l[len - 1] == '\r'))
			l[--len] = '\0';
		if (len)
			out[n++] = l;
	}
	qsort(out, n, sizeof *out, cmp_str);
	return n;
}

static void collect(void *ctx, const char *msg)
{
	struct sbuf *sb = ctx;
	sbuf_addstr(sb, "warning: ");
	sbuf_addstr(sb, msg);
	sbuf_addch(sb, '\n');
}

/* Runs the library on BEFORE and after.txt with `opt`; returns its result, the output and the warnings. */
static enum plumb_err run(const char *before, struct diff_folded_opts opt, char **output, char **warnings)
{
	char *text[2] = { slurp(before), slurp(DIR "after.txt") };
	assert_non_null(text[0]);
	assert_non_null(text[1]);
	struct fmt_stream st[2];
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_stream_mem(&st[0], text[0], strlen(text[0]), before, &e), PLUMB_OK);
	assert_int_equal(fmt_stream_mem(&st[1], text[1], strlen(text[1]), "after", &e), PLUMB_OK);
	struct diff_folded_input in[2] = { { before, &st[0] }, { "after", &st[1] } };
	struct sbuf warn = SBUF_INIT;
	opt.warn = collect;
	opt.warn_ctx = &warn;
	size_t len = 0;
	FILE *out = open_memstream(output, &len);
	assert_non_null(out);
	enum plumb_err rc = diff_folded_from_readers(&opt, &in[0], &in[1], out, &e);
	assert_false(ferror(out));
	fclose(out);
	fmt_stream_close(&st[0]);
	fmt_stream_close(&st[1]);
	*warnings = strdup(warn.buf);
	sbuf_release(&warn);
	free(text[0]);
	free(text[1]);
	return rc;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void check_case(const char *before, struct diff_folded_opts opt, const char *expected_file,
		       const char *warning)
{
	char *out, *warn;
	assert_int_equal(run(before, opt, &out, &warn), PLUMB_OK);
	char *exp = slurp(expected_file);
	assert_non_null(out);
	assert_non_null(exp);
	char *got_lines[256], *exp_lines[256];
	size_t ng = lines_of(out, got_lines, 256), ne = lines_of(exp, exp_lines, 256);
	assert_int_equal(ng, ne);
	for (size_t i = 0; i < ng; i++)
		assert_string_equal(got_lines[i], exp_lines[i]);
	if (warning)
		assert_int_equal(count(warn, warning), 1);
	else
		assert_int_equal(count(warn, "warning"), 0);
	free(out);
	free(warn);
	free(exp);
}

static void test_diff_folded__default(void **state)
{
	(void)state;
	check_case(DIR "before.txt", (struct diff_folded_opts)DIFF_FOLDED_OPTS_INIT, DIR "results/default.txt", NULL);
}

static void test_diff_folded__normalize(void **state)
{
	(void)state;
	struct diff_folded_opts opt = DIFF_FOLDED_OPTS_INIT;
	opt.normalize = true;
	check_case(DIR "before.txt", opt, DIR "results/normalize.txt", NULL);
}

static void test_diff_folded__strip_hex(void **state)
{
	(void)state;
	struct diff_folded_opts opt = DIFF_FOLDED_OPTS_INIT;
	opt.strip_hex = true;
	check_case(DIR "before.txt", opt, DIR "results/strip_hex.txt", NULL);
}

static void test_diff_folded__fractionals(void **state)
{
	(void)state;
	check_case(DIR "before_fractionals.txt", (struct diff_folded_opts)DIFF_FOLDED_OPTS_INIT, DIR "results/fractionals.txt",
		   "fractional sample counts");
}

static void test_diff_folded__bad_line_warns_once(void **state)
{
	(void)state;
	char *out, *warn;
	assert_int_equal(run(DIR "bad_before.txt", (struct diff_folded_opts)DIFF_FOLDED_OPTS_INIT, &out, &warn), PLUMB_OK);
	assert_int_equal(count(warn, "Unable to parse line: "), 1);
	assert_non_null(strstr(warn, DIR "bad_before.txt: Unable to parse line: "));
	assert_non_null(strstr(out, "dd;[unknown];[dd] 3 7"));
	free(out);
	free(warn);
}

static void test_diff_folded__empty_inputs(void **state)
{
	(void)state;
	struct fmt_stream st[2];
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_stream_mem(&st[0], "", 0, "empty", &e), PLUMB_OK);
	assert_int_equal(fmt_stream_mem(&st[1], "", 0, "empty", &e), PLUMB_OK);
	const struct diff_folded_input none[2] = { { "empty", &st[0] }, { "empty", &st[1] } };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	assert_int_equal(diff_folded_from_readers(NULL, &none[0], &none[1], out, &e), PLUMB_OK);
	fclose(out);
	fmt_stream_close(&st[0]);
	fmt_stream_close(&st[1]);
	assert_int_equal(len, 0);
	free(text);
}

static void test_diff_folded__write_line(void **state)
{
	(void)state;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	assert_non_null(out);
	fmt_diff_folded_write_line(out, "main;a;bXX", 8, 3, 18446744073709551615ull);
	fmt_diff_folded_write_line(out, "", 0, 0, 0);
	fclose(out);
	assert_string_equal(text, "main;a;b 3 18446744073709551615\n 0 0\n");
	free(text);
}

static void test_diff_folded__two_column_read_back(void **state)
{
	(void)state;
	const char text[] = "main;a 3 5\nmain;b 7 0\nnot a line\n";
	assert_true(fmt_diff_folded_is_two_column(text, sizeof text - 1));
	assert_false(fmt_diff_folded_is_two_column("main;a 3\n", 9));
	struct profile *before = NULL, *after = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_diff_folded_read(text, sizeof text - 1, NULL, &before, &after, &e), PLUMB_OK);
	assert_int_equal(profile_total_weight(before), 10);
	assert_int_equal(profile_total_weight(after), 5);
	profile_free(before);
	profile_free(after);
}

/* The one folded splitter: one or two counts, blanks and CR, comments, fractions, and a count past 64 bits. */
static void test_diff_folded__splitter(void **state)
{
	(void)state;
	struct fmt_folded_line fl;
#define SPLIT(text) fmt_folded_split(text, text + strlen(text), &fl)
	assert_int_equal(SPLIT("  main;a b 12\r"), FOLDED_DATA);
	assert_int_equal(fl.stack_len, 8);
	assert_memory_equal(fl.stack, "main;a b", 8);
	assert_int_equal(fl.count, 12);
	assert_false(fl.two);
	assert_int_equal(SPLIT("main;a 3\t 18446744073709551615"), FOLDED_DATA);
	assert_true(fl.two);
	assert_int_equal(fl.stack2_len, 6);
	assert_int_equal(fl.count2, 3);
	assert_int_equal(fl.count, UINT64_MAX);
	assert_int_equal(fl.stack_len, 8); /* the one-column view keeps "3" in its stack */
	assert_int_equal(SPLIT("main;a 2.50"), FOLDED_DATA);
	assert_int_equal(fl.count, 2);
	assert_true(fl.fraction);
	assert_int_equal(SPLIT("main;a 18446744073709551616"), FOLDED_OVERFLOW);
	assert_int_equal(SPLIT("main;a 18446744073709551617 1"), FOLDED_OVERFLOW);
	assert_int_equal(SPLIT("main;a 1 99999999999999999999"), FOLDED_OVERFLOW);
	assert_int_equal(SPLIT("# main;a 1"), FOLDED_NONE);
	assert_int_equal(SPLIT(" \t\r"), FOLDED_NONE);
	assert_int_equal(SPLIT("main;a"), FOLDED_BAD);
	assert_int_equal(SPLIT("12"), FOLDED_BAD);
	assert_int_equal(SPLIT("main;a .5"), FOLDED_BAD);
	assert_int_equal(SPLIT("main;a 1.2.3"), FOLDED_BAD);
	assert_int_equal(SPLIT("main;a1"), FOLDED_BAD);
	assert_int_equal(SPLIT("3 4"), FOLDED_DATA); /* the stack "3", one count */
	assert_false(fl.two);
#undef SPLIT
}

/* Every reader refuses an overflowing count (exit 5), in the one-column view (the diff library) too. */
static void test_diff_folded__overflow_refused(void **state)
{
	(void)state;
	const char text[] = "main;a 18446744073709551617 1\n";
	struct profile *before = NULL, *after = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_diff_folded_read(text, sizeof text - 1, NULL, &before, &after, &e), PLUMB_EFORMAT);
	struct profile *p = profile_new();
	static const struct fmt_read_opts lenient = { .lenient = true };
	assert_int_equal(fmt_folded_read_opts(text, sizeof text - 1, &lenient, p, &e), PLUMB_EFORMAT);
	profile_free(p);
	struct fmt_stream st[2];
	assert_int_equal(fmt_stream_mem(&st[0], text, sizeof text - 1, "a", &e), PLUMB_OK);
	assert_int_equal(fmt_stream_mem(&st[1], "main;a 1\n", 9, "b", &e), PLUMB_OK);
	const struct diff_folded_input in[2] = { { "a", &st[0] }, { "b", &st[1] } };
	char *out_text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&out_text, &len);
	assert_int_equal(diff_folded_from_readers(NULL, &in[0], &in[1], out, &e), PLUMB_EFORMAT);
	fclose(out);
	assert_int_equal(len, 0);
	free(out_text);
	fmt_stream_close(&st[0]);
	fmt_stream_close(&st[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_folded__default),
		cmocka_unit_test(test_diff_folded__normalize),
		cmocka_unit_test(test_diff_folded__strip_hex),
		cmocka_unit_test(test_diff_folded__fractionals),
		cmocka_unit_test(test_diff_folded__bad_line_warns_once),
		cmocka_unit_test(test_diff_folded__write_line),
		cmocka_unit_test(test_diff_folded__empty_inputs),
		cmocka_unit_test(test_diff_folded__two_column_read_back),
		cmocka_unit_test(test_diff_folded__splitter),
		cmocka_unit_test(test_diff_folded__overflow_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
