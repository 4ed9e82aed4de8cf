/* live.c — a growing raw profile turned into a symbolized session and windows of it (live.h). Raw frames, stacks
 * and counts only ever grow and keep their ids (profile.h), so each update translates the frames and stacks past
 * the ones it has seen (a stack's parent always has a smaller id) and takes each count's growth since the last
 * update: that growth is added to the session and kept as the window. */
#include "analyze/live.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"

struct live {
	struct sym_resolver *sym;
	struct profile *session;
	/* raw frame i became session frames frame_ids[frame_first[i] .. + frame_count[i]) (outermost first) */
	uint32_t *frame_first, *frame_count;
	size_t nframes, cap_frames;
	uint32_t *frame_ids;
	size_t nids, cap_ids;
	uint32_t *stack_map;          /* raw stack -> session stack */
	size_t nstacks, cap_stacks;
	uint32_t *thread_map;         /* raw thread -> session thread */
	size_t cap_threads;
	uint64_t *raw_seen;           /* raw count i's weight at the last update */
	size_t nseen, cap_seen;
	struct profile_count *window; /* (session stack, session thread, growth) of the last window */
	size_t nwindow, cap_window;
	uint64_t window_total;
};

struct live *live_new(const struct sym_opts *opts)
{
	struct live *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->sym = sym_resolver_new(opts);
	l->session = profile_new();
	if (!l->sym || !l->session) {
		live_free(l);
		return NULL;
	}
	return l;
}

void live_free(struct live *l)
{
	if (!l)
		return;
	sym_resolver_free(l->sym);
	profile_free(l->session);
	free(l->frame_first);
	free(l->frame_count);
	free(l->frame_ids);
	free(l->stack_map);
	free(l->thread_map);
	free(l->raw_seen);
	free(l->window);
	free(l);
}

const struct profile *live_session(const struct live *l)
{
	return l->session;
}

struct profile *live_session_edit(struct live *l)
{
	return l->session;
}

uint64_t live_window_total(const struct live *l)
{
	return l->window_total;
}

/* Symbolizes the raw frames not seen yet. */
static bool take_frames(struct live *l, const struct profile *raw)
{
	size_t n = profile_nframes(raw);
	if (!ALLOC_GROW(l->frame_first, n, l->cap_frames) || !REALLOC_ARRAY(l->frame_count, l->cap_frames))
		return false;
	for (; l->nframes < n; l->nframes++) {
		if (!ALLOC_GROW(l->frame_ids, l->nids + SYM_MAX_FRAMES, l->cap_ids))
			return false;
		uint32_t *ids = l->frame_ids + l->nids;
		size_t k = sym_resolver_frame(l->sym, raw, (uint32_t)l->nframes, l->session, ids, SYM_MAX_FRAMES);
		for (size_t i = 0; i < k; i++)
			if (ids[i] == PROFILE_NOMEM)
				return false;
		l->frame_first[l->nframes] = (uint32_t)l->nids;
		l->frame_count[l->nframes] = (uint32_t)k;
		l->nids += k;
	}
	return true;
}

/* Translates the raw stacks not seen yet (in id order: a parent comes before its children). */
static bool take_stacks(struct live *l, const struct profile *raw)
{
	size_t n = profile_nstacks(raw);
	if (!ALLOC_GROW(l->stack_map, n, l->cap_stacks))
		return false;
	if (l->nstacks == 0 && n > 0)
		l->stack_map[l->nstacks++] = PROFILE_ROOT;
	for (; l->nstacks < n; l->nstacks++) {
		uint32_t node = l->stack_map[profile_stack_parent(raw, (uint32_t)l->nstacks)];
		uint32_t f = profile_stack_frame(raw, (uint32_t)l->nstacks);
		for (uint32_t k = 0; f < l->nframes && k < l->frame_count[f] && node != PROFILE_NOMEM; k++)
			node = profile_stack(l->session, node, l->frame_ids[l->frame_first[f] + k]);
		if (node == PROFILE_NOMEM)
			return false;
		l->stack_map[l->nstacks] = node;
	}
	return true;
}

/* Maps every raw thread to its session thread (again each time: a thread may have been renamed). */
static bool take_threads(struct live *l, const struct profile *raw)
{
	size_t n = profile_nthreads(raw);
	if (!ALLOC_GROW(l->thread_map, n, l->cap_threads))
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct profile_thread *t = profile_thread_get(raw, (uint32_t)i);
		l->thread_map[i] = profile_thread(l->session, t->pid, t->tid, profile_str(raw, t->name));
		if (l->thread_map[i] == PROFILE_NOMEM)
			return false;
	}
	return true;
}

