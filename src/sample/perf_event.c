/* perf_event.c — the perf_event backend: clock sampling of every thread of a launched command or an attached
 * process, and of the processes they fork afterwards. Where the kernel permits per-CPU events (CAP_PERFMON or
 * perf_event_paranoid <= 0) one cpu-clock event per CPU is kept to those processes, so a thread that lives
 * 1 ms is sampled as often as any other code; otherwise inherited per-thread task-clock events (one per CPU,
 * as the kernel requires for inherited ring buffers), which start in each new thread with the period its parent
 * had. Every period is drawn at random around the interval and redrawn after each sample (perf_periods,
 * docs/design.md §5.2), so no rhythm of the target can lock onto the samples. Records are read from the ring
 * buffers while the target runs and streamed into the profile as raw frames (symbol/symbol.h conventions), so
 * memory is bounded by distinct stacks.
 * Invariant: the target is never stopped or traced; closing our descriptors (even by SIGKILL) detaches. */
#include "sample/backend.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/clock.h"
#include "base/hashmap.h"
#include "os/procfs.h"
#include "base/str.h"
#include "symbol/maps.h"
#include "sample/perf_redraw.h"
#include "sample/perf_stack.h"
#include "sample/wall.h"
#include "unwind/unwind.h"

#define RING_PAGES_FP 256     /* 1 MiB per CPU */
#define RING_PAGES_DWARF 1024 /* 4 MiB per CPU: stack copies are large */

struct pe_state {
	const struct record_opts *opts;
	struct profile *p;
	struct record_result *res;
	struct maps *maps;
	int *fds;            /* every event fd */
	size_t nfds, cap_fds;
	struct perf_ring *rings; /* one per CPU (other fds redirect their output into it) */
	size_t nrings;
	int ncpus;
	struct perf_stacker stk;
	bool kernel;
	uint64_t ticks, lost;
	struct hmap jit_pids;  /* pid -> 1 (has /tmp/perf-PID.map), 2 (has none) */
	struct hmap comm_seen; /* (pid<<32|tid) -> thread id */
	uint64_t *comm_at;     /* thread id -> the time of the COMM record that named it */
	size_t ncomm_at, cap_comm_at;
	struct wall *wall;      /* --mode wall: off-CPU accounting, NULL in cpu mode */
	struct hmap switch_ids; /* ids of the context-switch events (wall mode) */
	bool cpu_wide;          /* an attach sampled by per-CPU events: only the processes in `followed` count */
	/* per-CPU events are permitted (cpu mode, CAP_PERFMON or paranoid <= 0): they sample the threads started
	 * since, so the per-thread events are not inherited — an inherited event's read() adds its children's
	 * counts, which shortened the parent's next periods while a child ran (a forked child read 41% for 50) */
	bool cpu_permitted;
	struct hmap followed;   /* cpu_wide: pid -> 1 for the attached process and every process it forks */
	struct hmap own_tids;   /* threads with per-thread events of their own (attached, or the command's first) */
	size_t cpu_fds_from;    /* cpu_wide: fds[cpu_fds_from..] are the per-CPU events */
	struct perf_redraw redraw; /* gives each event its next period as soon as it sampled */
	struct perf_periods periods; /* the random period of every sampling event */
	char *buf;              /* a record that wraps around a ring's end is copied here */
	size_t bufsize;
};

static void fill_attr(struct pe_state *st, struct perf_event_attr *attr, bool launch)
{
	perf_attr_cpu_clock(attr, st->opts, st->stk.sample_type, st->kernel);
	attr->sample_period = perf_periods_draw(&st->periods);
	attr->inherit = 1;
	attr->enable_on_exec = launch ? 1 : 0;
	attr->watermark = 0;
	attr->wakeup_events = 1;
}

/* A per-CPU event: with the redraw thread (perf_redraw.h: up to 64 CPUs) a random period redrawn at each of its
 * samples, like a thread's, which wakes that thread (it wakes the reader when a quarter of a ring waits).
 * Without it a fixed period and the reader woken by the watermark (dwarf samples are ~16 KiB, a quarter of the
 * 4 MiB ring is ~16 wake-ups/s at 1 kHz): a redraw per read of the rings would repeat one draw over a window of
 * fixed length, which reads 19% over (perf_stack.h). These events sample every process on the CPU, so the
 * redraws cost the number of CPUs times the rate, whatever the target does. */
