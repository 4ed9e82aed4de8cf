/* test_metrics.c — the bounded writer (ring, peaks, 0600), and the reader's refusal of every kind of bad
 * document; plus one real sample of this process and a child. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "os/procfs.h"
#include "metrics/metrics.h"
#include "metrics/proc.h"

static struct mproc mk(int pid, bool main, const char *name, double cpu, uint64_t rss)
{
	struct mproc p;
	memset(&p, 0, sizeof p);
	p.pid = pid;
	p.ppid = main ? 1 : 100;
	p.main = main;
	snprintf(p.name, sizeof p.name, "%s", name);
	p.cpu_pct = cpu;
	p.wakeups_per_s = 3.5;
	p.rss_bytes = rss;
	p.peak_rss_bytes = rss;
	p.private_bytes = main ? MPROC_UNKNOWN : rss / 2;
	p.threads = 2;
	return p;
}

static char tmpdir[64];

static int make_tmp(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/plumb-unit-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmp(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_metrics__ring_bound_and_peaks(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s/ring.json", tmpdir);
	struct metrics_recorder r;
	struct perr e = PERR_INIT;
	assert_int_equal(metrics_recorder_init(&r, path, "ring", getpid(), 0.25, 3, &e), PLUMB_OK);
	for (int i = 0; i < 10; i++) {
		/* sample 2 holds the biggest memory of the whole recording, sample 8 the biggest CPU */
		struct mproc procs[3] = {
			mk(100, true, "root", 1.0, 1000),
			mk(101, false, "worker", i == 8 ? 180.0 : 10.0 + i, i == 2 ? (200u << 20) : 5000u + (uint64_t)i),
			mk(102, false, "we\"ird\xff", 0.5, 7000),
		};
		assert_int_equal(metrics_recorder_add(&r, 1000000 + i * 250, procs, 3, &e), PLUMB_OK);
		assert_int_equal(metrics_recorder_write(&r, i == 9 ? "ended" : "recording", &e), PLUMB_OK);
	}
	metrics_recorder_release(&r);

	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	struct metrics_doc d;
	char *raw = NULL;
	size_t raw_len = 0;
	assert_int_equal(metrics_doc_read_file(path, &d, &raw, &raw_len, &e), PLUMB_OK);
	assert_non_null(raw);
	assert_int_equal(raw_len, (size_t)st.st_size);
	assert_string_equal(d.name, "ring");
	assert_true(d.ended);
	assert_int_equal(d.nsamples, 3); /* bounded */
	assert_int_equal(d.samples_taken, 10);
	assert_int_equal(d.keep, 3);
	assert_int_equal(d.samples[0].t_ms, 1000000 + 7 * 250); /* the newest three, oldest first */
	assert_int_equal(d.samples[2].t_ms, 1000000 + 9 * 250);
	assert_int_equal(d.samples[0].nprocs, 3);
	assert_true(d.samples[0].procs[0].main);
	assert_int_equal(d.samples[0].procs[0].private_bytes, MPROC_UNKNOWN);
	assert_string_equal(d.samples[0].procs[2].name, "we\"ird?"); /* invalid UTF-8 made safe */
	assert_int_equal(d.samples[0].totals.processes, 3);
	assert_true(d.samples[0].totals.cpu_pct > 18.4 && d.samples[0].totals.cpu_pct < 18.6);
	assert_int_equal(d.samples[0].totals.threads, 6);

	struct metrics_peak cpu, mem;
	metrics_doc_window_peaks(&d, &cpu, &mem);
	assert_true(cpu.set && mem.set);
	assert_int_equal(cpu.t_ms, 1000000 + 8 * 250);
	assert_int_equal(cpu.pid, 101);
	assert_true(cpu.cpu_pct > 179.9 && cpu.cpu_pct < 180.1);
	assert_int_equal(mem.t_ms, 1000000 + 9 * 250); /* within the window: the latest has the most */
	/* the recording's peak memory (sample 2) is kept although it left the window */
	assert_true(d.rec_mem.set);
	assert_int_equal(d.rec_mem.t_ms, 1000000 + 2 * 250);
	assert_int_equal(d.rec_mem.pid, 101);
	assert_int_equal(d.rec_mem.rss_bytes, 200u << 20);
	assert_int_equal(d.rec_cpu.t_ms, 1000000 + 8 * 250);
	metrics_doc_release(&d);
	free(raw);

	/* no temporary file is left behind */
	char cmd[256];
	snprintf(cmd, sizeof cmd, "test -z \"$(ls '%s' | grep -v '^ring.json$')\"", tmpdir);
	assert_int_equal(system(cmd), 0);
}

