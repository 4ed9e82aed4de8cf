/* shortthreads.c — work done only in threads that live about a millisecond: the main thread keeps creating a
 * worker that burns ~1 ms of CPU in burst_work() and joining it, then sleeps ~1 ms, so the process runs at about
 * half a CPU and no thread lives long enough for a per-thread sampling period of several milliseconds.
 * Prints "ready" once running; runs for SECONDS (default 30) or until killed. Usage: shortthreads [SECONDS] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double now(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline, noipa)) uint64_t burst_work(double seconds)
{
	uint64_t x = 1;
	double end = now(CLOCK_THREAD_CPUTIME_ID) + seconds;
	while (now(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static void *burst(void *arg)
{
	(void)arg;
	sink += burst_work(0.001);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30.0;
	double end = now(CLOCK_MONOTONIC) + seconds;
	printf("ready\n");
	fflush(stdout);
	struct timespec pause = { 0, 1000000 };
	while (now(CLOCK_MONOTONIC) < end) {
		pthread_t t;
		if (pthread_create(&t, NULL, burst, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
		nanosleep(&pause, NULL);
	}
	/* the CPU time of the whole process, exited threads included: what a profile of it should account for */
	fprintf(stderr, "cpu %.6f\n", now(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