static void cpu_event_wakeups(struct pe_state *st, struct perf_event_attr *attr)
{
	if (st->nrings <= PERF_REDRAW_MAX_RINGS) { /* fill_attr's drawn period, redrawn every few samples */
		attr->wakeup_events = PERF_PERIODS_CPU_BATCH;
		return;
	}
	attr->sample_period = st->periods.mean_ns;
	attr->watermark = 1;
	attr->wakeup_events = 0;
	attr->wakeup_watermark = st->opts->unwind == UNWIND_DWARF ? 1024 * 1024 : 64 * 1024;
}

/* --mode wall: a context-switch event sampled at every switch-out, with the same stack sampling, plus
 * PERF_RECORD_SWITCH records for the switch-ins. It fires inside the scheduler, so it cannot exclude the
 * kernel (exclude_kernel would drop every sample); kernel frames still follow st->kernel. */
static void fill_switch_attr(struct pe_state *st, struct perf_event_attr *attr, bool launch)
{
	fill_attr(st, attr, launch);
	attr->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	attr->sample_period = 1;
	attr->watermark = 1;
	attr->wakeup_events = 0;
	attr->wakeup_watermark = 64 * 1024;
	attr->exclude_kernel = 0;
	attr->context_switch = 1;
	perf_attr_task_records(attr, false);
}

static bool add_fd(struct pe_state *st, int fd)
{
	if (!ALLOC_GROW(st->fds, st->nfds + 1, st->cap_fds))
		return false;
	st->fds[st->nfds++] = fd;
	return true;
}

static enum plumb_err map_ring(struct pe_state *st, int fd, struct perf_ring *r, struct perr *e)
{
	size_t pages = st->opts->unwind == UNWIND_DWARF ? RING_PAGES_DWARF : RING_PAGES_FP;
	/* a smaller ring when locked memory is limited */
	if (!perf_ring_map(r, fd, pages) && !perf_ring_map(r, fd, 16))
		return perr_set(e, PLUMB_EPERM, "cannot map the perf ring buffer: %s", strerror(errno));
	return PLUMB_OK;
}

/* The sampling event of task `pid` (-1: a CPU's). */
static void fill_task_attr(struct pe_state *st, struct perf_event_attr *attr, pid_t pid, bool launch)
{
	fill_attr(st, attr, launch);
	attr->inherit = pid >= 0 && !st->cpu_permitted;
	if (pid >= 0) /* a thread's events count its own CPU time (a per-thread cpu-clock counts the same) */
		attr->config = PERF_COUNT_SW_TASK_CLOCK;
	else /* a CPU's event samples every process there (cpu_event_wakeups) */
		cpu_event_wakeups(st, attr);
}

/* Opens one event per CPU for task `pid` (a launched child, one thread of an attached process, or -1: every
 * task, which needs CAP_PERFMON or kernel.perf_event_paranoid <= 0). The first task's events own the rings;
 * later tasks redirect into them. */
