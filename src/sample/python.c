/* python.c — the `python` backend: samples a CPython interpreter by reading its own frame chains from outside
 * (src/python/python.h) at ticks a random interval apart (§5.2); the target is never stopped or traced. Python frames go into the
 * profile as finished frames (func = function name, file = the .py path, line = the current line), so the
 * same labels and redaction apply as for native frames. With --native the frames are merged with native
 * stacks sampled by perf_event at the same moments (python_native.c).
 *
 * --mode cpu samples a thread at a tick when it used the CPU: its on-CPU time (/proc/PID/task/TID/schedstat)
 * is credited each tick, and a sample is taken for each interval's worth of credit, so a thread running X% of
 * the time gets X% of the ticks (a thread merely runnable, or waking briefly from sleep, does not); without
 * schedstat, the scheduler state ('R' in .../stat) decides. --idle keeps idle threads too; --mode wall samples
 * every thread at every tick.
 *
 * Child processes are followed like perf's inherit (docs/design.md §5.1: children are sampled too): every ~100 ms the
 * process tree under the target is read from /proc/N/stat (ppid links), and each descendant that is a CPython
 * we can read (a forked worker has its parent's binary; an exec'd one is detected on its own) is sampled the
 * same way into the same profile, under its own pid and threads; every other descendant (a compiled program the
 * script runs) gets native stacks from a perf_event sampler of its own (python_native.c without Python frames),
 * polled between ticks. A process that execs is read again; one that exits is dropped quietly (its samples
 * stay). With --native each CPython child gets its own native sampler too, polled with the target's. */
#include "sample/backend.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/clock.h"
#include "base/hashmap.h"
#include "os/procfs.h"
#include "base/rand.h"
#include "python/python.h"
#include "sample/python_native.h"

struct pyb_thread {
	pid_t tid;
	int stat_fd;     /* /proc/PID/task/TID/stat, kept open (pread re-reads it) */
	int sched_fd;    /* /proc/PID/task/TID/schedstat: on-CPU nanoseconds */
	uint64_t oncpu;  /* on-CPU time at the last tick (0: not read yet) */
	int64_t credit;  /* on-CPU time not yet turned into samples (negative: sampled ahead of it) */
	int64_t due;     /* the credit its next sample waits for: a random interval (0: not drawn yet) */
	uint32_t thread; /* profile thread id */
	uint64_t seen;   /* last tick the thread was seen */
	bool py_named;   /* named from threading (not just the OS name) */
};

/* One sampled process: the target, or one of its descendants. */
struct pyb_proc {
	pid_t pid;
	struct py_proc *py;      /* NULL while not readable (yet) */
	struct pyn_sampler *native; /* --native: a descendant's own perf_event sampler (the target's is apart) */
	struct hmap tid_index;   /* tid -> index in threads */
	struct pyb_thread *threads;
	size_t nthreads, capthreads;
	bool sampled;            /* at least one sample came from it */
	/* descendants only */
	unsigned long long start;  /* start time (/proc/PID/stat field 22): a reused pid is another process */
	unsigned long image[3];    /* startcode, endcode, startstack: they change when the process execs */
	uint64_t found_ns;         /* when it was found, or last exec'd */
	uint64_t scan;             /* the last scan that found it */
	enum { KID_TRY, KID_OPEN, KID_NATIVE, KID_SKIP } state; /* KID_NATIVE: not CPython, native stacks only */
	bool noted;                /* counted among the CPython children that could not be sampled */
	bool native_counted;       /* counted among the children that gave native stacks only */
};

#define PYB_SCAN_NS 100000000ULL    /* how often the process tree is read */
#define PYB_NEWPROC_NS 10000000ULL  /* how soon a new process is looked for once one was created anywhere */
#define PYB_MAX_KIDS 1024

