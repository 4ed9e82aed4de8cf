/* test_dump.c — sample/dump: the /proc/PID/task/TID/syscall line in each of its shapes (in a system call, blocked
 * outside one, running, malformed), and a dump of this very process's threads in --nonblocking mode (the test
 * cannot ptrace itself): a thread blocked in a pipe read is found with its state and its system call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sample/dump.h"

static void test_dump__syscall_line_shapes(void **state)
{
	(void)state;
	long nr;
	uint64_t sp = 0, pc = 0;
	assert_true(dump_parse_syscall("202 0x7f1 0x80 0x0 0x0 0x0 0x0 0x7ffd1000 0x7f001234\n", &nr, &sp, &pc));
	assert_int_equal(nr, 202);
	assert_int_equal(sp, 0x7ffd1000);
	assert_int_equal(pc, 0x7f001234);
	assert_true(dump_parse_syscall("-1 0x7ffd10 0x7f0012\n", &nr, &sp, &pc));
	assert_int_equal(nr, -1);
	assert_int_equal(sp, 0x7ffd10);
	assert_int_equal(pc, 0x7f0012);
	assert_false(dump_parse_syscall("running\n", &nr, &sp, &pc));
	assert_int_equal(nr, -1);
	assert_false(dump_parse_syscall("", &nr, &sp, &pc));
	assert_int_equal(nr, -2);
	assert_false(dump_parse_syscall("12 0x1 zz", &nr, &sp, &pc));
	assert_false(dump_parse_syscall("7", &nr, &sp, &pc));
	assert_false(dump_parse_syscall("-11 0x7 0x72", &nr, &sp, &pc)); /* found by fuzz_dump */
	assert_int_equal(nr, -2);
}

static int fds[2];

static void *reader(void *arg)
{
	char c;
	/* syscall(), not read(): a sanitizer build intercepts read() in a frame whose CFA needs rbp, which a
	 * --nonblocking dump does not know (only sp and pc) */
	long n = syscall(SYS_read, fds[0], &c, 1);
	return (void *)(intptr_t)n + (intptr_t)arg;
}

static void test_dump__own_threads_nonblocking(void **state)
{
	(void)state;
	assert_int_equal(pipe(fds), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, reader, NULL), 0);
	pthread_setname_np(t, "pipe_reader");
	struct dump *d = NULL;
	struct perr e = PERR_INIT;
	const struct dump_thread *found = NULL;
	for (int tries = 0; tries < 200 && !found; tries++) {
		dump_free(d);
		d = NULL;
		usleep(10000);
		struct dump_opts o = { .pid = getpid(), .nonblocking = true };
		assert_int_equal(dump_take(&o, &d, &e), PLUMB_OK);
		assert_int_equal(d->threads[0].tid, getpid()); /* main first */
		for (size_t i = 0; i < d->nthreads; i++)
			if (strcmp(d->threads[i].name, "pipe_reader") == 0 && d->threads[i].syscall == 0)
				found = &d->threads[i];
	}
	assert_non_null(found);
	assert_int_equal(found->state, 'S');
	assert_string_equal(found->state_text, "sleeping");
	assert_int_equal(d->stopped_ns, 0);
	/* its native stack from /proc's sp and pc: the read, then reader() in this program */
	bool saw_reader = false;
	for (size_t k = 0; k < found->nframes; k++)
		saw_reader |= found->frames[k].func && strcmp(found->frames[k].func, "reader") == 0;
	assert_true(saw_reader);
	dump_free(d);
	assert_int_equal(write(fds[1], "x", 1), 1);
	pthread_join(t, NULL);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump__syscall_line_shapes),
		cmocka_unit_test(test_dump__own_threads_nonblocking),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
