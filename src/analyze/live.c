/* live.c — a growing raw profile read as a session and windows of it (live.h). Raw counts only ever grow and keep
 * their ids (profile.h), so an update is each count's growth since the last one (the window); a view walks the
 * raw stacks it shows, outermost frame first, resolving each raw frame the first time any view needs it and
 * keeping what it became for the rest of the session. */
#include "analyze/live.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"

struct live {
	struct sym_resolver *sym;
	struct profile *frames;       /* the resolved frames (and their strings); no samples */
	/* raw frame i became frames frame_ids[frame_first[i] .. + frame_count[i]) (outermost first); a count of 0
	 * is a frame not resolved yet */
	uint32_t *frame_first, *frame_count;
	size_t cap_frames;
	uint32_t *frame_ids;
	size_t nids, cap_ids;
	size_t nresolved;
	const struct profile *raw;    /* the session, as of the last update (borrowed) */
	uint64_t *raw_seen;           /* raw count i's weight at the last update */
	size_t nseen, cap_seen;
	struct profile_count *window; /* (raw stack, raw thread, growth) of the last window */
	size_t nwindow, cap_window;
	uint64_t window_total, session_total;
};

struct live *live_new(const struct sym_opts *opts)
{
	struct live *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	l->sym = sym_resolver_new(opts);
	l->frames = profile_new();
	if (!l->sym || !l->frames) {
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
	profile_free(l->frames);
	free(l->frame_first);
	free(l->frame_count);
	free(l->frame_ids);
	free(l->raw_seen);
	free(l->window);
	free(l);
}

uint64_t live_window_total(const struct live *l)
{
	return l->window_total;
}

uint64_t live_session_total(const struct live *l)
{
	return l->session_total;
}

size_t live_resolved(const struct live *l)
{
	return l->nresolved;
}

enum plumb_err live_update(struct live *l, const struct profile *raw, struct perr *e)
{
	size_t n;
	const struct profile_count *c = profile_counts(raw, &n);
	if (!ALLOC_GROW(l->raw_seen, n, l->cap_seen))
		return perr_set(e, PLUMB_ENOMEM, "out of memory reading the samples");
	for (; l->nseen < n; l->nseen++)
		l->raw_seen[l->nseen] = 0;
	l->raw = raw;
	l->nwindow = 0;
	l->window_total = 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i].weight <= l->raw_seen[i])
			continue;
		if (!ALLOC_GROW(l->window, l->nwindow + 1, l->cap_window))
			return perr_set(e, PLUMB_ENOMEM, "out of memory reading the samples");
		uint64_t grew = c[i].weight - l->raw_seen[i];
		l->window[l->nwindow++] = (struct profile_count){ .stack = c[i].stack, .thread = c[i].thread, .weight = grew };
		l->window_total += grew;
		l->raw_seen[i] = c[i].weight;
	}
	l->session_total = profile_total_weight(raw);
	return PLUMB_OK;
}

/* The resolved frames of raw frame f (resolving it the first time): *ids into l->frame_ids, *n of them; false
 * when out of memory. */
static bool resolve(struct live *l, uint32_t f, const uint32_t **ids, uint32_t *n)
{
	size_t nf = profile_nframes(l->raw);
	if (nf > l->cap_frames) {
		size_t old = l->cap_frames;
		if (!ALLOC_GROW(l->frame_first, nf, l->cap_frames) || !REALLOC_ARRAY(l->frame_count, l->cap_frames))
			return false;
		memset(l->frame_count + old, 0, (l->cap_frames - old) * sizeof *l->frame_count);
	}
	if (!l->frame_count[f]) {
		if (!ALLOC_GROW(l->frame_ids, l->nids + SYM_MAX_FRAMES, l->cap_ids))
			return false;
		uint32_t *out = l->frame_ids + l->nids;
		size_t k = sym_resolver_frame(l->sym, l->raw, f, l->frames, out, SYM_MAX_FRAMES);
		for (size_t i = 0; i < k; i++)
			if (out[i] == PROFILE_NOMEM)
				return false;
		if (!k)
			return false;
		l->frame_first[f] = (uint32_t)l->nids;
		l->frame_count[f] = (uint32_t)k;
		l->nids += k;
		l->nresolved++;
	}
	*ids = l->frame_ids + l->frame_first[f];
	*n = l->frame_count[f];
	return true;
}