/* Process names are any bytes a program chose (prctl, the name it was exec'd under): the writer redacts each
 * one, in the samples and in the peaks, so no secret-shaped name reaches the artifact. */
static void test_metrics__writer_redacts_names(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s/names.json", tmpdir);
	struct metrics_recorder r;
	struct perr e = PERR_INIT;
	assert_int_equal(metrics_recorder_init(&r, path, "names", getpid(), 1.0, 4, &e), PLUMB_OK);
	struct mproc procs[2] = {
		mk(200, true, "pwd=hunter2", 50.0, 100u << 20), /* the top process for CPU and memory: in both peaks */
		mk(201, false, "plain-worker", 1.0, 1000),
	};
	assert_int_equal(metrics_recorder_add(&r, 5000, procs, 2, &e), PLUMB_OK);
	assert_int_equal(metrics_recorder_write(&r, "ended", &e), PLUMB_OK);
	metrics_recorder_release(&r);

	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char text[16384];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	assert_null(strstr(text, "hunter2"));
	assert_non_null(strstr(text, "\"name\":\"pwd=[REDACTED]\""));
	assert_non_null(strstr(text, "\"name\":\"plain-worker\"")); /* an ordinary name is unchanged */

	struct metrics_doc d;
	assert_int_equal(metrics_doc_read_file(path, &d, NULL, NULL, &e), PLUMB_OK);
	assert_string_equal(d.samples[0].procs[0].name, "pwd=[REDACTED]");
	assert_string_equal(d.rec_cpu.name, "pwd=[REDACTED]");
	assert_string_equal(d.rec_mem.name, "pwd=[REDACTED]");
	metrics_doc_release(&d);
}

static const char *good_doc =
	"{\"schema\":\"plumb.metrics.v1\",\"name\":\"a\",\"state\":\"recording\",\"root\":{\"pid\":5,\"name\":\"a\","
	"\"command\":null},\"every_s\":5.000,\"keep\":2,\"started_ms\":1,\"updated_ms\":2,\"samples_taken\":1,"
	"\"peak\":{\"cpu\":null,\"memory\":null},\"peak_recording\":{\"cpu\":null,\"memory\":null},\"samples\":["
	"{\"t_ms\":2,\"totals\":{\"processes\":1,\"cpu_pct\":1.5,\"wakeups_per_s\":0,\"rss_bytes\":10,"
	"\"private_bytes\":4,\"threads\":1},\"processes\":[{\"pid\":5,\"ppid\":1,\"name\":\"a\",\"role\":\"main\","
	"\"cpu_pct\":1.5,\"wakeups_per_s\":0,\"rss_bytes\":10,\"peak_rss_bytes\":12,\"private_bytes\":4,"
	"\"threads\":1}]}]}";

/* good_doc with the first occurrence of `from` replaced by `to` */
static char *mutate(const char *from, const char *to)
{
	const char *at = strstr(good_doc, from);
	assert_non_null(at);
	size_t n = strlen(good_doc) - strlen(from) + strlen(to) + 1;
	char *out = malloc(n);
	assert_non_null(out);
	snprintf(out, n, "%.*s%s%s", (int)(at - good_doc), good_doc, to, at + strlen(from));
	return out;
}

static void test_metrics__reader_accepts_good(void **state)
{
	(void)state;
	struct metrics_doc d;
	struct perr e = PERR_INIT;
	assert_int_equal(metrics_doc_parse(good_doc, strlen(good_doc), &d, &e), PLUMB_OK);
	assert_int_equal(d.nsamples, 1);
	assert_int_equal(d.samples[0].procs[0].peak_rss_bytes, 12);
	assert_null(d.root_command);
	assert_false(d.ended);
	metrics_doc_release(&d);
}

