/* profile.c — the model's tables. Strings live in an interner (base/intern.h: copies in chunks, pointers never
 * move); every other table is an array indexed by id plus a hash table for dedup, so adding is amortized O(1). */
#include "profile/profile.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/idtab.h"
#include "base/intern.h"

struct stack_slot {
	uint32_t tag; /* the key's hash, upper half */
	uint32_t id;  /* 0: empty */
};

struct profile {
	struct interner strs;
	/* frames */
	struct frame *frames;
	size_t nframes, cap_frames;
	struct idtab frame_index;
	/* stacks */
	uint32_t *stack_parent, *stack_frame, *stack_depth;
	size_t nstacks, cap_stacks;
	struct stack_slot *sx; /* the stack index (below) */
	size_t sx_cap;
	/* threads */
	struct profile_thread *threads;
	size_t nthreads, cap_threads;
	struct hmap thread_index;
	/* samples */
	struct profile_count *counts;
	size_t ncounts, cap_counts;
	struct hmap count_index;
	struct profile_sample *timeline;
	size_t ntimeline, cap_timeline;
	bool keep_timeline;
	bool untimed;
	bool overflow;
	uint64_t total_weight, total_samples;
	struct profile_meta meta;
	/* value columns: nvalues per count, row i at values + i * nvalues */
	size_t nvalues;
	str_id value_name[PROFILE_MAX_VALUES], value_unit[PROFILE_MAX_VALUES];
	uint64_t values_period;
	uint64_t *values;
	size_t cap_values; /* rows */
	/* mappings (profile_add_mapping) */
	struct profile_mapping *mappings;
	size_t nmappings, cap_mappings;
	struct hmap mapping_index; /* hash of (start, path, pid) -> mapping id: a mapping added again */
	struct hmap module_mapping; /* module str id -> its mapping (profile_mapping_of) */
};

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->strs = (struct interner)INTERNER_INIT;
	if (profile_intern(p, "", 0) != 0) {
		profile_free(p);
		return NULL;
	}
	/* node 0: the root of the prefix tree */
	p->stack_parent = calloc(64, sizeof(uint32_t));
	p->stack_frame = calloc(64, sizeof(uint32_t));
	p->stack_depth = calloc(64, sizeof(uint32_t));
	if (!p->stack_parent || !p->stack_frame || !p->stack_depth) {
		profile_free(p);
		return NULL;
	}
	p->cap_stacks = 64;
	p->nstacks = 1;
	p->stack_parent[0] = PROFILE_ROOT;
	p->stack_frame[0] = UINT32_MAX;
	p->meta.weight_unit = profile_intern_cstr(p, "samples");
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	interner_release(&p->strs);
	free(p->frames);
	idtab_release(&p->frame_index);
	free(p->stack_parent);
	free(p->stack_frame);
	free(p->stack_depth);
	table_free(p->sx, p->sx_cap * sizeof *p->sx);
	free(p->threads);
	hmap_release(&p->thread_index);
	free(p->counts);
	hmap_release(&p->count_index);
	free(p->timeline);
	free(p->values);
	free(p->mappings);
	hmap_release(&p->mapping_index);
	hmap_release(&p->module_mapping);
	free(p);
}

str_id profile_intern(struct profile *p, const char *s, size_t len)
{
	char cut[PROFILE_STR_MAX + sizeof PROFILE_STR_CUT];
	if (len > PROFILE_STR_MAX) { /* a 200 MB symbol name in a perf map is not a label (docs/design.md §4.1) */
		size_t keep = PROFILE_STR_MAX;
		while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80)
			keep--; /* never cut inside a UTF-8 character */
		memcpy(cut, s, keep);
		memcpy(cut + keep, PROFILE_STR_CUT, sizeof PROFILE_STR_CUT - 1);
		s = cut;
		len = keep + sizeof PROFILE_STR_CUT - 1;
	}
	uint32_t id = intern(&p->strs, s, len, NULL);
	return id == INTERN_NOMEM ? PROFILE_NOMEM : id;
}