struct pyb_state {
	const struct record_opts *opts;
	struct profile *p;
	pid_t pid;
	uint64_t tick;
	uint64_t now;            /* time of this tick (profile clock) */
	struct rand64 rng;       /* the intervals between ticks (docs/design.md §5.2) */
	struct pyb_proc root;
	struct pyb_proc *cur;    /* the process being read */
	struct pyb_proc **kids;  /* descendants of the target */
	size_t nkids, capkids;
	uint64_t scans, last_scan_ns;
	long last_pid;           /* /proc/loadavg's last pid at the last scan */
	unsigned kids_sampled;   /* descendants that gave at least one sample (gone ones included) */
	unsigned kids_unsupported, kids_unreadable; /* CPython descendants left alone: no layout, memory refused */
	unsigned kids_native_failed;               /* --native could not open a descendant's events */
	unsigned kids_native_only;                 /* descendants not CPython that gave native stacks */
	unsigned kids_other_failed;                /* descendants not CPython whose events could not be opened */
	bool native_active;                        /* --native is sampling the target: children get it too */
	struct pyn_sampler **pollset;              /* --native: the samplers polled at this tick */
	size_t cappollset;
	char unsupported_version[16];              /* the first such version, e.g. "3.10" */
	uint64_t interval;
	bool oom;
	/* the target's reader and --native sampler, opened once it is a readable interpreter */
	struct py_proc *py;
	struct pyn_sampler *native;
	char native_failed[160];   /* why --native could not sample it */
	struct perr open_err;      /* why its reader did not open (yet) */
	bool gave_up;              /* it never will */
	char root_unsupported[200]; /* it is a CPython without a reader: what the summary says instead */
};

static bool pyb_want_command(const struct record_opts *opts)
{
	struct py_binary_info info;
	if (!opts->argv || !opts->argv[0])
		return false;
	if (py_probe_command(opts->argv[0], &info))
		return info.major != 0; /* one without a reader is said so, in pyb_run */
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
		return py_probe_pid(opts->pid, &info) && info.is_python;
	return false;
}

/* A CPython plumb cannot read (2.7, 3.6, 3.7, a layout check that failed): said in one line, with the fallback
 * the backends after this one take (perf_event: native frames), unless the python backend was asked for. */
static enum plumb_err pyb_unsupported(const struct record_opts *opts, struct perr *e)
{
	if (!opts->backend && strlen(e->msg) + 24 < sizeof e->msg)
		strcat(e->msg, "; native frames only");
	return e->code;
}

static struct pyb_thread *thread_get(struct pyb_state *st, struct pyb_proc *pr, pid_t tid, const char *py_name)
{
	uint32_t idx;
	if (hmap_get(&pr->tid_index, (uint64_t)tid, &idx)) {
		struct pyb_thread *known = &pr->threads[idx];
		if (py_name && !known->py_named) { /* threading named it after we first saw it */
			profile_thread(st->p, (uint32_t)pr->pid, (uint32_t)tid, py_name);
			known->py_named = true;
		}
		return known;
	}
	if (!ALLOC_GROW(pr->threads, pr->nthreads + 1, pr->capthreads))
		return NULL;
	char comm[PROCFS_COMM_MAX];
	procfs_comm(pr->pid, tid, comm, sizeof comm);
	uint32_t th = profile_thread(st->p, (uint32_t)pr->pid, (uint32_t)tid, py_name ? py_name : comm);
	if (th == PROFILE_NOMEM || !hmap_put(&pr->tid_index, (uint64_t)tid, (uint32_t)pr->nthreads))
		return NULL;
	struct pyb_thread *t = &pr->threads[pr->nthreads++];
	/* set whole: the array grows by realloc, a field left out (due was) holds what the heap had */
	*t = (struct pyb_thread){
		.tid = tid,
		.stat_fd = procfs_open(pr->pid, tid, "stat"),
		.sched_fd = procfs_open(pr->pid, tid, "schedstat"),
		.thread = th,
		.py_named = py_name != NULL,
	};
	return t;
}

/* The scheduler state letter of a thread ('R' running or runnable, 'S' sleeping, ...), '?' when unknown. */
static char thread_state(struct pyb_thread *t)
{
	char buf[PROCFS_STAT_MAX];
	struct procfs_stat st;
	ssize_t n = procfs_pread(t->stat_fd, buf, sizeof buf);
	return n > 0 && procfs_stat_parse(buf, (size_t)n, &st) ? st.state : '?';
}

/* The thread's total on-CPU time in nanoseconds, 0 when unknown. */
static uint64_t thread_oncpu(struct pyb_thread *t)
{
	char buf[128];
	uint64_t ns;
	return procfs_pread(t->sched_fd, buf, sizeof buf) > 0 && procfs_schedstat_parse(buf, &ns) ? ns : 0;
}

/* How many --mode cpu samples of this thread are due at this tick: one per random amount of CPU (mean: the
 * interval, §5.2) its credit covers. One at most per tick left a thread always on a CPU ~15% short. */
