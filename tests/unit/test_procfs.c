/* test_procfs.c — base/procfs: the stat parser on hostile names (a comm holding ") (" and spaces), every reader on
 * /proc/self and on children started here, maps lines, the pid and task lists, and files read as another
 * process sees them (/proc/PID/root inside a chroot, /proc/PID/map_files of a deleted file). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/procfs.h"
#include "os/spawn.h"

static char tmp[] = "/tmp/plumb-procfs-XXXXXX";

static void test_procfs__stat_parse_table(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		bool ok;
		const char *comm;
		char st;
		int ppid;
		unsigned long long start;
	} cases[] = {
		{ "42 (sh) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 12345 1000 200 18446744073709551615 4096 8192 "
		  "140000 0 0\n", true, "sh", 'S', 1, 12345 },
		{ "7 (a) (b c) R 5 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 3 0 99 0 0 1 2 3 4\n", true, "a) (b c", 'R', 5, 99 },
		{ "8 ()) Z 5 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0 0\n", true, ")", 'Z', 5, 77 }, /* stops at field 23 */
		{ "9 (x\ny) S 2 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 -5 1 0 1 0 0", true, "x\ny", 'S', 2, 1 },
		{ "10 () S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 3", true, "", 'S', 1, 3 },
		{ "11 (short) S 1 2 3", false, NULL, 0, 0, 0 },
		{ "12 no parens S 1", false, NULL, 0, 0, 0 },
		{ "(x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 3", false, NULL, 0, 0, 0 },
		{ "0 (x) S 1 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 3", false, NULL, 0, 0, 0 },
		{ "13 (x)", false, NULL, 0, 0, 0 },
		{ "", false, NULL, 0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct procfs_stat st;
		bool ok = procfs_stat_parse(cases[i].line, strlen(cases[i].line), &st);
		assert_int_equal(ok, cases[i].ok);
		if (!ok)
			continue;
		assert_string_equal(st.comm, cases[i].comm);
		assert_int_equal(st.state, cases[i].st);
		assert_int_equal(st.ppid, cases[i].ppid);
		assert_int_equal(st.starttime, cases[i].start);
	}
	struct procfs_stat st;
	const char *full = cases[0].line;
	assert_true(procfs_stat_parse(full, strlen(full), &st));
	assert_int_equal(st.pid, 42);
	assert_int_equal(st.pgrp, 42);
	assert_int_equal(st.utime, 7);
	assert_int_equal(st.stime, 3);
	assert_int_equal(st.num_threads, 1);
	assert_int_equal(st.startcode, 4096);
	assert_int_equal(st.endcode, 8192);
	assert_int_equal(st.startstack, 140000);
	assert_int_equal(st.processor, -1); /* the line stops at field 30 */
	/* a whole line as this kernel writes it (52 fields): field 39 is the CPU it last ran on */
	const char *whole = "77 (bursty) R 1 77 77 0 -1 4194304 93 0 0 0 120 31 0 0 20 0 1 0 5150 2502656 258 "
			    "18446744073709551615 94207205601280 94207205602593 140733194216208 0 0 0 0 0 0 0 0 0 17 1 0 "
			    "0 0 0 0 94207205608880 94207205609576 94207234203648 140733194221319 140733194221338 "
			    "140733194221338 140733194223591 0\n";
	assert_true(procfs_stat_parse(whole, strlen(whole), &st));
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.processor, 1);
	/* a comm longer than the buffer is cut, the fields after it still line up */
	char longline[512];
	snprintf(longline, sizeof longline, "5 (%0100d) S 4 0 0 0 0 0 0 0 0 0 0 0 0 0 20 0 1 0 8", 0);
	assert_true(procfs_stat_parse(longline, strlen(longline), &st));
	assert_int_equal(strlen(st.comm), PROCFS_COMM_MAX - 1);
	assert_int_equal(st.ppid, 4);
	assert_int_equal(st.starttime, 8);
}

