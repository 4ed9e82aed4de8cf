/* pingpong.c — a context-switch-heavy program for the cost of --mode wall: two threads bounce one byte through
 * a pair of pipes N times (every bounce is a switch-out and a switch-in of each thread).
 * Usage: pingpong [ROUNDS]   (default 100000) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int ab[2], ba[2];
static long rounds = 100000;

static void *echo(void *arg)
{
	char c;
	for (long i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	if (pipe(ab) || pipe(ba))
		return 1;
	pthread_t t;
	pthread_create(&t, NULL, echo, NULL);
	char c = 'x';
	for (long i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return 1;
	pthread_join(t, NULL);
	return 0;
}