str_id profile_intern_cstr(struct profile *p, const char *s)
{
	return profile_intern(p, s ? s : "", s ? strlen(s) : 0);
}

const char *profile_str(const struct profile *p, str_id id)
{
	return id < intern_count(&p->strs) ? intern_str(&p->strs, id) : "";
}

size_t profile_nstrings(const struct profile *p)
{
	return intern_count(&p->strs);
}

static inline bool frame_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct frame *a = &((const struct profile *)ctx)->frames[id], *b = key;
	return a->func == b->func && a->file == b->file && a->module == b->module && a->line == b->line &&
	       a->addr == b->addr && a->kind == b->kind && a->inlined == b->inlined && a->offset == b->offset &&
	       a->insn == b->insn;
}

/* A user frame whose source file is Python code is a Python frame, whoever made it. */
static bool python_file(const struct profile *p, str_id file)
{
	if (!file || file >= intern_count(&p->strs))
		return false;
	size_t n = intern_len(&p->strs, file);
	return n > 3 && memcmp(intern_str(&p->strs, file) + n - 3, ".py", 3) == 0;
}

uint32_t profile_frame(struct profile *p, const struct frame *f)
{
	struct frame key = *f;
	memset(key.pad, 0, sizeof key.pad);
	if (key.kind == FRAME_USER && python_file(p, key.file))
		key.kind = FRAME_PYTHON;
	uint64_t h = hash_bytes(&key, sizeof key);
	uint32_t id = idtab_find(&p->frame_index, h, frame_eq, p, &key);
	if (id != IDTAB_NONE)
		return id;
	if (p->nframes >= PROFILE_NOMEM || !ALLOC_GROW(p->frames, p->nframes + 1, p->cap_frames))
		return PROFILE_NOMEM;
	id = (uint32_t)p->nframes;
	if (!idtab_add(&p->frame_index, h, id))
		return PROFILE_NOMEM;
	p->frames[p->nframes++] = key;
	return id;
}

const struct frame *profile_frame_get(const struct profile *p, uint32_t frame_id)
{
	return frame_id < p->nframes ? &p->frames[frame_id] : NULL;
}

size_t profile_nframes(const struct profile *p)
{
	return p->nframes;
}

/* ---- the stack index: (parent, frame) -> node ----
 * Slots of 8 bytes, (the hash's upper half, node id), id 0 empty (the root is never a child); the key is
 * compared in the node arrays on a matching tag. Kept at most half full. A path of new nodes is placed with
 * its slots prefetched first: the nodes are numbered in order, so their keys are known before they exist, and
 * a profile of stacks that share little (every node new) waits for memory once per batch, not once per node. */

static inline uint64_t stack_hash(uint32_t parent, uint32_t frame)
{
	return hash_u64((uint64_t)parent << 32 | frame);
}

static uint32_t sx_find(const struct profile *p, uint32_t parent, uint32_t frame)
{
	if (!p->sx_cap)
		return 0;
	uint64_t h = stack_hash(parent, frame);
	size_t mask = p->sx_cap - 1;
	uint32_t tag = (uint32_t)(h >> 32);
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		const struct stack_slot *s = &p->sx[i];
		if (!s->id)
			return 0;
		if (s->tag == tag && p->stack_parent[s->id] == parent && p->stack_frame[s->id] == frame)
			return s->id;
	}
}

static void sx_place(struct stack_slot *slots, size_t mask, uint64_t h, uint32_t id)
{
	size_t i = (size_t)h & mask;
	while (slots[i].id)
		i = (i + 1) & mask;
	slots[i].tag = (uint32_t)(h >> 32);
	slots[i].id = id;
}