/* ---- a copy for another thread ----------------------------------------------------------------------- */

struct live_copy {
	struct profile *p;
	uint64_t *seen;  /* raw count i's weight at the last take */
	size_t nseen, cap_seen;
};

struct live_copy *live_copy_new(void)
{
	struct live_copy *c = calloc(1, sizeof *c);
	if (c && !(c->p = profile_new())) {
		free(c);
		c = NULL;
	}
	return c;
}

void live_copy_free(struct live_copy *c)
{
	if (!c)
		return;
	profile_free(c->p);
	free(c->seen);
	free(c);
}

const struct profile *live_copy_profile(const struct live_copy *c)
{
	return c->p;
}

/* Raw frames, stacks and threads are all distinct, and added here in raw's order, so each gets raw's id. */
static bool copy_new_items(struct profile *dst, const struct profile *raw)
{
	for (size_t i = profile_nframes(dst); i < profile_nframes(raw); i++) {
		struct frame f = *profile_frame_get(raw, (uint32_t)i);
		f.func = profile_intern_cstr(dst, profile_str(raw, f.func));
		f.file = profile_intern_cstr(dst, profile_str(raw, f.file));
		f.module = profile_intern_cstr(dst, profile_str(raw, f.module));
		if (profile_frame(dst, &f) != i)
			return false;
	}
	for (size_t i = profile_nstacks(dst); i < profile_nstacks(raw); i++) {
		uint32_t parent = profile_stack_parent(raw, (uint32_t)i), frame = profile_stack_frame(raw, (uint32_t)i);
		if (profile_stack(dst, parent, frame) != i)
			return false;
	}
	for (size_t i = 0; i < profile_nthreads(raw); i++) { /* the names of known ones may have changed */
		const struct profile_thread *t = profile_thread_get(raw, (uint32_t)i);
		if (profile_thread(dst, t->pid, t->tid, profile_str(raw, t->name)) != i)
			return false;
	}
	return true;
}

enum plumb_err live_copy_take(struct live_copy *c, const struct profile *raw, struct perr *e)
{
	size_t n;
	const struct profile_count *counts = profile_counts(raw, &n);
	if (!copy_new_items(c->p, raw) || !ALLOC_GROW(c->seen, n, c->cap_seen))
		return perr_set(e, PLUMB_ENOMEM, "out of memory copying the samples");
	for (; c->nseen < n; c->nseen++)
		c->seen[c->nseen] = 0;
	/* a count is new with a weight above 0, so the copy's counts come in raw's order too */
	for (size_t i = 0; i < n; i++) {
		if (counts[i].weight <= c->seen[i])
			continue;
		if (!profile_add_sample(c->p, counts[i].stack, counts[i].thread, 0, counts[i].weight - c->seen[i]))
			return perr_set(e, PLUMB_ENOMEM, "out of memory copying the samples");
		c->seen[i] = counts[i].weight;
	}
	return PLUMB_OK;
}

/* ---- views ------------------------------------------------------------------------------------------- */

/* Building a view: what of the session was copied into it already, by raw stack and by resolved frame. */
struct viewer {
	struct live *l;
	struct profile *dst;
	struct hmap frames, stacks, threads;
	uint32_t *path;
	size_t cap_path;
};

