/* python.c — the `python` backend: samples a CPython interpreter by reading its own frame chains from outside
 * (src/python/python.h) at every tick; the target is never stopped or traced. Python frames go into the
 * profile as finished frames (func = function name, file = the .py path, line = the current line), so the
 * same labels and redaction apply as for native frames. With --native the frames are merged with native
 * stacks sampled by perf_event at the same moments (python_native.c).
 *
 * --mode cpu samples a thread at a tick when it used the CPU: its on-CPU time (/proc/PID/task/TID/schedstat)
 * is credited each tick, and a sample is taken for each interval's worth of credit, so a thread running X% of
 * the time gets X% of the ticks (a thread merely runnable, or waking briefly from sleep, does not); without
 * schedstat, the scheduler state ('R' in .../stat) decides. --idle keeps idle threads too; --mode wall samples
 * every thread at every tick. */
#include "sample/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/hashmap.h"
#include "python/python.h"
#include "sample/python_native.h"

#define PYB_MAX_FRAMES 1024

struct pyb_thread {
	pid_t tid;
	int stat_fd;     /* /proc/PID/task/TID/stat, kept open (pread re-reads it) */
	int sched_fd;    /* /proc/PID/task/TID/schedstat: on-CPU nanoseconds */
	uint64_t oncpu;  /* on-CPU time at the last tick (0: not read yet) */
	uint64_t credit; /* on-CPU time not yet turned into samples */
	uint32_t thread; /* profile thread id */
	uint64_t seen;   /* last tick the thread was seen */
	bool py_named;   /* named from threading (not just the OS name) */
};

struct pyb_state {
	const struct record_opts *opts;
	struct profile *p;
	pid_t pid;
	uint64_t tick;
	uint64_t now;            /* time of this tick (profile clock) */
	struct hmap tid_index;   /* tid -> index in threads */
	struct pyb_thread *threads;
	size_t nthreads, capthreads;
	uint32_t *frame_ids;
	uint64_t samples;
	uint64_t interval;
	bool oom;
};

static bool pyb_want_command(const struct record_opts *opts)
{
	struct py_binary_info info;
	if (!opts->argv || !opts->argv[0])
		return false;
	if (py_probe_command(opts->argv[0], &info))
		return info.supported;
	/* A launcher script named like an interpreter (pyenv's shims: "#!/usr/bin/env bash" ... exec python3.X):
	 * it becomes the interpreter by exec, and the backend waits for that. */
	const char *base = strrchr(opts->argv[0], '/');
	base = base ? base + 1 : opts->argv[0];
	if (strncmp(base, "python", 6) != 0 || strspn(base + 6, "0123456789.") != strlen(base + 6))
		return false;
	return py_command_is_script(opts->argv[0]);
}

static bool pyb_wants(const struct record_opts *opts)
{
	struct py_binary_info info;
	if (opts->target == TARGET_COMMAND)
		return pyb_want_command(opts);
	if (opts->target == TARGET_PID)
		return py_probe_pid(opts->pid, &info) && info.supported;
	return false;
}