static void test_metrics__reader_rejects(void **state)
{
	(void)state;
	static const struct {
		const char *from, *to, *says;
	} cases[] = {
		{ "\"schema\":\"plumb.metrics.v1\"", "\"schema\":\"plumb.metrics.v2\"", "does not understand" },
		{ "\"schema\":\"plumb.metrics.v1\"", "\"schema\":\"plumb.stages.v1\"", "not a plumb metrics" },
		{ "\"schema\":\"plumb.metrics.v1\"", "\"schemo\":1", "not a plumb metrics" },
		{ "\"keep\":2", "\"keep\":0", "keep" },
		{ "\"keep\":2", "\"keep\":\"2\"", "keep" },
		{ "\"state\":\"recording\"", "\"state\":\"paused\"", "state" },
		{ "\"t_ms\":2", "\"t_ms\":2.5", "t_ms" },
		{ "\"t_ms\":2,\"totals\"", "\"t_ms\":2,\"scan_ms\":-1,\"totals\"", "scan_ms" },
		{ "\"rss_bytes\":10,\"peak", "\"rss_bytes\":-10,\"peak", "rss_bytes" },
		{ "\"role\":\"main\"", "\"role\":\"boss\"", "role" },
		{ "\"pid\":5,\"ppid\"", "\"pid\":0,\"ppid\"", "pid" },
		{ "\"processes\":[", "\"processes\":{\"x\":[", "" },
		{ "\"processes\":[{", "\"processes\":[7,{", "processes[0]" },
		{ "\"cpu_pct\":1.5,\"wakeups", "\"cpu_pct\":null,\"wakeups", "cpu_pct" },
		{ "\"peak_recording\":{\"cpu\":null", "\"peak_recording\":{\"cpu\":[]", "peak_recording" },
		{ "\"samples\":[", "\"samples\":[{\"t_ms\":1,\"totals\":{},\"processes\":[]},{\"t_ms\":1,\"totals\":{},"
				   "\"processes\":[]},", "samples" }, /* 3 > keep 2 */
		{ "\"name\":\"a\",\"state\"", "\"name\":\"a\",\"name\":\"b\",\"state\"", "JSON" }, /* duplicate key */
		/* counts and times that would wrap a difference or a bound are refused, not used */
		{ "\"t_ms\":2", "\"t_ms\":-9223372036854775807", "t_ms" },
		{ "\"t_ms\":2", "\"t_ms\":9223372036854775807", "t_ms" },
		{ "\"started_ms\":1", "\"started_ms\":-9223372036854775808", "started_ms" },
		{ "\"updated_ms\":2", "\"updated_ms\":9007199254740993", "updated_ms" },
		{ "\"keep\":2", "\"keep\":9223372036854775807", "keep" },
		{ "\"rss_bytes\":10,\"peak", "\"rss_bytes\":18446744073709551615,\"peak", "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *doc = mutate(cases[i].from, cases[i].to);
		struct metrics_doc d;
		struct perr e = PERR_INIT;
		assert_int_equal(metrics_doc_parse(doc, strlen(doc), &d, &e), PLUMB_EFORMAT);
		if (!strstr(e.msg, cases[i].says))
			fail_msg("case %zu: '%s' does not say '%s'", i, e.msg, cases[i].says);
		assert_null(d.samples);
		free(doc);
	}
	/* truncated at every length, and things that are not JSON at all */
	size_t n = strlen(good_doc);
	for (size_t cut = 0; cut < n; cut++) {
		struct metrics_doc d;
		struct perr e = PERR_INIT;
		assert_int_equal(metrics_doc_parse(good_doc, cut, &d, &e), PLUMB_EFORMAT);
	}
	static const char *const junk[] = { "main;a 1\n", "[]", "null", "\"plumb.metrics.v1\"", "{\"schema\":7}" };
	for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
		struct metrics_doc d;
		struct perr e = PERR_INIT;
		assert_int_equal(metrics_doc_parse(junk[i], strlen(junk[i]), &d, &e), PLUMB_EFORMAT);
	}
}

