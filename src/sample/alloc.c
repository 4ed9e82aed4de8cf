/* alloc.c — the `alloc` backend (`plumb record --mode alloc`): plumb launches the command with libplumb-preload.so
 * and a shared memfd (alloc_ring.h); the library's allocation profiler (src/lib/alloc.c) samples allocations by
 * bytes and reports each sampled one (registers and a slice of stack, unwound here as the inprocess backend does)
 * and its free. At the end the events are replayed in the order of their clock: each sampled allocation stands
 * for size / (1 - exp(-size / interval)) bytes and 1 / (1 - exp(-size / interval)) objects (the unbiased estimate
 * for a Poisson process over the bytes, what pprof's heap profiles hold), and per stack the profile gets the
 * columns allocated, in use at exit, in use at the process's peak and freed (objects and bytes); its weight is the
 * bytes allocated. Invariant: everything the target wrote is bounded and checked before use (it is the target's
 * memory too). */
#include "sample/backend.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/intern.h"
#include "os/procfs.h"
#include "base/str.h"
#include "sample/alloc_ring.h"
#include "symbol/maps.h"
#include "unwind/unwind.h"

#define MAX_FRAMES 128
#define NALLOC_SLOTS 1024
#define NEVENT_SLOTS 16384
#define DEFAULT_STACK 8192

/* One sampled allocation, as replayed at the end. */
struct al_rec {
	uint64_t id;       /* its clock number */
	uint64_t freed_at; /* the clock number of its free (or of its process's exec), 0: in use at exit */
	uint64_t size;
	uint64_t time_ns;
	uint32_t stack, thread, pid;
};

struct al_event {
	uint64_t when, id;
	uint32_t pid, type;
};

struct al_state {
	const struct record_opts *opts;
	struct profile *p;
	struct maps *maps;
	struct unwinder *unw;
	struct alloc_hdr *h;
	size_t len;
	int fd;
	char lib_path[PATH_MAX];
	struct child child;
	int status;
	bool stopped;
	struct hmap loaded;  /* pids whose maps were read */
	struct hmap threads; /* (pid << 32 | tid) -> profile thread */
	struct interner seen; /* (pid, kind, return addresses) of each distinct unwound stack: id -> seen_stack[id] */
	uint32_t *seen_stack;
	size_t cap_seen;
	uint64_t tail_a, tail_e;
	uint64_t last_reload_ns;
	struct al_rec *recs;
	size_t nrecs, cap_recs;
	struct al_event *evs;
	size_t nevs, cap_evs;
	str_id s_unknown;
	uint32_t f_mmap; /* the leaf frame of an anonymous mapping */
	bool oom;
};

/* The profile stack of return addresses ips[0..n) (innermost first) in process pid: a stack seen before (most
 * samples come from a few call sites) is looked up by its addresses alone; a new one is made of raw frames, the
 * profiler's own innermost frames trimmed. PROFILE_NOMEM when out of memory. */
static uint32_t stack_of(struct al_state *st, const struct alloc_slot *s, const uint64_t *ips, size_t n)
{
	uint64_t key[MAX_FRAMES + 1];
	key[0] = (uint64_t)s->pid << 32 | s->kind;
	memcpy(key + 1, ips + 1, (n ? n - 1 : 0) * sizeof *ips); /* ips[0] is in the profiler: not part of the key */
	bool added;
	uint32_t id = intern(&st->seen, (const char *)key, (n ? n : 1) * sizeof *key, &added);
	if (id == INTERN_NOMEM)
		return PROFILE_NOMEM;
	if (!added)
		return st->seen_stack[id];
	if (!ALLOC_GROW(st->seen_stack, (size_t)id + 1, st->cap_seen))
		return PROFILE_NOMEM;
	pid_t pid = (pid_t)s->pid;
	const struct map_entry *ms[MAX_FRAMES];
	bool reloaded = false;
	for (size_t i = 0; i < n; i++)
		ms[i] = backend_find_map(st->maps, &st->last_reload_ns, pid, i ? ips[i] - 1 : ips[i], &reloaded);
	size_t inner = 0; /* the profiler's frames (take_sample, malloc, ...) are the innermost ones */
	while (inner < n && ms[inner] && strcmp(ms[inner]->path, st->lib_path) == 0)
		inner++;
	if (inner == n)
		inner = 0;
	uint32_t frames[MAX_FRAMES + 1];
	size_t nf = 0;
	for (size_t k = n; k-- > inner;)
		frames[nf++] = backend_user_frame(st->p, ms[k], ips[k], k > inner || inner > 0, st->s_unknown);
	if (s->kind == ALLOC_MMAP)
		frames[nf++] = st->f_mmap;
	for (size_t k = 0; k < nf; k++)
		if (frames[k] == PROFILE_NOMEM)
			return PROFILE_NOMEM;
	return st->seen_stack[id] = profile_stack_from(st->p, frames, nf);
}