static enum plumb_err open_task(struct pe_state *st, pid_t pid, bool launch, struct perr *e)
{
	for (int cpu = 0; cpu < st->ncpus; cpu++) {
		struct perf_event_attr attr;
		fill_task_attr(st, &attr, pid, launch);
		int fd = perf_open(&attr, pid, cpu);
		if (fd < 0 && (errno == EACCES || errno == EPERM) && st->kernel) {
			st->kernel = false; /* kernel samples not permitted: user space only */
			fill_task_attr(st, &attr, pid, launch);
			fd = perf_open(&attr, pid, cpu);
		}
		if (fd < 0) {
			if (errno == ESRCH)
				return perr_set(e, PLUMB_EINVAL, "process %d does not exist", (int)pid);
			if (errno == ENODEV || errno == ENOENT) /* offline CPU */
				continue;
			int err = errno;
			char why[512];
			describe_attach_refusal(pid, "perf_event_open", err, why, sizeof why);
			return perr_set(e, (err == EACCES || err == EPERM) ? PLUMB_EPERM : PLUMB_EUNSUPPORTED, "%s", why);
		}
		if (!add_fd(st, fd)) {
			close(fd);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
		if (!perf_periods_add(&st->periods, fd, (int32_t)pid, attr.sample_period))
			return perr_set(e, PLUMB_ENOMEM, "cannot set up the sampling period: %s", strerror(errno));
		struct perf_ring *target = &st->rings[cpu];
		if (target->meta) {
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, target->fd) != 0)
				return perr_set(e, PLUMB_EPERM, "cannot redirect perf output: %s", strerror(errno));
		} else {
			enum plumb_err rc = map_ring(st, fd, target, e);
			if (rc)
				return rc;
		}
		if (st->wall) {
			fill_switch_attr(st, &attr, launch);
			int sfd = perf_open(&attr, pid, cpu);
			if (sfd < 0) {
				int err = errno, paranoid = perf_event_paranoid();
				return perr_set(e, (err == EACCES || err == EPERM) ? PLUMB_EPERM : PLUMB_EUNSUPPORTED,
						"--mode wall samples context switches, which happen in the kernel: %s "
						"(kernel.perf_event_paranoid = %d; needs CAP_PERFMON or a setting of 1 or lower); "
						"--mode cpu works without it", strerror(err), paranoid);
			}
			uint64_t id;
			if (!add_fd(st, sfd)) {
				close(sfd);
				return perr_set(e, PLUMB_ENOMEM, "out of memory");
			}
			if (ioctl(sfd, PERF_EVENT_IOC_ID, &id) != 0 || !hmap_put(&st->switch_ids, id, 1) ||
			    ioctl(sfd, PERF_EVENT_IOC_SET_OUTPUT, st->rings[cpu].fd) != 0)
				return perr_set(e, PLUMB_EPERM, "cannot set up the context-switch event: %s", strerror(errno));
		}
	}
	return PLUMB_OK;
}

static void enable_all(struct pe_state *st)
{
	for (size_t i = 0; i < st->nfds; i++)
		ioctl(st->fds[i], PERF_EVENT_IOC_ENABLE, 0);
}

static bool has_jit_map(struct pe_state *st, pid_t pid, char *path, size_t n)
{
	if (st->opts->files) /* the target's own /tmp, under its own pid, under the trust rules */
		return sym_files_perf_map(st->opts->files, pid, path, n);
	snprintf(path, n, "/tmp/perf-%d.map", (int)pid);
	uint32_t v;
	if (!hmap_get(&st->jit_pids, (uint64_t)pid, &v)) {
		v = access(path, R_OK) == 0 ? 1 : 2;
		/* a JIT may write its map later: only remember a hit */
		if (v == 1)
			hmap_put(&st->jit_pids, (uint64_t)pid, v);
	}
	return v == 1;
}

/* The raw frame for a user-space address (caller: a return address): a JIT's when the process has a perf map
 * and the address is in no file (perf_stacker.user_frame). */
static uint32_t user_frame(void *ctx, pid_t pid, uint64_t addr, bool caller)
{
	struct pe_state *st = ctx;
	const struct map_entry *m = maps_find(st->maps, pid, addr);
	if (!m) {
		maps_load_proc(st->maps, pid); /* mappings made before we saw them (attach, or pre-exec) */
		m = maps_find(st->maps, pid, addr);
	}
	char jit[64];
	if (maps_is_image(m) || !has_jit_map(st, pid, jit, sizeof jit))
		return backend_user_frame(st->p, m, addr, caller, st->stk.s_unknown);
	struct frame f = { 0 };
	f.kind = FRAME_JIT;
	f.module = profile_intern_cstr(st->p, jit);
	f.addr = addr;
	return profile_frame(st->p, &f);
}

/* Whether a record of process `pid` belongs to the target: always, but for an attach sampled per CPU, where it
 * must be the process or one it forked. */
static bool followed(const struct pe_state *st, uint32_t pid)
{
	uint32_t dummy;
	return !st->cpu_wide || hmap_get(&st->followed, pid, &dummy);
}