static void test_procfs__status_parse(void **state)
{
	(void)state;
	const char *text = "Name:\tweb) (x\nUmask:\t0022\nState:\tS (sleeping)\nPPid:\t17\nTracerPid:\t9\n"
			   "Uid:\t1000\t1001\t1000\t1000\nNSpid:\t4242\t7\t1\nThreads:\t3\nVmHWM:\t  204800 kB\n"
			   "VmRSS:\t    1024 kB\nCapEff:\t000001ffffffffff\nvoluntary_ctxt_switches:\t77\n"
			   "nonvoluntary_ctxt_switches:\t5\n";
	struct procfs_status st;
	assert_true(procfs_status_parse(text, strlen(text), &st));
	assert_string_equal(st.name, "web) (x");
	assert_int_equal(st.ppid, 17);
	assert_int_equal(st.tracer_pid, 9);
	assert_int_equal(st.uid_real, 1000);
	assert_int_equal(st.uid_effective, 1001);
	assert_int_equal(st.threads, 3);
	assert_int_equal(st.vm_rss_bytes, 1024 * 1024);
	assert_int_equal(st.vm_hwm_bytes, 204800 * 1024ULL);
	assert_int_equal(st.voluntary_ctxt_switches, 77); /* not the nonvoluntary line */
	assert_int_equal(st.cap_effective, 0x1ffffffffffULL);
	assert_int_equal(st.nnspid, 3);
	assert_int_equal(st.nspid[0], 4242);
	assert_int_equal(st.nspid[2], 1);
	/* a kernel thread: no Vm lines */
	assert_true(procfs_status_parse("Name:\tkworker/0:1\nPPid:\t2\n", 24, &st));
	assert_int_equal(st.vm_rss_bytes, PROCFS_UNKNOWN);
	assert_false(procfs_status_parse("PPid:\t2\n", 8, &st));
	uint64_t v;
	assert_true(procfs_field_u64(text, strlen(text), "VmRSS:", &v));
	assert_int_equal(v, 1024);
	assert_false(procfs_field_u64(text, strlen(text), "VmSwap:", &v));
	assert_false(procfs_field_u64(text, strlen(text), "Name:", &v)); /* not a number */
}

static void test_procfs__self(void **state)
{
	(void)state;
	struct procfs_stat a, b;
	assert_true(procfs_stat_read(PROCFS_SELF, 0, &a));
	assert_true(procfs_stat_read(getpid(), 0, &b));
	assert_int_equal(a.pid, getpid());
	assert_int_equal(a.ppid, getppid());
	assert_int_equal(a.state, 'R');
	assert_true(a.starttime > 0);
	assert_int_equal(a.starttime, b.starttime);
	assert_int_equal(procfs_start_time(getpid()), a.starttime);
	assert_true(procfs_alive(getpid()));
	assert_false(procfs_alive(0x7ffffff0));
	assert_int_equal(procfs_start_time(0x7ffffff0), 0);

	struct procfs_status st;
	assert_true(procfs_status_read(getpid(), 0, &st));
	assert_string_equal(st.name, a.comm);
	assert_int_equal(st.ppid, getppid());
	assert_int_equal(st.uid_real, getuid());
	assert_true(st.threads >= 1);
	assert_true(st.vm_rss_bytes > 0 && st.vm_rss_bytes != PROCFS_UNKNOWN);
	assert_true(st.vm_hwm_bytes >= st.vm_rss_bytes);
	assert_true(st.nnspid >= 1);
	assert_int_equal(st.nspid[st.nnspid - 1], getpid()); /* our own namespace is the innermost */
	assert_int_equal(procfs_ns_pid(getpid()), getpid());

	char comm[PROCFS_COMM_MAX];
	assert_true(procfs_comm(PROCFS_SELF, 0, comm, sizeof comm));
	assert_string_equal(comm, a.comm);
	assert_true(procfs_comm(getpid(), (pid_t)syscall(SYS_gettid), comm, sizeof comm));
	assert_string_equal(comm, a.comm);
	assert_false(procfs_comm(0x7ffffff0, 0, comm, sizeof comm));
	assert_string_equal(comm, "");

	char exe[PATH_MAX], want[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", want, sizeof want - 1);
	assert_true(n > 0);
	want[n] = '\0';
	assert_int_equal(procfs_exe(getpid(), exe, sizeof exe), n);
	assert_string_equal(exe, want);
	assert_int_equal(procfs_exe(PROCFS_SELF, exe, 4), -1);
	assert_int_equal(errno, ENAMETOOLONG);

	char buf[16];
	assert_true(procfs_read(PROCFS_SELF, 0, "stat", buf, sizeof buf) == 15); /* cut at cap - 1 */
	assert_int_equal(procfs_read(0x7ffffff0, 0, "stat", buf, sizeof buf), -1);
	assert_int_equal(errno, ENOENT);
	int fd = procfs_open(getpid(), (pid_t)syscall(SYS_gettid), "schedstat");
	assert_true(fd >= 0);
	char text[128];
	uint64_t ns = 0;
	assert_true(procfs_pread(fd, text, sizeof text) > 0 && procfs_schedstat_parse(text, &ns));
	close(fd);
	assert_true(ns > 0);
	assert_true(procfs_runtime_ns(getpid(), 0) > 0);
}

static void *idle_thread(void *arg)
{
	int fd = *(int *)arg;
	char c;
	ssize_t r = read(fd, &c, 1); /* until the test closes the pipe */
	(void)r;
	return NULL;
}

static void test_procfs__tasks_and_pids(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, idle_thread, &p[0]), 0);
	struct procfs_dir d;
	assert_true(procfs_tasks_open(&d, getpid()));
	size_t n = 0;
	bool main_seen = false;
	for (pid_t tid; (tid = procfs_dir_next(&d)) > 0; n++)
		main_seen |= tid == getpid();
	procfs_dir_close(&d);
	procfs_dir_close(&d); /* twice is safe */
	assert_true(main_seen);
	assert_int_equal(n, 2);
	close(p[1]);
	pthread_join(th, NULL);
	close(p[0]);

	assert_false(procfs_tasks_open(&d, 0x7ffffff0));
	assert_int_equal(procfs_dir_next(&d), 0);

	assert_true(procfs_pids_open(&d));
	bool self = false, init = false;
	size_t count = 0;
	for (pid_t pid; (pid = procfs_dir_next(&d)) > 0; count++) {
		self |= pid == getpid();
		init |= pid == 1;
	}
	procfs_dir_close(&d);
	assert_true(self && init);
	assert_true(count >= 2);
}