static void read_comm(pid_t pid, pid_t tid, char *buf, size_t n)
{
	char path[64];
	buf[0] = 0;
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t r = read(fd, buf, n - 1);
	close(fd);
	if (r <= 0)
		r = 0;
	buf[r] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

static struct pyb_thread *thread_get(struct pyb_state *st, pid_t tid, const char *py_name)
{
	uint32_t idx;
	if (hmap_get(&st->tid_index, (uint64_t)tid, &idx)) {
		struct pyb_thread *known = &st->threads[idx];
		if (py_name && !known->py_named) { /* threading named it after we first saw it */
			profile_thread(st->p, (uint32_t)st->pid, (uint32_t)tid, py_name);
			known->py_named = true;
		}
		return known;
	}
	if (st->nthreads == st->capthreads) {
		size_t cap = st->capthreads ? st->capthreads * 2 : 16;
		struct pyb_thread *nt = realloc(st->threads, cap * sizeof *nt);
		if (!nt)
			return NULL;
		st->threads = nt;
		st->capthreads = cap;
	}
	char path[64], comm[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)st->pid, (int)tid);
	read_comm(st->pid, tid, comm, sizeof comm);
	uint32_t th = profile_thread(st->p, (uint32_t)st->pid, (uint32_t)tid, py_name ? py_name : comm);
	if (th == PROFILE_NOMEM || !hmap_put(&st->tid_index, (uint64_t)tid, (uint32_t)st->nthreads))
		return NULL;
	struct pyb_thread *t = &st->threads[st->nthreads++];
	t->tid = tid;
	t->py_named = py_name != NULL;
	t->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)st->pid, (int)tid);
	t->sched_fd = open(path, O_RDONLY | O_CLOEXEC);
	t->oncpu = 0;
	t->credit = 0;
	t->thread = th;
	t->seen = 0;
	return t;
}