static void handle_sample(struct pe_state *st, const char *rec, size_t len)
{
	struct perf_sample sv;
	if (!perf_sample_parse(st->stk.sample_type, rec, len, &sv) || !followed(st, sv.pid))
		return;
	uint32_t dummy;
	bool switch_out = st->wall && hmap_get(&st->switch_ids, sv.id, &dummy);
	if (!switch_out) {
		if (!st->redraw.running) {
			perf_periods_sampled(&st->periods, sv.id, sv.tid, sv.time);
		}
		int32_t owner;
		if (st->cpu_wide && perf_periods_owner(&st->periods, sv.id, &owner)) {
			/* Each thread has one clock: its own per-thread event when it had one from the start, which
			 * counts its CPU time however it uses it; the per-CPU events for the threads started since
			 * (an inherited per-thread event would keep the one period it started with). */
			bool own = hmap_get(&st->own_tids, sv.tid, &dummy);
			if (owner < 0 ? own : (uint32_t)owner != sv.tid)
				return;
		}
		st->ticks++;
	}
	size_t n = perf_stacker_build(&st->stk, &sv);
	uint32_t stack = profile_stack_from(st->p, st->stk.frames, n);
	uint32_t thread = backend_thread(st->p, &st->comm_seen, (pid_t)sv.pid, (pid_t)sv.tid);
	if (stack == PROFILE_NOMEM || thread == PROFILE_NOMEM)
		return;
	if (switch_out) /* the stack it waits in: counted at every tick until it runs again */
		wall_switch_out(st->wall, sv.tid, thread, stack, sv.time);
	else
		profile_add_sample(st->p, stack, thread, sv.time, 1);
}

/* The records besides samples that tell what the tasks map, are called, create and end, and what was lost. */
static void handle_task(struct pe_state *st, const char *rec, size_t len)
{
	struct perf_task_rec t;
	if (!perf_task_parse(rec, len, st->stk.sample_type, &t))
		return;
	if (t.type == PERF_RECORD_FORK && st->cpu_wide && followed(st, t.ppid)) /* its forks are followed */
		hmap_put(&st->followed, t.pid, 1);
	if (t.type != PERF_RECORD_LOST && !followed(st, t.pid))
		return;
	switch (t.type) {
	case PERF_RECORD_MMAP2:
		if (t.prot & PROT_EXEC)
			maps_add_file(st->maps, (pid_t)t.pid, t.addr, t.len, t.pgoff, t.name,
				      (t.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ? 0 : t.ino);
		break;
	case PERF_RECORD_COMM: {
		if (t.misc & PERF_RECORD_MISC_COMM_EXEC)
			maps_forget(st->maps, (pid_t)t.pid);
		uint64_t key = ((uint64_t)t.pid << 32) | t.tid;
		uint32_t id;
		/* each CPU's ring is read in turn, so a thread that moved between exec and a rename (prctl) can show
		 * its names out of order: the latest by time is its name (a loaded CI run named one by its exec) */
		if (hmap_get(&st->comm_seen, key, &id) && id < st->ncomm_at && st->comm_at[id] > t.time)
			break;
		id = profile_thread(st->p, t.pid, t.tid, t.name);
		hmap_put(&st->comm_seen, key, id);
		if (id != PROFILE_NOMEM && ALLOC_GROW(st->comm_at, (size_t)id + 1, st->cap_comm_at)) {
			while (st->ncomm_at <= id)
				st->comm_at[st->ncomm_at++] = 0;
			st->comm_at[id] = t.time;
		}
		break;
	}
	case PERF_RECORD_FORK:
		if (t.pid != t.ppid)
			maps_fork(st->maps, (pid_t)t.ppid, (pid_t)t.pid);
		break;
	case PERF_RECORD_EXIT:
		if (st->wall)
			wall_exit(st->wall, t.tid, t.time);
		break;
	case PERF_RECORD_LOST:
		st->lost += t.lost;
		break;
	default:
		break;
	}
}

static void handle_record(void *ctx, const char *rec, size_t len)
{
	struct pe_state *st = ctx;
	const struct perf_event_header *h = (const void *)rec;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		handle_sample(st, rec, len);
		break;
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
		handle_task(st, rec, len);
		break;
	case PERF_RECORD_SWITCH: {
		/* the record is only its sample_id_all trailer: pid, tid, time, ..., identifier (last) */
		const char *q = rec + sizeof *h;
		uint32_t pt[2];
		uint64_t time;
		if (!st->wall || (h->misc & PERF_RECORD_MISC_SWITCH_OUT))
			break;
		if (len < (size_t)(q - rec) + sizeof pt + sizeof time)
			break;
		memcpy(pt, q, sizeof pt);
		memcpy(&time, q + sizeof pt, sizeof time);
		wall_switch_in(st->wall, pt[1], time);
		break;
	}
	default:
		break;
	}
}