/* A worker whose comm is set to a hostile name, waiting until the test closes the pipe (a worker is a fork:
 * it closes its own copy of the write end first). */
static int named_worker(void *arg)
{
	int *p = arg;
	close(p[1]);
	prctl(PR_SET_NAME, "a) (b c", 0, 0, 0);
	char c;
	return read(p[0], &c, 1) == 0 ? 0 : 1;
}

static void test_procfs__child_with_hostile_comm(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.fn = named_worker;
	c.fn_arg = p;
	assert_int_equal(child_start(&c, &e), PLUMB_OK);
	close(p[0]);
	char comm[PROCFS_COMM_MAX] = "";
	for (int i = 0; i < 2000 && strcmp(comm, "a) (b c") != 0; i++) { /* poll until prctl ran */
		procfs_comm(c.pid, 0, comm, sizeof comm);
		usleep(1000);
	}
	assert_string_equal(comm, "a) (b c");
	struct procfs_stat st;
	assert_true(procfs_stat_read(c.pid, 0, &st));
	assert_string_equal(st.comm, "a) (b c");
	assert_int_equal(st.pid, c.pid);
	assert_int_equal(st.ppid, getpid());
	assert_true(st.starttime >= procfs_start_time(getpid()));
	struct procfs_status ss;
	assert_true(procfs_status_read(c.pid, c.pid, &ss));
	assert_string_equal(ss.name, "a) (b c");
	assert_int_equal(ss.ppid, getpid());
	assert_true(procfs_alive(c.pid));
	close(p[1]);
	int status = child_finish(&c);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_false(procfs_alive(st.pid));
}