/* The scheduler state letter of a thread ('R' running or runnable, 'S' sleeping, ...), '?' when unknown. */
static char thread_state(struct pyb_thread *t)
{
	char buf[512];
	if (t->stat_fd < 0)
		return '?';
	ssize_t n = pread(t->stat_fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	const char *paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' ? paren[2] : '?';
}

/* The thread's total on-CPU time in nanoseconds, 0 when unknown. */
static uint64_t thread_oncpu(struct pyb_thread *t)
{
	char buf[128];
	if (t->sched_fd < 0)
		return 0;
	ssize_t n = pread(t->sched_fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 10);
}

/* Whether a --mode cpu sample of this thread is due at this tick (see the file comment). */
static bool thread_on_cpu(struct pyb_thread *t, uint64_t interval)
{
	uint64_t now = thread_oncpu(t);
	if (!now)
		return thread_state(t) == 'R';
	if (!t->oncpu) { /* first sight: no history yet, go by the state */
		t->oncpu = now;
		return thread_state(t) == 'R';
	}
	uint64_t used = now > t->oncpu ? now - t->oncpu : 0;
	t->oncpu = now;
	t->credit += used;
	if (t->credit > 2 * interval)
		t->credit = 2 * interval; /* time we slept through is not made up for in a burst */
	if (used == 0 || t->credit < interval / 2)
		return false;
	t->credit = t->credit > interval ? t->credit - interval : 0;
	return true;
}

uint32_t pyb_push_frames(struct profile *p, uint32_t parent, const struct py_frame *frames, size_t n)
{
	uint32_t node = parent;
	for (size_t i = n; i-- > 0;) {
		struct frame f = { 0 };
		f.func = profile_intern_cstr(p, frames[i].func);
		f.file = profile_intern_cstr(p, frames[i].file);
		f.line = frames[i].line;
		f.kind = FRAME_USER;
		uint32_t fid = profile_frame(p, &f);
		if (fid == PROFILE_NOMEM)
			return PROFILE_NOMEM;
		node = profile_stack(p, node, fid);
		if (node == PROFILE_NOMEM)
			return PROFILE_NOMEM;
	}
	return node;
}

static void on_thread(void *ctx, const struct py_thread *t)
{
	struct pyb_state *st = ctx;
	struct pyb_thread *bt = thread_get(st, t->tid, t->name);
	if (!bt) {
		st->oom = true;
		return;
	}
	bt->seen = st->tick;
	if (st->opts->mode == MODE_CPU && !st->opts->idle && !thread_on_cpu(bt, st->interval))
		return;
	if (t->nframes == 0 && !st->opts->idle)
		return; /* a thread state with no Python code running (e.g. finishing) */
	uint32_t stack = pyb_push_frames(st->p, PROFILE_ROOT, t->frames, t->nframes);
	if (stack == PROFILE_NOMEM || !profile_add_sample(st->p, stack, bt->thread, st->now, 1)) {
		st->oom = true;
		return;
	}
	st->samples++;
}

static void forget_gone_threads(struct pyb_state *st)
{
	/* Threads not seen for a while have exited: close their stat files (the profile keeps their samples). */
	for (size_t i = 0; i < st->nthreads; i++) {
		struct pyb_thread *t = &st->threads[i];
		if (t->stat_fd >= 0 && st->tick - t->seen > 100) {
			close(t->stat_fd);
			t->stat_fd = -1;
			if (t->sched_fd >= 0)
				close(t->sched_fd);
			t->sched_fd = -1;
		}
	}
}

static enum plumb_err spawn(const struct record_opts *opts, pid_t *pid, struct perr *e)
{
	int ep[2];
	if (pipe2(ep, O_CLOEXEC) != 0)
		return perr_set(e, PLUMB_EIO, "pipe: %s", strerror(errno));
	pid_t child = fork();
	if (child < 0) {
		int err = errno;
		close(ep[0]);
		close(ep[1]);
		return perr_set(e, PLUMB_EIO, "fork: %s", strerror(err));
	}
	if (child == 0) {
		close(ep[0]);
		signal(SIGPIPE, SIG_DFL);
		if (opts->stages_path)
			setenv("PLUMB_STAGES", opts->stages_path, 1);
		execvp(opts->argv[0], opts->argv);
		int err = errno;
		if (write(ep[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(ep[1]);
	int exec_err;
	ssize_t n = read(ep[0], &exec_err, sizeof exec_err);
	close(ep[0]);
	if (n == (ssize_t)sizeof exec_err) {
		waitpid(child, NULL, 0);
		return perr_set(e, PLUMB_EINVAL, "cannot run '%s': %s", opts->argv[0], strerror(exec_err));
	}
	*pid = child;
	return PLUMB_OK;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ULL), (long)(t % 1000000000ULL) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		break; /* a signal (Ctrl-C) ends the wait; the loop checks *stop */
}

static enum plumb_err pyb_run(const struct record_opts *opts, struct profile *p, struct record_result *res,
			      struct perr *e)
{
	struct pyb_state st = { 0 };
	st.opts = opts;
	st.p = p;
	pid_t child = -1;
	enum plumb_err rc = PLUMB_OK;
	struct py_proc *py = NULL;
	struct pyn_sampler *native = NULL;
	char native_failed[160] = "";
	bool used_native = false;
	uint64_t interval = opts->interval_ns ? opts->interval_ns : 5000000;
	st.interval = interval;

	if (opts->target == TARGET_PID) {
		st.pid = opts->pid;
		rc = py_open(st.pid, &py, e);
		if (rc == PLUMB_EPERM) {
			char why[512];
			describe_attach_refusal(st.pid, "read the memory of", EPERM, why, sizeof why);
			perr_set(e, PLUMB_EPERM, "%s", why);
		}
		if (rc)
			return rc;
		res->start_ns = now_ns();
	} else if (opts->target == TARGET_COMMAND) {
		rc = spawn(opts, &child, e);
		if (rc)
			return rc;
		st.pid = child;
		res->start_ns = now_ns();
	} else {
		return perr_set(e, PLUMB_EUNSUPPORTED, "the python backend cannot run --call");
	}

	uint64_t deadline = opts->seconds > 0 ? res->start_ns + (uint64_t)(opts->seconds * 1e9) : 0;
	uint64_t next = res->start_ns;
	struct perr open_err = PERR_INIT;
	bool gave_up = false;
	for (;;) {
		if (opts->stop && *opts->stop)
			break;
		uint64_t t = now_ns();
		if (deadline && t >= deadline)
			break;
		if (child > 0) {
			int status;
			if (waitpid(child, &status, WNOHANG) == child) {
				res->target_exited = true;
				res->wait_status = status;
				describe_wait_status(status, res->ended, sizeof res->ended);
				child = -1;
				break;
			}
		} else if (opts->target == TARGET_PID && kill(st.pid, 0) != 0 && errno == ESRCH) {
			res->target_exited = true;
			snprintf(res->ended, sizeof res->ended, "process %d exited during the attach", (int)st.pid);
			break;
		}
		/* A launched interpreter needs a moment to exec and initialize before its state can be read. */
		if (!py && !gave_up) {
			open_err = (struct perr)PERR_INIT;
			enum plumb_err orc = py_open(st.pid, &py, &open_err);
			if (orc != PLUMB_OK && orc != PLUMB_ENOENT && orc != PLUMB_EUNSUPPORTED) {
				gave_up = true;
			} else if (orc == PLUMB_EUNSUPPORTED && t - res->start_ns > 5000000000ULL) {
				gave_up = true; /* never became a CPython we can read */
			}
		}
		if (py && opts->native && !native && !native_failed[0] && !gave_up) {
			/* Without native stacks (perf_event_open refused) the Python frames are still worth having; failing
			 * here would make record.c start the command a second time with another backend. */
			struct perr ne = PERR_INIT;
			if (pyn_open(&native, py, st.pid, opts, p, &ne))
				snprintf(native_failed, sizeof native_failed, "%s", ne.msg[0] ? ne.msg : "refused");
		}
		st.now = t;
		if (native) {
			pyn_poll(native, next + interval);
		} else if (py) {
			st.tick++;
			struct perr re = PERR_INIT;
			py_read_threads(py, on_thread, &st, &re);
			if (st.oom) {
				rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
				break;
			}
			if (st.tick % 64 == 0)
				forget_gone_threads(&st);
		}
		next += interval;
		t = now_ns();
		if (next < t)
			next = t; /* behind: drop the missed ticks instead of bursting */
		if (!native)
			sleep_until(next);
	}
	res->end_ns = now_ns();
	if (native) {
		pyn_finish(native, &st.tick);
		pyn_close(native);
		used_native = true;
	}
	if (child > 0) { /* stopped early (signal or --seconds): let the command finish on its own */
		snprintf(res->ended, sizeof res->ended, "still running (pid %d) when sampling stopped", (int)child);
		child = -1;
	}
	struct profile_meta *meta = profile_meta(p);
	meta->ticks += st.tick;
	meta->backend = profile_intern_cstr(p, "python");
	meta->unwinder = profile_intern_cstr(p, used_native ? "python+dwarf" : "python");
	if (rc == PLUMB_OK && !py) {
		/* Launched but never readable: the command already ran, so no other backend may run it again. */
		rc = perr_set(e, opts->target == TARGET_COMMAND ? PLUMB_EINVAL : open_err.code, "%s",
			      open_err.msg[0] ? open_err.msg : "the target ended before its interpreter could be read");
	}
	if (py && rc == PLUMB_OK)
		snprintf(res->limits, sizeof res->limits, "CPython %s frames%s; child processes not sampled%s",
			 py_version(py), opts->native ? " merged with native stacks" : " only",
			 opts->native && (opts->mode == MODE_WALL || opts->idle)
				 ? "; --native samples threads while on a CPU only (no idle stacks)" : "");
	if (py && rc == PLUMB_OK && native_failed[0])
		snprintf(res->limits, sizeof res->limits, "CPython %s frames only: --native unavailable (%s)",
			 py_version(py), native_failed);
	py_close(py);
	for (size_t i = 0; i < st.nthreads; i++) {
		if (st.threads[i].stat_fd >= 0)
			close(st.threads[i].stat_fd);
		if (st.threads[i].sched_fd >= 0)
			close(st.threads[i].sched_fd);
	}
	free(st.threads);
	hmap_release(&st.tid_index);
	return rc;
}

const struct backend backend_python = {
	.name = "python",
	.wants = pyb_wants,
	.run = pyb_run,
	/* picked when wants() says the target is CPython, never as a fallback for other targets (its run()
	 * would launch a command it cannot read) */
	.forced_only = true,
};