/* Unwinds one sampled allocation into a stack of raw frames (the profiler's own frames trimmed) and keeps it. */
static void consume_alloc(struct al_state *st, const struct alloc_slot *s)
{
	pid_t pid = (pid_t)s->pid;
	backend_ensure_maps(st->maps, &st->loaded, pid, false);
	struct unwind_regs regs;
	memcpy(regs.r, s->regs, sizeof regs.r);
	uint32_t len = s->stack_len <= st->h->stack_bytes ? s->stack_len : st->h->stack_bytes;
	const uint8_t *stack = (const uint8_t *)(s + 1);
	uint64_t ips[MAX_FRAMES];
	size_t n = st->opts->unwind == UNWIND_FP ? unwind_fp(&regs, stack, len, ips, MAX_FRAMES)
						  : unwind_dwarf(st->unw, pid, &regs, stack, len, ips, MAX_FRAMES);
	uint32_t sid = stack_of(st, s, ips, n);
	if (sid == PROFILE_NOMEM)
		return (void)(st->oom = true);
	uint32_t thread = backend_thread(st->p, &st->threads, pid, (pid_t)s->tid);
	if (sid == PROFILE_NOMEM || thread == PROFILE_NOMEM || !ALLOC_GROW(st->recs, st->nrecs + 1, st->cap_recs))
		return (void)(st->oom = true);
	st->recs[st->nrecs++] = (struct al_rec){ s->id, 0, s->size, s->time_ns, sid, thread, (uint32_t)pid };
}

static void consume_event(struct al_state *st, const struct alloc_event_slot *s)
{
	pid_t pid = (pid_t)s->pid;
	if (s->type == EV_START) { /* a new image in this process (exec): its maps and its name are new */
		maps_forget(st->maps, pid);
		backend_ensure_maps(st->maps, &st->loaded, pid, true);
		char name[PROCFS_COMM_MAX];
		if (procfs_comm(pid, pid, name, sizeof name) && profile_thread(st->p, (uint32_t)pid, (uint32_t)pid, name) ==
								     PROFILE_NOMEM)
			st->oom = true;
	} else if (s->type == EV_FORK && s->id > 0 && s->id < (uint64_t)INT32_MAX) {
		backend_ensure_maps(st->maps, &st->loaded, (pid_t)s->id, false);
		maps_fork(st->maps, (pid_t)s->id, pid);
		hmap_put(&st->loaded, (uint64_t)pid, 1);
	}
	if (!ALLOC_GROW(st->evs, st->nevs + 1, st->cap_evs))
		return (void)(st->oom = true);
	st->evs[st->nevs++] = (struct al_event){ s->when, s->id, s->pid, s->type };
}

/* Consumes what both rings hold in the order of the clock (an exec or a fork changes the maps the allocations
 * after it are unwound with); returns how many allocation slots. */
static size_t drain(struct al_state *st)
{
	struct alloc_hdr *h = st->h;
	size_t done = 0;
	for (;;) {
		const struct alloc_event_slot *ev = alloc_peek(h, &h->events, st->tail_e);
		const struct alloc_slot *s = alloc_peek(h, &h->allocs, st->tail_a);
		if (!ev && !s)
			break;
		if (s && (!ev || s->id < ev->when)) {
			consume_alloc(st, s);
			alloc_release(h, &h->allocs, st->tail_a++);
			if (++done % 64 == 0) /* now and then: the line is the producers' to read */
				atomic_store_explicit(&h->allocs_done, st->tail_a, memory_order_release);
		} else {
			consume_event(st, ev);
			alloc_release(h, &h->events, st->tail_e++);
		}
	}
	atomic_store_explicit(&h->allocs_done, st->tail_a, memory_order_release);
	return done;
}

