/* test_python.c — the CPython reader's pure parts: the 3.11 location table, the Python/native stack merge,
 * the py-spy label shortening and folded reading, and target detection on real files and processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "unit_skip.h"

#include "base/sbuf.h"
#include "profile/label.h"
#include "profile/profile.h"
#include "python/layout.h"
#include "python/python.h"
#include "sample/pyspy.h"
#include "sample/python_native.h"

/* f.__code__.co_linetable and list(f.__code__.co_lines()) from Debian's python3.11 for a function with a
 * multi-line expression, a loop, a comprehension and a blank line (first line 1). */
static const uint8_t linetable[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88, 0x32, 0x82, 0x76,
	0x80, 0x76, 0xdd, 0x11, 0x16, 0x90, 0x71, 0x91, 0x18, 0x94, 0x18, 0xf0, 0x00, 0x02, 0x09, 0x19, 0xf0, 0x00,
	0x02, 0x09, 0x19, 0x88, 0x41, 0xd8, 0x0c, 0x0d, 0x90, 0x11, 0x90, 0x61, 0xd8, 0x16, 0x17, 0xf1, 0x03, 0x01,
	0x17, 0x18, 0xf1, 0x00, 0x01, 0x12, 0x19, 0xf1, 0x00, 0x01, 0x0d, 0x19, 0x88, 0x41, 0x88, 0x41, 0xf0, 0x03,
	0x02, 0x09, 0x19, 0xf0, 0x08, 0x01, 0x0d, 0x20, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0xdd, 0x16, 0x1b, 0x98, 0x41,
	0x91, 0x68, 0x94, 0x68, 0xf0, 0x03, 0x01, 0x0d, 0x20, 0xf1, 0x00, 0x01, 0x0d, 0x20, 0xf4, 0x00, 0x01, 0x0d,
	0x20, 0x88, 0x01, 0xf0, 0x06, 0x00, 0x0c, 0x0d, 0x80, 0x48,
};
static const int ranges[][3] = {
	{ 0, 2, 1 }, { 2, 4, 2 }, { 4, 6, 2 }, { 6, 10, 2 }, { 10, 12, 2 }, { 12, 14, 3 }, { 14, 16, 3 },
	{ 16, 22, 3 }, { 22, 24, 3 }, { 24, 36, 4 }, { 36, 38, 4 }, { 38, 42, 4 }, { 42, 52, 4 }, { 52, 54, 4 },
	{ 54, 56, 4 }, { 56, 58, 4 }, { 58, 60, 5 }, { 60, 62, 5 }, { 62, 64, 5 }, { 64, 66, 6 }, { 66, 70, 5 },
	{ 70, 74, 5 }, { 74, 78, 5 }, { 78, 80, 5 }, { 80, 82, 5 }, { 82, 84, 4 }, { 84, 86, 8 }, { 86, 88, 8 },
	{ 88, 100, 9 }, { 100, 102, 9 }, { 102, 106, 9 }, { 106, 116, 9 }, { 116, 118, 8 }, { 118, 122, 8 },
	{ 122, 132, 8 }, { 132, 134, 8 }, { 134, 136, 11 }, { 136, 138, 11 },
};

static void test_python__linetable_matches_co_lines(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
		for (int a = ranges[i][0]; a < ranges[i][1]; a += 2)
			assert_int_equal(py_linetable_line(linetable, sizeof linetable, 1, a), ranges[i][2]);
	assert_int_equal(py_linetable_line(linetable, sizeof linetable, 1, 138), -1); /* past the end */
	assert_int_equal(py_linetable_line(linetable, sizeof linetable, 1, -1), 1);   /* not started */
	assert_int_equal(py_linetable_line(linetable, sizeof linetable, 40, 64), 45); /* relative to first line */
}

/* f.__code__.co_lnotab of pyenv's 3.8.18 and co_linetable of 3.10.13 for the same function (first line 2), with
 * dis.findlinestarts() (3.8) and co_lines() (3.10) of each: the line of every instruction offset. */
static const uint8_t lnotab38[] = { 0, 1, 4, 1, 12, 1, 8, 1, 10, 3, 10, 1 };
static const uint8_t linetable310[] = { 4, 1, 12, 1, 8, 1, 10, 1, 10, 3, 4, 1 };
static const int ranges_old[][3] = { { 0, 4, 3 }, { 4, 16, 4 }, { 16, 24, 5 }, { 24, 34, 6 }, { 34, 44, 9 },
				     { 44, 48, 10 } };

static void test_python__old_line_tables_match_the_interpreters(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof ranges_old / sizeof ranges_old[0]; i++)
		for (int a = ranges_old[i][0]; a < ranges_old[i][1]; a += 2) {
			assert_int_equal(py_lnotab_line(lnotab38, sizeof lnotab38, 2, a), ranges_old[i][2]);
			assert_int_equal(py_pep626_line(linetable310, sizeof linetable310, 2, a), ranges_old[i][2]);
		}
	assert_int_equal(py_pep626_line(linetable310, sizeof linetable310, 2, 48), -1); /* past the end */
	for (size_t n = 0; n < sizeof lnotab38; n++) {                                 /* truncated: no overread */
		(void)py_lnotab_line(lnotab38, n, 2, 46);
		(void)py_pep626_line(linetable310, n, 2, 46);
	}
}