/* A real program (a copy of sh) exec'd under a file name holding ") (" and spaces: the kernel's own stat line. */
static void test_procfs__exec_with_hostile_name(void **state)
{
	(void)state;
	char prog[PATH_MAX];
	snprintf(prog, sizeof prog, "%s/x) (y z", tmp);
	int in = open("/bin/sh", O_RDONLY), out = open(prog, O_WRONLY | O_CREAT | O_TRUNC, 0700);
	assert_true(in >= 0 && out >= 0);
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	const char *argv[] = { prog, "-c", "read x", "two words", "", "last", NULL };
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.argv = argv;
	c.in.how = CHILD_IO_PIPE; /* the shell waits in read until the test closes it */
	assert_int_equal(child_start(&c, &e), PLUMB_OK);
	/* child_start returns once exec closed the report pipe; the kernel names the task and lays out its
	 * arguments a little later, so wait (with a deadline) until it sleeps in the program */
	struct procfs_stat st;
	for (int i = 0; i < 2000; i++) {
		if (procfs_stat_read(c.pid, 0, &st) && strcmp(st.comm, "x) (y z") == 0 && st.state == 'S')
			break;
		usleep(1000);
	}
	assert_string_equal(st.comm, "x) (y z");
	assert_int_equal(st.ppid, getpid());
	assert_int_equal(st.state, 'S');
	char *cmd;
	size_t len;
	assert_int_equal(procfs_cmdline(c.pid, &cmd, &len), 0);
	char want[PATH_MAX + 64];
	int wl = snprintf(want, sizeof want, "%s%c-c%cread x%ctwo words%c%clast", prog, 0, 0, 0, 0, 0);
	assert_int_equal(len, (size_t)wl);
	assert_memory_equal(cmd, want, len);
	assert_int_equal(cmd[len], '\0');
	free(cmd);
	/* its maps: the program's own text is mapped executable under its odd name */
	struct procfs_maps m;
	struct procfs_map map;
	assert_true(procfs_maps_open(&m, c.pid));
	bool text = false;
	while (procfs_maps_next(&m, &map))
		text |= strcmp(map.path, prog) == 0 && map.perms[2] == 'x';
	procfs_maps_close(&m);
	assert_true(text);
	close(c.in.fd);
	int status = child_finish(&c);
	assert_true(WIFEXITED(status));
	assert_int_equal(procfs_cmdline(st.pid, &cmd, &len), ENOENT);
	assert_null(cmd);
	unlink(prog);
}

/* A process in its own pid namespace is pid 1 there: procfs_ns_pid gives that, NSpid both levels. */
static void test_procfs__ns_pid_in_a_new_namespace(void **state)
{
	(void)state;
	const char *argv[] = { "unshare", "--pid", "--fork", "--kill-child", "sleep", "30", NULL };
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.argv = argv;
	c.err.how = CHILD_IO_NULL;
	if (child_start(&c, &e) != PLUMB_OK) {
		print_message("skipped: util-linux's unshare is not installed\n");
		skip();
	}
	pid_t inner = 0;
	for (int i = 0; i < 2000 && !inner; i++) { /* unshare's child, once it forked */
		struct procfs_dir d;
		assert_true(procfs_pids_open(&d));
		for (pid_t pid; (pid = procfs_dir_next(&d)) > 0;) {
			struct procfs_stat st;
			if (procfs_stat_read(pid, 0, &st) && st.ppid == c.pid && strcmp(st.comm, "sleep") == 0)
				inner = pid;
		}
		procfs_dir_close(&d);
		int status;
		if (!inner && child_poll(&c, &status, NULL) == 1) {
			assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
			print_message("skipped: a new pid namespace needs CAP_SYS_ADMIN\n");
			skip();
		}
		usleep(1000);
	}
	assert_true(inner > 0);
	struct procfs_status st;
	assert_true(procfs_status_read(inner, 0, &st));
	assert_int_equal(st.nnspid, 2);
	assert_int_equal(st.nspid[0], inner);
	assert_int_equal(st.nspid[1], 1);
	assert_int_equal(procfs_ns_pid(inner), 1);
	assert_int_equal(procfs_ns_pid(c.pid), c.pid); /* unshare itself stays in ours */
	child_signal(&c, SIGKILL); /* --kill-child takes the sleep along */
	child_finish(&c);
}

