/* test_term.c — the terminal layer and plumb top's layout (render/term.h, render/top_view.h): text is cut to
 * the width and made safe (no escape sequence from a profile reaches the terminal), keys decode, and a screen
 * of 80x24 or 200x60 (or a resize to 40x10) is exactly that big, with both tables side by side, and the
 * process view keeps the selected row in sight. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/term.h"
#include "render/top_view.h"

static char *fit(const char *s, size_t width, bool pad)
{
	struct sbuf out = SBUF_INIT;
	term_fit(&out, s, width, pad);
	return sbuf_detach(&out, NULL);
}

static void test_term__fit_cuts_and_makes_safe(void **state)
{
	(void)state;
	char *s = fit("work_a (x.c)", 6, false);
	assert_string_equal(s, "work_a");
	free(s);
	s = fit("ab", 5, true);
	assert_string_equal(s, "ab   ");
	free(s);
	/* a process naming itself with escape sequences cannot clear the screen or move the cursor */
	s = fit("evil\033[2J\033]0;title\007\r\nend", 100, false);
	assert_null(strchr(s, '\033'));
	assert_null(strchr(s, '\007'));
	assert_null(strchr(s, '\r'));
	assert_null(strchr(s, '\n'));
	assert_string_equal(s, "evil\\x1b[2J\\x1b]0;title\\x07\\r\\nend");
	free(s);
	/* C1 controls (CSI as U+009B) and bytes that are not UTF-8 too; a real character is one column */
	s = fit("a\xc2\x9b" "b\xff" "\xc3\xa9!", 100, false);
	assert_string_equal(s, "a\\u009bb\\xff\xc3\xa9!");
	free(s);
	/* an escape is never cut in two: it is shown whole or not at all */
	s = fit("ab\033cd", 4, false);
	assert_string_equal(s, "ab");
	free(s);
	assert_int_equal(term_width("a\033"), 5);
	assert_int_equal(term_width("\xc3\xa9t\xc3\xa9"), 3);
	s = fit("\xc3\xa9t\xc3\xa9", 2, false);
	assert_string_equal(s, "\xc3\xa9t");
	free(s);
}

static void test_term__keys(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		int key;
		size_t used;
	} cases[] = {
		{ "q", 'q', 1 },
		{ "\r", TERM_KEY_ENTER, 1 },
		{ "\x7f", TERM_KEY_BACKSPACE, 1 },
		{ "\033[A", TERM_KEY_UP, 3 },
		{ "\033[Bx", TERM_KEY_DOWN, 3 },
		{ "\033OA", TERM_KEY_UP, 3 },
		{ "\033[5~", TERM_KEY_PGUP, 4 },
		{ "\033[6~", TERM_KEY_PGDN, 4 },
		{ "\033[1~", TERM_KEY_HOME, 4 },
		{ "\033[F", TERM_KEY_END, 3 },
		{ "\033", TERM_KEY_ESC, 1 },
		{ "\033q", TERM_KEY_ESC, 1 },
		{ "\033[", TERM_KEY_NONE, 0 },     /* cut short: wait for the rest */
		{ "\033[12", TERM_KEY_NONE, 0 },
		{ "\033[1;5A", TERM_KEY_UP, 6 },   /* with a modifier */
		{ "\033[200~", TERM_KEY_UNKNOWN, 6 },
		{ "", TERM_KEY_NONE, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t used = 99;
		int key = term_key(cases[i].in, strlen(cases[i].in), &used);
		if (key != cases[i].key || used != cases[i].used)
			fail_msg("case %zu: key %d used %zu", i, key, used);
	}
}

/* The visible lines of a frame: escape sequences taken out, split at "\r\n". */
static size_t screen_lines(const char *frame, char lines[][512], size_t max)
{
	size_t n = 0, k = 0;
	lines[0][0] = '\0';
	for (const char *p = frame; *p; p++) {
		if (*p == '\033') {
			p++;
			if (*p == '[')
				while (p[1] && !(p[1] >= 0x40 && p[1] <= 0x7e))
					p++;
			p++;
			continue;
		}
		if (*p == '\r' && p[1] == '\n') {
			p++;
			if (++n >= max)
				return n;
			k = 0;
			lines[n][0] = '\0';
			continue;
		}
		if (k < 511) {
			lines[n][k++] = *p;
			lines[n][k] = '\0';
		}
	}
	return n + 1;
}

