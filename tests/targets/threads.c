/* threads.c — two named worker threads that burn CPU in their own functions, a fixed amount of work each
 * (not a time, so a loaded machine does not skew the split), while the main thread waits: worker_a does 2
 * units, worker_b 1 unit, so a gets about twice b's CPU samples; on a loaded machine the same work does not take
 * the same CPU time in both (one may share a core's execution units with other work), so each thread's CPU
 * time is printed at the end ("worker-a cpu S", "worker-b cpu S"): the truth a sampler's split is compared
 * with. Usage: threads [UNITS_SCALE] (default 1). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))

static double unit_seconds = 0.5;
static volatile uint64_t sink;

static inline uint64_t spin_step(uint64_t x)
{
	return x * 2862933555777941757ULL + 3037000493ULL;
}

NOINLINE uint64_t spin_for(double units)
{
	uint64_t x = 1;
	uint64_t rounds = (uint64_t)(units * 40000);
	for (uint64_t r = 0; r < rounds; r++)
		for (int i = 0; i < 10000; i++)
			x = spin_step(x);
	return x;
}

static double cpu_of[2];

static double thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

NOINLINE void *worker_a(void *arg)
{
	(void)arg;
	sink += spin_for(2 * unit_seconds);
	cpu_of[0] = thread_cpu();
	return NULL;
}

NOINLINE void *worker_b(void *arg)
{
	(void)arg;
	sink += spin_for(unit_seconds);
	cpu_of[1] = thread_cpu();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		unit_seconds = atof(argv[1]);
	pthread_t a, b;
	pthread_create(&a, NULL, worker_a, NULL);
	pthread_setname_np(a, "worker-a");
	pthread_create(&b, NULL, worker_b, NULL);
	pthread_setname_np(b, "worker-b");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("worker-a cpu %.6f\nworker-b cpu %.6f\ndone\n", cpu_of[0], cpu_of[1]);
	return 0;
}
