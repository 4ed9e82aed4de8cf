/* renamer — renames itself on another CPU than the one it exec'd on: started on the last CPU (taskset), it moves
 * to CPU 0 and calls prctl(PR_SET_NAME, "renamed-now"), then burns SECONDS (default 0.3) of its CPU time there.
 * Its exec's COMM record is in the last CPU's ring and its rename's in CPU 0's, which a reader goes through
 * first: a reader that names threads in the order it reads them names it by its exec. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile uint64_t sink;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE static void renamed_burn(double seconds)
{
	uint64_t x = 7;
	double end = thread_cpu() + seconds;
	while (thread_cpu() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	cpu_set_t on;
	CPU_ZERO(&on);
	CPU_SET(0, &on);
	if (sched_setaffinity(0, sizeof on, &on) != 0)
		return 1;
	prctl(PR_SET_NAME, "renamed-now");
	renamed_burn(seconds);
	printf("renamed on cpu %d\n", sched_getcpu());
	return 0;
}