#define PYB_MAX_CATCHUP 4 /* intervals of credit kept beyond the next amount: a stall of plumb is not a burst */
static uint32_t thread_on_cpu(struct pyb_thread *t, uint64_t interval, struct rand64 *rng)
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
	int64_t iv = (int64_t)interval;
	if (!t->due) /* a random amount of CPU, not a fixed one: that would lock onto a rhythm (§5.2) */
		t->due = (int64_t)rand64_interval_ns(rng, interval);
	t->credit += (int64_t)used;
	if (t->credit > t->due + PYB_MAX_CATCHUP * iv)
		t->credit = t->due + PYB_MAX_CATCHUP * iv;
	uint32_t n = 0;
	/* the rest is carried, not dropped (a drawn amount is at least half the interval: the loop ends) */
	while (used && t->credit >= t->due) {
		t->credit -= t->due;
		t->due = (int64_t)rand64_interval_ns(rng, interval);
		n++;
	}
	return n;
}

static void on_thread(void *ctx, const struct py_thread *t)
{
	struct pyb_state *st = ctx;
	struct pyb_thread *bt = thread_get(st, st->cur, t->tid, t->name);
	if (!bt) {
		st->oom = true;
		return;
	}
	bt->seen = st->tick;
	if (bt->stat_fd < 0 && st->cur != &st->root)
		return; /* not a thread of this descendant: a vfork child reads its parent's memory until it execs */
	uint32_t weight = 1;
	if (st->opts->mode == MODE_CPU && !st->opts->idle && !(weight = thread_on_cpu(bt, st->interval, &st->rng)))
		return;
	if (t->nframes == 0 && !st->opts->idle)
		return; /* a thread state with no Python code running (e.g. finishing) */
	uint32_t stack = py_frames_push(st->p, PROFILE_ROOT, t->frames, t->nframes);
	if (stack == PROFILE_NOMEM || !profile_add_sample(st->p, stack, bt->thread, st->now, weight)) {
		st->oom = true;
		return;
	}
	if (!st->cur->sampled && st->cur != &st->root)
		st->kids_sampled++;
	st->cur->sampled = true;
}

static void forget_gone_threads(struct pyb_state *st, struct pyb_proc *pr)
{
	/* Threads not seen for a while have exited: close their stat files (the profile keeps their samples). */
	for (size_t i = 0; i < pr->nthreads; i++) {
		struct pyb_thread *t = &pr->threads[i];
		if (t->stat_fd >= 0 && st->tick - t->seen > 100) {
			close(t->stat_fd);
			t->stat_fd = -1;
			if (t->sched_fd >= 0)
				close(t->sched_fd);
			t->sched_fd = -1;
		}
	}
}

/* Closes a process's reader and thread files (the profile keeps its threads and samples). A --native sampler
 * is drained first: its samples count as ticks, like the target's. */
static void proc_release(struct pyb_state *st, struct pyb_proc *pr)
{
	if (pr->native) {
		uint64_t n = 0;
		pyn_finish(pr->native, &n);
		pyn_close(pr->native);
		pr->native = NULL;
		st->tick += n;
		if (n && !pr->sampled && pr != &st->root) {
			pr->sampled = true;
			st->kids_sampled++;
		}
		if (n && !pr->py && !pr->native_counted && pr != &st->root) {
			pr->native_counted = true;
			st->kids_native_only++;
		}
	}
	py_close(pr->py);
	pr->py = NULL;
	for (size_t i = 0; i < pr->nthreads; i++) {
		if (pr->threads[i].stat_fd >= 0)
			close(pr->threads[i].stat_fd);
		if (pr->threads[i].sched_fd >= 0)
			close(pr->threads[i].sched_fd);
	}
	free(pr->threads);
	pr->threads = NULL;
	pr->nthreads = pr->capthreads = 0;
	hmap_release(&pr->tid_index);
}

/* ---- descendants ---- */

struct proc_entry {
	pid_t pid, ppid;
	unsigned long long start;
	unsigned long image[3];
};

/* Reads the fields of /proc/PID/stat we need; false when the process is gone or the line is odd. */
static bool read_proc_entry(pid_t pid, struct proc_entry *out)
{
	struct procfs_stat st;
	if (!procfs_stat_read(pid, 0, &st))
		return false;
	memset(out, 0, sizeof *out);
	out->pid = pid;
	out->ppid = st.ppid;
	out->start = st.starttime;
	out->image[0] = (unsigned long)st.startcode;
	out->image[1] = (unsigned long)st.endcode;
	out->image[2] = (unsigned long)st.startstack;
	return true;
}

