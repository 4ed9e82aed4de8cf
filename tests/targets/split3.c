/* split3.c — a CPU-bound target with a known split: 50% of its CPU time under path_a, 30% under path_b, 20%
 * under path_c, where path_c reaches its work through a recursion of DEPTH (48) frames. Every caller uses its
 * callee's result after the call (no tail calls), so an unwinder that is right sees the whole chain:
 *   main;run;path_a;a_mid;spin   main;run;path_b;b_mid;spin   main;run;path_c;deep x48;c_leaf;spin
 * Usage: split3 [SECONDS]   (default 2; CPU seconds of the process)
 *        split3 -n ROUNDS    (a fixed amount of work, for overhead benchmarks)
 * With EXIT_STAMP=FILE in the environment it writes, at exit, CLOCK_REALTIME and its own CPU time (user + sys,
 * which includes what a profiler's sampling costs it in the kernel), in seconds, to FILE. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define DEPTH 48
#define UNIT 20000 /* spin iterations per unit of work: ~10-20 us, far above the call overhead */

static volatile unsigned long sink;

__attribute__((noipa)) unsigned long spin(unsigned long n)
{
	unsigned long x = n;
	for (unsigned long i = 0; i < n * UNIT; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noipa)) unsigned long a_mid(unsigned long n)
{
	unsigned long r = spin(n);
	return r ^ (r >> 7);
}

__attribute__((noipa)) unsigned long path_a(unsigned long n)
{
	unsigned long r = a_mid(n);
	return r ^ (r << 3);
}

__attribute__((noipa)) unsigned long b_mid(unsigned long n)
{
	unsigned long r = spin(n);
	return r ^ (r >> 5);
}

__attribute__((noipa)) unsigned long path_b(unsigned long n)
{
	unsigned long r = b_mid(n);
	return r ^ (r << 2);
}

__attribute__((noipa)) unsigned long c_leaf(unsigned long n)
{
	unsigned long r = spin(n);
	return r ^ (r >> 11);
}

/* XOR is not an accumulator GCC's tail-recursion pass can turn into a loop: every level stays a frame. */
__attribute__((noipa)) unsigned long deep(int level, unsigned long n)
{
	unsigned long r = level > 0 ? deep(level - 1, n) : c_leaf(n);
	return r ^ (unsigned long)level;
}

__attribute__((noipa)) unsigned long path_c(unsigned long n)
{
	unsigned long r = deep(DEPTH - 1, n);
	return r ^ (r << 1);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) unsigned long run(double seconds, long rounds)
{
	unsigned long acc = 0;
	double t0 = cpu_seconds();
	for (long k = 0; rounds ? k < rounds : cpu_seconds() - t0 < seconds; k++) {
		for (int i = 0; i < 10; i++) {
			acc += path_a(5);
			acc += path_b(3);
			acc += path_c(2);
		}
	}
	return acc;
}

int main(int argc, char **argv)
{
	long rounds = argc > 2 && argv[1][0] == '-' && argv[1][1] == 'n' ? atol(argv[2]) : 0;
	double seconds = argc > 1 && !rounds ? atof(argv[1]) : 2.0;
	sink = run(seconds, rounds);
	printf("%lu\n", sink & 1);
	const char *stamp = getenv("EXIT_STAMP");
	if (stamp) {
		struct timespec ts;
		struct rusage ru;
		clock_gettime(CLOCK_REALTIME, &ts);
		getrusage(RUSAGE_SELF, &ru);
		double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
		FILE *f = fopen(stamp, "w");
		if (f) {
			fprintf(f, "%ld.%09ld %.6f\n", (long)ts.tv_sec, ts.tv_nsec, cpu);
			fclose(f);
		}
	}
	return 0;
}
