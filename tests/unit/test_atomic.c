/* test_atomic.c — the atomic writer's special paths and temp names, and the signal-cleanup table: a temp file
 * registered is removed by a signal that ends the process, a caught signal only sets its flag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/atomic.h"
#include "os/cleanup.h"

static char dir[] = "/tmp/plumb-unit-atomic-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd);
}

/* Number of entries in dir, and the name of the last one other than `except`. */
static int entries(const char *except, char *last, size_t cap)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		n++;
		if (last && (!except || strcmp(de->d_name, except) != 0))
			snprintf(last, cap, "%s", de->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

static void test_atomic__temp_names(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int pid; /* 0: not a plumb temp */
	} cases[] = {
		{ ".out.folded.plumb-tmp.1234.aB3xY9", 1234 },
		{ ".x.plumb-tmp.1.000000", 1 },
		{ "..bashrc.plumb-tmp.7.abcdef", 7 }, /* a dot-file's temp */
		{ "..plumb-tmp.7.abcdef", 0 },  /* an output named "." */
		{ ".plumb-tmp.1234.aB3xY9", 0 }, /* no output name */
		{ "out.folded.plumb-tmp.1234.aB3xY9", 0 },
		{ ".out.folded.plumb-tmp.1234.aB3xY", 0 },
		{ ".out.folded.plumb-tmp.1234.aB3xY9z", 0 },
		{ ".out.folded.plumb-tmp..aB3xY9", 0 },
		{ ".out.folded.plumb-tmp.0.aB3xY9", 0 },
		{ ".out.folded.plumb-tmp.12345678901.aB3xY9", 0 },
		{ ".out.folded.plumb-tmp.99999999999.aB3xY9", 0 },
		{ ".out.folded.plumb-tmp.x12.aB3xY9", 0 },
		{ ".out.folded.plumb-tmp.12.aB-xY9", 0 },
		{ ".out.folded.tmp.1234.aB3xY9", 0 },
		{ "out.folded.tmp.aB3xY9", 0 },
		{ "", 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pid_t pid = 0;
		bool is = atomic_is_temp_name(cases[i].name, &pid);
		if (is != (cases[i].pid != 0) || (is && pid != cases[i].pid))
			fail_msg("%s: got %d (pid %d)", cases[i].name, is, (int)pid);
	}
}

static void test_atomic__temp_is_named_and_registered(void **state)
{
	(void)state;
	char path[256], tmp[256] = "";
	snprintf(path, sizeof path, "%s/out.txt", dir);
	struct perr e = PERR_INIT;
	struct atomic_file af;
	assert_int_equal(atomic_open(&af, path, &e), PLUMB_OK);
	assert_int_equal(entries(NULL, tmp, sizeof tmp), 1);
	pid_t pid = 0;
	assert_true(atomic_is_temp_name(tmp, &pid));
	assert_int_equal(pid, getpid());
	assert_true(af.slot >= 0);
	fputs("new\n", af.fp);
	assert_int_equal(atomic_commit(&af, &e), PLUMB_OK);
	assert_int_equal(entries(NULL, NULL, 0), 1);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	unlink(path);
}

static void test_atomic__symlink_is_followed(void **state)
{
	(void)state;
	char link[256], target[256];
	snprintf(link, sizeof link, "%s/link", dir);
	snprintf(target, sizeof target, "%s/target", dir);
	assert_int_equal(symlink("target", link), 0); /* dangling, relative to the link's directory */
	struct perr e = PERR_INIT;
	assert_int_equal(atomic_write_file(link, "one\n", 4, &e), PLUMB_OK);
	assert_int_equal(atomic_write_file(link, "two!\n", 5, &e), PLUMB_OK);
	struct stat st;
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat(target, &st), 0);
	assert_int_equal(st.st_size, 5);
	assert_int_equal(entries(NULL, NULL, 0), 2);
	unlink(link);
	unlink(target);
	/* a loop is an error, not a hang */
	assert_int_equal(symlink("link", link), 0);
	assert_int_equal(atomic_write_file(link, "x", 1, &e), PLUMB_EOUTPUT);
	assert_non_null(strstr(e.msg, "symbolic links"));
	assert_int_equal(atomic_check_writable(link, &e), PLUMB_EOUTPUT);
	unlink(link);
}

static void test_atomic__fifo_is_written_in_place(void **state)
{
	(void)state;
	char fifo[256];
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	struct perr e = PERR_INIT;
	assert_int_equal(atomic_check_writable(fifo, &e), PLUMB_OK); /* opens nothing: it would block here */
	int rd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(atomic_write_file(fifo, "through\n", 8, &e), PLUMB_OK);
	char buf[16] = { 0 };
	assert_int_equal(read(rd, buf, sizeof buf), 8);
	assert_string_equal(buf, "through\n");
	close(rd);
	struct stat st;
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0644);
	unlink(fifo);
}