static struct pyb_proc *kid_find(struct pyb_state *st, pid_t pid)
{
	for (size_t i = 0; i < st->nkids; i++)
		if (st->kids[i]->pid == pid)
			return st->kids[i];
	return NULL;
}

static struct pyb_proc *kid_add(struct pyb_state *st, const struct proc_entry *e)
{
	if (!ALLOC_GROW(st->kids, st->nkids + 1, st->capkids))
		return NULL;
	struct pyb_proc *pr = calloc(1, sizeof *pr);
	if (!pr)
		return NULL;
	pr->pid = e->pid;
	pr->start = e->start;
	memcpy(pr->image, e->image, sizeof pr->image);
	pr->found_ns = st->now;
	pr->state = KID_TRY;
	st->kids[st->nkids++] = pr;
	return pr;
}

/* Whether a descendant is CPython (or will be: a binary that needs libpython before it is mapped). */
static bool kid_is_python(pid_t pid)
{
	struct py_binary_info info;
	char exe[64];
	snprintf(exe, sizeof exe, "/proc/%d/exe", (int)pid);
	return py_probe_pid(pid, &info) || py_probe_command(exe, &info);
}

/* Tries to read a descendant's interpreter. A forked worker is readable at once; a process that just exec'd
 * Python may not be initialized yet (or its libpython not mapped yet), so those are tried again for a while;
 * anything else (not CPython, a version without a layout, memory we may not read) is left alone. */
static void kid_open(struct pyb_state *st, struct pyb_proc *pr)
{
	struct perr e = PERR_INIT;
	if (!kid_is_python(pr->pid)) { /* a compiled program: its native stacks */
		if (pyn_open(&pr->native, NULL, pr->pid, st->opts, st->p, &e) == PLUMB_OK) {
			pr->state = KID_NATIVE;
		} else {
			pr->state = KID_SKIP;
			if (e.code == PLUMB_EPERM && !pr->noted) {
				st->kids_other_failed++;
				pr->noted = true;
			}
		}
		return;
	}
	enum plumb_err rc = py_open(pr->pid, &pr->py, &e);
	uint64_t age = st->now - pr->found_ns;
	if (rc == PLUMB_OK && st->native_active) {
		struct perr ne = PERR_INIT;
		if (pyn_open(&pr->native, pr->py, pr->pid, st->opts, st->p, &ne) != PLUMB_OK) {
			py_close(pr->py);
			pr->py = NULL;
			pr->state = KID_SKIP;
			st->kids_native_failed++;
			return;
		}
	}
	if (rc == PLUMB_OK) {
		pr->state = KID_OPEN;
		return;
	}
	/* a CPython of a version without a layout is final at once (and worth a word in the summary) */
	struct py_binary_info info;
	bool no_layout = rc == PLUMB_EUNSUPPORTED && py_probe_pid(pr->pid, &info) && info.is_python && !info.supported;
	bool may_come = (rc == PLUMB_ENOENT && age < 5000000000ULL) || age < 500000000ULL;
	if (may_come && !no_layout) /* just found (before or in its exec): any failure, a refusal too, is not final */
		return; /* tried again at the next scan */
	pr->state = KID_SKIP;
	if (pr->noted)
		return;
	if (rc == PLUMB_EPERM) {
		st->kids_unreadable++;
		pr->noted = true;
	} else if (no_layout) {
		if (!st->kids_unsupported++)
			snprintf(st->unsupported_version, sizeof st->unsupported_version, "%u.%u", info.major,
				 info.minor);
		pr->noted = true;
	}
}

/* A process found below the target at this scan: a new one is added, a known one is checked for an exec. */
static void kid_found(struct pyb_state *st, const struct proc_entry *e)
{
	struct pyb_proc *pr = kid_find(st, e->pid);
	if (pr && pr->start != e->start) { /* the pid was reused: a new process */
		proc_release(st, pr);
		pr->start = e->start;
		pr->sampled = false;
		memset(pr->image, 0xff, sizeof pr->image);
	}
	if (pr && memcmp(pr->image, e->image, sizeof pr->image) != 0) { /* it exec'd: read it afresh */
		proc_release(st, pr);
		memcpy(pr->image, e->image, sizeof pr->image);
		pr->found_ns = st->now;
		pr->state = KID_TRY;
	}
	if (!pr && st->nkids < PYB_MAX_KIDS)
		pr = kid_add(st, e);
	if (!pr)
		return;
	pr->scan = st->scans;
	if (pr->state == KID_TRY)
		kid_open(st, pr);
}