/* Room for n nodes in all (the root included) in the node arrays and the index. */
static bool stacks_reserve(struct profile *p, size_t n)
{
	if (n >= PROFILE_NOMEM)
		return false;
	if (n > p->cap_stacks) {
		size_t nc = grow_cap(n, p->cap_stacks);
		if (!REALLOC_ARRAY(p->stack_parent, nc) || !REALLOC_ARRAY(p->stack_frame, nc) ||
		    !REALLOC_ARRAY(p->stack_depth, nc))
			return false;
		p->cap_stacks = nc;
	}
	if (n * 2 <= p->sx_cap)
		return true;
	size_t cap = p->sx_cap ? p->sx_cap : 64;
	while (cap < n * 2)
		cap *= 2;
	struct stack_slot *slots = table_zalloc(cap * sizeof *slots);
	if (!slots)
		return false;
	for (uint32_t id = 1; id < p->nstacks; id++) /* in id order: the node arrays are read in sequence */
		sx_place(slots, cap - 1, stack_hash(p->stack_parent[id], p->stack_frame[id]), id);
	table_free(p->sx, p->sx_cap * sizeof *p->sx);
	p->sx = slots;
	p->sx_cap = cap;
	return true;
}

/* Appends the chain frames[0..n) below `node`, all new; nodes_out[i] gets the node after frames[i]. */
static uint32_t stacks_append(struct profile *p, uint32_t node, const uint32_t *frames, size_t n, uint32_t *nodes_out)
{
	if (!stacks_reserve(p, p->nstacks + n))
		return PROFILE_NOMEM;
	enum { BATCH = 32 };
	uint64_t h[BATCH];
	size_t mask = p->sx_cap - 1;
	for (size_t at = 0; at < n; at += BATCH) {
		size_t m = n - at < BATCH ? n - at : BATCH;
		uint32_t parent = node;
		for (size_t k = 0; k < m; k++) {
			h[k] = stack_hash(parent, frames[at + k]);
			__builtin_prefetch(&p->sx[(size_t)h[k] & mask], 1);
			parent = (uint32_t)(p->nstacks + k);
		}
		for (size_t k = 0; k < m; k++) {
			uint32_t f = frames[at + k], id = (uint32_t)p->nstacks;
			sx_place(p->sx, mask, h[k], id);
			p->stack_parent[id] = node;
			p->stack_frame[id] = f;
			p->stack_depth[id] = p->stack_depth[node] + 1;
			p->nstacks++;
			node = id;
			if (nodes_out)
				nodes_out[at + k] = id;
		}
	}
	return node;
}

uint32_t profile_stack_path(struct profile *p, uint32_t node, const uint32_t *frames, size_t n, uint32_t *nodes_out)
{
	if (node >= p->nstacks)
		return PROFILE_NOMEM;
	for (size_t i = 0; i < n; i++)
		if (frames[i] >= p->nframes)
			return PROFILE_NOMEM;
	size_t k = 0;
	/* a node's children are made after it: the newest node has none yet, so from there on all is new */
	for (; k < n && node + 1 != p->nstacks; k++) {
		uint32_t id = sx_find(p, node, frames[k]);
		if (!id)
			break;
		node = id;
		if (nodes_out)
			nodes_out[k] = id;
	}
	if (k == n)
		return node;
	return stacks_append(p, node, frames + k, n - k, nodes_out ? nodes_out + k : NULL);
}

uint32_t profile_stack(struct profile *p, uint32_t parent, uint32_t frame_id)
{
	return profile_stack_path(p, parent, &frame_id, 1, NULL);
}

uint32_t profile_stack_from(struct profile *p, const uint32_t *frames, size_t n)
{
	return profile_stack_path(p, PROFILE_ROOT, frames, n, NULL);
}

uint32_t profile_stack_parent(const struct profile *p, uint32_t stack)
{
	return stack < p->nstacks ? p->stack_parent[stack] : PROFILE_ROOT;
}

uint32_t profile_stack_frame(const struct profile *p, uint32_t stack)
{
	return stack < p->nstacks ? p->stack_frame[stack] : UINT32_MAX;
}

uint32_t profile_stack_depth(const struct profile *p, uint32_t stack)
{
	return stack < p->nstacks ? p->stack_depth[stack] : 0;
}

size_t profile_nstacks(const struct profile *p)
{
	return p->nstacks;
}

