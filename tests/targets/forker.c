/* forker.c — a parent that burns CPU in parent_work while a forked child does the same amount of work in
 * child_work, then waits for it. The work is a fixed count, but the CPU time it takes is not: on a loaded
 * machine one of the two may share a core's execution units with other work and be slower, so each prints the
 * CPU time it used ("child_cpu S", "parent_cpu S") — the truth a sampler's split is compared with.
 * Usage: forker [SCALE] (default 1, about a second of CPU each). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

static double cpu_now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static inline uint64_t step(uint64_t x)
{
	return x * 6364136223846793005ULL + 1;
}

NOINLINE uint64_t child_work(double scale)
{
	uint64_t x = 3;
	uint64_t rounds = (uint64_t)(scale * 100000);
	for (uint64_t r = 0; r < rounds; r++)
		for (int i = 0; i < 10000; i++)
			x = step(x);
	return x;
}

NOINLINE uint64_t parent_work(double scale)
{
	uint64_t x = 5;
	uint64_t rounds = (uint64_t)(scale * 100000);
	for (uint64_t r = 0; r < rounds; r++)
		for (int i = 0; i < 10000; i++)
			x = step(x);
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	pid_t pid = fork();
	if (pid == 0) {
		double t0 = cpu_now();
		sink = child_work(seconds);
		printf("child_cpu %.6f\n", cpu_now() - t0);
		fflush(stdout);
		_exit(0);
	}
	double t0 = cpu_now();
	sink = parent_work(seconds);
	printf("parent_cpu %.6f\n", cpu_now() - t0);
	int status;
	waitpid(pid, &status, 0);
	printf("child %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
	return 0;
}
