/* system.c — the whole-machine backend behind `plumb record --all` and `plumb top --all` (docs/design.md §13):
 * one cpu-clock event per CPU for every task (pid = -1), each with its own ring, read while sampling. Every
 * sample becomes raw frames under one profile thread per process, named `name (pid)` (tid = pid), narrowed by
 * a pid list or a regular expression on the process name. Binaries are frames by path and ELF address, so a
 * library shared by 200 processes is one set of frames, symbolized once.
 * Invariant: nothing is attached to or stopped in any process; closing our descriptors ends everything. */
#include "sample/backend.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/intern.h"
#include "os/procfs.h"
#include "sample/perf_redraw.h"
#include "sample/perf_stack.h"
#include "symbol/maps.h"

#define SYS_RING_PAGES_FP 512     /* 2 MiB per CPU: every process's samples land here */
#define SYS_RING_PAGES_DWARF 2048 /* 8 MiB per CPU: stack copies are large */
#define SYS_EXCLUDED UINT32_MAX   /* a process the pid list or the name filter leaves out */
#define SYS_GONE (UINT32_MAX - 1) /* a process that exited: its pid names a new process when it comes back */
#define SYS_NO_NAME UINT32_MAX    /* st->names: no name known for the pid */

struct sys_state {
	const struct record_opts *opts;
	struct profile *p;
	struct record_result *res;
	struct maps *maps;
	size_t ncpus;
	int *fds;                /* one event per CPU (-1 for an offline CPU) */
	struct perf_ring *rings; /* one per CPU */
	struct perf_stacker stk;
	bool kernel;
	uint64_t ticks, lost;
	struct hmap procs;       /* pid -> its profile thread, SYS_EXCLUDED or SYS_GONE */
	/* processes that exited: their maps are forgotten one whole read of every ring later (a sample taken before
	 * the exit may still wait in another CPU's ring), so a long session over a busy machine stays bounded */
	pid_t *exited, *forgetting;
	size_t nexited, nforgetting, cap_exited, cap_forgetting;
	/* each process's name as the records said it at fork (the parent's) and exec (PERF_RECORD_COMM): a process
	 * that lived a few milliseconds is gone from /proc before its samples are read */
	struct hmap names;       /* pid -> id in name_strs, or SYS_NO_NAME once the process is forgotten */
	struct hmap named_at;    /* pid -> index in name_times: when its exec or rename (COMM) named it */
	uint64_t *name_times;
	size_t nname_times, cap_name_times;
	struct interner name_strs;
	regex_t comm_re;
	bool has_re;
	char *buf;               /* a record that wraps around a ring's end is copied here */
	size_t bufsize;
	struct perf_periods periods; /* every CPU's event gets a random period after each sample (§5.2) */
	struct perf_redraw redraw;   /* ... from this thread */
};

static void sys_fill_attr(struct sys_state *st, struct perf_event_attr *attr)
{
	perf_attr_cpu_clock(attr, st->opts, st->stk.sample_type, st->kernel);
	attr->exclude_idle = 1; /* the idle task is no process: a CPU with nothing to do gives no sample */
	if (st->ncpus <= PERF_REDRAW_MAX_RINGS) { /* a random period, redrawn by the redraw thread at each sample */
		attr->sample_period = perf_periods_draw(&st->periods);
		attr->watermark = 0;
		attr->wakeup_events = PERF_PERIODS_CPU_BATCH;
		return;
	}
	/* more CPUs than one redraw thread polls: a fixed period (a redraw per read of the rings reads 19% over,
	 * perf_stack.h) */
	attr->sample_period = st->periods.mean_ns;
	attr->wakeup_watermark = st->opts->unwind == UNWIND_DWARF ? 2 * 1024 * 1024 : 256 * 1024;
}

/* Whether process pid is kept: in the pid list (when there is one) and named to match (when asked). */
static bool sys_keeps(const struct sys_state *st, pid_t pid, const char *name)
{
	const struct record_opts *o = st->opts;
	if (o->npids) {
		bool listed = false;
		for (size_t i = 0; i < o->npids && !listed; i++)
			listed = o->pids[i] == pid;
		if (!listed)
			return false;
	}
	return !st->has_re || regexec(&st->comm_re, name, 0, NULL, 0) == 0;
}

