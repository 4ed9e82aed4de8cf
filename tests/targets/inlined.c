/* inlined.c — the hot loop lives in mix_step(), which is always inlined into outer_work(); a profile must
 * still show mix_step as its own frame (from DWARF inline info) below outer_work. Usage: inlined [SCALE]. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t mix_step(uint64_t x, int rounds)
{
	for (int i = 0; i < rounds; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

NOINLINE uint64_t outer_work(uint64_t n)
{
	uint64_t x = 1;
	for (uint64_t r = 0; r < n; r++)
		x = mix_step(x, 10000) ^ r;
	return x;
}

int main(int argc, char **argv)
{
	uint64_t n = (uint64_t)((argc > 1 ? atof(argv[1]) : 1.0) * 80000);
	sink = outer_work(n);
	printf("done %llu\n", (unsigned long long)(sink & 1));
	return 0;
}
