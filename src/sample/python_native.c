/* python_native.c — --native for the python backend (python_native.h). One perf_event per thread of the
 * target (task clock, user registers + a copy of the user stack), so samples land only while a thread runs.
 * We wake on every sample, unwind it with the DWARF unwinder, read the Python frame chains at once (the target
 * keeps running; the window between the kernel's sample and our read is a few microseconds, short against a
 * Python function's time in a C call), and splice: each _PyEval_EvalFrameDefault frame becomes the Python
 * frames it was evaluating. Each event's period is random around the interval and redrawn at each of its
 * samples (perf_periods, docs/design.md §5.2), as the perf_event backend's are. Nothing stops or traces the
 * target; closing the events detaches. */
#include "sample/python_native.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/clock.h"
#include "base/hashmap.h"
#include "os/procfs.h"
#include "sample/perf_ring.h"
#include "sample/perf_stack.h"
#include "symbol/maps.h"
#include "unwind/unwind.h"

/* data pages per thread (powers of two): 1 MiB holds ~60 samples of 16 KiB stacks, 120 ms at 2 ms, for a reader
 * kept off the CPUs by a loaded machine (with 64 pages a loaded CI run kept 77 of ~260 samples); the smaller
 * one where locked memory is limited */
#define PYN_RING_PAGES 256
#define PYN_RING_PAGES_SMALL 64
#define PYN_STACK_BYTES 16384
#define PYN_MAX_IPS 256
#define PYN_MAX_PY 1024
#define PYN_MAX_THREADS 256
#define PYN_COPY_BYTES (65536 + 64) /* a record that wraps around a ring's end is copied out (records are < 64 KiB) */
#define PYN_SAMPLE_TYPE                                                                                   \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)

/* One thread's event and its ring. */
struct pyn_ring {
	pid_t tid;
	struct perf_ring ring;
};

/* Python frames of one thread, copied out of the reader's scratch buffer. */
struct pyn_pystack {
	pid_t tid;
	size_t n;
	struct py_frame *frames;
};

struct pyn_sampler {
	struct py_proc *py;
	pid_t pid;
	const struct record_opts *opts;
	struct profile *p;
	struct maps *maps;
	struct unwinder *unwinder;
	struct pyn_ring rings[PYN_MAX_THREADS];
	size_t nrings;
	struct hmap tid_seen;  /* tid -> index in rings */
	struct hmap threads;   /* (pid, tid) -> profile thread (backend_thread) */
	uint64_t samples;
	uint64_t last_scan;
	uint64_t last_maps_reload;
	struct perf_periods periods; /* each event's random period */
	const char *eval_module;
	uint64_t eval_start, eval_end;
	bool has_eval;
	/* per drain: Python stacks of every thread */
	struct pyn_pystack *pystacks;
	size_t npystacks, cappystacks;
	bool py_read;
	uint8_t *stack_copy;
	uint64_t ips[PYN_MAX_IPS];
	int is_eval[PYN_MAX_IPS];
	long merged[PYN_MAX_IPS + PYN_MAX_PY];
	uint32_t frame_ids[PYN_MAX_IPS + PYN_MAX_PY];
	str_id s_unknown;
	bool user_only; /* kernel-mode samples refused */
};

size_t pyn_merge(const int *is_eval, size_t nips, const struct py_frame *py, size_t npy, long *out, size_t max)
{
	/* group boundaries in py: group g covers [gstart[g], gend[g]) innermost first */
	size_t ngroups = 0, n = 0;
	size_t gstart[PYN_MAX_IPS], gend[PYN_MAX_IPS];
	size_t s = 0;
	for (size_t i = 0; i < npy && ngroups < PYN_MAX_IPS; i++) {
		if (py[i].is_entry || i == npy - 1) {
			gstart[ngroups] = s;
			gend[ngroups] = i + 1;
			ngroups++;
			s = i + 1;
		}
	}
	size_t neval = 0;
	for (size_t i = 0; i < nips; i++)
		neval += is_eval[i] != 0;
	size_t g = 0;
	for (size_t i = 0; i < nips && n < max; i++) {
		if (is_eval[i] && g < ngroups) {
			for (size_t k = gstart[g]; k < gend[g] && n < max; k++)
				out[n++] = -(long)(k + 1);
			g++;
		} else {
			out[n++] = (long)i;
		}
	}
	/* the native stack was cut short: the outer Python frames go at the outer end */
	for (; g < ngroups; g++)
		for (size_t k = gstart[g]; k < gend[g] && n < max; k++)
			out[n++] = -(long)(k + 1);
	return n;
}