/* The name the records gave pid (at its fork or its last exec), or NULL. */
static const char *sys_known_name(const struct sys_state *st, pid_t pid)
{
	uint32_t id;
	if (!hmap_get(&st->names, (uint64_t)pid, &id) || id == SYS_NO_NAME)
		return NULL;
	return intern_str(&st->name_strs, id);
}

static void sys_note_name(struct sys_state *st, pid_t pid, const char *name)
{
	uint32_t id = intern(&st->name_strs, name, strlen(name), NULL);
	if (id != INTERN_NOMEM)
		hmap_put(&st->names, (uint64_t)pid, id);
}

/* The profile thread of process pid (one per process: tid = pid, the process's name), or SYS_EXCLUDED. The
 * name is the one the records gave it (fork, exec), else /proc/PID/comm; a process already gone is named after
 * the sampled thread, or "?" until a record names it (sys_rename). */
static uint32_t sys_process(struct sys_state *st, pid_t pid, pid_t tid)
{
	uint32_t id;
	if (hmap_get(&st->procs, (uint64_t)pid, &id) && id != SYS_GONE)
		return id;
	char name[PROCFS_COMM_MAX];
	const char *known = sys_known_name(st, pid);
	if (known)
		snprintf(name, sizeof name, "%s", known);
	else if (!procfs_comm(pid, 0, name, sizeof name) && !procfs_comm(pid, tid, name, sizeof name))
		snprintf(name, sizeof name, "?");
	id = sys_keeps(st, pid, name) ? profile_thread(st->p, (uint32_t)pid, (uint32_t)pid, name) : SYS_EXCLUDED;
	if (id == PROFILE_NOMEM || !hmap_put(&st->procs, (uint64_t)pid, id))
		return SYS_EXCLUDED;
	return id;
}

/* A process's main thread took a new name (exec, prctl): the process is named anew and filtered again. */
static void sys_rename(struct sys_state *st, pid_t pid, const char *name)
{
	uint32_t id;
	if (!hmap_get(&st->procs, (uint64_t)pid, &id) || id == SYS_GONE)
		return; /* never sampled: named when it is */
	if (!sys_keeps(st, pid, name))
		id = SYS_EXCLUDED;
	else
		id = profile_thread(st->p, (uint32_t)pid, (uint32_t)pid, name);
	hmap_put(&st->procs, (uint64_t)pid, id == PROFILE_NOMEM ? SYS_EXCLUDED : id);
}

/* Whether a COMM record of process pid at `time` is its latest name so far: each CPU's ring is read in turn, so
 * an exec and a rename (prctl) on two CPUs can come out of order (perf_event.c does the same for threads). */
static bool sys_latest_name(struct sys_state *st, pid_t pid, uint64_t time)
{
	uint32_t i;
	if (hmap_get(&st->named_at, (uint64_t)pid, &i)) {
		if (st->name_times[i] > time)
			return false;
		st->name_times[i] = time;
		return true;
	}
	if (ALLOC_GROW(st->name_times, st->nname_times + 1, st->cap_name_times) &&
	    hmap_put(&st->named_at, (uint64_t)pid, (uint32_t)st->nname_times))
		st->name_times[st->nname_times++] = time;
	return true;
}

static void sys_sample(struct sys_state *st, const char *rec, size_t len)
{
	struct perf_sample sv;
	if (!perf_sample_parse(st->stk.sample_type, rec, len, &sv))
		return;
	if (sv.pid == 0)
		return;
	/* filtered before unwinding: a process left out costs only its record */
	uint32_t thread = sys_process(st, (pid_t)sv.pid, (pid_t)sv.tid);
	if (thread == SYS_EXCLUDED)
		return;
	st->ticks++;
	uint32_t stack = profile_stack_from(st->p, st->stk.frames, perf_stacker_build(&st->stk, &sv));
	if (stack != PROFILE_NOMEM)
		profile_add_sample(st->p, stack, thread, sv.time, 1);
}