static const struct top_row window_rows[] = {
	{ "work_a (targets/splitswitch.c)", 50.2, 50.2 },
	{ "work_b (targets/splitswitch.c)", 29.9, 29.9 },
	{ "a_function_with_a_very_long_name_that_cannot_fit_in_half_of_eighty_columns (src/x.c)", 19.9, 20.0 },
};
static const struct top_row session_rows[] = {
	{ "work_a (targets/splitswitch.c)", 49.0, 49.0 },
	{ "work_b (targets/splitswitch.c)", 31.0, 31.0 },
};

static struct top_model model(void)
{
	struct top_model m = { 0 };
	m.header = "plumb top | pid 42 splitswitch | perf_event/dwarf cpu | 200/s | 600 samples | 0 lost | CPU 99%";
	m.mode_line = "leaf | sort by share | filter: none | last 1.0s | session 3.0s";
	m.primary = "own%";
	m.secondary = "total%";
	m.what = "function";
	m.tables[0] = (struct top_table){ "last 1.0s", window_rows, 3 };
	m.tables[1] = (struct top_table){ "session 3.0s", session_rows, 2 };
	m.status = "q quit";
	m.status_cursor = -1;
	return m;
}

static void check_size(const struct top_model *m, int rows, int cols)
{
	struct term_frame f = { 0 };
	static char lines[100][512];
	top_view_draw(&f, m, rows, cols);
	size_t n = screen_lines(f.out.buf, lines, 100);
	assert_int_equal(n, (size_t)rows);
	for (size_t i = 0; i < n; i++)
		if (term_width(lines[i]) > (size_t)cols)
			fail_msg("%dx%d: line %zu is %zu columns: '%s'", cols, rows, i, term_width(lines[i]), lines[i]);
	if (!m->processes && rows >= 6) {
		/* both tables on one line: the window's first row left, the session's right */
		assert_non_null(strstr(lines[4], "work_a"));
		assert_non_null(strstr(lines[4], " | "));
		assert_true(strstr(lines[4], "work_a") < strstr(lines[4], " | "));
		assert_non_null(strstr(strstr(lines[4], " | "), "work_a"));
		assert_non_null(strstr(lines[4], "50.2"));
		assert_non_null(strstr(lines[4], "49.0"));
		assert_non_null(strstr(lines[2], "last 1.0s"));
		assert_non_null(strstr(lines[2], "session 3.0s"));
	}
	assert_string_equal(lines[rows - 1], m->status);
	term_frame_release(&f);
}

static void test_term__top_view_sizes(void **state)
{
	(void)state;
	struct top_model m = model();
	check_size(&m, 24, 80);
	check_size(&m, 60, 200);
	check_size(&m, 10, 40); /* a small terminal after a resize still gets a whole, fitting screen */
	check_size(&m, 5, 80);
}

static void test_term__process_view_keeps_selection_in_sight(void **state)
{
	(void)state;
	struct top_proc_row procs[50];
	char names[50][16];
	for (int i = 0; i < 50; i++) {
		snprintf(names[i], sizeof names[i], "proc%02d", i);
		procs[i] = (struct top_proc_row){ (uint32_t)(1000 + i), names[i], 50.0 - i, 40.0 - i / 2.0 };
	}
	struct top_model m = model();
	m.processes = true;
	m.procs = procs;
	m.nprocs = 50;
	m.selected = 40;
	check_size(&m, 24, 80);
	struct term_frame f = { 0 };
	top_view_draw(&f, &m, 24, 80);
	assert_non_null(strstr(f.out.buf, "proc40"));
	assert_null(strstr(f.out.buf, "proc10"));
	/* the selected row is drawn in reverse video */
	assert_non_null(strstr(f.out.buf, "\033[7m    1040"));
	term_frame_release(&f);
}

static void test_term__plain(void **state)
{
	(void)state;
	struct top_model m = model();
	struct sbuf out = SBUF_INIT;
	top_view_plain(&out, &m, 2);
	assert_null(strchr(out.buf, '\033'));
	assert_non_null(
		strstr(out.buf, "last 1.0s:\n  own% total%  function\n  50.2   50.2  work_a (targets/splitswitch.c)\n"));
	assert_null(strstr(out.buf, "a_function_with")); /* --top 2 */
	assert_non_null(strstr(out.buf, "session 3.0s:\n"));
	assert_true(out.len > 2 && strcmp(out.buf + out.len - 2, "\n\n") == 0);
	sbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_term__fit_cuts_and_makes_safe),
		cmocka_unit_test(test_term__keys),
		cmocka_unit_test(test_term__top_view_sizes),
		cmocka_unit_test(test_term__process_view_keeps_selection_in_sight),
		cmocka_unit_test(test_term__plain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
