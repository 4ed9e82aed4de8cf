/* rounds.c — a program with a rhythm: it works in rounds of 10 ms of CPU, 5 ms under path_a, then 3 ms under
 * path_b, then 2 ms under path_c, always in that order and each measured on the thread's own CPU clock, so the
 * shares of its CPU time are 50/30/20 however loaded the machine is. A sampler with a fixed period that divides
 * the round (5 ms, 10 ms) lands at the same phases of every round and reads the shares wrong by the phase; an
 * unbiased one reads them within its sampling noise (docs/design.md §5.2).
 * Usage: rounds [SECONDS [A B C]]   (default 30 wall-clock seconds; A B C the microseconds of CPU of each path
 * per round, default 5000 3000 2000). Prints "ready" once its loop runs. */
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
NOINLINE uint64_t rounds_mix(uint64_t x)
{
	return x ^ (x >> 17);
}

/* Spins until this thread has run `ns` more nanoseconds of CPU. */
NOINLINE uint64_t rounds_spin(int64_t ns)
{
	int64_t until = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	uint64_t x = (uint64_t)ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until) {
		for (int k = 0; k < 200; k++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x = rounds_mix(x);
	}
	return x;
}

NOINLINE uint64_t path_a(int64_t ns)
{
	return rounds_spin(ns) + 1;
}

NOINLINE uint64_t path_b(int64_t ns)
{
	return rounds_spin(ns) + 2;
}

NOINLINE uint64_t path_c(int64_t ns)
{
	return rounds_spin(ns) + 3;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30.0;
	int64_t us[3] = { 5000, 3000, 2000 };
	for (int i = 0; i < 3 && argc > 2 + i; i++)
		us[i] = atoll(argv[2 + i]);
	if (seconds <= 0 || us[0] <= 0 || us[1] <= 0 || us[2] <= 0) {
		fprintf(stderr, "usage: rounds [SECONDS [A B C]]\n");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9);
	uint64_t acc = 0;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		acc += path_a(us[0] * 1000);
		acc += path_b(us[1] * 1000);
		acc += path_c(us[2] * 1000);
	}
	sink = acc;
	return 0;
}