uint32_t profile_thread(struct profile *p, uint32_t pid, uint32_t tid, const char *name)
{
	uint64_t key = ((uint64_t)pid << 32) | tid;
	uint32_t id;
	if (hmap_get(&p->thread_index, key, &id)) {
		if (name && name[0]) {
			str_id n = profile_intern_cstr(p, name);
			if (n == PROFILE_NOMEM)
				return PROFILE_NOMEM;
			p->threads[id].name = n;
		}
		return id;
	}
	str_id n = profile_intern_cstr(p, name);
	if (n == PROFILE_NOMEM || !ALLOC_GROW(p->threads, p->nthreads + 1, p->cap_threads))
		return PROFILE_NOMEM;
	id = (uint32_t)p->nthreads;
	if (!hmap_put(&p->thread_index, key, id))
		return PROFILE_NOMEM;
	p->threads[p->nthreads++] = (struct profile_thread){ pid, tid, n, 0 };
	return id;
}

bool profile_thread_set_process(struct profile *p, uint32_t thread_id, const char *process, size_t len)
{
	if (thread_id >= p->nthreads || !len)
		return thread_id < p->nthreads;
	str_id n = profile_intern(p, process, len);
	if (n == PROFILE_NOMEM)
		return false;
	p->threads[thread_id].process = n;
	return true;
}

uint32_t profile_thread_copy(struct profile *dst, const struct profile *src, uint32_t thread_id)
{
	const struct profile_thread *t = profile_thread_get(src, thread_id);
	if (!t)
		return PROFILE_NOMEM;
	uint32_t id = profile_thread(dst, t->pid, t->tid, profile_str(src, t->name));
	const char *proc = profile_str(src, t->process);
	if (id != PROFILE_NOMEM && !profile_thread_set_process(dst, id, proc, strlen(proc)))
		return PROFILE_NOMEM;
	return id;
}

const struct profile_thread *profile_thread_get(const struct profile *p, uint32_t thread_id)
{
	return thread_id < p->nthreads ? &p->threads[thread_id] : NULL;
}

size_t profile_nthreads(const struct profile *p)
{
	return p->nthreads;
}

void profile_keep_timeline(struct profile *p, bool on)
{
	p->keep_timeline = on;
}

bool profile_has_timeline(const struct profile *p)
{
	return p->keep_timeline;
}

void profile_mark_untimed(struct profile *p)
{
	p->untimed = true;
}

bool profile_has_times(const struct profile *p)
{
	return p->keep_timeline && !p->untimed;
}

/* The index of the count of (stack, thread), made (zero, with zero columns) when there is none. */
static uint32_t count_of(struct profile *p, uint32_t stack, uint32_t thread)
{
	uint64_t key = ((uint64_t)stack << 32) | thread;
	uint32_t idx;
	if (hmap_get(&p->count_index, key, &idx))
		return idx;
	if (!ALLOC_GROW(p->counts, p->ncounts + 1, p->cap_counts))
		return PROFILE_NOMEM;
	if (p->nvalues) {
		size_t old = p->cap_values;
		if (p->ncounts + 1 > old) {
			size_t cap = old ? old * 2 : 64;
			uint64_t *v = realloc(p->values, cap * p->nvalues * sizeof *v);
			if (!v)
				return PROFILE_NOMEM;
			memset(v + old * p->nvalues, 0, (cap - old) * p->nvalues * sizeof *v);
			p->values = v;
			p->cap_values = cap;
		}
	}
	idx = (uint32_t)p->ncounts;
	if (!hmap_put(&p->count_index, key, idx))
		return PROFILE_NOMEM;
	p->counts[p->ncounts++] = (struct profile_count){ stack, thread, 0, 0 };
	return idx;
}

