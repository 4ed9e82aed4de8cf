/* annot.c — plumb annotate's target (tests/e2e/test_annotate.py names its line numbers): loops on lines 9 and 10, the
 * first 3x the rounds (75/25 of the work, each timed on the CPU clock); step() (loop: 16) is inlined at line 21. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
_Pragma("GCC diagnostic ignored \"-Wmisleading-indentation\"") static double cpu(void) { struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec / 1e9; }
__attribute__((noinline, noipa)) uint64_t two_loops(uint64_t n, uint64_t x, double *t) { t[0] = cpu();
	for (uint64_t i = 0; i < 3 * n; i++) x = x * 0x9E3779B97F4A7C15ULL + i; t[1] = cpu();
	for (uint64_t i = 0; i < n; i++) x = x * 0x9E3779B97F4A7C15ULL + i; t[2] = cpu();
	return x;
}
static inline __attribute__((always_inline)) uint64_t step(uint64_t x, uint64_t n)
{
	uint64_t y = x | 1;
	for (uint64_t i = 0; i < n; i++) y = y * 0xD1342543DE82EF95ULL + (y >> 29);
	return y;
}
__attribute__((noinline, noipa)) uint64_t mixed(uint64_t n, uint64_t x)
{
	x = step(x, n) + 7;
	return x;
}
int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0, t[3];
	uint64_t n = (uint64_t)(scale * 1e8);
	uint64_t x = two_loops(n, 1, t);
	x ^= mixed(n / 4, x);
	double a = t[1] - t[0], b = t[2] - t[1];
	printf("line9 %.6f line10 %.6f share9 %.4f x %llu\n", a, b, a / (a + b), (unsigned long long)(x & 1));
	return 0;
}
