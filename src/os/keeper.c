/* keeper.c — the process that ends what plumb launched when plumb itself is killed (keeper.h). Invariant: it
 * signals only processes it found below a pid plumb named, each while it is the process that was found (same
 * start time), and it never outlives plumb by more than one sweep. */
#include "os/keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/procfs.h"
#include "os/spawn.h"

#define MSG_WATCH 'W'
#define MSG_DONE 'D'

struct watched {
	pid_t pid;
	uint64_t start;
	bool dead; /* seen gone once: a pid and start time never come back */
};

struct watch {
	struct watched *v;
	size_t n;
	char buf[65536]; /* one children file */
};

static bool same_process(struct watched *w)
{
	struct procfs_stat st;
	if (w->dead)
		return false;
	if (procfs_stat_read(w->pid, 0, &st) && st.starttime == w->start && st.state != 'Z' && st.state != 'X')
		return true;
	w->dead = true;
	return false;
}

static void remember(struct watch *w, pid_t pid)
{
	uint64_t start = procfs_start_time(pid);
	if (!start || w->n >= KEEPER_MAX)
		return;
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].pid == pid && w->v[i].start == start)
			return;
	w->v[w->n++] = (struct watched){ pid, start, false };
}

/* Every child of every thread of pid joins the watched set. */
static void add_children(struct watch *w, pid_t pid)
{
	struct procfs_dir d;
	if (!procfs_tasks_open(&d, pid))
		return;
	for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
		ssize_t len = procfs_read(pid, tid, "children", w->buf, sizeof w->buf);
		for (char *q = w->buf, *end; len > 0 && *q; q = end) {
			long child = strtol(q, &end, 10);
			if (end == q)
				break;
			if (child > 0)
				remember(w, (pid_t)child);
		}
	}
	procfs_dir_close(&d);
}

/* One walk of the watched tree (the set grows as it goes, so grandchildren join in the same walk); with stop, each
 * live process is stopped first so that it starts nothing more. */
static void walk(struct watch *w, bool stop)
{
	for (size_t i = 0; i < w->n; i++) {
		if (!same_process(&w->v[i]))
			continue;
		if (stop)
			kill(w->v[i].pid, SIGSTOP);
		add_children(w, w->v[i].pid);
	}
}

/* plumb is gone: stop the whole tree until no process is new, then kill it. */
static void sweep(struct watch *w)
{
	for (int round = 0; round < 16; round++) {
		size_t before = w->n;
		walk(w, true);
		if (w->n == before)
			break;
	}
	for (size_t i = 0; i < w->n; i++)
		if (same_process(&w->v[i]))
			kill(w->v[i].pid, SIGKILL);
}

static int keeper_main(void *arg)
{
	(void)arg;
	static const int quiet[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1,
				     SIGUSR2 };
	for (size_t i = 0; i < sizeof quiet / sizeof quiet[0]; i++)
		signal(quiet[i], SIG_IGN);
	close_range(3, ~0U, 0); /* plumb's descriptors (its end of the pipe among them) are not the keeper's */
	struct watch *w = calloc(1, sizeof *w);
	struct watched *v = calloc(KEEPER_MAX, sizeof *v);
	if (!w || !v)
		return 1;
	w->v = v;
	unsigned char msg[64];
	size_t have = 0;
	for (;;) {
		struct pollfd pfd = { 0, POLLIN, 0 };
		int r = poll(&pfd, 1, (int)(KEEPER_SCAN_NS / 1000000));
		if (r < 0 && errno != EINTR)
			break;
		if (r > 0) {
			ssize_t got = read(0, msg + have, sizeof msg - have);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) { /* plumb is gone without saying it was done */
				sweep(w);
				return 0;
			}
			have += (size_t)got;
			size_t used = 0;
			while (used < have) {
				if (msg[used] == MSG_DONE)
					return 0;
				if (msg[used] != MSG_WATCH) {
					used = have; /* not ours: ignore the rest */
					break;
				}
				if (have - used < 1 + sizeof(int32_t))
					break;
				int32_t pid;
				memcpy(&pid, msg + used + 1, sizeof pid);
				if (pid > 0)
					remember(w, (pid_t)pid);
				used += 1 + sizeof pid;
			}
			memmove(msg, msg + used, have - used);
			have -= used;
		}
		walk(w, false);
	}
	return 0;
}

enum plumb_err keeper_start(struct keeper *k, struct perr *e)
{
	int fds[2];
	k->pid = -1;
	k->fd = -1;
	/* a socket, not a pipe: a write to a keeper that is gone must not raise SIGPIPE in plumb (MSG_NOSIGNAL) */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
		return perr_set(e, PLUMB_EIO, "cannot start the keeper: socketpair: %s", strerror(errno));
	sigset_t none;
	sigemptyset(&none);
	struct child c = CHILD_INIT;
	c.fn = keeper_main;
	c.in = (struct child_stream){ CHILD_IO_FD, fds[0] };
	c.out = (struct child_stream){ CHILD_IO_NULL, -1 };
	c.err = (struct child_stream){ CHILD_IO_NULL, -1 };
	c.new_pgrp = true; /* the terminal's signals go to plumb's group, not to the keeper */
	c.sigmask = &none;
	static const char *const name[] = { "plumb-keeper", NULL };
	c.argv = name;
	enum plumb_err rc = child_start(&c, e);
	close(fds[0]);
	if (rc) {
		close(fds[1]);
		return rc;
	}
	k->pid = c.pid;
	k->fd = fds[1];
	child_detach(&c); /* reaped by keeper_end */
	return PLUMB_OK;
}

bool keeper_running(const struct keeper *k)
{
	return k && k->fd >= 0;
}

void keeper_watch(const struct keeper *k, pid_t pid)
{
	if (!keeper_running(k) || pid <= 0)
		return;
	unsigned char msg[1 + sizeof(int32_t)];
	int32_t v = (int32_t)pid;
	msg[0] = MSG_WATCH;
	memcpy(msg + 1, &v, sizeof v);
	ssize_t n;
	do
		n = send(k->fd, msg, sizeof msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
}

void keeper_end(struct keeper *k)
{
	if (k->fd >= 0) {
		char done = MSG_DONE;
		ssize_t n;
		do
			n = send(k->fd, &done, 1, MSG_NOSIGNAL);
		while (n < 0 && errno == EINTR);
		close(k->fd);
		k->fd = -1;
	}
	if (k->pid > 0) {
		pid_t w;
		do
			w = waitpid(k->pid, NULL, 0);
		while (w < 0 && errno == EINTR);
		k->pid = -1;
	}
}
