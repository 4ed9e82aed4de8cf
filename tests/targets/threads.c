/* threads.c — two named worker threads that burn CPU in their own functions, a fixed amount of work each
 * (not a time, so a loaded machine does not skew the split), while the main thread waits: worker_a does 2
 * units, worker_b 1 unit, so a gets twice b's CPU samples. Usage: threads [UNITS_SCALE] (default 1). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

NOINLINE void *worker_a(void *arg)
{
	(void)arg;
	sink += spin_for(2 * unit_seconds);
	return NULL;
}

NOINLINE void *worker_b(void *arg)
{
	(void)arg;
	sink += spin_for(unit_seconds);
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
	printf("done\n");
	return 0;
}
