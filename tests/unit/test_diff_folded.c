/* test_diff_folded.c — differential folded output against inferno's diff-folded cases (default, --normalize,
 * --strip-hex, fractional counts with exactly one warning, an unparsable line with exactly one warning), and
 * reading a two-column file back into two profiles. Run from the repository root (make check does). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/diff_folded.h"

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

/* Runs diff_folded_main with stderr captured; returns its exit code, the output and the warnings. */
static int run(const char *before, const char *extra, char **output, char **warnings)
{
	char out_path[] = "/tmp/plumb-test-diffXXXXXX", err_path[] = "/tmp/plumb-test-errXXXXXX";
	int ofd = mkstemp(out_path), efd = mkstemp(err_path);
	assert_true(ofd >= 0 && efd >= 0);
	close(ofd);
	fflush(stderr);
	int saved = dup(2);
	dup2(efd, 2);
	char *argv[8];
	int argc = 0;
	argv[argc++] = "diff";
	argv[argc++] = (char *)before;
	argv[argc++] = DIR "after.txt";
	argv[argc++] = "--folded";
	argv[argc++] = "-o";
	argv[argc++] = out_path;
	if (extra)
		argv[argc++] = (char *)extra;
	argv[argc] = NULL;
	int code = diff_folded_main(argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(efd);
	*output = slurp(out_path);
	*warnings = slurp(err_path);
	unlink(out_path);
	unlink(err_path);
	return code;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void check_case(const char *before, const char *extra, const char *expected_file, const char *warning)
{
	char *out, *warn;
	assert_int_equal(run(before, extra, &out, &warn), 0);
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
	check_case(DIR "before.txt", NULL, DIR "results/default.txt", NULL);
}

static void test_diff_folded__normalize(void **state)
{
	(void)state;
	check_case(DIR "before.txt", "--normalize", DIR "results/normalize.txt", NULL);
}

static void test_diff_folded__strip_hex(void **state)
{
	(void)state;
	check_case(DIR "before.txt", "--strip-hex", DIR "results/strip_hex.txt", NULL);
}

static void test_diff_folded__fractionals(void **state)
{
	(void)state;
	check_case(DIR "before_fractionals.txt", NULL, DIR "results/fractionals.txt", "fractional sample counts");
}

static void test_diff_folded__bad_line_warns_once(void **state)
{
	(void)state;
	char *out, *warn;
	assert_int_equal(run(DIR "bad_before.txt", NULL, &out, &warn), 0);
	assert_int_equal(count(warn, "Unable to parse line: "), 1);
	assert_non_null(strstr(out, "dd;[unknown];[dd] 3 7"));
	free(out);
	free(warn);
}

static void test_diff_folded__missing_input(void **state)
{
	(void)state;
	char *out, *warn;
	assert_int_equal(run(DIR "no-such-file.txt", NULL, &out, &warn), 5);
	free(out);
	free(warn);
}

static void test_diff_folded__two_column_read_back(void **state)
{
	(void)state;
	const char text[] = "main;a 3 5\nmain;b 7 0\nnot a line\n";
	assert_true(diff_folded_is_two_column(text, sizeof text - 1));
	assert_false(diff_folded_is_two_column("main;a 3\n", 9));
	struct profile *before = NULL, *after = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(diff_folded_read_two_column(text, sizeof text - 1, NULL, &before, &after, &e), PLUMB_OK);
	assert_int_equal(profile_total_weight(before), 10);
	assert_int_equal(profile_total_weight(after), 5);
	profile_free(before);
	profile_free(after);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_folded__default),
		cmocka_unit_test(test_diff_folded__normalize),
		cmocka_unit_test(test_diff_folded__strip_hex),
		cmocka_unit_test(test_diff_folded__fractionals),
		cmocka_unit_test(test_diff_folded__bad_line_warns_once),
		cmocka_unit_test(test_diff_folded__missing_input),
		cmocka_unit_test(test_diff_folded__two_column_read_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