static void test_procfs__maps_lines(void **state)
{
	(void)state;
	struct procfs_map m;
	const char *l1 = "7f0000001000-7f0000002000 r-xp 00001000 fd:01 123456    /tmp/a b (deleted)";
	assert_true(procfs_maps_parse_line(l1, strlen(l1), &m));
	assert_int_equal(m.start, 0x7f0000001000ULL);
	assert_int_equal(m.end, 0x7f0000002000ULL);
	assert_int_equal(m.offset, 0x1000);
	assert_string_equal(m.perms, "r-xp");
	assert_int_equal(m.dev_major, 0xfd);
	assert_int_equal(m.dev_minor, 1);
	assert_int_equal(m.inode, 123456);
	assert_string_equal(m.path, "/tmp/a b (deleted)");
	const char *l2 = "55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0 ";
	assert_true(procfs_maps_parse_line(l2, strlen(l2), &m));
	assert_string_equal(m.path, "");
	const char *l3 = "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";
	assert_true(procfs_maps_parse_line(l3, strlen(l3), &m));
	assert_string_equal(m.path, "[vsyscall]");
	static const char *const bad[] = { "", "xyz", "1000-", "1000-2000", "1000-2000 r-x 0 0:0 0",
					   "2000-1000 r-xp 0 00:00 0", "1000-2000 r-xp zz 00:00 0" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_false(procfs_maps_parse_line(bad[i], strlen(bad[i]), &m));

	/* our own maps: the mapping holding this function is our executable, read-execute */
	char exe[PATH_MAX];
	assert_true(procfs_exe(PROCFS_SELF, exe, sizeof exe) > 0);
	uint64_t here = (uint64_t)(uintptr_t)&test_procfs__maps_lines;
	struct procfs_maps it;
	assert_true(procfs_maps_open(&it, PROCFS_SELF));
	bool found = false;
	size_t lines = 0;
	while (procfs_maps_next(&it, &m)) {
		lines++;
		if (here >= m.start && here < m.end) {
			found = true;
			assert_string_equal(m.path, exe);
			assert_int_equal(m.perms[2], 'x');
		}
	}
	procfs_maps_close(&it);
	assert_true(found);
	assert_true(lines > 5);
	assert_false(procfs_maps_open(&it, 0x7ffffff0));
}

static void test_procfs__root_and_map_files(void **state)
{
	(void)state;
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/data", tmp);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "first version\n", 14), 14);
	void *map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);

	char *data;
	size_t len;
	assert_int_equal(procfs_read_root(getpid(), path, 1 << 20, &data, &len), 0);
	assert_int_equal(len, 14);
	assert_string_equal(data, "first version\n");
	free(data);
	assert_int_equal(procfs_read_root(getpid(), path, 10, &data, &len), EFBIG);
	assert_int_equal(procfs_read_root(getpid(), "/dev/zero", 1 << 20, &data, &len), EINVAL); /* never ends */
	char fifo[PATH_MAX];
	snprintf(fifo, sizeof fifo, "%s/fifo", tmp);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(procfs_read_root(getpid(), fifo, 1 << 20, &data, &len), EINVAL); /* without blocking */
	unlink(fifo);
	char rp[PATH_MAX];
	assert_true(procfs_root_path(1234, "/usr/lib/x.so", rp, sizeof rp));
	assert_string_equal(rp, "/proc/1234/root/usr/lib/x.so");

	/* the mapped file is replaced on disk: map_files still reaches the mapped one */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(write(fd, "second\n", 7), 7);
	close(fd);
	uint64_t start = (uint64_t)(uintptr_t)map, end = start + 4096;
	char mf[128];
	assert_true(procfs_map_file_path(getpid(), start, end, mf, sizeof mf));
	char want[128];
	snprintf(want, sizeof want, "/proc/%d/map_files/%llx-%llx", (int)getpid(), (unsigned long long)start,
		 (unsigned long long)end);
	assert_string_equal(mf, want);
	fd = procfs_open_map_file(getpid(), start, end);
	if (fd < 0 && errno == EPERM) { /* the path above is still checked */
		munmap(map, 4096);
		print_message("skipped: opening /proc/PID/map_files needs CAP_SYS_ADMIN\n");
		skip();
	}
	assert_true(fd >= 0);
	char buf[64] = "";
	assert_int_equal(read(fd, buf, sizeof buf - 1), 14);
	assert_string_equal(buf, "first version\n");
	close(fd);
	munmap(map, 4096);
	unlink(path);
}

