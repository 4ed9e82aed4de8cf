/* forker.c — a parent that burns CPU in parent_work while a forked child burns about as long in child_work,
 * then waits for it. Usage: forker [SECONDS] (default 1). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline uint64_t step(uint64_t x)
{
	return x * 6364136223846793005ULL + 1;
}

NOINLINE uint64_t child_work(double seconds)
{
	double end = now() + seconds;
	uint64_t x = 3;
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			x = step(x);
	return x;
}

NOINLINE uint64_t parent_work(double seconds)
{
	double end = now() + seconds;
	uint64_t x = 5;
	while (now() < end)
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