/* The last pid the kernel handed out (/proc/loadavg's last field), -1 when unknown. */
static long last_pid(void)
{
	char buf[128];
	if (procfs_read_path("/proc/loadavg", buf, sizeof buf) <= 0)
		return -1;
	const char *sp = strrchr(buf, ' ');
	return sp ? strtol(sp + 1, NULL, 10) : -1;
}

/* Walks /proc and calls kid_found for every descendant of the target. */
static void walk_tree(struct pyb_state *st)
{
	struct procfs_dir d;
	if (!procfs_pids_open(&d))
		return;
	struct proc_entry *ents = NULL;
	size_t n = 0, cap = 0;
	struct hmap index = HMAP_INIT;
	for (pid_t pid; (pid = procfs_dir_next(&d)) > 0;) {
		if (!ALLOC_GROW(ents, n + 1, cap))
			break;
		if (pid != st->pid && read_proc_entry(pid, &ents[n]) && hmap_put(&index, (uint64_t)pid, (uint32_t)n))
			n++;
	}
	procfs_dir_close(&d);
	for (size_t i = 0; i < n; i++) {
		/* a descendant: following ppid links reaches the target (bounded: a tree being re-parented may loop) */
		pid_t up = ents[i].ppid;
		uint32_t j;
		for (int depth = 0; up != st->pid && depth < 64 && hmap_get(&index, (uint64_t)up, &j); depth++)
			up = ents[j].ppid;
		if (up == st->pid)
			kid_found(st, &ents[i]);
	}
	hmap_release(&index);
	free(ents);
}

/* Brings the list of descendants up to date. The whole of /proc is read only when a process was created
 * anywhere since the last scan (the kernel's last pid moved); otherwise only the known descendants are
 * re-read, for an exit or an exec. */
static void scan_kids(struct pyb_state *st)
{
	long last = last_pid();
	bool walk = last < 0 || st->scans == 0 || last != st->last_pid;
	st->last_pid = last;
	st->scans++;
	if (walk) {
		walk_tree(st);
	} else {
		for (size_t i = 0; i < st->nkids; i++) {
			struct proc_entry e;
			struct pyb_proc *pr = st->kids[i];
			bool in_tree = read_proc_entry(pr->pid, &e) && (e.ppid == st->pid || kid_find(st, e.ppid));
			if (in_tree)
				kid_found(st, &e);
		}
	}
	/* the ones not found have exited (or left the tree): drop them quietly */
	size_t k = 0;
	for (size_t i = 0; i < st->nkids; i++) {
		if (st->kids[i]->scan == st->scans) {
			st->kids[k++] = st->kids[i];
		} else {
			proc_release(st, st->kids[i]);
			free(st->kids[i]);
		}
	}
	st->nkids = k;
}

/* Reads the tree every PYB_SCAN_NS, and sooner (PYB_NEWPROC_NS) when a process was created anywhere since the
 * last scan, so a child's first moments are sampled too (one read of /proc/loadavg per tick). */
static void maybe_scan(struct pyb_state *st, uint64_t t)
{
	uint64_t since = t - st->last_scan_ns;
	if (since >= PYB_SCAN_NS || (since >= PYB_NEWPROC_NS && last_pid() != st->last_pid)) {
		st->last_scan_ns = t;
		scan_kids(st);
	}
}

/* One round over the descendants: each readable one's threads, like the target's. */
static void read_kids(struct pyb_state *st)
{
	for (size_t i = 0; i < st->nkids && !st->oom; i++) {
		struct pyb_proc *pr = st->kids[i];
		if (pr->state != KID_OPEN)
			continue;
		struct perr re = PERR_INIT;
		st->cur = pr;
		if (py_read_threads(pr->py, on_thread, st, &re) != PLUMB_OK) {
			/* gone or unreadable: the next scan drops it, or reads it again after an exec */
			proc_release(st, pr);
			pr->state = KID_SKIP;
		} else if (st->tick % 64 == 0) {
			forget_gone_threads(st, pr);
		}
	}
	st->cur = &st->root;
}

