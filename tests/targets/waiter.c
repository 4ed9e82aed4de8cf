/* waiter.c — one thread blocked for its whole life in wait_path (a read from a pipe nobody writes), another
 * burning CPU in spin_path, for attaching with --mode wall: the blocked thread must show up although it never
 * switches while sampled. Usage: waiter [SECONDS] (default 5; then it exits) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static int fds[2];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noipa)) static long wait_path(void)
{
	char c;
	long r = read(fds[0], &c, 1);
	return r + 1;
}

__attribute__((noipa)) static void *blocked_main(void *arg)
{
	long r = wait_path();
	sink = (unsigned long)r;
	return arg;
}

__attribute__((noipa)) static unsigned long spin_path(double seconds)
{
	unsigned long x = 1;
	double end = now() + seconds;
	while (now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5.0;
	if (pipe(fds) != 0)
		return 1;
	pthread_t t;
	pthread_create(&t, NULL, blocked_main, NULL);
	printf("ready\n");
	fflush(stdout);
	sink = spin_path(seconds);
	return 0; /* exits with the blocked thread still in read */
}
