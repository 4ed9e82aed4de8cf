/* split.c — a known split of CPU time: 50% under path_a, 30% under path_b, 20% under path_c, each reaching
 * the same burn() through its own caller. Every caller uses its callee's result after the call, so no tail
 * call removes a frame. The paths run in a random order each round, and SPLIT_REPORT=FILE gets the measured shares
 * (split_round.h). Usage: split [SECONDS] (default 2). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "split_round.h"

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

/* A rare call from burn(), so that burn is not a leaf: GCC sets up no frame pointer in a leaf function even
 * with -fno-omit-frame-pointer, and a frame-pointer walk from a frameless leaf skips its caller. */
NOINLINE uint64_t fold(uint64_t x, uint64_t i)
{
	return x ^ (i * 0x9e3779b97f4a7c15ULL);
}

NOINLINE uint64_t burn(uint64_t units)
{
	uint64_t x = units;
	for (uint64_t i = 0; i < units * 20; i++) {
		for (int k = 0; k < 1000; k++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x = fold(x, i);
	}
	return x;
}

NOINLINE uint64_t path_a(void)
{
	uint64_t r = burn(50);
	return r ^ 1;
}

NOINLINE uint64_t path_b(void)
{
	uint64_t r = burn(30);
	return r ^ 2;
}

NOINLINE uint64_t path_c(void)
{
	uint64_t r = burn(20);
	return r ^ 3;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	double end = now() + seconds;
	uint64_t acc = 0, rounds = 0;
	uint64_t (*const paths[3])(void) = { path_a, path_b, path_c };
	while (now() < end) {
		acc += split_round(paths);
		rounds++;
	}
	split_report();
	sink = acc;
	struct timespec cpu;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	printf("rounds %llu cpu %.3f\n", (unsigned long long)rounds, (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	return 0;
}