static enum plumb_err open_thread(struct pyn_sampler *s, pid_t tid, struct perr *e)
{
	if (hmap_get(&s->tid_seen, (uint64_t)tid, &(uint32_t){ 0 }))
		return PLUMB_OK;
	if (s->nrings == PYN_MAX_THREADS)
		return PLUMB_OK; /* more threads than we follow: the rest are not sampled */
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = perf_periods_draw(&s->periods);
	attr.sample_type = PYN_SAMPLE_TYPE;
	attr.sample_regs_user = UNWIND_REGS_MASK;
	size_t want = s->opts->stack_bytes ? s->opts->stack_bytes : PYN_STACK_BYTES;
	attr.sample_stack_user = (uint32_t)(want > 32768 ? 32768 : want) & ~7u;
	/* Kernel time is sampled too (the user registers and stack are those at kernel entry): a Python loop that
	 * makes system calls would otherwise lose those samples. Refused (perf_event_paranoid >= 2 without
	 * privileges): fall back to user time only. */
	attr.exclude_kernel = s->user_only;
	attr.exclude_hv = 1;
	attr.wakeup_events = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	int fd = perf_open(&attr, tid, -1);
	if (fd < 0 && !s->user_only && (errno == EACCES || errno == EPERM)) {
		s->user_only = true;
		attr.exclude_kernel = 1;
		fd = perf_open(&attr, tid, -1);
	}
	if (fd < 0) {
		int err = errno;
		if (err == ESRCH)
			return PLUMB_OK; /* the thread ended meanwhile */
		return perr_set(e, (err == EACCES || err == EPERM) ? PLUMB_EPERM : PLUMB_EUNSUPPORTED,
				"--native needs perf_event_open on the target's threads: %s", strerror(err));
	}
	struct pyn_ring *r = &s->rings[s->nrings];
	if (!perf_periods_add(&s->periods, fd, (int32_t)tid, attr.sample_period)) {
		close(fd);
		return perr_set(e, PLUMB_ENOMEM, "cannot set up the sampling period: %s", strerror(errno));
	}
	if (!perf_ring_map(&r->ring, fd, PYN_RING_PAGES) && !perf_ring_map(&r->ring, fd, PYN_RING_PAGES_SMALL)) {
		int err = errno;
		close(fd);
		return perr_set(e, PLUMB_EUNSUPPORTED, "cannot map a perf_event ring: %s", strerror(err));
	}
	r->tid = tid;
	if (!hmap_put(&s->tid_seen, (uint64_t)tid, (uint32_t)s->nrings)) {
		perf_ring_unmap(&r->ring);
		close(fd);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	s->nrings++;
	return PLUMB_OK;
}

static void scan_threads(struct pyn_sampler *s, struct perr *e)
{
	struct procfs_dir d;
	if (!procfs_tasks_open(&d, s->pid))
		return;
	for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
		struct perr te = PERR_INIT;
		if (open_thread(s, tid, &te) && e && !e->code)
			*e = te;
	}
	procfs_dir_close(&d);
}

enum plumb_err pyn_open(struct pyn_sampler **out, struct py_proc *py, pid_t pid, const struct record_opts *opts,
			struct profile *p, struct perr *e)
{
	*out = NULL;
	struct pyn_sampler *s = calloc(1, sizeof *s);
	if (!s)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	s->py = py;
	s->pid = pid;
	s->opts = opts;
	s->p = p;
	perf_periods_init(&s->periods, backend_interval_ns(opts),
			  mono_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)pid);
	s->maps = maps_new();
	if (s->maps)
		maps_use_files(s->maps, opts->files);
	s->unwinder = s->maps ? unwinder_new(s->maps) : NULL;
	s->stack_copy = malloc(PYN_COPY_BYTES);
	s->s_unknown = profile_intern_cstr(p, "[unknown]");
	if (!s->maps || !s->unwinder || !s->stack_copy) {
		pyn_close(s);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	s->has_eval = py && py_eval_range(py, &s->eval_module, &s->eval_start, &s->eval_end);
	maps_load_proc(s->maps, pid);
	s->last_maps_reload = mono_ns();
	struct perr se = PERR_INIT;
	scan_threads(s, &se);
	if (s->nrings == 0) {
		pyn_close(s);
		if (se.code) {
			*e = se;
			return se.code;
		}
		return perr_set(e, PLUMB_EINVAL, "process %d has no threads to sample", (int)pid);
	}
	s->last_scan = mono_ns();
	*out = s;
	return PLUMB_OK;
}