static void sleep_until(uint64_t t)
{
	struct timespec ts = ns_timespec(t);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		break; /* a signal (Ctrl-C) ends the wait; the loop checks *stop */
}

/* Waits until t between two ticks of Python frames: the native samplers of the children that are not CPython
 * are drained as their samples come, or nothing is to be done but sleep. */
static void wait_until(struct pyb_state *st, uint64_t t)
{
	size_t nset = 0;
	if (ALLOC_GROW(st->pollset, st->nkids + 1, st->cappollset))
		for (size_t i = 0; i < st->nkids; i++)
			if (st->kids[i]->native)
				st->pollset[nset++] = st->kids[i]->native;
	if (nset)
		pyn_poll_many(st->pollset, nset, t);
	else
		sleep_until(t);
}

/* Starts sampling (res->start_ns): reads an attached interpreter at once (a refusal says why); a launched
 * command is read once it has become an initialized interpreter (pyb_open). env must outlive the start. */
static enum plumb_err pyb_start(struct pyb_state *st, struct child *child, struct backend_env *env,
				struct record_result *res, struct perr *e)
{
	const struct record_opts *opts = st->opts;
	if (opts->target == TARGET_PID) {
		st->pid = st->root.pid = opts->pid;
		enum plumb_err rc = py_open(st->pid, &st->py, e);
		if (rc == PLUMB_EPERM) {
			char why[512];
			describe_attach_refusal(st->pid, "read the memory of", EPERM, why, sizeof why);
			perr_set(e, PLUMB_EPERM, "%s", why);
		}
		struct py_binary_info info;
		if (rc == PLUMB_EUNSUPPORTED && py_probe_pid(st->pid, &info) && info.is_python)
			return pyb_unsupported(opts, e);
		if (rc)
			return rc;
	} else if (opts->target == TARGET_COMMAND) {
		struct py_binary_info info;
		if (py_probe_command(opts->argv[0], &info) && info.is_python && !info.supported) {
			/* known before it runs: the command is left to the next backend */
			if (info.major)
				perr_set(e, PLUMB_EUNSUPPORTED, "CPython %u.%u: Python frames not supported (plumb reads 3.8 to 3.13)",
					 info.major, info.minor);
			else
				perr_set(e, PLUMB_EUNSUPPORTED, "a CPython of unknown version: Python frames not supported");
			return pyb_unsupported(opts, e);
		}
		backend_command(opts, child, env);
		enum plumb_err rc = backend_start(opts, child, e);
		if (rc)
			return rc;
		st->pid = st->root.pid = child->pid;
	} else {
		return perr_set(e, PLUMB_EUNSUPPORTED, "the python backend cannot run --call");
	}
	res->start_ns = mono_ns();
	return PLUMB_OK;
}

/* The launched command became a CPython plumb cannot read (a pyenv shim that exec'd 3.7): it is sampled with
 * native stacks by a perf_event sampler of its own, and the summary says so in one line. */
static void pyb_native_only(struct pyb_state *st)
{
	st->gave_up = true;
	snprintf(st->root_unsupported, sizeof st->root_unsupported, "%s; native frames only", st->open_err.msg);
	struct perr ne = PERR_INIT;
	if (pyn_open(&st->native, NULL, st->pid, st->opts, st->p, &ne) != PLUMB_OK)
		snprintf(st->root_unsupported, sizeof st->root_unsupported, "%s; no native frames either (%s)",
			 st->open_err.msg, ne.msg);
}

/* Opens the target's reader (a launched interpreter needs a moment to exec and initialize before its state can
 * be read) and, with --native, its native sampler, until they open or it is clear they never will. */