bool profile_set_values(struct profile *p, size_t n, const char *const *names, const char *const *units,
			uint64_t period)
{
	if (p->nvalues || p->ncounts || n == 0 || n > PROFILE_MAX_VALUES)
		return false;
	for (size_t i = 0; i < n; i++) {
		p->value_name[i] = profile_intern_cstr(p, names[i]);
		p->value_unit[i] = profile_intern_cstr(p, units[i]);
		if (p->value_name[i] == PROFILE_NOMEM || p->value_unit[i] == PROFILE_NOMEM)
			return false;
	}
	p->nvalues = n;
	p->values_period = period;
	return true;
}

size_t profile_nvalues(const struct profile *p)
{
	return p->nvalues;
}

const char *profile_value_name(const struct profile *p, size_t col)
{
	return col < p->nvalues ? profile_str(p, p->value_name[col]) : "";
}

const char *profile_value_unit(const struct profile *p, size_t col)
{
	return col < p->nvalues ? profile_str(p, p->value_unit[col]) : "";
}

uint64_t profile_values_period(const struct profile *p)
{
	return p->values_period;
}

bool profile_add_values(struct profile *p, uint32_t stack, uint32_t thread, const uint64_t *vals)
{
	if (!p->nvalues || stack >= p->nstacks || thread >= p->nthreads)
		return false;
	uint32_t idx = count_of(p, stack, thread);
	if (idx == PROFILE_NOMEM)
		return false;
	uint64_t *row = p->values + (size_t)idx * p->nvalues;
	for (size_t i = 0; i < p->nvalues; i++) {
		if (vals[i] > PROFILE_MAX_WEIGHT - row[i]) {
			p->overflow = true;
			return false;
		}
		row[i] += vals[i];
	}
	return true;
}

const uint64_t *profile_count_values(const struct profile *p, size_t i)
{
	return p->nvalues && i < p->ncounts ? p->values + i * p->nvalues : NULL;
}

bool profile_use_value(struct profile *p, const char *name)
{
	size_t col = p->nvalues;
	for (size_t i = 0; i < p->nvalues; i++)
		if (strcmp(profile_str(p, p->value_name[i]), name) == 0)
			col = i;
	char *end;
	unsigned long v = strtoul(name, &end, 10);
	if (col == p->nvalues && *name && !*end && v < p->nvalues)
		col = (size_t)v;
	if (col == p->nvalues)
		return false;
	uint64_t total = 0;
	for (size_t i = 0; i < p->ncounts; i++) {
		p->counts[i].weight = p->values[i * p->nvalues + col];
		total += p->counts[i].weight;
	}
	p->total_weight = total;
	p->ntimeline = 0;
	p->keep_timeline = false;
	const char *unit = profile_str(p, p->value_unit[col]);
	p->meta.weight_unit = profile_intern_cstr(p, strcmp(unit, "count") == 0 ? "samples" : unit);
	return true;
}

/* Keeps a sample on the timeline. An untimed timeline (lines in file order) follows distinct stacks, not lines: a
 * line of the stack just before it adds to that entry, and one that holds more than PROFILE_UNTIMED_MAX entries
 * past its distinct stacks is let go (the counts hold everything; docs/design.md §6.6) — an 18 M-line input of
 * one stack kept 18 M entries. */
static bool add_to_timeline(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns, uint64_t weight,
			    uint64_t samples)
{
	struct profile_sample *last = p->ntimeline ? &p->timeline[p->ntimeline - 1] : NULL;
	if (p->untimed && last && last->stack == stack && last->thread == thread) {
		last->weight += weight; /* within the totals, checked by the caller */
		last->samples += samples;
		return true;
	}
	if (p->untimed && p->ntimeline >= PROFILE_UNTIMED_MAX + 2 * p->ncounts) {
		free(p->timeline);
		p->timeline = NULL;
		p->ntimeline = p->cap_timeline = 0;
		p->keep_timeline = false;
		return true;
	}
	if (!ALLOC_GROW(p->timeline, p->ntimeline + 1, p->cap_timeline))
		return false;
	p->timeline[p->ntimeline++] = (struct profile_sample){ time_ns, stack, thread, weight, samples };
	return true;
}