/* Each raw count's growth since the last update: into the session, and as the new window. */
static bool take_counts(struct live *l, const struct profile *raw)
{
	size_t n;
	const struct profile_count *c = profile_counts(raw, &n);
	if (!ALLOC_GROW(l->raw_seen, n, l->cap_seen))
		return false;
	for (; l->nseen < n; l->nseen++)
		l->raw_seen[l->nseen] = 0;
	l->nwindow = 0;
	l->window_total = 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i].weight <= l->raw_seen[i])
			continue;
		uint64_t grew = c[i].weight - l->raw_seen[i];
		uint32_t stack = c[i].stack < l->nstacks ? l->stack_map[c[i].stack] : PROFILE_ROOT;
		uint32_t thread = l->thread_map[c[i].thread];
		if (!ALLOC_GROW(l->window, l->nwindow + 1, l->cap_window) ||
		    !profile_add_sample(l->session, stack, thread, 0, grew))
			return false;
		l->window[l->nwindow++] = (struct profile_count){ stack, thread, grew };
		l->window_total += grew;
		l->raw_seen[i] = c[i].weight;
	}
	return true;
}

enum plumb_err live_update(struct live *l, const struct profile *raw, struct perr *e)
{
	if (!take_frames(l, raw) || !take_stacks(l, raw) || !take_threads(l, raw) || !take_counts(l, raw))
		return perr_set(e, PLUMB_ENOMEM, "out of memory reading the samples");
	return PLUMB_OK;
}

/* ---- views ------------------------------------------------------------------------------------------- */

/* Copying stacks of the session into a view: what was copied already, by session id. */
struct copier {
	const struct profile *src;
	struct profile *dst;
	struct hmap frames, stacks, threads;
	uint32_t *path;
	size_t cap_path;
};

static uint32_t copy_frame(struct copier *c, uint32_t id)
{
	uint32_t out;
	if (hmap_get(&c->frames, id, &out))
		return out;
	struct frame f = *profile_frame_get(c->src, id);
	f.func = profile_intern_cstr(c->dst, profile_str(c->src, f.func));
	f.file = profile_intern_cstr(c->dst, profile_str(c->src, f.file));
	f.module = profile_intern_cstr(c->dst, profile_str(c->src, f.module));
	if (f.func == PROFILE_NOMEM || f.file == PROFILE_NOMEM || f.module == PROFILE_NOMEM)
		return PROFILE_NOMEM;
	out = profile_frame(c->dst, &f);
	if (out != PROFILE_NOMEM && !hmap_put(&c->frames, id, out))
		return PROFILE_NOMEM;
	return out;
}

static uint32_t copy_stack(struct copier *c, uint32_t stack)
{
	size_t depth = 0;
	uint32_t node = PROFILE_ROOT, known;
	/* up to the outermost frame, or to the nearest stack copied already */
	for (uint32_t s = stack; s != PROFILE_ROOT; s = profile_stack_parent(c->src, s)) {
		if (hmap_get(&c->stacks, s, &known)) {
			node = known;
			break;
		}
		if (!ALLOC_GROW(c->path, depth + 1, c->cap_path))
			return PROFILE_NOMEM;
		c->path[depth++] = s;
	}
	while (depth-- > 0) {
		uint32_t f = copy_frame(c, profile_stack_frame(c->src, c->path[depth]));
		node = f == PROFILE_NOMEM ? PROFILE_NOMEM : profile_stack(c->dst, node, f);
		if (node == PROFILE_NOMEM || !hmap_put(&c->stacks, c->path[depth], node))
			return PROFILE_NOMEM;
	}
	return node;
}

static uint32_t copy_thread(struct copier *c, uint32_t id)
{
	uint32_t out;
	if (hmap_get(&c->threads, id, &out))
		return out;
	const struct profile_thread *t = profile_thread_get(c->src, id);
	out = profile_thread(c->dst, t->pid, t->tid, profile_str(c->src, t->name));
	if (out != PROFILE_NOMEM && !hmap_put(&c->threads, id, out))
		return PROFILE_NOMEM;
	return out;
}

