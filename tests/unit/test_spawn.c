/* test_spawn.c — base/spawn: exit statuses, exec failures reported by the parent with errno's text, streams,
 * environment and directory, the hold before exec, the death signal, process groups, workers and hooks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/cleanup.h"
#include "os/procfs.h"
#include "os/spawn.h"

/* Reads fd to its end into buf (NUL-terminated). */
static size_t read_all(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && ((r = read(fd, buf + n, cap - 1 - n)) > 0 || (r < 0 && errno == EINTR)))
		if (r > 0)
			n += (size_t)r;
	buf[n] = '\0';
	return n;
}

/* Runs argv with stdout captured; returns the wait status. */
static int run_capture(struct child *c, char *out, size_t cap)
{
	struct perr e = PERR_INIT;
	c->out.how = CHILD_IO_PIPE;
	assert_int_equal(child_start(c, &e), PLUMB_OK);
	read_all(c->out.fd, out, cap);
	close(c->out.fd);
	return child_finish(c);
}

static void test_spawn__exit_status(void **state)
{
	(void)state;
	const char *argv[] = { "sh", "-c", "exit 3", NULL };
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.argv = argv;
	assert_int_equal(child_start(&c, &e), PLUMB_OK);
	assert_true(c.pid > 0);
	assert_int_equal(c.exec_errno, 0);
	int status = child_finish(&c);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
	assert_int_equal(c.pid, -1);
	assert_int_equal(child_finish(&c), -1); /* reaped already */
	assert_int_equal(errno, ECHILD);

	const char *killed[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct child k = CHILD_INIT;
	k.argv = killed;
	assert_int_equal(child_start(&k, &e), PLUMB_OK);
	struct rusage ru;
	status = child_finish_rusage(&k, &ru);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	assert_true(ru.ru_maxrss > 0);
}

static void test_spawn__exec_failure(void **state)
{
	(void)state;
	static const struct {
		const char *prog;
		const char *cwd;
		enum plumb_err code;
		int err;
		const char *text;
	} cases[] = {
		{ "/nonexistent/plumb-x", NULL, PLUMB_ENOENT, ENOENT,
		  "cannot run '/nonexistent/plumb-x': No such file or directory" },
		{ "plumb-no-such-command-on-path", NULL, PLUMB_ENOENT, ENOENT,
		  "cannot run 'plumb-no-such-command-on-path': No such file or directory" },
		{ "/etc/passwd", NULL, PLUMB_EPERM, EACCES, "cannot run '/etc/passwd': Permission denied" },
		{ "/tmp", NULL, PLUMB_EPERM, EACCES, "cannot run '/tmp': Permission denied" },
		{ "true", "/nonexistent/dir", PLUMB_ENOENT, ENOENT,
		  "cannot run 'true': cannot enter /nonexistent/dir: No such file or directory" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *argv[] = { cases[i].prog, NULL };
		struct child c = CHILD_INIT;
		struct perr e = PERR_INIT;
		c.argv = argv;
		c.cwd = cases[i].cwd;
		c.out.how = CHILD_IO_PIPE;
		assert_int_equal(child_start(&c, &e), cases[i].code);
		assert_int_equal(c.exec_errno, cases[i].err);
		assert_int_equal(c.pid, -1);
		assert_int_equal(c.out.fd, -1); /* nothing left open */
		assert_string_equal(e.msg, cases[i].text);
	}
	struct child none = CHILD_INIT;
	struct perr e = PERR_INIT;
	assert_int_equal(child_start(&none, &e), PLUMB_EINVAL);
}

static void test_spawn__streams_env_cwd(void **state)
{
	(void)state;
	setenv("PLUMB_SPAWN_B", "from-parent", 1);
	setenv("PLUMB_SPAWN_C", "kept", 1);
	const char *argv[] = { "sh", "-c", "printf '%s|%s|%s|' \"$PLUMB_SPAWN_A\" \"${PLUMB_SPAWN_B-unset}\" "
			       "\"$PLUMB_SPAWN_C\"; pwd; cat; echo to-stderr >&2", NULL };
	const char *env[] = { "PLUMB_SPAWN_A=x", "PLUMB_SPAWN_A=1", "PLUMB_SPAWN_B", NULL };
	struct child c = CHILD_INIT;
	c.argv = argv;
	c.env = env;
	c.cwd = "/";
	c.in.how = CHILD_IO_NULL;
	c.err.how = CHILD_IO_FD;
	c.err.fd = STDOUT_FILENO; /* after out is redirected: 2>&1, into the pipe */
	char out[256];
	int status = run_capture(&c, out, sizeof out);
	assert_int_equal(status, 0);
	assert_string_equal(out, "1|unset|kept|/\nto-stderr\n");
	assert_string_equal(getenv("PLUMB_SPAWN_B"), "from-parent"); /* ours untouched */

	/* stdin from a pipe, stderr into a pipe */
	const char *rev[] = { "sh", "-c", "read x; echo \"got $x\" >&2", NULL };
	struct child r = CHILD_INIT;
	struct perr e = PERR_INIT;
	r.argv = rev;
	r.in.how = CHILD_IO_PIPE;
	r.err.how = CHILD_IO_PIPE;
	assert_int_equal(child_start(&r, &e), PLUMB_OK);
	assert_int_equal(write(r.in.fd, "hello\n", 6), 6);
	close(r.in.fd);
	read_all(r.err.fd, out, sizeof out);
	close(r.err.fd);
	assert_int_equal(child_finish(&r), 0);
	assert_string_equal(out, "got hello\n");
}

static void test_spawn__path_and_name(void **state)
{
	(void)state;
	/* the program comes from path; argv[0] is only the name it is given */
	const char *argv[] = { "custom-name", "-c", "echo \"$0\"", NULL };
	struct child c = CHILD_INIT;
	c.path = "/bin/sh";
	c.argv = argv;
	char out[64];
	assert_int_equal(run_capture(&c, out, sizeof out), 0);
	assert_string_equal(out, "custom-name\n");
	struct child bad = CHILD_INIT;
	struct perr e = PERR_INIT;
	bad.path = "/nonexistent/sh";
	bad.argv = argv;
	assert_int_equal(child_start(&bad, &e), PLUMB_ENOENT);
	assert_string_equal(e.msg, "cannot run '/nonexistent/sh': No such file or directory");
}

static void test_spawn__signals_reset_and_mask(void **state)
{
	(void)state;
	/* plumb ignores SIGPIPE and handles SIGUSR2: the program gets neither; a mask we ask for is its mask */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	const char *argv[] = { "sh", "-c", "exec grep -E '^(SigIgn|SigBlk)' /proc/self/status", NULL };
	struct child c = CHILD_INIT;
	c.argv = argv;
	c.sigmask = &mask;
	char out[256];
	assert_int_equal(run_capture(&c, out, sizeof out), 0);
	sigaction(SIGPIPE, &old_pipe, NULL);
	unsigned long long ignored = 0, blocked = 0;
	char *blk = strstr(out, "SigBlk:");
	char *ig = strstr(out, "SigIgn:");
	assert_non_null(blk);
	assert_non_null(ig);
	ignored = strtoull(ig + 7, NULL, 16);
	blocked = strtoull(blk + 7, NULL, 16);
	assert_false(ignored & (1ULL << (SIGPIPE - 1)));
	assert_true(blocked & (1ULL << (SIGUSR1 - 1)));
}

static void test_spawn__hold_and_release(void **state)
{
	(void)state;
	const char *argv[] = { "sh", "-c", "echo ran", NULL };
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.argv = argv;
	c.hold = true;
	c.out.how = CHILD_IO_PIPE;
	assert_int_equal(child_start(&c, &e), PLUMB_OK);
	assert_true(c.pid > 0);
	/* held: the child is still a copy of this program, and has written nothing */
	char self[PATH_MAX], exe[PATH_MAX];
	assert_true(procfs_exe(PROCFS_SELF, self, sizeof self) > 0);
	assert_true(procfs_exe(c.pid, exe, sizeof exe) > 0);
	assert_string_equal(exe, self);
	struct pollfd pfd = { c.out.fd, POLLIN, 0 };
	assert_int_equal(poll(&pfd, 1, 0), 0);
	int status;
	assert_int_equal(child_poll(&c, &status, NULL), 0);
	assert_int_equal(child_release(&c, &e), PLUMB_OK);
	assert_int_equal(child_release(&c, &e), PLUMB_OK); /* no hold left: a no-op */
	char out[64];
	read_all(c.out.fd, out, sizeof out);
	close(c.out.fd);
	assert_string_equal(out, "ran\n");
	assert_int_equal(child_finish(&c), 0);

	/* an exec failure shows at release */
	const char *bad[] = { "/nonexistent/held", NULL };
	struct child b = CHILD_INIT;
	b.argv = bad;
	b.hold = true;
	assert_int_equal(child_start(&b, &e), PLUMB_OK);
	assert_int_equal(child_release(&b, &e), PLUMB_ENOENT);
	assert_int_equal(b.exec_errno, ENOENT);
	assert_int_equal(b.pid, -1);

	/* the held child was killed meanwhile: release says so */
	struct child k = CHILD_INIT;
	k.argv = argv;
	k.hold = true;
	assert_int_equal(child_start(&k, &e), PLUMB_OK);
	assert_int_equal(child_signal(&k, SIGKILL), 0);
	siginfo_t si;
	assert_int_equal(waitid(P_PID, (id_t)k.pid, &si, WEXITED | WNOWAIT), 0); /* dead, not reaped */
	assert_int_equal(child_release(&k, &e), PLUMB_EIO);
	assert_non_null(strstr(e.msg, "it ended before it could start"));
	assert_int_equal(k.pid, -1);

	/* given up without a release: the held child exits 127 and never runs the program */
	struct child g = CHILD_INIT;
	g.argv = argv;
	g.hold = true;
	g.out.how = CHILD_IO_PIPE;
	assert_int_equal(child_start(&g, &e), PLUMB_OK);
	status = child_finish(&g);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 127);
	read_all(g.out.fd, out, sizeof out);
	close(g.out.fd);
	assert_string_equal(out, "");
}

struct middle {
	int fd;  /* where the middle process writes its child's pid */
};

/* A middle process that starts `sleep` with a death signal, reports its pid, and ends. */
static int middle_worker(void *arg)
{
	const struct middle *m = arg;
	const char *argv[] = { "sleep", "60", NULL };
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.argv = argv;
	c.pdeathsig = SIGKILL;
	if (child_start(&c, &e) != PLUMB_OK)
		return 2;
	return write(m->fd, &c.pid, sizeof c.pid) == (ssize_t)sizeof c.pid ? 0 : 3;
}

static void test_spawn__pdeathsig(void **state)
{
	(void)state;
	/* as a subreaper, this process inherits the orphan and can see how it ended */
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	struct middle m = { p[1] };
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.fn = middle_worker;
	c.fn_arg = &m;
	assert_int_equal(child_start(&c, &e), PLUMB_OK);
	close(p[1]);
	pid_t grandchild = 0;
	assert_int_equal(read(p[0], &grandchild, sizeof grandchild), (ssize_t)sizeof grandchild);
	close(p[0]);
	assert_int_equal(child_finish(&c), 0);
	int status;
	pid_t w;
	do
		w = waitpid(grandchild, &status, 0); /* returns at once: killed when its parent ended */
	while (w < 0 && errno == EINTR);
	assert_int_equal(w, grandchild);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

static void test_spawn__process_group(void **state)
{
	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	const char *argv[] = { "sh", "-c", "sleep 60 & echo $!; wait", NULL };
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.argv = argv;
	c.new_pgrp = true;
	c.out.how = CHILD_IO_PIPE;
	assert_int_equal(child_start(&c, &e), PLUMB_OK);
	assert_int_equal(getpgid(c.pid), c.pid);
	assert_true(getpgid(c.pid) != getpgrp());
	char line[32];
	size_t n = 0;
	while (n + 1 < sizeof line && read(c.out.fd, line + n, 1) == 1 && line[n] != '\n')
		n++;
	line[n] = '\0';
	close(c.out.fd);
	pid_t sleeper = (pid_t)atoi(line);
	assert_true(sleeper > 0);
	assert_int_equal(getpgid(sleeper), c.pid);
	assert_int_equal(child_signal(&c, SIGTERM), 0); /* the whole group */
	int status = child_finish(&c);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	pid_t w;
	do
		w = waitpid(sleeper, &status, 0);
	while (w < 0 && errno == EINTR);
	assert_int_equal(w, sleeper);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	assert_int_equal(child_signal(&c, SIGTERM), -1);
	assert_int_equal(errno, ESRCH);
	prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

static int seven(void *arg)
{
	return *(int *)arg;
}

static int hook_exit(void *arg)
{
	(void)arg;
	return 5;
}

static int hook_refuse(void *arg)
{
	(void)arg;
	return -EACCES;
}

static void test_spawn__workers_hooks_and_poll(void **state)
{
	(void)state;
	int v = 7;
	struct child w = CHILD_INIT;
	struct perr e = PERR_INIT;
	w.fn = seven;
	w.fn_arg = &v;
	assert_int_equal(child_start(&w, &e), PLUMB_OK);
	int status = child_finish(&w);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);

	const char *argv[] = { "sh", "-c", "exit 0", NULL };
	struct child h = CHILD_INIT;
	h.argv = argv;
	h.hook = hook_exit;
	assert_int_equal(child_start(&h, &e), PLUMB_OK); /* the hook's exit is the program's outcome */
	status = child_finish(&h);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 5);

	struct child r = CHILD_INIT;
	r.argv = argv;
	r.hook = hook_refuse;
	assert_int_equal(child_start(&r, &e), PLUMB_EPERM);
	assert_string_equal(e.msg, "cannot run 'sh': its start-up step failed: Permission denied");

	const char *slow[] = { "sleep", "60", NULL };
	struct child s = CHILD_INIT;
	s.argv = slow;
	assert_int_equal(child_start(&s, &e), PLUMB_OK);
	pid_t pid = s.pid;
	assert_int_equal(child_poll(&s, &status, NULL), 0);
	assert_int_equal(child_signal(&s, SIGKILL), 0);
	struct rusage ru;
	int got;
	for (int i = 0; i < 5000 && (got = child_poll(&s, &status, &ru)) == 0; i++)
		usleep(1000);
	assert_int_equal(got, 1);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(s.pid, -1);
	assert_int_equal(kill(pid, 0), -1); /* reaped */
}

/* child_terminate: the signal, then SIGTERM and SIGKILL after a grace, to the child and what it started. */
static void test_spawn__terminate(void **state)
{
	(void)state;
	const unsigned long long grace = 200000000ULL;
	struct perr e = PERR_INIT;
	struct child_end end;

	/* the dispositions a child gets are this process's: a test started in the background by a shell without job
	 * control has SIGINT ignored (POSIX), and so would its children */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/* a child that ends on the first signal, once it runs */
	const char *plain[] = { "sh", "-c", "echo; exec sleep 30", NULL };
	struct child a = CHILD_INIT;
	a.argv = plain;
	a.out.how = CHILD_IO_PIPE;
	assert_int_equal(child_start(&a, &e), PLUMB_OK);
	char nl;
	assert_int_equal(read(a.out.fd, &nl, 1), 1);
	int status = child_terminate(&a, SIGINT, false, grace, &end);
	close(a.out.fd);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
	assert_int_equal(end.nsent, 1);
	assert_int_equal(end.sent[0], SIGINT);
	assert_int_equal(end.nsent_child, 1);
	assert_int_equal(a.pid, -1);

	/* the terminal sent SIGINT already (delivered): plumb's first signal is SIGTERM, after the grace */
	struct child b = CHILD_INIT;
	b.argv = plain;
	b.out.how = CHILD_IO_PIPE;
	assert_int_equal(child_start(&b, &e), PLUMB_OK);
	assert_int_equal(read(b.out.fd, &nl, 1), 1);
	status = child_terminate(&b, SIGINT, true, grace, &end);
	close(b.out.fd);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	assert_int_equal(end.nsent, 1);
	assert_int_equal(end.sent[0], SIGTERM);

	/* a child and its own child, both ignoring SIGINT and SIGTERM: SIGKILL ends both */
	const char *stubborn[] = { "sh", "-c", "trap '' INT TERM; sleep 30 & echo $!; wait", NULL };
	struct child c = CHILD_INIT;
	c.argv = stubborn;
	c.out.how = CHILD_IO_PIPE;
	assert_int_equal(child_start(&c, &e), PLUMB_OK);
	char line[32] = "";
	size_t n = 0;
	while (n + 1 < sizeof line && read(c.out.fd, line + n, 1) == 1 && line[n] != '\n')
		n++;
	line[n] = '\0';
	pid_t sleeper = (pid_t)atoi(line);
	assert_true(sleeper > 0);
	status = child_terminate(&c, SIGINT, false, grace, &end);
	close(c.out.fd);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	assert_int_equal(end.nsent, 3);
	assert_int_equal(end.sent[1], SIGTERM);
	assert_int_equal(end.sent[2], SIGKILL);
	assert_true(end.descendants >= 1);
	struct procfs_stat st;
	assert_false(procfs_stat_read(sleeper, 0, &st) && st.state != 'Z'); /* its child is gone too */

	/* nothing to end */
	assert_int_equal(child_terminate(&c, SIGINT, false, grace, &end), -1);
	assert_int_equal(errno, ECHILD);
}

/* cleanup_catch() notes which signal came, and whether the kernel sent it to a whole group (not kill()). */
static void test_spawn__caught_signal_is_named(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static volatile sig_atomic_t flag;
		cleanup_install();
		cleanup_catch(SIGTERM, &flag);
		kill(getpid(), SIGTERM);
		_exit(flag == SIGTERM && CLEANUP_SIG_NUMBER(flag) == SIGTERM && !(flag & CLEANUP_SIG_GROUP) ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spawn__exit_status),
		cmocka_unit_test(test_spawn__exec_failure),
		cmocka_unit_test(test_spawn__streams_env_cwd),
		cmocka_unit_test(test_spawn__path_and_name),
		cmocka_unit_test(test_spawn__signals_reset_and_mask),
		cmocka_unit_test(test_spawn__hold_and_release),
		cmocka_unit_test(test_spawn__pdeathsig),
		cmocka_unit_test(test_spawn__process_group),
		cmocka_unit_test(test_spawn__workers_hooks_and_poll),
		cmocka_unit_test(test_spawn__terminate),
		cmocka_unit_test(test_spawn__caught_signal_is_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