struct jail {
	const char *dir;
	int fd[2];
};

static int jailed_worker(void *arg)
{
	const struct jail *j = arg;
	close(j->fd[1]);
	if (chroot(j->dir) != 0 || chdir("/") != 0)
		return 3;
	char c;
	return read(j->fd[0], &c, 1) == 0 ? 0 : 1;
}

/* An absolute symlink inside another root resolves inside that root, not ours. */
static void test_procfs__root_of_a_chrooted_process(void **state)
{
	(void)state;
	char jail_dir[PATH_MAX], path[PATH_MAX];
	snprintf(jail_dir, sizeof jail_dir, "%s/jail", tmp);
	assert_int_equal(mkdir(jail_dir, 0700), 0);
	snprintf(path, sizeof path, "%s/etc", jail_dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/etc/plumb-procfs-marker", jail_dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(write(fd, "inside\n", 7), 7);
	close(fd);
	char link[PATH_MAX];
	snprintf(link, sizeof link, "%s/link", jail_dir);
	assert_int_equal(symlink("/etc/plumb-procfs-marker", link), 0);
	assert_int_equal(access("/etc/plumb-procfs-marker", F_OK), -1); /* not in our root */

	int p[2];
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	struct jail j = { jail_dir, { p[0], p[1] } };
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.fn = jailed_worker;
	c.fn_arg = &j;
	assert_int_equal(child_start(&c, &e), PLUMB_OK);
	close(p[0]);
	char root[64], seen[PATH_MAX] = "";
	snprintf(root, sizeof root, "/proc/%d/root", (int)c.pid);
	for (int i = 0; i < 2000 && strcmp(seen, jail_dir) != 0; i++) { /* until chroot ran */
		ssize_t n = readlink(root, seen, sizeof seen - 1);
		seen[n > 0 ? n : 0] = '\0';
		usleep(1000);
	}
	bool jailed = strcmp(seen, jail_dir) == 0;
	char *data = NULL;
	size_t len;
	int err = jailed ? procfs_read_root(c.pid, "/link", 4096, &data, &len) : 0;
	close(p[1]);
	int status = child_finish(&c);
	unlink(link);
	unlink(path);
	snprintf(path, sizeof path, "%s/etc", jail_dir);
	rmdir(path);
	rmdir(jail_dir);
	if (!jailed) {
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
		print_message("skipped: chroot needs CAP_SYS_CHROOT\n");
		skip();
	}
	assert_int_equal(err, 0);
	assert_string_equal(data, "inside\n");
	free(data);
}

/* A pidfd turns readable when its process ends, not before; the zombie is still the caller's to reap. */
static void test_procfs__pidfd_ends_with_the_process(void **state)
{
	(void)state;
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		close(go[1]);
		_exit(read(go[0], &c, 1) == 1 ? 7 : 1);
	}
	close(go[0]);
	int fd = procfs_pidfd(pid);
	assert_true(fd >= 0); /* Linux 5.3 and later (the callers poll without one) */
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	struct pollfd pfd = { fd, POLLIN, 0 };
	assert_int_equal(poll(&pfd, 1, 0), 0); /* still running */
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	close(fd);
	close(go[1]);
	assert_int_equal(procfs_pidfd(-5), -1);
}

int main(void)
{
	if (!mkdtemp(tmp))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procfs__stat_parse_table),
		cmocka_unit_test(test_procfs__status_parse),
		cmocka_unit_test(test_procfs__self),
		cmocka_unit_test(test_procfs__tasks_and_pids),
		cmocka_unit_test(test_procfs__child_with_hostile_comm),
		cmocka_unit_test(test_procfs__exec_with_hostile_name),
		cmocka_unit_test(test_procfs__ns_pid_in_a_new_namespace),
		cmocka_unit_test(test_procfs__maps_lines),
		cmocka_unit_test(test_procfs__root_and_map_files),
		cmocka_unit_test(test_procfs__root_of_a_chrooted_process),
		cmocka_unit_test(test_procfs__pidfd_ends_with_the_process),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(tmp);
	return rc;
}