/* After the target ended: slots claimed but never published (a process killed mid-sample) are skipped. */
static void drain_final(struct al_state *st)
{
	drain(st);
	struct alloc_ring *rings[] = { &st->h->allocs, &st->h->events };
	uint64_t *tails[] = { &st->tail_a, &st->tail_e };
	for (int r = 0; r < 2; r++) {
		uint64_t head = atomic_load_explicit(&rings[r]->head, memory_order_acquire);
		while (*tails[r] < head) {
			if (!alloc_peek(st->h, rings[r], *tails[r]))
				(*tails[r])++;
			else
				drain(st);
		}
	}
}

static enum plumb_err setup_shared(struct al_state *st, struct perr *e)
{
	const struct record_opts *o = st->opts;
	uint32_t stack_bytes = (uint32_t)(o->stack_bytes ? o->stack_bytes : DEFAULT_STACK);
	if (stack_bytes > 65536)
		stack_bytes = 65536;
	uint32_t aslot = (uint32_t)((sizeof(struct alloc_slot) + stack_bytes + 63) & ~(size_t)63);
	uint32_t eslot = (uint32_t)sizeof(struct alloc_event_slot);
	uint32_t aoff = ALLOC_HDR_SIZE, eoff = aoff + NALLOC_SLOTS * aslot;
	st->len = (size_t)eoff + (size_t)NEVENT_SLOTS * eslot;
	int fd;
	void *m;
	enum plumb_err rc = backend_shared_memfd("plumb-alloc-ring", st->len, "alloc", "the shared rings", &fd, &m, e);
	if (rc)
		return rc;
	struct alloc_hdr *h = m;
	h->magic = ALLOC_MAGIC;
	h->version = ALLOC_VERSION;
	h->stack_bytes = stack_bytes;
	h->interval = o->alloc_interval ? o->alloc_interval : ALLOC_DEFAULT_INTERVAL;
	alloc_ring_init(h, &h->allocs, aoff, NALLOC_SLOTS, aslot);
	alloc_ring_init(h, &h->events, eoff, NEVENT_SLOTS, eslot);
	atomic_store(&h->enabled, 1);
	st->h = h;
	st->fd = fd;
	return PLUMB_OK;
}