static void test_metrics__read_file_errors(void **state)
{
	(void)state;
	struct metrics_doc d;
	struct perr e = PERR_INIT;
	char path[256];
	snprintf(path, sizeof path, "%s/none.json", tmpdir);
	assert_int_equal(metrics_doc_read_file(path, &d, NULL, NULL, &e), PLUMB_ENOENT);
	assert_int_equal(metrics_doc_read_file(tmpdir, &d, NULL, NULL, &e), PLUMB_EFORMAT); /* a directory: exit 5 */
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_metrics__sample_self_and_child(void **state)
{
	(void)state;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		for (;;)
			pause();
	}
	struct mproc_tracker t;
	struct perr e = PERR_INIT;
	assert_int_equal(mproc_tracker_init(&t, getpid(), &e), PLUMB_OK);
	assert_int_equal(mproc_sample(&t, &e), PLUMB_OK);
	/* burn ~0.3 s of CPU, then sample again: this process was on a CPU for most of the interval */
	double c0 = cpu_seconds();
	struct timespec w0, w1;
	clock_gettime(CLOCK_MONOTONIC, &w0);
	volatile unsigned long x = 0;
	while (cpu_seconds() - c0 < 0.3)
		x++;
	clock_gettime(CLOCK_MONOTONIC, &w1);
	double truth = 100.0 * 0.3 / ((w1.tv_sec - w0.tv_sec) + (w1.tv_nsec - w0.tv_nsec) / 1e9);
	assert_int_equal(mproc_sample(&t, &e), PLUMB_OK);
	assert_int_equal(t.ncur, 2);
	const struct mproc *self = NULL, *kid = NULL;
	for (size_t i = 0; i < t.ncur; i++) {
		if (t.cur[i].pid == getpid())
			self = &t.cur[i];
		if (t.cur[i].pid == child)
			kid = &t.cur[i];
	}
	assert_non_null(self);
	assert_non_null(kid);
	assert_true(self->main);
	assert_false(kid->main);
	assert_int_equal(kid->ppid, getpid());
	assert_true(self->rss_bytes > 0 && self->peak_rss_bytes >= self->rss_bytes);
	assert_true(self->private_bytes != MPROC_UNKNOWN && self->private_bytes > 0);
	assert_true(self->threads >= 1);
	if (self->cpu_pct < truth - 15 || self->cpu_pct > truth + 15)
		fail_msg("cpu %.1f%%, truth %.1f%%", self->cpu_pct, truth);
	assert_true(kid->cpu_pct < 5);

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	assert_int_equal(mproc_sample(&t, &e), PLUMB_OK);
	assert_int_equal(t.ncur, 1); /* children come and go */
	mproc_tracker_release(&t);

	/* a root that does not exist: nothing sampled */
	assert_int_equal(mproc_tracker_init(&t, child, &e), PLUMB_OK);
	assert_int_equal(mproc_sample(&t, &e), PLUMB_OK);
	assert_int_equal(t.ncur, 0);
	mproc_tracker_release(&t);
	assert_false(procfs_alive(child));
	assert_true(procfs_alive(getpid()));
}

/* Writes a recording NAME into dir/metrics/ whose last sample is at t_ms. */
static void write_recording(const char *dir, const char *name, int64_t t_ms)
{
	char path[512];
	snprintf(path, sizeof path, "%s/metrics/%s.json", dir, name);
	struct metrics_recorder r;
	struct perr e = PERR_INIT;
	assert_int_equal(metrics_recorder_init(&r, path, name, getpid(), 1, 4, &e), PLUMB_OK);
	struct mproc procs[1] = { mk(100, true, "root", 1.0, 1000) };
	assert_int_equal(metrics_recorder_add(&r, t_ms, procs, 1, &e), PLUMB_OK);
	assert_int_equal(metrics_recorder_write(&r, "ended", &e), PLUMB_OK);
	metrics_recorder_release(&r);
}

static void count_skipped(void *ctx, const struct perr *why)
{
	(void)why;
	++*(int *)ctx;
}

