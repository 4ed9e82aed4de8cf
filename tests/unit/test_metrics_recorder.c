/* test_metrics_recorder.c — libplumb's metrics recorder (src/lib/metrics_recorder.c, linked here as its PIC
 * object): without the switch it starts nothing (no thread, no file); with it, one thread records this process
 * and its children into $PLUMB_HOME/metrics/NAME.json and stops cleanly, leaving state "ended". */
#include <dirent.h>
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

#include "lib/lib_internal.h"
#include "metrics/metrics.h"

static char home[64];

static int setup(void **state)
{
	(void)state;
	snprintf(home, sizeof home, "/tmp/plumb-rec-XXXXXX");
	if (!mkdtemp(home))
		return -1;
	setenv("PLUMB_HOME", home, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
	return system(cmd) == 0 ? 0 : -1;
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	assert_non_null(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static bool has_thread_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	assert_non_null(d);
	bool found = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[96], comm[64] = { 0 };
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", de->d_name);
		FILE *f = fopen(path, "r");
		if (f) {
			if (fgets(comm, sizeof comm, f) && strncmp(comm, name, strlen(name)) == 0)
				found = true;
			fclose(f);
		}
	}
	closedir(d);
	return found;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The thread count once it settles at want (polled for up to 2 s): a joined thread can still be listed in
 * /proc/self/task for a moment, until the kernel has released it. */
static int threads_settled(int want)
{
	double deadline = now() + 2;
	int n = count_threads();
	while (n != want && now() < deadline) {
		usleep(1000);
		n = count_threads();
	}
	return n;
}

static void test_metrics_recorder__off_without_switch(void **state)
{
	(void)state;
	static const char *const off[] = { NULL, "", "0", "false", "OFF", " no " };
	int before = count_threads();
	for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
		if (off[i])
			setenv("PLUMB_DEBUG", off[i], 1);
		else
			unsetenv("PLUMB_DEBUG");
		assert_int_equal(lib_metrics_start("off-test"), PLUMB_EGATE);
		assert_int_equal(count_threads(), before);
		lib_metrics_stop(); /* harmless when nothing runs */
	}
	char dir[256];
	struct stat st;
	snprintf(dir, sizeof dir, "%s/metrics", home);
	assert_int_equal(stat(dir, &st), -1); /* not even the folder */
}

static void test_metrics_recorder__records_children_and_stops(void **state)
{
	(void)state;
	setenv("PLUMB_DEBUG", "1", 1);
	setenv("PLUMB_METRICS_EVERY", "0.05", 1);
	int before = count_threads();
	assert_int_equal(lib_metrics_start("rec test"), PLUMB_OK); /* the name is made a file name */
	assert_int_equal(lib_metrics_start("rec test"), PLUMB_OK); /* a second start is a no-op */
	assert_int_equal(count_threads(), before + 1);
	assert_true(has_thread_named("plumb-metrics"));

	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		lib_metrics_stop(); /* in a forked child: must neither hang nor touch the parent's file */
		for (;;)
			pause();
	}
	char path[256];
	snprintf(path, sizeof path, "%s/metrics/rec-test.json", home);
	/* poll until a sample shows both this process (main) and the child */
	bool seen = false;
	double deadline = now() + 10;
	while (!seen && now() < deadline) {
		struct metrics_doc d;
		struct perr e = PERR_INIT;
		if (metrics_doc_read_file(path, &d, NULL, NULL, &e) == PLUMB_OK) {
			assert_false(d.ended);
			assert_int_equal(d.root_pid, getpid());
			assert_true(d.every_s > 0.049 && d.every_s < 0.051);
			for (size_t i = 0; i < d.nsamples; i++) {
				bool self = false, kid = false;
				for (size_t j = 0; j < d.samples[i].nprocs; j++) {
					const struct metrics_proc *p = &d.samples[i].procs[j];
					if (p->pid == getpid() && p->main)
						self = true;
					if (p->pid == child && !p->main && p->ppid == getpid())
						kid = true;
				}
				if (self && kid)
					seen = true;
			}
			metrics_doc_release(&d);
		}
		if (!seen)
			usleep(20000);
	}
	assert_true(seen);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	lib_metrics_stop();
	assert_int_equal(threads_settled(before), before);
	struct metrics_doc d;
	struct perr e = PERR_INIT;
	assert_int_equal(metrics_doc_read_file(path, &d, NULL, NULL, &e), PLUMB_OK);
	assert_true(d.ended);
	assert_true(d.nsamples >= 1 && d.nsamples <= METRICS_DEFAULT_KEEP);
	metrics_doc_release(&d);
	lib_metrics_stop(); /* twice is fine */

	/* it can be started again after a stop */
	assert_int_equal(lib_metrics_start("rec-test-2"), PLUMB_OK);
	assert_int_equal(count_threads(), before + 1);
	lib_metrics_stop();
	assert_int_equal(threads_settled(before), before);
	unsetenv("PLUMB_METRICS_EVERY");
}

static void test_metrics_recorder__stops_at_exit(void **state)
{
	(void)state;
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) { /* a program that starts the recorder and simply exits */
		setenv("PLUMB_DEBUG", "yes", 1);
		setenv("PLUMB_METRICS_EVERY", "10", 1); /* the thread is asleep when exit comes */
		/* a relative PLUMB_HOME is fixed when recording starts: changing directory does not move the file */
		if (chdir(home) != 0 || setenv("PLUMB_HOME", ".", 1) != 0)
			_exit(4);
		if (lib_metrics_start("at-exit") != PLUMB_OK)
			_exit(3);
		if (chdir("/") != 0)
			_exit(5);
		exit(0);
	}
	int status;
	double t0 = now();
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(now() - t0 < 5); /* exit did not wait for the 10 s interval */
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char path[256];
	snprintf(path, sizeof path, "%s/metrics/at-exit.json", home);
	struct metrics_doc d;
	struct perr e = PERR_INIT;
	assert_int_equal(metrics_doc_read_file(path, &d, NULL, NULL, &e), PLUMB_OK);
	assert_true(d.ended);
	assert_int_equal(d.root_pid, child);
	assert_true(d.nsamples >= 1);
	metrics_doc_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_recorder__off_without_switch),
		cmocka_unit_test(test_metrics_recorder__records_children_and_stops),
		cmocka_unit_test(test_metrics_recorder__stops_at_exit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
