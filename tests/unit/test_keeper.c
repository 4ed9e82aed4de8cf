/* test_keeper.c — base/keeper: when the process that started the keeper dies without saying it is done, the keeper
 * kills the tree it was told of (a child and the grandchild it started, even one orphaned before the death); when
 * told it is done, it leaves everything alone. A forked "plumb" stands in for plumb, so the test can SIGKILL it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "os/keeper.h"
#include "os/procfs.h"

struct tree {
	pid_t fake_plumb, child, grandchild, orphan;
};

/* The stand-in for plumb: starts a keeper, a child that starts a grandchild (both sleeping), and an orphan (a
 * grandchild whose parent exits at once); tells the keeper of the two children, reports the pids on fd, then, with
 * `done`, ends the keeper first and sleeps; else sleeps until killed. */
static void __attribute__((noreturn)) fake_plumb(int fd, bool done)
{
	struct keeper k = KEEPER_INIT;
	struct perr e = PERR_INIT;
	if (keeper_start(&k, &e) != PLUMB_OK)
		_exit(10);
	int p[2];
	if (pipe(p) != 0)
		_exit(11);
	/* each fork closes plumb's end of the keeper's socket, as exec does for a real command (close-on-exec) */
	pid_t child = fork();
	if (child == 0) {
		close(k.fd);
		pid_t g = fork();
		if (g == 0) {
			for (;;)
				pause();
		}
		if (write(p[1], &g, sizeof g) != (ssize_t)sizeof g)
			_exit(12);
		for (;;)
			pause();
	}
	pid_t grandchild;
	if (read(p[0], &grandchild, sizeof grandchild) != (ssize_t)sizeof grandchild)
		_exit(13);
	pid_t middle = fork(); /* starts the orphan and exits: the orphan's parent is gone before plumb is */
	if (middle == 0) {
		close(k.fd);
		pid_t o = fork();
		if (o == 0) {
			for (;;)
				pause();
		}
		if (write(p[1], &o, sizeof o) != (ssize_t)sizeof o)
			_exit(14);
		/* the keeper must have seen the orphan below us before we leave it */
		struct timespec nap = { 0, 3 * (long)KEEPER_SCAN_NS };
		nanosleep(&nap, NULL);
		_exit(0);
	}
	keeper_watch(&k, child);
	keeper_watch(&k, middle);
	pid_t orphan;
	if (read(p[0], &orphan, sizeof orphan) != (ssize_t)sizeof orphan)
		_exit(15);
	waitpid(middle, NULL, 0);
	pid_t pids[3] = { child, grandchild, orphan };
	if (write(fd, pids, sizeof pids) != (ssize_t)sizeof pids)
		_exit(16);
	if (done)
		keeper_end(&k);
	for (;;)
		pause();
}

static struct tree start_tree(bool done)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	struct tree t = { 0 };
	t.fake_plumb = fork();
	assert_true(t.fake_plumb >= 0);
	if (t.fake_plumb == 0) {
		close(p[0]);
		fake_plumb(p[1], done);
	}
	close(p[1]);
	pid_t pids[3];
	assert_int_equal(read(p[0], pids, sizeof pids), (ssize_t)sizeof pids);
	close(p[0]);
	t.child = pids[0];
	t.grandchild = pids[1];
	t.orphan = pids[2];
	return t;
}

static bool all_gone(const struct tree *t)
{
	return !procfs_alive(t->child) && !procfs_alive(t->grandchild) && !procfs_alive(t->orphan);
}

static void kill_all(const struct tree *t)
{
	kill(t->child, SIGKILL);
	kill(t->grandchild, SIGKILL);
	kill(t->orphan, SIGKILL);
}

static void test_keeper__a_killed_plumb_takes_its_tree_along(void **state)
{
	struct tree t = start_tree(false);
	assert_true(procfs_alive(t.child) && procfs_alive(t.grandchild) && procfs_alive(t.orphan));
	kill(t.fake_plumb, SIGKILL);
	waitpid(t.fake_plumb, NULL, 0);
	uint64_t until = mono_ns() + 2000000000ULL;
	while (!all_gone(&t) && mono_ns() < until) {
		struct timespec nap = { 0, 10000000 };
		nanosleep(&nap, NULL);
	}
	bool gone = all_gone(&t);
	if (!gone)
		print_error("alive: child %d grandchild %d orphan %d\n", procfs_alive(t.child), procfs_alive(t.grandchild),
			    procfs_alive(t.orphan));
	kill_all(&t);
	assert_true(gone);
}

static void test_keeper__done_leaves_everything_alone(void **state)
{
	struct tree t = start_tree(true);
	kill(t.fake_plumb, SIGKILL); /* after keeper_end: nothing of the tree is the keeper's any more */
	waitpid(t.fake_plumb, NULL, 0);
	struct timespec nap = { 0, 4 * (long)KEEPER_SCAN_NS };
	nanosleep(&nap, NULL);
	bool alive = procfs_alive(t.child) && procfs_alive(t.grandchild) && procfs_alive(t.orphan);
	kill_all(&t);
	assert_true(alive);
}

static void test_keeper__not_started_is_a_no_op(void **state)
{
	struct keeper k = KEEPER_INIT;
	assert_false(keeper_running(&k));
	keeper_watch(&k, getpid()); /* nothing to tell, nothing raised */
	keeper_watch(NULL, getpid());
	keeper_end(&k);
	keeper_end(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keeper__a_killed_plumb_takes_its_tree_along),
		cmocka_unit_test(test_keeper__done_leaves_everything_alone),
		cmocka_unit_test(test_keeper__not_started_is_a_no_op),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