static void test_python__linetable_truncated_is_safe(void **state)
{
	(void)state;
	for (size_t n = 0; n < sizeof linetable; n++)
		(void)py_linetable_line(linetable, n, 1, 136); /* must not read past n bytes (ASan checks) */
	const uint8_t none[] = { 0xf8 };                     /* code 15: no line */
	assert_int_equal(py_linetable_line(none, 1, 7, 0), -1);
}

static void test_python__layout_311(void **state)
{
	(void)state;
	const struct py_layout *L = py_layout_find(3, 11);
	assert_non_null(L);
	assert_true(L->frame_size > L->frame_owner);
	assert_true(L->code_size >= L->code_linetable + 8);
	assert_null(py_layout_find(2, 7));
	const struct py_layout *L12 = py_layout_find(3, 12);
	assert_non_null(L12);
	assert_true(L12->frame_has_cstack && L12->frame_no_is_entry && !L->frame_has_cstack);
}

static void test_python__merge(void **state)
{
	(void)state;
	/* native, innermost first: deflate, zlib_compress, EVAL, call, EVAL, main */
	int is_eval[] = { 0, 0, 1, 0, 1, 0 };
	struct py_frame py[3] = {
		{ .func = "compress_half", .is_entry = false },
		{ .func = "helper", .is_entry = true },
		{ .func = "<module>", .is_entry = true },
	};
	long out[16];
	size_t n = pyn_merge(is_eval, 6, py, 3, out, 16);
	long want[] = { 0, 1, -1, -2, 3, -3, 5 };
	assert_int_equal(n, sizeof want / sizeof want[0]);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i], want[i]);

	/* the native stack was cut (no evaluation-loop frame seen): Python frames go at the outer end */
	int none[] = { 0 };
	n = pyn_merge(none, 1, py, 3, out, 16);
	long want2[] = { 0, -1, -2, -3 };
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i], want2[i]);

	/* no Python frames: the native stack unchanged */
	n = pyn_merge(is_eval, 6, py, 0, out, 16);
	assert_int_equal(n, 6);
	assert_int_equal(out[2], 2);
}

static void check_short(const char *in, const char *want)
{
	struct sbuf sb = SBUF_INIT;
	pyspy_shorten_frame(&sb, in, strlen(in));
	assert_string_equal(sb.buf, want);
	sbuf_release(&sb);
}

static void test_python__pyspy_shorten(void **state)
{
	(void)state;
	check_short("burn_a (/home/u/proj/pkg/mod.py:12)", "burn_a (pkg/mod.py:12)");
	check_short("burn_a (mod.py:12)", "burn_a (mod.py:12)");
	check_short("<module> (/srv/app/main.py:3)", "<module> (app/main.py:3)");
	check_short("process 42:\"python3 x.py\"", "process 42:\"python3 x.py\"");
	check_short("deflate (libz.so.1)", "deflate (libz.so.1)");
}

static void test_python__pyspy_folded(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	struct perr e = PERR_INIT;
	uint64_t total = 0;
	uint32_t th = profile_thread(p, 1, 1, "");
	const char *text = "main (/a/b/c/app.py:5);work (/a/b/c/app.py:9) 30\n"
			   "py-spy> some message\n"
			   "main (/a/b/c/app.py:5) 10\r\n"
			   "\n";
	assert_int_equal(pyspy_read_folded(text, strlen(text), p, th, &total, &e), PLUMB_OK);
	assert_int_equal(total, 40);
	assert_int_equal(profile_total_weight(p), 40);
	struct label_table *t = label_table_build(p, 0);
	assert_non_null(t);
	int found = 0;
	for (size_t i = 0; i < t->n; i++)
		found += strcmp(t->labels[i], "work (c/app.py:9)") == 0;
	assert_int_equal(found, 1);
	label_table_free(t);
	profile_free(p);
}

static void test_python__probe_non_python(void **state)
{
	(void)state;
	struct py_binary_info info;
	assert_false(py_probe_command("/bin/sh", &info));
	assert_false(py_probe_command("/no/such/file", &info));
	assert_false(py_probe_pid(getpid(), &info));
	struct py_proc *py = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(py_open(getpid(), &py, &e), PLUMB_EUNSUPPORTED);
	assert_null(py);
}

static void test_python__probe_python(void **state)
{
	(void)state;
	struct py_binary_info info;
	if (access("/usr/bin/python3.11", X_OK) != 0)
		skip_missing_tool("/usr/bin/python3.11");
	assert_true(py_probe_command("/usr/bin/python3.11", &info));
	assert_int_equal(info.major, 3);
	assert_int_equal(info.minor, 11);
	assert_true(info.supported);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python__linetable_matches_co_lines),
		cmocka_unit_test(test_python__linetable_truncated_is_safe),
		cmocka_unit_test(test_python__old_line_tables_match_the_interpreters),
		cmocka_unit_test(test_python__layout_311),
		cmocka_unit_test(test_python__merge),
		cmocka_unit_test(test_python__pyspy_shorten),
		cmocka_unit_test(test_python__pyspy_folded),
		cmocka_unit_test(test_python__probe_non_python),
		cmocka_unit_test(test_python__probe_python),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