static void drain_all(struct pe_state *st)
{
	uint64_t round = mono_ns();
	for (size_t i = 0; i < st->nrings; i++)
		perf_ring_drain(&st->rings[i], st->buf, st->bufsize, handle_record, st);
	/* Every event stamped before this round began is read now (1 ms of slack for records still being
	 * written): off-CPU waits up to there can be paired in time order. */
	if (st->wall && round > 1000000) {
		st->ticks += wall_flush(st->wall, round - 1000000);
		if (st->opts->on_poll) /* a live view shows a thread that waits the whole session, as it waits */
			st->ticks += wall_settle(st->wall, round - 1000000);
	}
}

static void cleanup(struct pe_state *st)
{
	perf_redraw_stop(&st->redraw);
	for (size_t i = 0; st->rings && i < st->nrings; i++)
		perf_ring_unmap(&st->rings[i]);
	for (size_t i = 0; i < st->nfds; i++)
		close(st->fds[i]);
	free(st->fds);
	free(st->rings);
	free(st->buf);
	hmap_release(&st->jit_pids);
	hmap_release(&st->comm_seen);
	free(st->comm_at);
	hmap_release(&st->switch_ids);
	hmap_release(&st->followed);
	hmap_release(&st->own_tids);
	perf_periods_release(&st->periods);
	wall_free(st->wall);
	perf_stacker_free(&st->stk);
	maps_free(st->maps);
}

/* --mode wall with --pid: a thread already blocked when sampling starts would only be seen once it wakes
 * up. /proc/PID/task/TID/syscall gives the user stack and instruction pointers of a thread that is not
 * running; its stack is read from the process (process_vm_readv, the access an attach has anyway) and
 * unwound, and the thread counts as waiting there from `start` (the user part only: the kernel does not
 * give the kernel part of a sleeping thread's stack here). */
static void wall_seed_blocked(struct pe_state *st, pid_t pid, uint64_t start)
{
	char line[512];
	struct procfs_dir d;
	if (!procfs_tasks_open(&d, pid))
		return;
	size_t cap = st->opts->stack_bytes ? st->opts->stack_bytes : 16384;
	uint8_t *copy = malloc(cap);
	pid_t tid;
	while (copy && st->stk.unwinder && (tid = procfs_dir_next(&d)) > 0) {
		if (procfs_read(pid, tid, "syscall", line, sizeof line) <= 0 || str_starts_with(line, "running"))
			continue;
		line[strcspn(line, "\n")] = '\0';
		/* "NR ARG1 ... ARG6 SP PC", or "-1 SP PC" outside a system call; the last two are the ones */
		char *last = strrchr(line, ' ');
		if (!last)
			continue;
		*last = '\0';
		char *prev = strrchr(line, ' ');
		if (!prev)
			continue;
		struct unwind_regs regs;
		memset(&regs, 0, sizeof regs);
		regs.r[UREG_SP] = strtoull(prev + 1, NULL, 16);
		regs.r[UREG_IP] = strtoull(last + 1, NULL, 16);
		if (!regs.r[UREG_SP] || !regs.r[UREG_IP])
			continue;
		struct iovec local = { copy, cap }, remote = { (void *)(uintptr_t)regs.r[UREG_SP], cap };
		ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		while (got < 0 && errno == EFAULT && remote.iov_len > 256) { /* past the top of the stack */
			remote.iov_len = local.iov_len = remote.iov_len / 2;
			got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		}
		if (got <= 0)
			continue;
		uint64_t *user = st->stk.ips + PERF_STACK_MAX_DEPTH;
		size_t nuser = unwind_dwarf(st->stk.unwinder, pid, &regs, copy, (size_t)got, user, PERF_STACK_MAX_DEPTH);
		size_t n = 0;
		for (size_t i = nuser; i-- > 0;) {
			uint32_t fr = user_frame(st, pid, user[i], i > 0);
			if (fr != PROFILE_NOMEM)
				st->stk.frames[n++] = fr;
		}
		uint32_t stack = profile_stack_from(st->p, st->stk.frames, n);
		uint32_t thread = backend_thread(st->p, &st->comm_seen, pid, tid);
		if (stack != PROFILE_NOMEM && thread != PROFILE_NOMEM)
			wall_switch_out(st->wall, (uint32_t)tid, thread, stack, start);
	}
	free(copy);
	procfs_dir_close(&d);
}