/* Copies the counts of process pid (0: all) into a new profile. */
static enum plumb_err copy_counts(const struct profile *src, const struct profile_count *counts, size_t n,
				  uint32_t pid, struct profile **out, struct perr *e)
{
	struct copier c = { .src = src, .frames = HMAP_INIT, .stacks = HMAP_INIT, .threads = HMAP_INIT };
	c.dst = profile_new();
	bool ok = c.dst != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		if (pid && profile_thread_get(src, counts[i].thread)->pid != pid)
			continue;
		uint32_t stack = copy_stack(&c, counts[i].stack), thread = copy_thread(&c, counts[i].thread);
		ok = stack != PROFILE_NOMEM && thread != PROFILE_NOMEM &&
		     profile_add_sample(c.dst, stack, thread, 0, counts[i].weight);
	}
	if (ok) {
		const struct profile_meta *sm = profile_meta_const(src);
		struct profile_meta *dm = profile_meta(c.dst);
		dm->interval_ns = sm->interval_ns;
		dm->weight_unit = profile_intern_cstr(c.dst, profile_str(src, sm->weight_unit));
		ok = dm->weight_unit != PROFILE_NOMEM;
	}
	hmap_release(&c.frames);
	hmap_release(&c.stacks);
	hmap_release(&c.threads);
	free(c.path);
	if (!ok) {
		profile_free(c.dst);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	*out = c.dst;
	return PLUMB_OK;
}

enum plumb_err live_view(const struct live *l, bool window, uint32_t pid, const struct profile **view,
			 struct profile **owned, struct perr *e)
{
	*owned = NULL;
	if (!window && !pid) {
		*view = l->session;
		return PLUMB_OK;
	}
	size_t n = l->nwindow;
	const struct profile_count *counts = l->window;
	if (!window)
		counts = profile_counts(l->session, &n);
	enum plumb_err rc = copy_counts(l->session, counts, n, pid, owned, e);
	*view = *owned;
	return rc;
}

/* ---- processes --------------------------------------------------------------------------------------- */

static int proc_cmp(const void *a, const void *b)
{
	const struct live_proc *x = a, *y = b;
	if (x->window != y->window)
		return x->window > y->window ? -1 : 1;
	if (x->session != y->session)
		return x->session > y->session ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* The process of session thread id in procs (found through index, pid -> position), added when new. */
static struct live_proc *proc_of(const struct profile *s, uint32_t thread, struct live_proc *procs, size_t *n,
				 struct hmap *index)
{
	const struct profile_thread *t = profile_thread_get(s, thread);
	uint32_t at;
	if (!hmap_get(index, t->pid, &at)) {
		at = (uint32_t)*n;
		if (!hmap_put(index, t->pid, at))
			return NULL;
		procs[(*n)++] = (struct live_proc){ .pid = t->pid, .name = profile_str(s, t->name) };
	}
	if (t->tid == t->pid) /* the main thread names the process */
		procs[at].name = profile_str(s, t->name);
	return &procs[at];
}

enum plumb_err live_processes(const struct live *l, struct live_proc **out, size_t *n, struct perr *e)
{
	const struct profile *s = l->session;
	size_t nc, np = 0;
	const struct profile_count *c = profile_counts(s, &nc);
	struct live_proc *procs = calloc(profile_nthreads(s) + 1, sizeof *procs);
	struct hmap index = HMAP_INIT;
	bool ok = procs != NULL;
	for (size_t i = 0; ok && i < profile_nthreads(s); i++)
		ok = proc_of(s, (uint32_t)i, procs, &np, &index) != NULL;
	for (size_t i = 0; ok && i < nc; i++) {
		struct live_proc *p = proc_of(s, c[i].thread, procs, &np, &index);
		ok = p != NULL;
		if (ok)
			p->session += c[i].weight;
	}
	for (size_t i = 0; ok && i < l->nwindow; i++) {
		struct live_proc *p = proc_of(s, l->window[i].thread, procs, &np, &index);
		ok = p != NULL;
		if (ok)
			p->window += l->window[i].weight;
	}
	hmap_release(&index);
	if (!ok) {
		free(procs);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	/* threads without samples (none yet) are left out */
	size_t k = 0;
	for (size_t i = 0; i < np; i++)
		if (procs[i].session)
			procs[k++] = procs[i];
	qsort(procs, k, sizeof *procs, proc_cmp);
	*out = procs;
	*n = k;
	return PLUMB_OK;
}
