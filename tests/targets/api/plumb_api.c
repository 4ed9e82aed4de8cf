/* plumb_api.c — a program using plumb.h, linked with libplumb.so. Modes:
 *   plumb_api check     calls every entry point (init, announce "apitest", samples, a stage around some work)
 *                       and prints one JSON line: threads, open descriptors and POSIX timers before and after,
 *                       whether the lock file existed, each call's status and plumb_version()
 *   plumb_api bench N   prints the nanoseconds per plumb_sample() and per stage begin+end over N calls
 *   plumb_api hold NAME announces NAME, prints "ready", and waits until its standard input closes */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "plumb.h"

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - (strcmp(path, "/proc/self/fd") == 0); /* the descriptor opendir holds */
}

static int count_timers(void)
{
	FILE *f = fopen("/proc/self/timers", "re");
	if (!f)
		return -1;
	int n = 0;
	char line[256];
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "ID:", 3) == 0)
			n++;
	fclose(f);
	return n;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;

static __attribute__((noinline)) uint64_t work(double seconds)
{
	uint64_t x = 1;
	double end = now() + seconds;
	while (now() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "check";
	if (strcmp(mode, "bench") == 0) {
		long n = argc > 2 ? atol(argv[2]) : 10000000;
		double t0 = now();
		for (long i = 0; i < n; i++)
			plumb_sample("bench", "latency", "ns", (double)i);
		double t1 = now();
		for (long i = 0; i < n; i++)
			plumb_stage_end(plumb_stage_begin("bench"));
		double t2 = now();
		printf("{\"sample_ns\": %.3f, \"stage_ns\": %.3f}\n", (t1 - t0) / (double)n * 1e9,
		       (t2 - t1) / (double)n * 1e9);
		return 0;
	}
	if (strcmp(mode, "hold") == 0) {
		enum plumb_status st = plumb_announce(argc > 2 ? argv[2] : "apihold");
		printf("%s\n", st == PLUMB_STATUS_OK ? "ready" : plumb_status_str(st));
		fflush(stdout);
		char buf[64];
		while (fread(buf, 1, sizeof buf, stdin) > 0)
			;
		return st == PLUMB_STATUS_OK ? 0 : 1;
	}
	int threads0 = count_dir("/proc/self/task"), fds0 = count_dir("/proc/self/fd"), timers0 = count_timers();
	enum plumb_status init = plumb_init("apitest");
	enum plumb_status announce = plumb_announce("apitest2");
	enum plumb_status sample = plumb_sample("parse", "latency", "ms", 12.5);
	const char *tags[] = { "input", "big \"file\"", "run", "1" };
	enum plumb_status tagged = plumb_sample_tags("parse", "throughput", "MB/s", 300.25, tags, 2);
	struct plumb_stage *stage = plumb_stage_begin("work");
	sink = work(argc > 2 ? atof(argv[2]) : 0.05);
	enum plumb_status stage_end = plumb_stage_end(stage);
	int threads1 = count_dir("/proc/self/task"), fds1 = count_dir("/proc/self/fd"), timers1 = count_timers();
	const char *home = getenv("PLUMB_HOME");
	char lock[4096] = "";
	if (home)
		snprintf(lock, sizeof lock, "%s/targets/apitest.lock", home);
	int lock_exists = lock[0] && access(lock, F_OK) == 0;
	printf("{\"threads_before\": %d, \"threads_after\": %d, \"fds_before\": %d, \"fds_after\": %d, "
	       "\"timers_before\": %d, \"timers_after\": %d, \"lock_exists\": %s, \"init\": \"%s\", "
	       "\"announce\": \"%s\", \"sample\": \"%s\", \"tagged\": \"%s\", \"stage\": %s, \"stage_end\": \"%s\", "
	       "\"version\": \"%s\"}\n",
	       threads0, threads1, fds0, fds1, timers0, timers1, lock_exists ? "true" : "false",
	       plumb_status_str(init), plumb_status_str(announce), plumb_status_str(sample),
	       plumb_status_str(tagged), stage ? "true" : "false", plumb_status_str(stage_end), plumb_version());
	return 0;
}