static enum plumb_err attach_threads(struct pe_state *st, pid_t pid, struct perr *e)
{
	struct procfs_dir d;
	if (!procfs_tasks_open(&d, pid))
		return perr_set(e, PLUMB_EINVAL, "process %d does not exist", (int)pid);
	enum plumb_err rc = PLUMB_OK;
	size_t opened = 0;
	for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
		struct perr te = PERR_INIT;
		enum plumb_err trc = open_task(st, tid, false, &te);
		if (trc == PLUMB_OK && !hmap_put(&st->own_tids, (uint64_t)tid, 1))
			trc = perr_set(&te, PLUMB_ENOMEM, "out of memory");
		if (trc == PLUMB_OK) {
			opened++;
		} else if (trc != PLUMB_EINVAL) { /* a thread that exited meanwhile is fine */
			rc = trc;
			*e = te;
			break;
		}
	}
	procfs_dir_close(&d);
	if (rc == PLUMB_OK && opened == 0)
		rc = perr_set(e, PLUMB_EINVAL, "process %d does not exist", (int)pid);
	return rc;
}

/* Whether per-CPU events may be opened (st->cpu_permitted): asked before the per-thread events, which are not
 * inherited when they are. Never in wall mode, whose context-switch events follow threads. */
static void probe_cpus(struct pe_state *st)
{
	st->cpu_permitted = false;
	if (st->wall)
		return;
	struct perf_event_attr attr;
	fill_attr(st, &attr, false);
	attr.inherit = 0;
	attr.exclude_kernel = 1;
	int fd = perf_open(&attr, -1, 0);
	if (fd < 0)
		return;
	close(fd);
	st->cpu_permitted = true;
}

/* Cpu mode samples every CPU besides and keeps the samples of the target (and of the processes it forks from now
 * on). *refused, with nothing opened, when per-CPU events are not permitted. After probe_cpus. */
static enum plumb_err attach_cpus(struct pe_state *st, pid_t pid, bool *refused, struct perr *e)
{
	*refused = !st->cpu_permitted;
	if (*refused)
		return PLUMB_OK;
	if (!hmap_put(&st->followed, (uint64_t)pid, 1))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	st->cpu_wide = true;
	st->cpu_fds_from = st->nfds;
	return open_task(st, -1, false, e);
}

/* Allocates what sampling needs (released by cleanup() whatever happens). */
static enum plumb_err pe_init(struct pe_state *st, const struct record_opts *opts, struct profile *p,
			      struct record_result *res, struct perr *e)
{
	st->opts = opts;
	st->p = p;
	st->res = res;
	perf_redraw_init(&st->redraw);
	st->kernel = opts->kernel;
	st->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	st->maps = maps_new();
	if (st->maps)
		maps_use_files(st->maps, opts->files);
	perf_periods_init(&st->periods, backend_interval_ns(opts), mono_ns() ^ ((uint64_t)getpid() << 32));
	st->rings = calloc((size_t)st->ncpus, sizeof *st->rings);
	st->nrings = (size_t)st->ncpus;
	st->bufsize = 70000;
	st->buf = malloc(st->bufsize);
	enum plumb_err rc = perf_stacker_init(&st->stk, opts, p, st->maps, e);
	if (rc)
		return rc;
	st->stk.user_frame = user_frame;
	st->stk.ctx = st;
	st->stk.sample_type |= PERF_SAMPLE_IDENTIFIER; /* which event sampled: its next period */
	if (opts->mode == MODE_WALL)
		st->wall = wall_new(p, opts->interval_ns);
	if (!st->rings || !st->buf || (opts->mode == MODE_WALL && !st->wall))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < st->nrings; i++)
		st->rings[i].fd = -1;
	return PLUMB_OK;
}

