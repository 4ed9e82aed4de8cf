/* leaderexit.c — a process whose main thread has called pthread_exit (a zombie) while thread "survivor" sleeps in
 * survivor_wait(): `plumb dump` must still find the process, read the living thread through its own /proc entry and
 * memory, and show the main thread as a zombie (tests/e2e/test_dump.py). Prints "ready" once the thread runs. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noipa)) static int survivor_wait(void)
{
	int rc = (int)sleep(3600);
	sink += rc;
	return rc;
}

static void *survivor(void *arg)
{
	sink += survivor_wait();
	return arg;
}

int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, survivor, NULL);
	pthread_setname_np(t, "survivor");
	printf("ready\n");
	fflush(stdout);
	pthread_exit(NULL);
}