static void collect_py(void *ctx, const struct py_thread *t)
{
	struct pyn_sampler *s = ctx;
	if (s->npystacks == s->cappystacks) {
		size_t old = s->cappystacks;
		if (!ALLOC_GROW(s->pystacks, s->npystacks + 1, s->cappystacks))
			return;
		memset(s->pystacks + old, 0, (s->cappystacks - old) * sizeof *s->pystacks);
	}
	struct pyn_pystack *ps = &s->pystacks[s->npystacks];
	if (!ps->frames)
		ps->frames = malloc(PYN_MAX_PY * sizeof *ps->frames);
	if (!ps->frames)
		return;
	ps->tid = t->tid;
	ps->n = t->nframes < PYN_MAX_PY ? t->nframes : PYN_MAX_PY;
	memcpy(ps->frames, t->frames, ps->n * sizeof *ps->frames);
	s->npystacks++;
}

static const struct pyn_pystack *py_stack_of(struct pyn_sampler *s, pid_t tid)
{
	if (!s->py) /* a process that is not CPython: native frames only */
		return NULL;
	if (!s->py_read) {
		s->npystacks = 0;
		struct perr e = PERR_INIT;
		py_read_threads(s->py, collect_py, s, &e);
		s->py_read = true;
	}
	for (size_t i = 0; i < s->npystacks; i++)
		if (s->pystacks[i].tid == tid)
			return &s->pystacks[i];
	return NULL;
}

static void add_sample(struct pyn_sampler *s, pid_t tid, uint64_t time, const struct unwind_regs *regs,
		       const uint8_t *stack, size_t stack_len)
{
	size_t nips = unwind_dwarf(s->unwinder, s->pid, regs, stack, stack_len, s->ips, PYN_MAX_IPS);
	if (nips == 0 && regs->r[UREG_IP]) {
		s->ips[0] = regs->r[UREG_IP];
		nips = 1;
	}
	uint32_t raw_ids[PYN_MAX_IPS];
	for (size_t i = 0; i < nips; i++) {
		uint64_t ip = s->ips[i];
		uint64_t look = i > 0 && ip ? ip - 1 : ip;
		const struct map_entry *me = maps_find(s->maps, s->pid, look);
		if (!me && mono_ns() - s->last_maps_reload > 100000000ULL) {
			/* a library loaded since we last looked (ctypes, an extension module) */
			maps_load_proc(s->maps, s->pid);
			s->last_maps_reload = mono_ns();
			me = maps_find(s->maps, s->pid, look);
		}
		uint64_t va = me ? maps_vaddr(me, look) : 0;
		s->is_eval[i] = me && s->has_eval && strcmp(me->path, s->eval_module) == 0 && va >= s->eval_start &&
				va < s->eval_end;
		raw_ids[i] = backend_user_frame(s->p, me, ip, i > 0, s->s_unknown);
		if (raw_ids[i] == PROFILE_NOMEM)
			return;
	}
	const struct pyn_pystack *ps = py_stack_of(s, tid);
	size_t npy = ps ? ps->n : 0;
	size_t n = pyn_merge(s->is_eval, nips, ps ? ps->frames : NULL, npy, s->merged,
			     sizeof s->merged / sizeof s->merged[0]);
	/* merged is innermost first; the profile wants outermost first */
	uint32_t node = PROFILE_ROOT;
	for (size_t i = n; i-- > 0;) {
		long m = s->merged[i];
		if (m >= 0) {
			node = profile_stack(s->p, node, raw_ids[m]);
		} else {
			node = py_frames_push(s->p, node, &ps->frames[-m - 1], 1);
		}
		if (node == PROFILE_NOMEM)
			return;
	}
	uint32_t th = backend_thread(s->p, &s->threads, s->pid, tid);
	if (th == PROFILE_NOMEM)
		return;
	if (profile_add_sample(s->p, node, th, time, 1))
		s->samples++;
}

