/* test_progress.c — the progress line (base/progress.h): nothing before the delay, at most one redraw per
 * interval, a line cut to the terminal's width, erased at the end and before a message, never on a pipe through
 * progress_new(), and every call harmless on NULL. A fake clock drives time; the display draws into a pipe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "ui/report.h"
#include "ui/progress.h"

#define MS 1000000ULL

static uint64_t fake_now(void *ctx)
{
	return *(uint64_t *)ctx;
}

struct rig {
	int rd, wr;
	uint64_t now;
	struct progress *p;
	char got[8192];
};

static void rig_open(struct rig *r, const char *label, unsigned columns)
{
	int fds[2];
	assert_int_equal(pipe2(fds, O_NONBLOCK), 0);
	r->rd = fds[0];
	r->wr = fds[1];
	r->now = 1000 * MS;
	struct progress_opts o = PROGRESS_OPTS_INIT;
	o.fd = r->wr;
	o.columns = columns;
	o.now_ns = fake_now;
	o.now_ctx = &r->now;
	r->p = progress_new_opts(label, &o);
	assert_non_null(r->p);
}

/* What was drawn since the last call. */
static const char *rig_read(struct rig *r)
{
	ssize_t n = read(r->rd, r->got, sizeof r->got - 1);
	r->got[n > 0 ? n : 0] = '\0';
	return r->got;
}

static void rig_close(struct rig *r)
{
	close(r->rd);
	close(r->wr);
}

static void test_progress__delay_and_throttle(void **state)
{
	(void)state;
	struct rig r;
	rig_open(&r, "reading big.json", 200);
	/* short work stays silent */
	progress_bytes(r.p, 10, 1000);
	r.now += 1999 * MS;
	progress_bytes(r.p, 20, 1000);
	assert_string_equal(rig_read(&r), "");
	/* past ~2 s: the first redraw */
	r.now += 1 * MS;
	progress_bytes(r.p, 450, 1000);
	assert_string_equal(rig_read(&r), "\rreading big.json: 45% (450 B of 1.0 kB)\033[K");
	/* within 100 ms: no redraw, however many reports */
	for (int i = 0; i < 50; i++) {
		r.now += 1 * MS;
		progress_bytes(r.p, 460 + (uint64_t)i, 1000);
	}
	assert_string_equal(rig_read(&r), "");
	r.now += 50 * MS;
	progress_bytes(r.p, 224000000 / 2, 224000000);
	assert_string_equal(rig_read(&r), "\rreading big.json: 50% (112.0 of 224.0 MB)\033[K");
	/* the end erases the line */
	progress_end(r.p);
	assert_string_equal(rig_read(&r), "\r\033[K");
	rig_close(&r);
}

static void test_progress__kinds(void **state)
{
	(void)state;
	struct rig r;
	rig_open(&r, "recording", 200);
	r.now += 3000 * MS;
	progress_record(r.p, 12.34, 4321, 351.4);
	assert_string_equal(rig_read(&r), "\rrecording: 12.3s, 4,321 samples, 351/s effective\033[K");
	r.now += 100 * MS;
	progress_record(r.p, 12.44, 1, 0.5);
	assert_string_equal(rig_read(&r), "\rrecording: 12.4s, 1 sample, 0/s effective\033[K");
	progress_label(r.p, "bench run fib");
	progress_count(r.p, 3, 10, "runs"); /* a new label redraws at once */
	assert_string_equal(rig_read(&r), "\rbench run fib: 3/10 runs\033[K");
	progress_label(r.p, "reading -");
	progress_bytes(r.p, 1500000, 0); /* a pipe: no total */
	assert_string_equal(rig_read(&r), "\rreading -: 1.5 MB\033[K");
	progress_label(r.p, "x");
	progress_bytes(r.p, 999, 2500); /* units differ: each has its own */
	assert_string_equal(rig_read(&r), "\rx: 39% (999 B of 2.5 kB)\033[K");
	progress_end(r.p);
	assert_string_equal(rig_read(&r), "\r\033[K");
	rig_close(&r);
}

static void test_progress__cut_to_width(void **state)
{
	(void)state;
	struct rig r;
	/* 20 columns: at most 19 characters so the cursor never wraps; never inside a UTF-8 character */
	rig_open(&r, "reading caf\xc3\xa9-\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9.json", 20);
	r.now += 2500 * MS;
	progress_bytes(r.p, 1, 2);
	const char *got = rig_read(&r);
	assert_string_equal(got, "\rreading caf\xc3\xa9-\xc3\xa9\xc3\xa9\033[K"); /* 18 bytes: a 19th would split */
	progress_end(r.p);
	rig_close(&r);
}

static void test_progress__message_erases_the_line(void **state)
{
	(void)state;
	struct rig r;
	rig_open(&r, "recording", 200);
	r.now += 2500 * MS;
	progress_record(r.p, 2.5, 10, 4);
	rig_read(&r);
	/* a warning first erases the line (it goes to stderr; the erase goes to the display's fd) */
	int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
	assert_true(saved >= 0 && devnull >= 0);
	dup2(devnull, 2);
	perr_warn("something");
	dup2(saved, 2);
	close(saved);
	close(devnull);
	assert_string_equal(rig_read(&r), "\r\033[K");
	/* the next report redraws at once, even within the interval */
	r.now += 1 * MS;
	progress_record(r.p, 2.5, 11, 4);
	assert_string_equal(rig_read(&r), "\rrecording: 2.5s, 11 samples, 4/s effective\033[K");
	/* an erased display is not erased again at the end */
	progress_clear();
	rig_read(&r);
	progress_end(r.p);
	assert_string_equal(rig_read(&r), "");
	rig_close(&r);
}

static void test_progress__never_on_a_pipe(void **state)
{
	(void)state;
	/* stderr is a pipe: progress_new gives no display, and NULL is harmless everywhere */
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	int saved = dup(2);
	dup2(fds[1], 2);
	assert_false(progress_wanted(2));
	struct progress *p = progress_new("recording", 0);
	dup2(saved, 2);
	close(saved);
	assert_null(p);
	assert_null(progress_new("x", PROGRESS_QUIET));
	progress_bytes(NULL, 1, 2);
	progress_count(NULL, 1, 2, "runs");
	progress_record(NULL, 1, 2, 3);
	progress_label(NULL, "x");
	progress_end(NULL);
	close(fds[0]);
	close(fds[1]);
}

static void test_progress__human_bytes(void **state)
{
	(void)state;
	static const struct {
		uint64_t in;
		const char *out;
	} cases[] = {
		{ 0, "0 B" }, { 999, "999 B" }, { 1000, "1.0 kB" }, { 1536, "1.5 kB" }, { 999949, "999.9 kB" },
		{ 999950, "1.0 MB" }, { 224000000, "224.0 MB" }, { 3200000000ULL, "3.2 GB" },
	};
	char buf[32];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_string_equal(progress_human_bytes(buf, sizeof buf, cases[i].in), cases[i].out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_progress__delay_and_throttle),
		cmocka_unit_test(test_progress__kinds),
		cmocka_unit_test(test_progress__cut_to_width),
		cmocka_unit_test(test_progress__message_erases_the_line),
		cmocka_unit_test(test_progress__never_on_a_pipe),
		cmocka_unit_test(test_progress__human_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
