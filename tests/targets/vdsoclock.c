/* vdsoclock.c — spends nearly all its CPU time reading CLOCK_MONOTONIC through the vDSO, called from
 * read_clocks() (not a leaf: it uses every result), so a profile shows vDSO frames under read_clocks.
 * Usage: vdsoclock [SECONDS]   (default 1; wall-clock seconds) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

/* Reads the clock `rounds` times and folds the readings together; returns the last reading in seconds. */
__attribute__((noipa)) double read_clocks(int rounds)
{
	struct timespec ts = { 0, 0 };
	unsigned long acc = 0;
	for (int i = 0; i < rounds; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		acc += (unsigned long)ts.tv_nsec;
	}
	sink += acc;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	double end = read_clocks(1) + seconds;
	while (read_clocks(1000) < end)
		;
	printf("%lu\n", sink & 1);
	return 0;
}
