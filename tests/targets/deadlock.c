#define _GNU_SOURCE /* pthread_setname_np */
/* deadlock.c — two threads deadlocked on two mutexes, and the main thread joining them: the `plumb dump` test's
 * target (tests/e2e/test_dump.py). Thread "locker_ab" takes a then b, "locker_ba" takes b then a; a barrier
 * makes each hold its first mutex before it asks for the second, so they always deadlock. Prints "deadlocked"
 * once both hold their first mutex (each then goes on to wait for its second). Functions are noipa so that
 * every caller keeps its frame whatever the optimizer does. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;
static volatile int sink;

__attribute__((noipa)) static int take_second(pthread_mutex_t *m)
{
	int rc = pthread_mutex_lock(m);
	sink += rc;
	return rc;
}

__attribute__((noipa)) static int lock_pair(pthread_mutex_t *first, pthread_mutex_t *second)
{
	pthread_mutex_lock(first);
	pthread_barrier_wait(&both_hold);
	int rc = take_second(second);
	sink += rc;
	return rc + 1;
}

__attribute__((noipa)) static void *locker_ab(void *arg)
{
	int rc = lock_pair(&a, &b);
	sink += rc;
	return arg;
}

__attribute__((noipa)) static void *locker_ba(void *arg)
{
	int rc = lock_pair(&b, &a);
	sink += rc;
	return arg;
}

__attribute__((noipa)) static int join_all(pthread_t *t, int n)
{
	int rc = 0;
	for (int i = 0; i < n; i++)
		rc |= pthread_join(t[i], NULL);
	return rc;
}

int main(void)
{
	pthread_t t[2];
	pthread_barrier_init(&both_hold, NULL, 3);
	pthread_create(&t[0], NULL, locker_ab, NULL);
	pthread_setname_np(t[0], "locker_ab");
	pthread_create(&t[1], NULL, locker_ba, NULL);
	pthread_setname_np(t[1], "locker_ba");
	pthread_barrier_wait(&both_hold);
	/* both now hold their first mutex and go on to ask for the second */
	printf("deadlocked\n");
	fflush(stdout);
	return join_all(t, 2) + sink;
}
