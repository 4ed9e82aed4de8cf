/* split.c — a known split of CPU time: 50% under path_a, 30% under path_b, 20% under path_c, each reaching
 * the same burn() through its own caller. Every caller uses its callee's result after the call, so no tail
 * call removes a frame. The paths run in a random order each round, and SPLIT_REPORT=FILE gets the measured shares
 * (split_round.h). A round's length also varies at random (one factor from 0.5 to 1.5 for its three paths, so
 * every round keeps the shares): with a fixed length a sampler whose period is near a multiple of the round's
 * still lands at one phase of it, where a random order alone leaves the paths' chances uneven; with both,
 * successive samples are independent enough for `plumb diff`'s noise test (docs/diff.md).
 * Usage: split [SECONDS [A B C]] (default 2 seconds; A B C are the units of work each path does per round,
 * default 50 30 20, so the shares are A, B, C out of their sum). With SPLIT_CLOCK=cpu in the environment the
 * seconds are the process's CPU time, so a loaded machine stretches the run instead of thinning its samples. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static uint64_t units[3] = { 50, 30, 20 };
static uint64_t loops_per_unit64 = 20 * 64; /* this round's loops per unit, times 64 */

NOINLINE uint64_t burn(uint64_t units_of_work)
{
	uint64_t x = units_of_work, loops = units_of_work * loops_per_unit64 / 64;
	for (uint64_t i = 0; i < loops; i++) {
		for (int k = 0; k < 1000; k++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x = fold(x, i);
	}
	return x;
}

NOINLINE uint64_t path_a(void)
{
	uint64_t r = burn(units[0]);
	return r ^ 1;
}

NOINLINE uint64_t path_b(void)
{
	uint64_t r = burn(units[1]);
	return r ^ 2;
}

NOINLINE uint64_t path_c(void)
{
	uint64_t r = burn(units[2]);
	return r ^ 3;
}

static clockid_t run_clock = CLOCK_MONOTONIC;

static double now(void)
{
	struct timespec ts;
	clock_gettime(run_clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	for (int i = 0; i < 3 && i + 2 < argc; i++)
		units[i] = strtoull(argv[i + 2], NULL, 10);
	const char *clock = getenv("SPLIT_CLOCK");
	if (clock && strcmp(clock, "cpu") == 0)
		run_clock = CLOCK_PROCESS_CPUTIME_ID;
	double end = now() + seconds;
	uint64_t acc = 0, rounds = 0, rng = 0x2545f4914f6cdd1dULL;
	uint64_t (*const paths[3])(void) = { path_a, path_b, path_c };
	while (now() < end) {
		rng ^= rng << 13; /* xorshift64 */
		rng ^= rng >> 7;
		rng ^= rng << 17;
		loops_per_unit64 = 20 * (32 + (rng >> 58)); /* 20 loops a unit, times 0.5 to 1.5 */
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