static void env_free(char **env)
{
	for (int i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* LD_PRELOAD (ours first), the shared memory, the debug switch and --stages over our environment; NULL when
 * out of memory. */
static char **child_env(const struct al_state *st)
{
	char **env = calloc(6, sizeof *env);
	if (!env)
		return NULL;
	const char *old = getenv("LD_PRELOAD");
	int n = 0;
	bool ok = (old && *old ? asprintf(&env[n], "LD_PRELOAD=%s:%s", st->lib_path, old)
			       : asprintf(&env[n], "LD_PRELOAD=%s", st->lib_path)) >= 0;
	ok = ok && ++n && asprintf(&env[n], "%s=%d", ALLOC_ENV_FD, st->fd) >= 0;
	ok = ok && ++n && (env[n] = strdup("PLUMB_DEBUG=1")) != NULL;
	if (ok && st->opts->stages_path)
		ok = ++n && asprintf(&env[n], "PLUMB_STAGES=%s", st->opts->stages_path) >= 0;
	if (!ok) {
		env[n] = NULL;
		env_free(env);
		return NULL;
	}
	return env;
}

static enum plumb_err al_launch(struct al_state *st, struct record_result *res, struct perr *e)
{
	char looked[PERR_MSG_MAX / 2];
	if (!inprocess_find_preload(st->lib_path, sizeof st->lib_path, looked, sizeof looked))
		return perr_set(e, PLUMB_ENOENT, "alloc: libplumb-preload.so not found: %s", looked);
	enum plumb_err rc = setup_shared(st, e);
	if (rc)
		return rc;
	st->maps = maps_new();
	if (st->maps)
		maps_use_files(st->maps, st->opts->files);
	st->unw = st->maps ? unwinder_new(st->maps) : NULL;
	st->s_unknown = profile_intern_cstr(st->p, "[unknown]");
	struct frame f = { 0 };
	f.func = profile_intern_cstr(st->p, "[anonymous mmap]");
	st->f_mmap = profile_frame(st->p, &f);
	char **env = child_env(st);
	if (!st->maps || !st->unw || !env || st->f_mmap == PROFILE_NOMEM) {
		env_free(env);
		return perr_set(e, PLUMB_ENOMEM, "alloc: out of memory");
	}
	fflush(NULL);
	st->child.argv = (const char *const *)st->opts->argv;
	st->child.env = (const char *const *)env;
	res->start_ns = mono_ns();
	const struct record_opts *opts = st->opts;
	backend_child_opts(opts, &st->child); /* as backend_command gives a command */
	rc = backend_start(opts, &st->child, e);
	env_free(env);
	return rc;
}

static void al_loop(struct al_state *st, struct record_result *res)
{
	const struct record_opts *opts = st->opts;
	uint64_t deadline = backend_deadline(opts, res->start_ns);
	for (;;) {
		size_t got = drain(st);
		backend_progress(opts, st->p, res->start_ns, st->nrecs);
		if (backend_loop_done(opts, &st->child, deadline, &st->status, &st->stopped, res))
			break;
		/* Wake up rarely: on a loaded machine each wake-up may take the CPU from the target. Drain without a
		 * pause while the ring fills faster than that; a producer that finds it full, or a process waiting at its
		 * exit for the drain, rings the doorbell; while one is exiting, poll often to see it go. */
		if (got < NALLOC_SLOTS / 4) {
			uint32_t bell = atomic_load_explicit(&st->h->doorbell, memory_order_acquire);
			bool exiting = atomic_load_explicit(&st->h->exiting, memory_order_relaxed) != 0;
			struct timespec nap = ns_timespec(exiting ? 1000000 : got > NALLOC_SLOTS / 32 ? 2000000 : 10000000);
			syscall(SYS_futex, &st->h->doorbell, FUTEX_WAIT, bell, &nap, NULL, 0);
		}
	}
	res->end_ns = mono_ns();
	/* sampling ends first: a process ending now must not wait at its exit for a drain that comes after it */
	atomic_store(&st->h->enabled, 0);
	if (st->stopped)
		backend_end_command(opts, &st->child, res);
	drain_final(st);
}

static int by_id(const void *a, const void *b)
{
	const struct al_rec *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

struct delta {
	uint64_t when;
	double bytes;
	uint32_t pid;
};

static int by_when(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;
	return x->when < y->when ? -1 : x->when > y->when;
}

/* qsort, after one pass that finds the array already in order: one thread's records and frees come out of the
 * rings in the order of the clock, and sorting 40,000 of them and their 80,000 changes took 14 ms of the 33 ms
 * between a churn's end and plumb's. */
static void sort_unless_sorted(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	const char *b = base;
	for (size_t i = 1; i < n; i++)
		if (cmp(b + (i - 1) * size, b + i * size) > 0) {
			qsort(base, n, size, cmp);
			return;
		}
}

/* Frees and execs onto the records; false when out of memory. */
static bool apply_events(struct al_state *st)
{
	struct hmap index = HMAP_INIT;
	sort_unless_sorted(st->recs, st->nrecs, sizeof *st->recs, by_id);
	for (size_t i = 0; i < st->nrecs; i++)
		if (!hmap_put(&index, st->recs[i].id, (uint32_t)i))
			return hmap_release(&index), false;
	for (size_t i = 0; i < st->nevs; i++) {
		const struct al_event *ev = &st->evs[i];
		uint32_t r;
		if (ev->type == EV_FREE && hmap_get(&index, ev->id, &r) && !st->recs[r].freed_at &&
		    ev->when > st->recs[r].id)
			st->recs[r].freed_at = ev->when;
	}
	hmap_release(&index);
	/* an exec ends every block of the image before it */
	for (size_t i = 0; i < st->nevs; i++) {
		const struct al_event *ev = &st->evs[i];
		if (ev->type != EV_START)
			continue;
		for (size_t k = 0; k < st->nrecs; k++) {
			struct al_rec *r = &st->recs[k];
			if (r->pid == ev->pid && r->id < ev->when && (!r->freed_at || r->freed_at > ev->when))
				r->freed_at = ev->when;
		}
	}
	return true;
}

/* Per process: the clock number at which its estimated bytes in use peaked (pid -> index into peaks). */
static bool find_peaks(struct al_state *st, const double *bytes, struct hmap *pids, uint64_t **peak_at)
{
	/* the frees, sorted apart, merged into the allocations (in the order of their ids: apply_events sorted them) */
	struct delta *d = malloc((3 * st->nrecs + 1) * sizeof *d);
	size_t nd = 0, nf = 0, npids = 0;
	double *cur = NULL, *best = NULL;
	*peak_at = NULL;
	if (!d)
		return false;
	struct delta *frees = d + 2 * st->nrecs;
	for (size_t i = 0; i < st->nrecs; i++) {
		if (st->recs[i].freed_at)
			frees[nf++] = (struct delta){ st->recs[i].freed_at, -bytes[i], st->recs[i].pid };
		uint32_t ix;
		if (!hmap_get(pids, st->recs[i].pid, &ix) && !hmap_put(pids, st->recs[i].pid, (uint32_t)npids++))
			return free(d), false;
	}
	sort_unless_sorted(frees, nf, sizeof *frees, by_when);
	for (size_t a = 0, f = 0; a < st->nrecs || f < nf;) {
		if (f == nf || (a < st->nrecs && st->recs[a].id <= frees[f].when)) {
			d[nd++] = (struct delta){ st->recs[a].id, bytes[a], st->recs[a].pid };
			a++;
		} else {
			d[nd++] = frees[f++];
		}
	}
	cur = calloc(npids + 1, sizeof *cur);
	best = calloc(npids + 1, sizeof *best);
	*peak_at = calloc(npids + 1, sizeof **peak_at);
	bool ok = cur && best && *peak_at;
	for (size_t i = 0; ok && i < nd; i++) {
		uint32_t ix;
		hmap_get(pids, d[i].pid, &ix);
		cur[ix] += d[i].bytes;
		if (cur[ix] > best[ix]) {
			best[ix] = cur[ix];
			(*peak_at)[ix] = d[i].when;
		}
	}
	free(d);
	free(cur);
	free(best);
	return ok;
}

static const char *const col_names[] = { "alloc_objects", "alloc_space", "inuse_objects", "inuse_space",
					 "peak_objects",  "peak_space",  "freed_objects", "freed_space" };
static const char *const col_units[] = { "count", "bytes", "count", "bytes", "count", "bytes", "count", "bytes" };

/* What was sampled, for the summary line. */
struct al_totals {
	uint64_t sampled;
	double alloc_bytes, inuse_bytes, inuse_objects, peak_bytes;
};

/* The replay: every record's estimate into the profile's weight (bytes allocated) and columns. */
static bool build_profile(struct al_state *st, struct al_totals *t)
{
	double R = (double)st->h->interval;
	double *bytes = malloc((st->nrecs + 1) * sizeof *bytes), *objs = malloc((st->nrecs + 1) * sizeof *objs);
	struct hmap pids = HMAP_INIT;
	uint64_t *peak_at = NULL;
	bool ok = bytes && objs && apply_events(st);
	for (size_t i = 0; ok && i < st->nrecs; i++) {
		double sz = (double)st->recs[i].size, prob = -expm1(-sz / R);
		objs[i] = prob > 0 ? 1.0 / prob : 0;
		bytes[i] = prob > 0 ? sz / prob : 0;
	}
	ok = ok && find_peaks(st, bytes, &pids, &peak_at);
	ok = ok && profile_set_values(st->p, 8, col_names, col_units, st->h->interval);
	memset(t, 0, sizeof *t);
	for (size_t i = 0; ok && i < st->nrecs; i++) {
		const struct al_rec *r = &st->recs[i];
		uint32_t ix = 0;
		hmap_get(&pids, r->pid, &ix);
		bool live = r->freed_at == 0;
		bool at_peak = r->id <= peak_at[ix] && (live || r->freed_at > peak_at[ix]);
		uint64_t ob = (uint64_t)llround(objs[i]), by = (uint64_t)llround(bytes[i]);
		uint64_t v[8] = { ob, by, live ? ob : 0, live ? by : 0, at_peak ? ob : 0, at_peak ? by : 0,
				  live ? 0 : ob, live ? 0 : by };
		/* the profile's clock is CLOCK_MONOTONIC, as the target's (meta.clock_origin_ns is time zero) */
		ok = profile_add_weighted(st->p, r->stack, r->thread, r->time_ns, by, 1) &&
		     profile_add_values(st->p, r->stack, r->thread, v);
		t->sampled++;
		t->alloc_bytes += bytes[i];
		if (live) {
			t->inuse_bytes += bytes[i];
			t->inuse_objects += objs[i];
		}
		if (at_peak)
			t->peak_bytes += bytes[i];
	}
	free(bytes);
	free(objs);
	free(peak_at);
	hmap_release(&pids);
	return ok;
}

/* "5.0 GiB", "512 KiB", "100 B": binary units, one decimal unless whole. */
static void bytes_text(char *buf, size_t n, double v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v == floor(v))
		snprintf(buf, n, "%.0f %s", v, units[u]);
	else
		snprintf(buf, n, "%.1f %s", v, units[u]);
}

static void summarize(const struct al_state *st, const struct al_totals *t, struct record_result *res)
{
	char sampled[32], total[32], every[32], inuse[32], blocks[32], peak[32];
	str_commas(sampled, sizeof sampled, t->sampled);
	bytes_text(total, sizeof total, t->alloc_bytes);
	bytes_text(every, sizeof every, (double)st->h->interval);
	bytes_text(inuse, sizeof inuse, t->inuse_bytes);
	str_commas(blocks, sizeof blocks, (uint64_t)llround(t->inuse_objects));
	bytes_text(peak, sizeof peak, t->peak_bytes);
	uint64_t lost = atomic_load(&st->h->lost);
	snprintf(res->summary, sizeof res->summary,
		 "Sampled %s allocation%s of %s (one per %s); %s in use at exit in %s block%s, %s at the peak; %llu lost.",
		 sampled, t->sampled == 1 ? "" : "s", total, every, inuse, blocks,
		 llround(t->inuse_objects) == 1 ? "" : "s", peak, (unsigned long long)lost);
	snprintf(res->limits, sizeof res->limits,
		 "alloc mode: weights are estimated bytes allocated (pprof also has inuse_space, peak_space, freed_space "
		 "and their objects); mmap/munmap of anonymous memory is its own frame; blocks allocated before the "
		 "profiler started are not seen");
}

static enum plumb_err al_run(const struct record_opts *opts, struct profile *p, struct record_result *res,
			     struct perr *e)
{
	if (opts->target != TARGET_COMMAND)
		return perr_set(e, PLUMB_EINVAL,
				"--mode alloc profiles a command it launches only (-- COMMAND), not --pid, --call or --all");
	struct al_state st = { 0 };
	st.opts = opts;
	st.p = p;
	st.fd = -1;
	st.child = (struct child)CHILD_INIT;
	st.seen = (struct interner)INTERNER_INIT;
	enum plumb_err rc = al_launch(&st, res, e);
	if (!rc) {
		al_loop(&st, res);
		if (!atomic_load(&st.h->attached) && !st.stopped)
			rc = perr_set(e, PLUMB_ENOENT,
				      "alloc: %s did not load libplumb-preload.so (a statically linked or set-user-ID program "
				      "cannot be preloaded)", opts->argv[0]);
		else if (!st.stopped)
			backend_ended_with(res, st.status);
	}
	struct al_totals t;
	if (!rc && (st.oom || !build_profile(&st, &t)))
		rc = perr_set(e, PLUMB_ENOMEM, "alloc: out of memory");
	if (!rc) {
		backend_meta(p, "alloc", backend_unwinder_name(opts), st.nrecs, atomic_load(&st.h->lost));
		struct profile_meta *m = profile_meta(p);
		m->weight_unit = profile_intern_cstr(p, "bytes");
		summarize(&st, &t, res);
	}
	backend_kill_failed(rc, &st.child, res, st.stopped);
	unwinder_free(st.unw);
	maps_free(st.maps);
	hmap_release(&st.loaded);
	hmap_release(&st.threads);
	interner_release(&st.seen);
	free(st.seen_stack);
	free(st.recs);
	free(st.evs);
	if (st.h)
		munmap(st.h, st.len);
	if (st.fd >= 0)
		close(st.fd);
	return rc;
}

/* Chosen by --mode alloc (record names it); never automatically. */
const struct backend backend_alloc = {
	.name = "alloc",
	.run = al_run,
	.forced_only = true,
	.targets = BACKEND_TARGET(TARGET_COMMAND),
};
