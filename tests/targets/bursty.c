/* bursty.c — shaped like a server answering short requests: about 0.2 ms of CPU under serve_request(), then a
 * 0.1 ms sleep, in a loop, so the process uses most of a CPU in sub-millisecond bursts and is asleep between them
 * many thousand times a second. A sampler must give it samples in proportion to the CPU time it used (which
 * /proc/PID/schedstat says), not to the moments its CPU happened to be looked at.
 * Usage: bursty [SECONDS [BURST_US SLEEP_US]]   (default 30 wall-clock seconds, 200 and 100 microseconds).
 * Prints "ready" once its loop runs. With CPU_REPORT=FILE in the environment it writes, at exit, the CPU time the
 * process used (CLOCK_PROCESS_CPUTIME_ID: the scheduler's sum_exec_runtime, what /proc/PID/schedstat says),
 * in seconds, to FILE: the truth for a launched run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

static int64_t now_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A rare call, so the hot loop is not a leaf function (frame-pointer unwinding, docs/design.md §12). */
NOINLINE uint64_t bursty_mix(uint64_t x)
{
	return x ^ (x >> 17);
}

/* One request: spins until this thread has run `ns` more nanoseconds of CPU. */
NOINLINE uint64_t serve_request(int64_t ns)
{
	int64_t until = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	uint64_t x = (uint64_t)ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until) {
		for (int k = 0; k < 100; k++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x = bursty_mix(x);
	}
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30.0;
	long burst_us = argc > 2 ? atol(argv[2]) : 200, sleep_us = argc > 3 ? atol(argv[3]) : 100;
	if (seconds <= 0 || burst_us <= 0 || sleep_us < 0) {
		fprintf(stderr, "usage: bursty [SECONDS [BURST_US SLEEP_US]]\n");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
	struct timespec nap = { 0, sleep_us * 1000 };
	uint64_t acc = 0;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		acc += serve_request(burst_us * 1000);
		if (sleep_us)
			nanosleep(&nap, NULL);
	}
	sink = acc;
	const char *report = getenv("CPU_REPORT");
	FILE *f = report ? fopen(report, "w") : NULL;
	if (f) {
		fprintf(f, "%.6f\n", (double)now_ns(CLOCK_PROCESS_CPUTIME_ID) / 1e9);
		fclose(f);
	}
	return 0;
}