/* Opens an event on ourselves first, so that a refusal is known before a command is started (and the kernel
 * frames are given up on here when only they are refused). */
static enum plumb_err pe_probe(struct pe_state *st, struct perr *e)
{
	struct perf_event_attr attr;
	fill_attr(st, &attr, false);
	attr.inherit = 0;
	int fd = perf_open(&attr, 0, -1);
	if (fd < 0 && st->kernel && (errno == EACCES || errno == EPERM)) {
		st->kernel = false;
		fill_attr(st, &attr, false);
		attr.inherit = 0;
		fd = perf_open(&attr, 0, -1);
	}
	if (fd < 0) {
		int err = errno;
		int paranoid = perf_event_paranoid();
		return perr_set(e, (err == EACCES || err == EPERM || err == ENOSYS) ? PLUMB_EPERM : PLUMB_EUNSUPPORTED,
				"perf_event_open refused: %s (kernel.perf_event_paranoid = %d; needs CAP_PERFMON or a "
				"lower setting)", strerror(err), paranoid);
	}
	close(fd);
	return PLUMB_OK;
}

/* Opens the events on the target and starts sampling (res->start_ns): a launched command is held before its
 * exec while its events are opened, which the exec enables; an attached process has every thread's events
 * opened, then enabled. env must outlive the command's start. */
static enum plumb_err pe_open_target(struct pe_state *st, struct child *child, struct backend_env *env,
				     struct perr *e)
{
	const struct record_opts *opts = st->opts;
	enum plumb_err rc;
	if (opts->target == TARGET_COMMAND) {
		backend_command(opts, child, env);
		child->hold = true;
		rc = backend_start(opts, child, e);
		if (rc)
			return rc;
		maps_load_proc(st->maps, child->pid);
		probe_cpus(st);
		rc = open_task(st, child->pid, true, e);
		if (!rc && !hmap_put(&st->own_tids, (uint64_t)child->pid, 1))
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		bool refused = true;
		if (!rc)
			rc = attach_cpus(st, child->pid, &refused, e);
		if (!rc && refused && !st->wall)
			snprintf(st->res->limits, sizeof st->res->limits, "threads the command starts keep the random "
				 "period they start with (per-CPU events not permitted)");
		if (rc)
			return rc;
		st->res->start_ns = mono_ns();
		if (st->cpu_wide) /* the per-CPU events; the command is held before its exec, asleep */
			for (size_t i = st->cpu_fds_from; i < st->nfds; i++)
				ioctl(st->fds[i], PERF_EVENT_IOC_ENABLE, 0);
		return backend_release(child, e);
	}
	if (opts->target != TARGET_PID)
		return perr_set(e, PLUMB_EUNSUPPORTED, "the perf_event backend cannot run --call");
	if (kill(opts->pid, 0) != 0 && errno == ESRCH)
		return perr_set(e, PLUMB_EINVAL, "process %d does not exist", (int)opts->pid);
	maps_load_proc(st->maps, opts->pid);
	bool refused;
	probe_cpus(st);
	rc = attach_threads(st, opts->pid, e);
	if (!rc)
		rc = attach_cpus(st, opts->pid, &refused, e);
	if (!rc && refused) { /* per-CPU events refused: per-thread inherited ones for every thread */
		if (!st->wall)
			snprintf(st->res->limits, sizeof st->res->limits, "threads started while sampling keep the "
				 "random period they start with (per-CPU events not permitted)");
	}
	if (rc)
		return rc;
	st->res->start_ns = mono_ns();
	enable_all(st);
	if (st->wall)
		wall_seed_blocked(st, opts->pid, st->res->start_ns);
	return PLUMB_OK;
}