/* The newest recording of the store wins; the others are named in file-name order, unreadable ones counted. */
static void test_metrics__store_newest(void **state)
{
	(void)state;
	char home[128], dir[160];
	snprintf(home, sizeof home, "%s/home", tmpdir);
	snprintf(dir, sizeof dir, "%s/metrics", home);
	assert_int_equal(mkdir(home, 0700), 0);
	setenv("PLUMB_HOME", home, 1);
	struct metrics_newest n;
	struct perr e = PERR_INIT;
	int skipped = 0;
	assert_int_equal(metrics_store_newest(&n, count_skipped, &skipped, &e), PLUMB_OK); /* no folder yet */
	assert_false(n.found);
	assert_int_equal(n.nfiles, 0);
	assert_string_equal(n.dir, dir);
	metrics_newest_release(&n);
	assert_int_equal(mkdir(dir, 0700), 0);
	write_recording(home, "a", 2000);
	write_recording(home, "b", 3000);
	write_recording(home, "c", 1000);
	char path[512];
	snprintf(path, sizeof path, "%s/d-broken.json", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("{", f);
	fclose(f);
	assert_int_equal(metrics_store_newest(&n, count_skipped, &skipped, &e), PLUMB_OK);
	assert_true(n.found);
	assert_string_equal(n.doc.name, "b");
	snprintf(path, sizeof path, "%s/b.json", dir);
	assert_string_equal(n.path, path);
	assert_non_null(n.raw);
	assert_int_equal(n.nfiles, 4);
	assert_int_equal(n.nothers, 2);
	assert_string_equal(n.others[0], "a");
	assert_string_equal(n.others[1], "c");
	assert_int_equal(n.nbad, 1);
	assert_int_equal(skipped, 1);
	assert_int_equal(n.first_bad.code, PLUMB_EFORMAT);
	metrics_newest_release(&n);
	unsetenv("PLUMB_HOME");
}

/* Each process across the window: sums for the means, the worst, the latest; ordered by peak CPU. */
static void test_metrics__processes_over_the_window(void **state)
{
	(void)state;
	char path[256];
	snprintf(path, sizeof path, "%s/window.json", tmpdir);
	struct metrics_recorder r;
	struct perr e = PERR_INIT;
	assert_int_equal(metrics_recorder_init(&r, path, "window", getpid(), 1, 10, &e), PLUMB_OK);
	for (int i = 0; i < 3; i++) {
		struct mproc procs[3] = { mk(100, true, "root", 1.0, 1000 + (uint64_t)i),
					  mk(101, false, "busy", 10.0 * (i + 1), 500),
					  mk(102 + i, false, i ? "exec'd" : "forked", 5.0, 4000) };
		assert_int_equal(metrics_recorder_add(&r, 5000 + i * 1000, procs, i == 2 ? 2 : 3, &e), PLUMB_OK);
	}
	assert_int_equal(metrics_recorder_write(&r, "ended", &e), PLUMB_OK);
	metrics_recorder_release(&r);
	struct metrics_doc d;
	assert_int_equal(metrics_doc_read_file(path, &d, NULL, NULL, &e), PLUMB_OK);
	struct metrics_proc_window *rows;
	size_t n;
	assert_int_equal(metrics_doc_processes(&d, &rows, &n, &e), PLUMB_OK);
	assert_int_equal(n, 4); /* 100, 101, 102 and 103 */
	assert_int_equal(rows[0].pid, 101);
	assert_int_equal(rows[0].samples, 3);
	assert_true(rows[0].cpu_sum > 59.9 && rows[0].cpu_sum < 60.1);
	assert_true(rows[0].cpu_max > 29.9 && rows[0].cpu_max < 30.1);
	assert_int_equal(rows[0].last_ms, 7000);
	assert_int_equal(rows[1].pid, 102); /* 5% and 4000 bytes, as 103: then by pid */
	assert_int_equal(rows[2].pid, 103);
	assert_string_equal(rows[2].name, "exec'd");
	assert_int_equal(rows[2].last_ms, 6000);
	assert_int_equal(rows[3].pid, 100);
	assert_true(rows[3].main);
	assert_int_equal(rows[3].rss, 1002); /* the latest */
	assert_int_equal(rows[3].private_bytes, MPROC_UNKNOWN);
	free(rows);
	metrics_doc_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics__ring_bound_and_peaks),
		cmocka_unit_test(test_metrics__writer_redacts_names),
		cmocka_unit_test(test_metrics__reader_accepts_good),
		cmocka_unit_test(test_metrics__reader_rejects),
		cmocka_unit_test(test_metrics__read_file_errors),
		cmocka_unit_test(test_metrics__sample_self_and_child),
		cmocka_unit_test(test_metrics__store_newest),
		cmocka_unit_test(test_metrics__processes_over_the_window),
	};
	return cmocka_run_group_tests(tests, make_tmp, remove_tmp);
}