bool profile_add_weighted(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns, uint64_t weight,
			  uint64_t samples)
{
	if (stack >= p->nstacks || thread >= p->nthreads)
		return false;
	/* every count is part of a total, so the totals' checks keep every count from wrapping too */
	if (weight > PROFILE_MAX_WEIGHT - p->total_weight || samples > PROFILE_MAX_WEIGHT - p->total_samples) {
		p->overflow = true;
		return false;
	}
	uint32_t idx = count_of(p, stack, thread);
	if (idx == PROFILE_NOMEM)
		return false;
	p->counts[idx].weight += weight;
	p->counts[idx].samples += samples;
	if (p->keep_timeline && !add_to_timeline(p, stack, thread, time_ns, weight, samples))
		return false;
	p->total_weight += weight;
	p->total_samples += samples;
	return true;
}

bool profile_add_sample(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns, uint64_t weight)
{
	return profile_add_weighted(p, stack, thread, time_ns, weight, weight);
}

bool profile_overflowed(const struct profile *p)
{
	return p->overflow;
}

const struct profile_count *profile_counts(const struct profile *p, size_t *n)
{
	*n = p->ncounts;
	return p->counts;
}

const struct profile_sample *profile_timeline(const struct profile *p, size_t *n)
{
	*n = p->ntimeline;
	return p->timeline;
}

uint64_t profile_total_weight(const struct profile *p)
{
	return p->total_weight;
}

uint64_t profile_total_samples(const struct profile *p)
{
	return p->total_samples;
}

void profile_spread_samples(struct profile *p, uint64_t samples)
{
	if (!p->total_weight)
		return;
	/* each count gets the samples up to its cumulative weight less those before it: exact total, and each
	 * within one of its proportional share */
	unsigned __int128 cum = 0;
	uint64_t before = 0;
	for (size_t i = 0; i < p->ncounts; i++) {
		cum += p->counts[i].weight;
		uint64_t upto = (uint64_t)(cum * samples / p->total_weight);
		p->counts[i].samples = upto - before;
		before = upto;
	}
	cum = 0;
	before = 0;
	for (size_t i = 0; i < p->ntimeline; i++) {
		cum += p->timeline[i].weight;
		uint64_t upto = (uint64_t)(cum * samples / p->total_weight);
		p->timeline[i].samples = upto - before;
		before = upto;
	}
	p->total_samples = samples;
}

struct profile_meta *profile_meta(struct profile *p)
{
	return &p->meta;
}

const struct profile_meta *profile_meta_const(const struct profile *p)
{
	return &p->meta;
}

bool profile_meta_copy(struct profile *dst, const struct profile *src)
{
	const struct profile_meta *sm = &src->meta;
	struct profile_meta m = *sm;
	str_id *strs[] = { &m.command, &m.backend, &m.unwinder, &m.mode, &m.ended, &m.weight_unit, &m.format, &m.os };
	for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
		*strs[i] = profile_intern_cstr(dst, profile_str(src, *strs[i]));
		if (*strs[i] == PROFILE_NOMEM)
			return false;
	}
	dst->meta = m;
	return true;
}

/* ---- mappings ---------------------------------------------------------------------------------------- */

static uint64_t mapping_key(const struct profile_mapping *m)
{
	uint64_t h = m->start * 0x9e3779b97f4a7c15ULL;
	h ^= ((uint64_t)m->path << 32 | m->pid) * 0xc2b2ae3d27d4eb4fULL;
	return h ^ (h >> 29);
}