static uint32_t view_frame(struct viewer *v, uint32_t id)
{
	uint32_t out;
	if (hmap_get(&v->frames, id, &out))
		return out;
	const struct profile *src = v->l->frames;
	struct frame f = *profile_frame_get(src, id);
	f.func = profile_intern_cstr(v->dst, profile_str(src, f.func));
	f.file = profile_intern_cstr(v->dst, profile_str(src, f.file));
	f.module = profile_intern_cstr(v->dst, profile_str(src, f.module));
	if (f.func == PROFILE_NOMEM || f.file == PROFILE_NOMEM || f.module == PROFILE_NOMEM)
		return PROFILE_NOMEM;
	out = profile_frame(v->dst, &f);
	if (out != PROFILE_NOMEM && !hmap_put(&v->frames, id, out))
		return PROFILE_NOMEM;
	return out;
}

/* The view's stack for raw stack `stack`: its raw frames, outermost first, each resolved into its frames. */
static uint32_t view_stack(struct viewer *v, uint32_t stack)
{
	const struct profile *raw = v->l->raw;
	size_t depth = 0;
	uint32_t node = PROFILE_ROOT, known;
	/* up to the outermost frame, or to the nearest stack in the view already */
	for (uint32_t s = stack; s != PROFILE_ROOT; s = profile_stack_parent(raw, s)) {
		if (hmap_get(&v->stacks, s, &known)) {
			node = known;
			break;
		}
		if (!ALLOC_GROW(v->path, depth + 1, v->cap_path))
			return PROFILE_NOMEM;
		v->path[depth++] = s;
	}
	while (depth-- > 0) {
		const uint32_t *ids;
		uint32_t n;
		if (!resolve(v->l, profile_stack_frame(raw, v->path[depth]), &ids, &n))
			return PROFILE_NOMEM;
		for (uint32_t k = 0; k < n && node != PROFILE_NOMEM; k++) {
			uint32_t f = view_frame(v, ids[k]);
			node = f == PROFILE_NOMEM ? PROFILE_NOMEM : profile_stack(v->dst, node, f);
		}
		if (node == PROFILE_NOMEM || !hmap_put(&v->stacks, v->path[depth], node))
			return PROFILE_NOMEM;
	}
	return node;
}

static uint32_t view_thread(struct viewer *v, uint32_t id)
{
	uint32_t out;
	if (hmap_get(&v->threads, id, &out))
		return out;
	const struct profile_thread *t = profile_thread_get(v->l->raw, id);
	out = profile_thread(v->dst, t->pid, t->tid, profile_str(v->l->raw, t->name));
	if (out != PROFILE_NOMEM && !hmap_put(&v->threads, id, out))
		return PROFILE_NOMEM;
	return out;
}

enum plumb_err live_view(struct live *l, bool window, uint32_t pid, struct profile **out, struct perr *e)
{
	struct viewer v = { .l = l, .frames = HMAP_INIT, .stacks = HMAP_INIT, .threads = HMAP_INIT };
	size_t n = l->nwindow;
	const struct profile_count *counts = l->window;
	if (!window && l->raw)
		counts = profile_counts(l->raw, &n);
	else if (!window)
		n = 0;
	v.dst = profile_new();
	bool ok = v.dst != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		if (pid && profile_thread_get(l->raw, counts[i].thread)->pid != pid)
			continue;
		uint32_t stack = view_stack(&v, counts[i].stack), thread = view_thread(&v, counts[i].thread);
		ok = stack != PROFILE_NOMEM && thread != PROFILE_NOMEM &&
		     profile_add_sample(v.dst, stack, thread, 0, counts[i].weight);
	}
	hmap_release(&v.frames);
	hmap_release(&v.stacks);
	hmap_release(&v.threads);
	free(v.path);
	if (!ok) {
		profile_free(v.dst);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	*out = v.dst;
	return PLUMB_OK;
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
	const struct profile *s = l->raw;
	size_t nc = 0, np = 0;
	*out = NULL;
	*n = 0;
	if (!s)
		return PLUMB_OK;
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
