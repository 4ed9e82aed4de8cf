/* callme.c — functions for `plumb record --call build/targets/libcallme.so:SYMBOL` (built with and without
 * frame pointers: libcallme.so, libcallme-nofp.so). Each has a known shape:
 *   split_run     50/30/20 split of CPU time across path_a/path_b/path_c for SPLIT_SECONDS (default 1.5 s),
 *                 or for SPLIT_ROUNDS rounds of work (random order each round; SPLIT_REPORT: split_round.h)
 *   crash_segv    runs a little, then writes through a NULL pointer inside crash_inner
 *   crash_abort   abort() inside abort_inner
 *   returns_three returns 3 after some work
 *   void_work     a void function (its return register holds garbage: plumb must not call that a failure)
 *   threads200    starts and joins 200 threads in waves of 20; thread i is named w<i> and burns ~15 ms of CPU
 *   fork_returns_five  forks: the host returns 5; the forked copy returns 0 from the same call, after the host
 *                 has exited (it waits for the end of a pipe the host holds) — the call "returns twice"
 *   setsid_child  forks a child that leaves the session (setsid), writes its pid to $CALLME_PIDFILE and sleeps
 *                 60 s; returns 0 after a little work: plumb must not leave that child running
 *   setsid_child_then_segv  the same child, then a write through a NULL pointer (the host dies first) */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../split_round.h"

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE uint64_t fold(uint64_t x, uint64_t i)
{
	return x ^ (i * 0x9e3779b97f4a7c15ULL);
}

NOINLINE uint64_t burn(uint64_t units)
{
	uint64_t x = units;
	for (uint64_t i = 0; i < units * 20; i++) {
		for (int k = 0; k < 1000; k++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x = fold(x, i);
	}
	return x;
}

NOINLINE uint64_t path_a(void)
{
	uint64_t r = burn(50);
	return r ^ 1;
}

NOINLINE uint64_t path_b(void)
{
	uint64_t r = burn(30);
	return r ^ 2;
}

NOINLINE uint64_t path_c(void)
{
	uint64_t r = burn(20);
	return r ^ 3;
}

NOINLINE int split_run(void)
{
	const char *s = getenv("SPLIT_SECONDS"), *r = getenv("SPLIT_ROUNDS");
	double end = now() + (s ? atof(s) : 1.5);
	long rounds = r ? atol(r) : -1; /* a fixed amount of work instead of a time, when given */
	uint64_t acc = 0;
	uint64_t (*const paths[3])(void) = { path_a, path_b, path_c };
	while (rounds > 0 ? rounds-- > 0 : rounds < 0 && now() < end)
		acc += split_round(paths);
	split_report();
	sink = acc;
	return 0;
}

NOINLINE int crash_inner(int *p)
{
	uint64_t r = burn(1000);
	sink = r;
	*p = (int)r; /* p is NULL */
	return (int)sink + 1;
}

NOINLINE int crash_segv(void)
{
	int *volatile p = NULL;
	int r = crash_inner(p);
	return r + 1;
}

NOINLINE int abort_inner(void)
{
	sink = burn(1000);
	abort();
}

NOINLINE int crash_abort(void)
{
	int r = abort_inner();
	return r + 1;
}

NOINLINE int returns_three(void)
{
	sink = burn(3000);
	return (int)(sink & 0) + 3;
}

NOINLINE int fork_returns_five(void)
{
	int fds[2];
	if (pipe(fds) != 0)
		return 99;
	sink = burn(3000);
	if (fork() == 0) {
		char c;
		close(fds[1]);
		while (read(fds[0], &c, 1) > 0) /* end of file: the host has returned and exited */
			;
		return 0;
	}
	close(fds[0]);
	return 5 + (int)(sink & 0);
}

/* Forks a child that leaves the session and sleeps 60 s, once it has written its pid to $CALLME_PIDFILE. */
static pid_t start_setsid_child(void)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		setsid();
		const char *path = getenv("CALLME_PIDFILE");
		FILE *f = path ? fopen(path, "w") : NULL;
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
		close(fds[1]); /* the pid is written */
		sleep(60);
		_exit(0);
	}
	close(fds[1]);
	char c;
	while (read(fds[0], &c, 1) > 0) /* end of file: the child wrote its pid and is in its own session */
		;
	close(fds[0]);
	return pid;
}

NOINLINE int setsid_child(void)
{
	pid_t pid = start_setsid_child();
	sink = burn(3000);
	return pid > 0 ? 0 : 98;
}

NOINLINE int setsid_child_then_segv(void)
{
	pid_t pid = start_setsid_child();
	sink = burn(3000);
	volatile int *volatile nowhere = NULL;
	*nowhere = (int)pid;
	return 0;
}

NOINLINE void void_work(void)
{
	sink = burn(3000) | 0x55; /* leaves a non-zero value in the return register */
}

NOINLINE uint64_t worker_burn(double cpu_seconds)
{
	uint64_t acc = 0;
	double end = thread_cpu() + cpu_seconds;
	while (thread_cpu() < end)
		acc += burn(1);
	return acc;
}

static void *worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "w%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	const char *s = getenv("WORKER_SECONDS");
	uint64_t r = worker_burn(s ? atof(s) : 0.015);
	sink += r;
	return NULL;
}

NOINLINE int threads200(void)
{
	pthread_t t[20];
	for (int wave = 0; wave < 10; wave++) {
		for (int i = 0; i < 20; i++)
			if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)(wave * 20 + i)) != 0)
				return 1;
		for (int i = 0; i < 20; i++)
			pthread_join(t[i], NULL);
	}
	return 0;
}