static void pyb_open(struct pyb_state *st, uint64_t t, uint64_t start_ns)
{
	if (!st->py && !st->gave_up) {
		st->open_err = (struct perr)PERR_INIT;
		enum plumb_err orc = py_open(st->pid, &st->py, &st->open_err);
		struct py_binary_info info;
		if (orc == PLUMB_EUNSUPPORTED && py_probe_pid(st->pid, &info) && info.is_python) {
			/* The probe may see a later image than the open did: a command that exec'd its interpreter
			 * between the two (the open saw plumb's own fork: "not a CPython interpreter"). Only an open of
			 * the image the probe saw, refused again, means a CPython plumb cannot read. */
			st->open_err = (struct perr)PERR_INIT;
			orc = py_open(st->pid, &st->py, &st->open_err);
			if (orc == PLUMB_EUNSUPPORTED)
				pyb_native_only(st); /* a launcher exec'd a CPython plumb cannot read: its native stacks */
		}
		if (orc != PLUMB_OK && orc != PLUMB_ENOENT && orc != PLUMB_EUNSUPPORTED)
			st->gave_up = true;
		else if (orc == PLUMB_EUNSUPPORTED && t - start_ns > 5000000000ULL)
			st->gave_up = true; /* never became a CPython we can read */
	}
	if (st->py && st->opts->native && !st->native && !st->native_failed[0] && !st->gave_up) {
		/* Without native stacks (perf_event_open refused) the Python frames are still worth having; failing here
		 * would make record.c start the command a second time with another backend. */
		struct perr ne = PERR_INIT;
		if (pyn_open(&st->native, st->py, st->pid, st->opts, st->p, &ne))
			snprintf(st->native_failed, sizeof st->native_failed, "%s", ne.msg[0] ? ne.msg : "refused");
	}
}

/* One tick with --native: the samplers (the target's and its children's) wake on their samples until `until`. */
static void pyb_tick_native(struct pyb_state *st, uint64_t t, uint64_t until)
{
	st->native_active = true;
	maybe_scan(st, t);
	size_t nset = 0;
	(void)ALLOC_GROW(st->pollset, st->nkids + 1, st->cappollset); /* on failure: the set it has */
	if (!st->pollset) {
		pyn_poll(st->native, until);
		return;
	}
	st->pollset[nset++] = st->native;
	for (size_t i = 0; i < st->nkids && nset < st->cappollset; i++)
		if (st->kids[i]->native)
			st->pollset[nset++] = st->kids[i]->native;
	pyn_poll_many(st->pollset, nset, until);
}

/* One tick of Python frames only: the target's threads, then its children's. False when out of memory. */
static bool pyb_tick_python(struct pyb_state *st, uint64_t t)
{
	st->tick++;
	struct perr re = PERR_INIT;
	py_read_threads(st->py, on_thread, st, &re);
	maybe_scan(st, t);
	read_kids(st);
	if (st->oom)
		return false;
	if (st->tick % 64 == 0)
		forget_gone_threads(st, &st->root);
	return true;
}

/* The sampling loop: a tick every interval until the target ends, time is up, or we are told to stop. */
static enum plumb_err pyb_loop(struct pyb_state *st, struct child *child, struct record_result *res,
			       struct perr *e)
{
	const struct record_opts *opts = st->opts;
	uint64_t deadline = backend_deadline(opts, res->start_ns);
	uint64_t next = res->start_ns;
	while (!backend_should_stop(opts, deadline) && !backend_target_ended(opts, child, st->pid, res)) {
		uint64_t t = mono_ns();
		pyb_open(st, t, res->start_ns);
		st->now = t;
		if (st->native)
			pyb_tick_native(st, t, next + st->interval);
		else if (st->py && !pyb_tick_python(st, t))
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		backend_progress(opts, st->p, res->start_ns, st->tick);
		next += rand64_interval_ns(&st->rng, st->interval); /* a fixed interval locks onto a rhythm */
		t = mono_ns();
		if (next < t)
			next = t; /* behind: drop the missed ticks instead of bursting */
		if (!st->native)
			wait_until(st, next);
	}
	return PLUMB_OK;
}

/* What the python backend could not see, for the summary line: Python frames only or merged, and the child
 * processes left alone. */