/* The sampling loop: drains the rings until the target ends, time is up, or we are told to stop. */
static void pe_loop(struct pe_state *st, struct child *child)
{
	const struct record_opts *opts = st->opts;
	uint64_t deadline = backend_deadline(opts, st->res->start_ns);
	st->periods.own_tids = &st->own_tids; /* filled when the events were opened; read-only from here */
	perf_redraw_start(&st->redraw, st->rings, st->nrings, &st->periods);
	/* The redraw thread takes most wake-ups (a ring's readiness goes to one poller): drain often enough that a
	 * ring of 64 samples or more does not fill, and at least every 50 ms. */
	uint64_t iv_ms = backend_interval_ns(opts) * 16 / 1000000;
	int timeout_ms = iv_ms < 1 ? 1 : iv_ms > 50 ? 50 : (int)iv_ms;
	struct pollfd *pfds = calloc(st->nrings + 1, sizeof *pfds);
	size_t npfds = 0;
	/* with a redraw thread the rings' wake-ups are its own (a readiness goes to one poller), and it passes
	 * them on through wake_fd */
	for (size_t i = 0; pfds && st->redraw.wake_fd < 0 && i < st->nrings; i++)
		if (st->rings[i].meta)
			pfds[npfds++] = (struct pollfd){ .fd = st->rings[i].fd, .events = POLLIN };
	if (pfds && st->redraw.wake_fd >= 0)
		pfds[npfds++] = (struct pollfd){ .fd = st->redraw.wake_fd, .events = POLLIN };
	while (!backend_should_stop(opts, deadline) && !backend_target_ended(opts, child, opts->pid, st->res)) {
		if (pfds)
			poll(pfds, npfds, timeout_ms);
		uint64_t woken;
		if (st->redraw.wake_fd >= 0 && read(st->redraw.wake_fd, &woken, sizeof woken) < 0)
			woken = 0; /* nothing to clear */
		drain_all(st);
		backend_poll(opts, st->p, st->res->start_ns, st->ticks, st->lost);
	}
	free(pfds);
}

/* Stops the events, reads what is left in the rings and says what was sampled. */
static void pe_finish(struct pe_state *st, struct child *child)
{
	struct record_result *res = st->res;
	res->end_ns = mono_ns();
	for (size_t i = 0; i < st->nfds; i++)
		ioctl(st->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	perf_redraw_stop(&st->redraw);
	drain_all(st);
	if (st->wall) /* threads still waiting when sampling stopped wait until the end */
		st->ticks += wall_finish(st->wall, res->end_ns);
	backend_end_command(st->opts, child, res);
	backend_meta(st->p, "perf_event", backend_unwinder_name(st->opts), st->ticks, st->lost);
	maps_to_profile(st->maps, st->p, child ? child->pid : st->opts->pid); /* for re-symbolizing viewers */
	if (!st->kernel && st->opts->kernel)
		snprintf(res->limits, sizeof res->limits, "kernel frames not permitted");
}

static enum plumb_err pe_run(const struct record_opts *opts, struct profile *p, struct record_result *res,
			     struct perr *e)
{
	struct pe_state st = { 0 };
	struct child child = CHILD_INIT;
	struct backend_env env;
	enum plumb_err rc = pe_init(&st, opts, p, res, e);
	if (!rc)
		rc = pe_probe(&st, e);
	if (!rc)
		rc = pe_open_target(&st, &child, &env, e);
	if (!rc) {
		pe_loop(&st, &child);
		pe_finish(&st, &child);
	}
	if (child.pid > 0 && rc) {
		child_signal(&child, SIGKILL);
		child_finish(&child);
	}
	cleanup(&st);
	return rc;
}

const struct backend backend_perf_event = {
	.name = "perf_event",
	.wants = NULL,
	.run = pe_run,
	.targets = BACKEND_TARGET(TARGET_COMMAND) | BACKEND_TARGET(TARGET_PID),
};
