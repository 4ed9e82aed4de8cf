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
#include "base/procfs.h"
#include "sample/perf_ring.h"
#include "symbol/maps.h"
#include "unwind/unwind.h"

#define SYS_MAX_DEPTH 1024
#define SYS_RING_PAGES_FP 512     /* 2 MiB per CPU: every process's samples land here */
#define SYS_RING_PAGES_DWARF 2048 /* 8 MiB per CPU: stack copies are large */
#define SYS_EXCLUDED UINT32_MAX   /* a process the pid list or the name filter leaves out */
#define SYS_GONE (UINT32_MAX - 1) /* a process that exited: its pid names a new process when it comes back */

struct sys_state {
	const struct record_opts *opts;
	struct profile *p;
	struct record_result *res;
	struct maps *maps;
	struct unwinder *unwinder;
	size_t ncpus;
	int *fds;                /* one event per CPU (-1 for an offline CPU) */
	struct perf_ring *rings; /* one per CPU */
	uint64_t sample_type;
	bool kernel;
	uint64_t ticks, lost;
	str_id s_unknown, s_kernel;
	struct hmap procs;       /* pid -> its profile thread, SYS_EXCLUDED or SYS_GONE */
	/* processes that exited: their maps are forgotten one whole read of every ring later (a sample taken before
	 * the exit may still wait in another CPU's ring), so a long session over a busy machine stays bounded */
	pid_t *exited, *forgetting;
	size_t nexited, nforgetting, cap_exited, cap_forgetting;
	regex_t comm_re;
	bool has_re;
	uint64_t *ips;
	uint32_t *frames;
	char *buf;               /* a record that wraps around a ring's end is copied here */
	size_t bufsize;
};

static void sys_fill_attr(const struct sys_state *st, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof *attr);
	attr->size = sizeof *attr;
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = backend_interval_ns(st->opts);
	attr->sample_type = st->sample_type;
	attr->disabled = 1;
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->exclude_idle = 1; /* the idle task is no process: a CPU with nothing to do gives no sample */
	attr->exclude_kernel = st->kernel ? 0 : 1;
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = st->kernel ? 0 : 1;
	if (st->opts->unwind == UNWIND_DWARF) {
		attr->exclude_callchain_user = 1;
		attr->sample_regs_user = UNWIND_REGS_MASK;
		attr->sample_stack_user = (uint32_t)st->opts->stack_bytes;
	}
	attr->watermark = 1;
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

/* The profile thread of process pid (one per process: tid = pid, the process's name), or SYS_EXCLUDED. The
 * name is /proc/PID/comm; a process already gone is named after the sampled thread, or "?". */
