/* split_round.h — one round of the three known-split paths, shared by split.c and lib/callme.c. The paths run
 * in a random order each round: a fixed order makes the round a period that a fixed sampling interval can lock
 * onto (every sample at the same phase), which biases the shares by several points. Each path's wall and
 * thread-CPU time is added up, and with SPLIT_REPORT=FILE in the environment split_report() writes the measured
 * shares (percent) as two lines, "wall A B C" and "cpu A B C": on a loaded machine a path's share of wall-clock
 * time is not its share of the work, and a test of --mode wall compares with what the target really spent. */
#ifndef SPLIT_ROUND_H
#define SPLIT_ROUND_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double split_clock(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double split_wall[3], split_cpu[3];

static uint64_t split_round(uint64_t (*const paths[3])(void))
{
	static const int orders[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	static uint64_t rng;
	if (!rng)
		rng = (uint64_t)(split_clock(CLOCK_MONOTONIC) * 1e9) | 1;
	rng ^= rng << 13; /* xorshift64 */
	rng ^= rng >> 7;
	rng ^= rng << 17;
	const int *order = orders[rng % 6];
	uint64_t acc = 0;
	for (int i = 0; i < 3; i++) {
		int p = order[i];
		double w = split_clock(CLOCK_MONOTONIC), c = split_clock(CLOCK_THREAD_CPUTIME_ID);
		acc += paths[p]();
		split_wall[p] += split_clock(CLOCK_MONOTONIC) - w;
		split_cpu[p] += split_clock(CLOCK_THREAD_CPUTIME_ID) - c;
	}
	return acc;
}

static void split_report(void)
{
	const char *path = getenv("SPLIT_REPORT");
	FILE *f = path ? fopen(path, "w") : NULL;
	if (!f)
		return;
	double tw = split_wall[0] + split_wall[1] + split_wall[2], tc = split_cpu[0] + split_cpu[1] + split_cpu[2];
	if (tw > 0 && tc > 0)
		fprintf(f, "wall %.3f %.3f %.3f\ncpu %.3f %.3f %.3f\n", 100 * split_wall[0] / tw, 100 * split_wall[1] / tw,
			100 * split_wall[2] / tw, 100 * split_cpu[0] / tc, 100 * split_cpu[1] / tc, 100 * split_cpu[2] / tc);
	fclose(f);
}

#endif