static void test_atomic__table(void **state)
{
	(void)state;
	char a[256], b[256];
	snprintf(a, sizeof a, "%s/a", dir);
	snprintf(b, sizeof b, "%s/b", dir);
	close(open(a, O_CREAT | O_WRONLY, 0600));
	close(open(b, O_CREAT | O_WRONLY, 0600));
	int sa = cleanup_add(a), sb = cleanup_add(b);
	assert_true(sa >= 0 && sb >= 0 && sa != sb);
	cleanup_forget(sb);
	cleanup_remove_all();
	assert_int_equal(access(a, F_OK), -1);
	assert_int_equal(access(b, F_OK), 0);
	unlink(b);
	/* a full table says so; every slot comes back */
	int slots[64], n = 0;
	while (n < 64 && (slots[n] = cleanup_add(a)) >= 0)
		n++;
	assert_true(n > 0 && n < 64);
	while (n > 0)
		cleanup_forget(slots[--n]);
	assert_true((slots[0] = cleanup_add(a)) >= 0);
	cleanup_forget(slots[0]);
}

/* In a child: open a temp beside dir/sig.out, then signal itself. */
static void child_signals_itself(int sig, bool catch)
{
	cleanup_install();
	static volatile sig_atomic_t caught;
	if (catch)
		cleanup_catch(sig, &caught);
	char path[256];
	snprintf(path, sizeof path, "%s/sig.out", dir);
	struct perr e = PERR_INIT;
	struct atomic_file af;
	if (atomic_open(&af, path, &e))
		_exit(90);
	fputs("partial", af.fp);
	raise(sig);
	if (!catch || !caught)
		_exit(91);
	_exit(atomic_commit(&af, &e) ? 92 : 0);
}

static void test_atomic__signal_removes_the_temp(void **state)
{
	(void)state;
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGABRT };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct rlimit no_core = { 0, 0 };
			setrlimit(RLIMIT_CORE, &no_core); /* SIGQUIT and SIGABRT would dump one */
			signal(sigs[i], SIG_DFL);
			child_signals_itself(sigs[i], false);
		}
		int status;
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != sigs[i])
			fail_msg("signal %d: status %#x", sigs[i], status);
		assert_int_equal(entries(NULL, NULL, 0), 0);
	}
	/* a caught signal (record's SIGINT) only sets the flag: the write goes on */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		child_signals_itself(SIGINT, true);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	char name[256] = "";
	assert_int_equal(entries(NULL, name, sizeof name), 1);
	assert_string_equal(name, "sig.out");
	char path[256];
	snprintf(path, sizeof path, "%s/sig.out", dir);
	unlink(path);
}

/* A write by descriptor goes to the directory that was opened, whatever its path names by then: the directory
 * renamed away and another put in its place (what a re-pointed $PLUMB_HOME link does) gets nothing, nor a temp;
 * a signal during the write removes the temp through the descriptor; `excl` keeps an existing file. */
static void test_atomic__write_at_stays_in_the_opened_directory(void **state)
{
	(void)state;
	char a[300], moved[300], file[400];
	snprintf(a, sizeof a, "%s/home", dir);
	snprintf(moved, sizeof moved, "%s/moved", dir);
	assert_int_equal(mkdir(a, 0700), 0);
	int dfd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(rename(a, moved), 0);
	assert_int_equal(mkdir(a, 0700), 0); /* the path now names another directory */
	struct perr e = PERR_INIT;
	assert_int_equal(atomic_write_file_at(dfd, "x.json", "home/x.json", "one", 3, false, &e), PLUMB_OK);
	snprintf(file, sizeof file, "%s/x.json", moved);
	struct stat st;
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, 3);
	assert_int_equal(st.st_mode & 07777, 0600);
	DIR *d = opendir(a);
	int n = 0;
	for (struct dirent *de; d && (de = readdir(d));)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(d);
	assert_int_equal(n, 0);
	/* excl: the existing file stays */
	assert_int_equal(atomic_write_file_at(dfd, "x.json", "home/x.json", "two!", 4, true, &e), PLUMB_EINVAL);
	assert_int_equal(stat(file, &st), 0);
	assert_int_equal(st.st_size, 3);
	/* a link at the name is refused, never written through */
	char link_path[400];
	snprintf(link_path, sizeof link_path, "%s/l.json", moved);
	assert_int_equal(symlink(file, link_path), 0);
	assert_int_equal(atomic_write_file_at(dfd, "l.json", "home/l.json", "x", 1, false, &e), PLUMB_EOUTPUT);
	assert_non_null(strstr(e.msg, "symbolic link"));
	/* a signal while the temp exists: the handler removes it through the descriptor */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		cleanup_install();
		struct atomic_file af;
		struct perr ce = PERR_INIT;
		if (atomic_open_at(&af, dfd, "sig.json", "home/sig.json", false, &ce))
			_exit(3);
		raise(SIGTERM);
		_exit(4);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	d = opendir(moved);
	for (struct dirent *de; d && (de = readdir(d));)
		if (strstr(de->d_name, ".plumb-tmp."))
			fail_msg("a temp is left: %s", de->d_name);
	closedir(d);
	unlink(link_path);
	unlink(file);
	close(dfd);
	rmdir(moved);
	rmdir(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_atomic__temp_names),
		cmocka_unit_test(test_atomic__temp_is_named_and_registered),
		cmocka_unit_test(test_atomic__symlink_is_followed),
		cmocka_unit_test(test_atomic__fifo_is_written_in_place),
		cmocka_unit_test(test_atomic__table),
		cmocka_unit_test(test_atomic__signal_removes_the_temp),
		cmocka_unit_test(test_atomic__write_at_stays_in_the_opened_directory),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