static uint32_t sys_process(struct sys_state *st, pid_t pid, pid_t tid)
{
	uint32_t id;
	if (hmap_get(&st->procs, (uint64_t)pid, &id) && id != SYS_GONE)
		return id;
	char name[PROCFS_COMM_MAX];
	if (!procfs_comm(pid, 0, name, sizeof name) && !procfs_comm(pid, tid, name, sizeof name))
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

static uint32_t sys_user_frame(struct sys_state *st, pid_t pid, uint64_t addr, bool caller)
{
	const struct map_entry *m = maps_find(st->maps, pid, addr);
	if (!m && maps_load_proc(st->maps, pid)) /* mappings made before sampling began */
		m = maps_find(st->maps, pid, addr);
	return backend_user_frame(st->p, m, addr, caller, st->s_unknown);
}

static uint32_t sys_kernel_frame(struct sys_state *st, uint64_t addr)
{
	struct frame f = { 0 };
	f.kind = FRAME_KERNEL;
	f.module = st->s_kernel;
	f.addr = addr;
	return profile_frame(st->p, &f);
}

/* The sample's stack, outermost first, into st->frames; returns how many frames. */
static size_t sys_stack(struct sys_state *st, const struct perf_sample *sv)
{
	size_t nkernel = 0, nuser = 0;
	uint64_t *kern = st->ips, *user = st->ips + SYS_MAX_DEPTH;
	uint64_t ctx = 0;
	for (uint64_t i = 0; i < sv->nr; i++) { /* [PERF_CONTEXT_KERNEL, k0, ..., PERF_CONTEXT_USER, u0, ...] */
		uint64_t a = sv->chain[i];
		if (a >= (uint64_t)PERF_CONTEXT_MAX)
			ctx = a;
		else if (ctx == (uint64_t)PERF_CONTEXT_KERNEL && nkernel < SYS_MAX_DEPTH)
			kern[nkernel++] = a;
		else if (ctx == (uint64_t)PERF_CONTEXT_USER && nuser < SYS_MAX_DEPTH)
			user[nuser++] = a;
	}
	if (st->opts->unwind == UNWIND_DWARF && sv->regs) {
		struct unwind_regs regs;
		perf_sample_regs(sv, &regs);
		nuser = unwind_dwarf(st->unwinder, (pid_t)sv->pid, &regs, sv->stack, sv->stack ? sv->stack_dyn : 0,
				     user, SYS_MAX_DEPTH);
	} else if (st->opts->unwind == UNWIND_DWARF && nkernel == 0 && sv->ip) {
		user[nuser++] = sv->ip;
	}
	size_t n = 0;
	for (size_t i = nuser; i-- > 0;) {
		uint32_t f = sys_user_frame(st, (pid_t)sv->pid, user[i], i > 0);
		if (f != PROFILE_NOMEM)
			st->frames[n++] = f;
	}
	for (size_t i = nkernel; i-- > 0;) {
		uint32_t f = sys_kernel_frame(st, kern[i]);
		if (f != PROFILE_NOMEM)
			st->frames[n++] = f;
	}
	return n;
}

static void sys_sample(struct sys_state *st, const char *rec, size_t len)
{
	struct perf_sample sv;
	if (!perf_sample_parse(st->sample_type, rec, len, &sv) || sv.pid == 0)
		return;
	/* filtered before unwinding: a process left out costs only its record */
	uint32_t thread = sys_process(st, (pid_t)sv.pid, (pid_t)sv.tid);
	if (thread == SYS_EXCLUDED)
		return;
	st->ticks++;
	uint32_t stack = profile_stack_from(st->p, st->frames, sys_stack(st, &sv));
	if (stack != PROFILE_NOMEM)
		profile_add_sample(st->p, stack, thread, sv.time, 1);
}

/* The records read besides samples (their layout: linux/perf_event.h, in comments only). */
struct sys_mmap2 {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};
struct sys_comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};
struct sys_task {
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
struct sys_lost {
	struct perf_event_header h;
	uint64_t id, lost;
};

static void sys_string(char *dst, size_t n, const char *src, size_t avail)
{
	size_t len = strnlen(src, avail < n - 1 ? avail : n - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static void sys_record(void *ctx, const char *rec, size_t len)
{
	struct sys_state *st = ctx;
	const struct perf_event_header *h = (const void *)rec;
	if (h->type == PERF_RECORD_SAMPLE) {
		sys_sample(st, rec, len);
	} else if (h->type == PERF_RECORD_MMAP2 && len >= sizeof(struct sys_mmap2)) {
		const struct sys_mmap2 *m = (const void *)rec;
		char name[4096];
		sys_string(name, sizeof name, m->filename, len - sizeof *m);
		if (m->prot & PROT_EXEC)
			maps_add(st->maps, (pid_t)m->pid, m->addr, m->len, m->pgoff, name, true);
	} else if (h->type == PERF_RECORD_COMM && len >= sizeof(struct sys_comm)) {
		const struct sys_comm *c = (const void *)rec;
		char name[PROCFS_COMM_MAX];
		sys_string(name, sizeof name, c->comm, len - sizeof *c);
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			maps_forget(st->maps, (pid_t)c->pid);
		if (c->pid == c->tid)
			sys_rename(st, (pid_t)c->pid, name);
	} else if (h->type == PERF_RECORD_FORK && len >= sizeof(struct sys_task)) {
		const struct sys_task *f = (const void *)rec;
		if (f->pid != f->ppid)
			maps_fork(st->maps, (pid_t)f->ppid, (pid_t)f->pid);
	} else if (h->type == PERF_RECORD_EXIT && len >= sizeof(struct sys_task)) {
		const struct sys_task *x = (const void *)rec;
		if (x->pid == x->tid && ALLOC_GROW(st->exited, st->nexited + 1, st->cap_exited))
			st->exited[st->nexited++] = (pid_t)x->pid;
	} else if (h->type == PERF_RECORD_LOST && len >= sizeof(struct sys_lost)) {
		st->lost += ((const struct sys_lost *)rec)->lost;
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
	free(st->ips);
	free(st->frames);
	free(st->buf);
	free(st->exited);
	free(st->forgetting);
	hmap_release(&st->procs);
	if (st->has_re)
		regfree(&st->comm_re);
	unwinder_free(st->unwinder);
	maps_free(st->maps);
}

static enum plumb_err sys_init(struct sys_state *st, const struct record_opts *opts, struct profile *p,
			       struct record_result *res, struct perr *e)
{
	st->opts = opts;
	st->p = p;
	st->res = res;
	st->kernel = opts->kernel;
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
	st->fds = malloc(st->ncpus * sizeof *st->fds);
	st->rings = calloc(st->ncpus, sizeof *st->rings);
	st->ips = malloc(2 * SYS_MAX_DEPTH * sizeof *st->ips);
	st->frames = malloc(2 * SYS_MAX_DEPTH * sizeof *st->frames);
	st->bufsize = 70000;
	st->buf = malloc(st->bufsize);
	st->s_unknown = profile_intern_cstr(p, "[unknown]");
	st->s_kernel = profile_intern_cstr(p, "[kernel.kallsyms]");
	st->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	if (opts->unwind == UNWIND_DWARF) {
		st->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		st->unwinder = st->maps ? unwinder_new(st->maps) : NULL;
	}
	if (!st->maps || !st->fds || !st->rings || !st->ips || !st->frames || !st->buf ||
	    (opts->unwind == UNWIND_DWARF && !st->unwinder))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < st->ncpus; i++) {
		st->fds[i] = -1;
		st->rings[i].fd = -1;
	}
	return PLUMB_OK;
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
		size_t pages = st->opts->unwind == UNWIND_DWARF ? SYS_RING_PAGES_DWARF : SYS_RING_PAGES_FP;
		if (!perf_ring_map(&st->rings[cpu], fd, pages) && !perf_ring_map(&st->rings[cpu], fd, 16))
			return perr_set(e, PLUMB_EPERM, "cannot map the perf ring buffer: %s", strerror(errno));
	}
	return PLUMB_OK;
}

/* Samples until the deadline or the stop flag; the live views' hook runs after every read of the rings. */
static void sys_loop(struct sys_state *st)
{
	const struct record_opts *opts = st->opts;
	struct pollfd *pfds = calloc(st->ncpus, sizeof *pfds);
	nfds_t npfds = 0;
	for (size_t i = 0; pfds && i < st->ncpus; i++)
		if (st->rings[i].meta)
			pfds[npfds++] = (struct pollfd){ .fd = st->rings[i].fd, .events = POLLIN };
	st->res->start_ns = mono_ns();
	for (size_t i = 0; i < st->ncpus; i++)
		if (st->fds[i] >= 0)
			ioctl(st->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	uint64_t deadline = backend_deadline(opts, st->res->start_ns);
	while (!backend_should_stop(opts, deadline)) {
		if (pfds)
			poll(pfds, npfds, 50);
		sys_drain(st);
		if (opts->on_poll) {
			struct backend_sofar bp = { st->ticks, st->lost, st->res->start_ns };
			opts->on_poll(opts->poll_ctx, st->p, &bp);
		}
	}
	free(pfds);
	st->res->end_ns = mono_ns();
	for (size_t i = 0; i < st->ncpus; i++)
		if (st->fds[i] >= 0)
			ioctl(st->fds[i], PERF_EVENT_IOC_DISABLE, 0);
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
};