/* One record of a thread's ring: a sample is unwound, merged and added. */
static void on_record(void *ctx, const char *rec, size_t len)
{
	struct pyn_sampler *s = ctx;
	struct perf_sample sv;
	if (((const struct perf_event_header *)rec)->type != PERF_RECORD_SAMPLE ||
	    !perf_sample_parse(PYN_SAMPLE_TYPE, rec, len, &sv) || !sv.regs)
		return; /* no user registers: the thread was in the kernel without user state (exiting) */
	perf_periods_sampled(&s->periods, sv.id, sv.tid, sv.time); /* its next period, before the unwinding */
	struct unwind_regs regs;
	perf_sample_regs(&sv, &regs);
	add_sample(s, (pid_t)sv.tid, sv.time, &regs, sv.stack, (size_t)sv.stack_dyn);
}

static void drain(struct pyn_sampler *s)
{
	s->py_read = false;
	for (size_t i = 0; i < s->nrings; i++)
		perf_ring_drain(&s->rings[i].ring, (char *)s->stack_copy, PYN_COPY_BYTES, on_record, s);
}

/* The thread behind fd exited: its event is done. */
static void ring_done(struct pyn_sampler *s, int fd)
{
	for (size_t k = 0; k < s->nrings; k++)
		if (s->rings[k].ring.fd == fd && s->rings[k].ring.meta) {
			perf_ring_unmap(&s->rings[k].ring);
			close(fd);
			s->rings[k].ring.fd = -1;
		}
}

void pyn_poll_many(struct pyn_sampler *const *ss, size_t nss, uint64_t until_ns)
{
	size_t cap = 0;
	for (size_t j = 0; j < nss; j++)
		cap += ss[j]->nrings;
	struct pollfd *pfds = malloc((cap ? cap : 1) * sizeof *pfds);
	size_t *owner = malloc((cap ? cap : 1) * sizeof *owner);
	if (!pfds || !owner) {
		free(pfds);
		free(owner);
		return;
	}
	for (;;) {
		uint64_t t = mono_ns();
		size_t n = 0;
		for (size_t j = 0; j < nss; j++) {
			struct pyn_sampler *s = ss[j];
			if (t - s->last_scan > 100000000ULL) {
				scan_threads(s, NULL);
				s->last_scan = t;
			}
			for (size_t i = 0; i < s->nrings; i++)
				if (s->rings[i].ring.meta && n < cap) { /* threads found since this call wait for the next one */
					owner[n] = j;
					pfds[n++] = (struct pollfd){ .fd = s->rings[i].ring.fd, .events = POLLIN };
				}
		}
		int timeout = t >= until_ns ? 0 : (int)((until_ns - t + 999999) / 1000000);
		int rc = poll(pfds, n, timeout);
		if (rc > 0) {
			for (size_t j = 0; j < nss; j++) {
				bool ready = false;
				for (size_t i = 0; i < n && !ready; i++)
					ready = owner[i] == j && pfds[i].revents;
				if (ready)
					drain(ss[j]);
			}
			for (size_t i = 0; i < n; i++)
				if (pfds[i].revents & (POLLHUP | POLLERR))
					ring_done(ss[owner[i]], pfds[i].fd);
		}
		if ((rc < 0 && errno != EINTR) || mono_ns() >= until_ns || (rc < 0 && errno == EINTR))
			break;
	}
	free(pfds);
	free(owner);
}

void pyn_poll(struct pyn_sampler *s, uint64_t until_ns)
{
	pyn_poll_many(&s, 1, until_ns);
}

void pyn_finish(struct pyn_sampler *s, uint64_t *ticks)
{
	for (size_t i = 0; i < s->nrings; i++)
		if (s->rings[i].ring.meta)
			ioctl(s->rings[i].ring.fd, PERF_EVENT_IOC_DISABLE, 0);
	drain(s);
	*ticks += s->samples;
}

void pyn_close(struct pyn_sampler *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nrings; i++) {
		perf_ring_unmap(&s->rings[i].ring);
		if (s->rings[i].ring.fd >= 0)
			close(s->rings[i].ring.fd);
	}
	for (size_t i = 0; i < s->cappystacks; i++)
		free(s->pystacks[i].frames);
	free(s->pystacks);
	free(s->stack_copy);
	hmap_release(&s->tid_seen);
	hmap_release(&s->threads);
	perf_periods_release(&s->periods);
	unwinder_free(s->unwinder);
	maps_free(s->maps);
	free(s);
}