uint32_t profile_add_mapping(struct profile *p, const struct profile_mapping *m)
{
	uint64_t key = mapping_key(m);
	uint32_t id;
	if (hmap_get(&p->mapping_index, key, &id)) { /* the same mapping seen again (a fork's copy, a reload) */
		struct profile_mapping *o = &p->mappings[id];
		if (o->start == m->start && o->limit == m->limit && o->offset == m->offset && o->path == m->path &&
		    o->pid == m->pid) {
			if (m->build_id && !o->build_id)
				o->build_id = m->build_id;
			if (m->main && !o->main) {
				o->main = 1;
				if (!hmap_put(&p->module_mapping, o->path, id))
					return PROFILE_NOMEM;
			}
			return id;
		}
	}
	if (p->nmappings >= PROFILE_NOMEM || !ALLOC_GROW(p->mappings, p->nmappings + 1, p->cap_mappings))
		return PROFILE_NOMEM;
	id = (uint32_t)p->nmappings;
	p->mappings[p->nmappings++] = *m;
	uint32_t old;
	bool had = hmap_get(&p->module_mapping, m->path, &old);
	if (!hmap_put(&p->mapping_index, key, id) ||
	    ((!had || (m->main && !p->mappings[old].main)) && !hmap_put(&p->module_mapping, m->path, id)))
		return PROFILE_NOMEM;
	return id;
}

const struct profile_mapping *profile_mappings(const struct profile *p, size_t *n)
{
	*n = p->nmappings;
	return p->mappings;
}

const struct profile_mapping *profile_mapping_of(const struct profile *p, str_id module)
{
	uint32_t id;
	if (!module || !hmap_get(&p->module_mapping, module, &id))
		return NULL;
	return &p->mappings[id];
}

bool profile_mapping_addr(const struct profile *p, const struct frame *f, uint64_t *addr)
{
	if (!f->addr || f->kind != FRAME_USER)
		return false;
	const struct profile_mapping *m = profile_mapping_of(p, f->module);
	if (!m || !m->has_bias)
		return false;
	*addr = f->addr + m->bias;
	return true;
}

bool profile_mappings_copy(struct profile *dst, const struct profile *src)
{
	for (size_t i = 0; i < src->nmappings; i++) {
		struct profile_mapping m = src->mappings[i];
		m.path = profile_intern_cstr(dst, profile_str(src, m.path));
		m.build_id = profile_intern_cstr(dst, profile_str(src, m.build_id));
		if (m.path == PROFILE_NOMEM || m.build_id == PROFILE_NOMEM || profile_add_mapping(dst, &m) == PROFILE_NOMEM)
			return false;
	}
	return true;
}

/* ---- derived views ----------------------------------------------------------------------------------- */

const char *profile_process_name(const struct profile *p, uint32_t thread_id)
{
	const struct profile_thread *t = profile_thread_get(p, thread_id);
	if (!t)
		return "";
	if (t->process)
		return profile_str(p, t->process);
	for (size_t i = 0; t->pid && i < p->nthreads; i++) /* the process's main thread is named for the program */
		if (p->threads[i].pid == t->pid && p->threads[i].tid == t->pid && p->threads[i].name)
			return profile_str(p, p->threads[i].name);
	const char *cmd = profile_str(p, p->meta.command);
	if (cmd[0]) { /* the base name of the command's first word */
		static __thread char prog[256];
		size_t n = strcspn(cmd, " \t");
		const char *b = cmd + n;
		while (b > cmd && b[-1] != '/')
			b--;
		size_t len = (size_t)(cmd + n - b);
		if (len > 0 && len < sizeof prog) {
			memcpy(prog, b, len);
			prog[len] = '\0';
			return prog;
		}
	}
	return profile_str(p, t->name);
}

struct time_index {
	uint64_t time;
	size_t i;
};

static int time_index_cmp(const void *a, const void *b)
{
	const struct time_index *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

size_t *profile_timeline_order(const struct profile *p, size_t *n)
{
	*n = p->ntimeline;
	if (!p->ntimeline)
		return NULL;
	struct time_index *ti = malloc(p->ntimeline * sizeof *ti);
	size_t *order = malloc(p->ntimeline * sizeof *order);
	if (!ti || !order) {
		free(ti);
		free(order);
		*n = 0;
		return NULL;
	}
	for (size_t i = 0; i < p->ntimeline; i++)
		ti[i] = (struct time_index){ p->timeline[i].time_ns, i };
	qsort(ti, p->ntimeline, sizeof *ti, time_index_cmp);
	for (size_t i = 0; i < p->ntimeline; i++)
		order[i] = ti[i].i;
	free(ti);
	return order;
}
