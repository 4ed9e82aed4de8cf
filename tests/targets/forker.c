/* forker.c — a parent that burns CPU in parent_work while a forked child does the same amount of work in
 * child_work, then waits for it. The work is a fixed count, not a time, so a loaded machine does not skew the
 * split. Usage: forker [SCALE] (default 1, about a second of CPU each). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

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
		sink = child_work(seconds);
		_exit(0);
	}
	sink = parent_work(seconds);
	int status;
	waitpid(pid, &status, 0);
	printf("child %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
	return 0;
}
