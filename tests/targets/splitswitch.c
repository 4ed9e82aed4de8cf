/* splitswitch.c — a known split that changes on a signal, for the live views (plumb top): CPU time goes 50% to
 * work_a, 30% to work_b and 20% to work_c, each its own hot loop (so the leaf table names them); SIGUSR1 turns
 * the split to 20/30/50, and SIGUSR2 back. The paths run in a random order each round (split_round.h).
 * Usage: splitswitch [SECONDS]   (default 30; wall-clock seconds, then it exits)
 * It prints "ready" once its loop runs, and "switched N" after the Nth switch it has acted on. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "split_round.h"

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;
static volatile sig_atomic_t wanted; /* 0: 50/30/20, 1: 20/30/50 */
static int weights[2][3] = { { 50, 30, 20 }, { 20, 30, 50 } };
static int current;

/* A rare call, so the hot loops are not leaf functions (frame-pointer unwinding, docs/design.md §12). */
NOINLINE uint64_t mix(uint64_t x, uint64_t i)
{
	return x ^ (i * 0x9e3779b97f4a7c15ULL);
}

#define WORK(name)                                                                \
	NOINLINE uint64_t name(uint64_t units)                                    \
	{                                                                         \
		uint64_t x = units;                                               \
		for (uint64_t i = 0; i < units * 4; i++) {                        \
			for (int k = 0; k < 1000; k++)                            \
				x = x * 6364136223846793005ULL + 1442695040888963407ULL; \
			x = mix(x, i);                                            \
		}                                                                 \
		return x;                                                         \
	}
WORK(work_a)
WORK(work_b)
WORK(work_c)

NOINLINE uint64_t path_a(void)
{
	uint64_t r = work_a((uint64_t)weights[current][0]);
	return r ^ 1;
}

NOINLINE uint64_t path_b(void)
{
	uint64_t r = work_b((uint64_t)weights[current][1]);
	return r ^ 2;
}

NOINLINE uint64_t path_c(void)
{
	uint64_t r = work_c((uint64_t)weights[current][2]);
	return r ^ 3;
}

static void on_signal(int sig)
{
	wanted = sig == SIGUSR1;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30.0;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	uint64_t (*const paths[3])(void) = { path_a, path_b, path_c };
	double end = split_clock(CLOCK_MONOTONIC) + seconds;
	int switches = 0;
	printf("ready\n");
	fflush(stdout);
	uint64_t acc = 0;
	while (split_clock(CLOCK_MONOTONIC) < end) {
		if (wanted != current) {
			current = wanted;
			printf("switched %d\n", ++switches);
			fflush(stdout);
		}
		acc += split_round(paths);
	}
	sink = acc;
	split_report();
	return 0;
}
