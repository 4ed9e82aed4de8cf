/* latethreads.c — threads that start only when told: prints "waiting", reads one line from standard input,
 * then starts 4 threads named late0..late3 that each burn ~0.3 s of CPU in late_work(), joins them and exits.
 * For attach tests: the threads are created after the profiler attached. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static volatile uint64_t sink;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline, noipa)) uint64_t late_work(double seconds)
{
	uint64_t x = 1;
	double end = cpu_now() + seconds;
	while (cpu_now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

static void *run(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "late%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	sink += late_work(0.3);
	return NULL;
}

int main(void)
{
	printf("waiting\n");
	fflush(stdout);
	char line[64];
	if (!fgets(line, sizeof line, stdin))
		return 1;
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, run, (void *)(intptr_t)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
	return 0;
}