static void pyb_limits(const struct pyb_state *st, struct record_result *res)
{
	const struct record_opts *opts = st->opts;
	if (st->native_failed[0])
		snprintf(res->limits, sizeof res->limits, "CPython %s frames only: --native unavailable (%s)",
			 py_version(st->py), st->native_failed);
	else
		snprintf(res->limits, sizeof res->limits, "CPython %s frames%s%s", py_version(st->py),
			 opts->native ? " merged with native stacks" : " only",
			 opts->native && (opts->mode == MODE_WALL || opts->idle)
				 ? "; --native samples threads while on a CPU only (no idle stacks)" : "");
	size_t used = strlen(res->limits);
	if (st->kids_unsupported)
		used += (size_t)snprintf(res->limits + used, sizeof res->limits - used,
					 "; %u CPython child process%s not sampled (no layout for CPython %s%s)",
					 st->kids_unsupported, st->kids_unsupported > 1 ? "es" : "",
					 st->unsupported_version, st->kids_unsupported > 1 ? ", ..." : "");
	if (st->kids_unreadable && used < sizeof res->limits)
		used += (size_t)snprintf(res->limits + used, sizeof res->limits - used,
					 "; %u CPython child process%s not sampled (memory not readable)",
					 st->kids_unreadable, st->kids_unreadable > 1 ? "es" : "");
	if (st->kids_native_failed && used < sizeof res->limits)
		used += (size_t)snprintf(res->limits + used, sizeof res->limits - used,
					 "; %u CPython child process%s not sampled (--native could not open its events)",
					 st->kids_native_failed, st->kids_native_failed > 1 ? "es" : "");
	if (st->kids_native_only && used < sizeof res->limits)
		used += (size_t)snprintf(res->limits + used, sizeof res->limits - used,
					 "; native frames for %u other child process%s", st->kids_native_only,
					 st->kids_native_only > 1 ? "es" : "");
	if (st->kids_other_failed && used < sizeof res->limits)
		snprintf(res->limits + used, sizeof res->limits - used,
			 "; %u other child process%s not sampled (perf_event_open refused)", st->kids_other_failed,
			 st->kids_other_failed > 1 ? "es" : "");
}

/* Ends sampling: the children's samplers and readers first (a --native child's last samples are drained and
 * counted), then the target's; says what was sampled. */
static enum plumb_err pyb_finish(struct pyb_state *st, struct child *child, struct record_result *res,
				 enum plumb_err rc, struct perr *e)
{
	const struct record_opts *opts = st->opts;
	res->end_ns = mono_ns();
	for (size_t i = 0; i < st->nkids; i++) {
		proc_release(st, st->kids[i]);
		free(st->kids[i]);
	}
	free(st->kids);
	free(st->pollset);
	st->nkids = 0;
	bool used_native = st->native != NULL;
	if (st->native) {
		uint64_t before = st->tick;
		pyn_finish(st->native, &st->tick);
		st->root.sampled |= st->tick > before;
		pyn_close(st->native);
	}
	backend_end_command(opts, child, res);
	backend_meta(st->p, "python", used_native ? "python+dwarf" : "python", st->tick, 0);
	if (st->kids_sampled) /* the summary line says how many processes were sampled */
		profile_meta(st->p)->processes = st->kids_sampled + (st->root.sampled ? 1 : 0);
	if (rc == PLUMB_OK && !st->py && st->root_unsupported[0]) {
		snprintf(res->limits, sizeof res->limits, "%s", st->root_unsupported);
	} else if (rc == PLUMB_OK && !st->py) {
		/* Launched but never readable: the command already ran, so no other backend may run it again. */
		rc = perr_set(e, opts->target == TARGET_COMMAND ? PLUMB_EINVAL : st->open_err.code, "%s",
			      st->open_err.msg[0] ? st->open_err.msg
						  : "the target ended before its interpreter could be read");
	}
	if (st->py && rc == PLUMB_OK)
		pyb_limits(st, res);
	st->root.py = st->py;
	proc_release(st, &st->root);
	return rc;
}

static enum plumb_err pyb_run(const struct record_opts *opts, struct profile *p, struct record_result *res,
			      struct perr *e)
{
	struct pyb_state st = { 0 };
	st.opts = opts;
	st.p = p;
	st.cur = &st.root;
	st.interval = backend_interval_ns(opts);
	rand64_seed(&st.rng, mono_ns() ^ ((uint64_t)getpid() << 32));
	struct child child = CHILD_INIT;
	struct backend_env env;
	enum plumb_err rc = pyb_start(&st, &child, &env, res, e);
	if (rc)
		return rc;
	rc = pyb_loop(&st, &child, res, e);
	return pyb_finish(&st, &child, res, rc, e);
}

const struct backend backend_python = {
	.name = "python",
	.wants = pyb_wants,
	.run = pyb_run,
	/* picked when wants() says the target is CPython, never as a fallback for other targets (its run()
	 * would launch a command it cannot read) */
	.forced_only = true,
	.targets = BACKEND_TARGET(TARGET_COMMAND) | BACKEND_TARGET(TARGET_PID),
};