static void sys_record(void *ctx, const char *rec, size_t len)
{
	struct sys_state *st = ctx;
	struct perf_task_rec t;
	if (((const struct perf_event_header *)rec)->type == PERF_RECORD_SAMPLE) {
		sys_sample(st, rec, len);
		return;
	}
	if (!perf_task_parse(rec, len, st->stk.sample_type, &t))
		return;
	if (t.type == PERF_RECORD_MMAP2 && (t.prot & PROT_EXEC)) {
		maps_add_file(st->maps, (pid_t)t.pid, t.addr, t.len, t.pgoff, t.name,
			      (t.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ? 0 : t.ino);
	} else if (t.type == PERF_RECORD_COMM) {
		if (t.misc & PERF_RECORD_MISC_COMM_EXEC)
			maps_forget(st->maps, (pid_t)t.pid);
		if (t.pid == t.tid && sys_latest_name(st, (pid_t)t.pid, t.time)) {
			sys_note_name(st, (pid_t)t.pid, t.name);
			sys_rename(st, (pid_t)t.pid, t.name);
		}
	} else if (t.type == PERF_RECORD_FORK && t.pid != t.ppid) {
		maps_fork(st->maps, (pid_t)t.ppid, (pid_t)t.pid);
		/* a new process carries its parent's name until it execs (a COMM record then renames it) */
		char name[PROCFS_COMM_MAX];
		const char *parent = sys_known_name(st, (pid_t)t.ppid);
		if (parent || procfs_comm((pid_t)t.ppid, 0, name, sizeof name)) {
			if (parent)
				snprintf(name, sizeof name, "%s", parent);
			sys_note_name(st, (pid_t)t.pid, name);
			sys_rename(st, (pid_t)t.pid, name);
		}
	} else if (t.type == PERF_RECORD_EXIT && t.pid == t.tid) {
		if (ALLOC_GROW(st->exited, st->nexited + 1, st->cap_exited))
			st->exited[st->nexited++] = (pid_t)t.pid;
	} else if (t.type == PERF_RECORD_LOST) {
		st->lost += t.lost;
	}
}

static void sys_drain(struct sys_state *st)
{
	for (size_t i = 0; i < st->ncpus; i++)
		perf_ring_drain(&st->rings[i], st->buf, st->bufsize, sys_record, st);
	/* every ring has now been read past the exits of the round before */
	for (size_t i = 0; i < st->nforgetting; i++) {
		uint32_t id;
		maps_forget(st->maps, st->forgetting[i]);
		if (hmap_get(&st->procs, (uint64_t)st->forgetting[i], &id))
			hmap_put(&st->procs, (uint64_t)st->forgetting[i], SYS_GONE);
		if (hmap_get(&st->names, (uint64_t)st->forgetting[i], &id))
			hmap_put(&st->names, (uint64_t)st->forgetting[i], SYS_NO_NAME);
	}
	pid_t *v = st->forgetting;
	size_t cap = st->cap_forgetting;
	st->forgetting = st->exited;
	st->cap_forgetting = st->cap_exited;
	st->nforgetting = st->nexited;
	st->exited = v;
	st->cap_exited = cap;
	st->nexited = 0;
}

static void sys_cleanup(struct sys_state *st)
{
	for (size_t i = 0; st->rings && i < st->ncpus; i++)
		perf_ring_unmap(&st->rings[i]);
	for (size_t i = 0; st->fds && i < st->ncpus; i++)
		if (st->fds[i] >= 0)
			close(st->fds[i]);
	free(st->fds);
	free(st->rings);
	free(st->buf);
	free(st->exited);
	free(st->forgetting);
	hmap_release(&st->procs);
	hmap_release(&st->names);
	hmap_release(&st->named_at);
	free(st->name_times);
	interner_release(&st->name_strs);
	if (st->has_re)
		regfree(&st->comm_re);
	perf_stacker_free(&st->stk);
	perf_periods_release(&st->periods);
	maps_free(st->maps);
}

static enum plumb_err sys_init(struct sys_state *st, const struct record_opts *opts, struct profile *p,
			       struct record_result *res, struct perr *e)
{
	st->opts = opts;
	st->p = p;
	st->res = res;
	st->kernel = opts->kernel;
	st->name_strs = (struct interner)INTERNER_INIT;
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	st->ncpus = ncpus > 0 ? (size_t)ncpus : 1;
	if (opts->comm_re) {
		int rc = regcomp(&st->comm_re, opts->comm_re, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char why[256];
			regerror(rc, &st->comm_re, why, sizeof why);
			return perr_set(e, PLUMB_EINVAL, "--comm '%s' is not a valid regular expression: %s",
					opts->comm_re, why);
		}
		st->has_re = true;
	}
	st->maps = maps_new();
	if (st->maps)
		maps_use_files(st->maps, opts->files);
	st->fds = malloc(st->ncpus * sizeof *st->fds);
	st->rings = calloc(st->ncpus, sizeof *st->rings);
	st->bufsize = 70000;
	st->buf = malloc(st->bufsize);
	for (size_t i = 0; st->fds && i < st->ncpus; i++) /* before any return: sys_cleanup closes them */
		st->fds[i] = -1;
	for (size_t i = 0; st->rings && i < st->ncpus; i++)
		st->rings[i].fd = -1;
	perf_periods_init(&st->periods, backend_interval_ns(opts), mono_ns() ^ ((uint64_t)getpid() << 32));
	enum plumb_err rc = perf_stacker_init(&st->stk, opts, p, st->maps, e);
	st->stk.sample_type |= PERF_SAMPLE_IDENTIFIER; /* which CPU's event sampled: its next period */
	if (!rc && (!st->fds || !st->rings || !st->buf))
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	return rc;
}

/* The refusal of a whole-machine event, said plainly: what it needs and what the machine has. */
static enum plumb_err sys_refused(int err, struct perr *e)
{
	if (err != EACCES && err != EPERM)
		return perr_set(e, PLUMB_EUNSUPPORTED, "perf_event_open for every process failed: %s", strerror(err));
	int paranoid = perf_event_paranoid();
	char now[64] = "";
	if (paranoid != -1)
		snprintf(now, sizeof now, " (it is %d here)", paranoid);
	return perr_set(e, PLUMB_EUNSUPPORTED,
			"sampling every process needs root (or CAP_PERFMON) or kernel.perf_event_paranoid <= 0%s: run "
			"as root, or `sysctl kernel.perf_event_paranoid=0`",
			now);
}

/* Opens one event per online CPU for every task and maps its ring. Kernel frames are given up on (the rest is
 * kept) only when they alone are refused. */
static enum plumb_err sys_open(struct sys_state *st, struct perr *e)
{
	int opened = 0;
	for (size_t cpu = 0; cpu < st->ncpus; cpu++) {
		struct perf_event_attr attr;
		sys_fill_attr(st, &attr);
		int fd = perf_open(&attr, -1, (int)cpu);
		if (fd < 0 && (errno == EACCES || errno == EPERM) && st->kernel) {
			st->kernel = false;
			sys_fill_attr(st, &attr);
			fd = perf_open(&attr, -1, (int)cpu);
			if (fd < 0)
				st->kernel = true; /* refused for another reason: report it as it is */
		}
		if (fd < 0 && (errno == ENODEV || errno == ENOENT || errno == EINVAL) && opened > 0)
			continue; /* an offline CPU */
		if (fd < 0)
			return sys_refused(errno, e);
		st->fds[cpu] = fd;
		opened++;
		if (!perf_periods_add(&st->periods, fd, -1, attr.sample_period))
			return perr_set(e, PLUMB_ENOMEM, "cannot set up the sampling period: %s", strerror(errno));
		size_t pages = st->opts->unwind == UNWIND_DWARF ? SYS_RING_PAGES_DWARF : SYS_RING_PAGES_FP;
		if (!perf_ring_map(&st->rings[cpu], fd, pages) && !perf_ring_map(&st->rings[cpu], fd, 16))
			return perr_set(e, PLUMB_EPERM, "cannot map the perf ring buffer: %s", strerror(errno));
	}
	return PLUMB_OK;
}

/* Notes the name of every process there as sampling begins: one forked just before has no FORK record, and when
 * it ended before its first sample was read it was gone from /proc too and read "?" (1 in 4 runs of
 * test_record_all's spawner under load). */
static void sys_note_running(struct sys_state *st)
{
	struct procfs_dir d;
	if (!procfs_pids_open(&d))
		return;
	char name[PROCFS_COMM_MAX];
	for (pid_t pid; (pid = procfs_dir_next(&d)) > 0;)
		if (procfs_comm(pid, 0, name, sizeof name))
			sys_note_name(st, pid, name);
	procfs_dir_close(&d);
}

/* Samples until the deadline or the stop flag; the live views' hook runs after every read of the rings. */
static void sys_loop(struct sys_state *st)
{
	const struct record_opts *opts = st->opts;
	struct pollfd *pfds = calloc(st->ncpus + 1, sizeof *pfds);
	nfds_t npfds = 0;
	/* with the redraw thread the rings' wake-ups are its own, passed on through its wake_fd */
	perf_redraw_init(&st->redraw);
	if (st->ncpus <= PERF_REDRAW_MAX_RINGS)
		perf_redraw_start(&st->redraw, st->rings, st->ncpus, &st->periods);
	for (size_t i = 0; pfds && st->redraw.wake_fd < 0 && i < st->ncpus; i++)
		if (st->rings[i].meta)
			pfds[npfds++] = (struct pollfd){ .fd = st->rings[i].fd, .events = POLLIN };
	if (pfds && st->redraw.wake_fd >= 0)
		pfds[npfds++] = (struct pollfd){ .fd = st->redraw.wake_fd, .events = POLLIN };
	sys_note_running(st);
	st->res->start_ns = mono_ns();
	for (size_t i = 0; i < st->ncpus; i++)
		if (st->fds[i] >= 0)
			ioctl(st->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	uint64_t deadline = backend_deadline(opts, st->res->start_ns);
	while (!backend_should_stop(opts, deadline)) {
		if (pfds)
			poll(pfds, npfds, 50);
		uint64_t woken;
		if (st->redraw.wake_fd >= 0 && read(st->redraw.wake_fd, &woken, sizeof woken) < 0)
			woken = 0; /* nothing to clear */
		sys_drain(st);
		backend_poll(opts, st->p, st->res->start_ns, st->ticks, st->lost);
	}
	free(pfds);
	st->res->end_ns = mono_ns();
	for (size_t i = 0; i < st->ncpus; i++)
		if (st->fds[i] >= 0)
			ioctl(st->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	perf_redraw_stop(&st->redraw);
	sys_drain(st);
}

static enum plumb_err sys_run(const struct record_opts *opts, struct profile *p, struct record_result *res,
			      struct perr *e)
{
	struct sys_state st = { 0 };
	enum plumb_err rc = PLUMB_OK;
	if (opts->target != TARGET_ALL)
		rc = perr_set(e, PLUMB_EUNSUPPORTED, "the system backend samples every process (--all) only");
	else if (opts->mode == MODE_WALL)
		rc = perr_set(e, PLUMB_EINVAL,
			      "--mode wall follows the threads of one target; it cannot be used with --all");
	if (!rc)
		rc = sys_init(&st, opts, p, res, e);
	if (!rc)
		rc = sys_open(&st, e);
	if (!rc) {
		sys_loop(&st);
		backend_meta(p, "system", backend_unwinder_name(opts), st.ticks, st.lost);
		profile_meta(p)->processes = (uint32_t)profile_nthreads(p); /* one thread per kept process */
		if (!st.kernel && opts->kernel)
			snprintf(res->limits, sizeof res->limits, "kernel frames not permitted");
	}
	sys_cleanup(&st);
	return rc;
}

const struct backend backend_system = {
	.name = "system",
	.wants = NULL,
	.run = sys_run,
	.forced_only = true,
	.targets = BACKEND_TARGET(TARGET_ALL),
};
