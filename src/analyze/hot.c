/* hot.c — hot tables. Every frame is mapped once to a function row and a group row, or to "filtered out"
 * (frame_map.c); then each aggregated (stack, thread) count walks its stack once: the innermost kept frame gets the leaf
 * count, and every distinct row on the stack gets the inclusive count once (a generation stamp per row makes
 * recursion count once per sample). Work grows with distinct stacks, not with the run's length. */
#include "analyze/analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/frame_map.h"
#include "base/hashmap.h"
#include "base/intern.h"
#include "base/redact.h"

/* ---- tables ------------------------------------------------------------------------------------------ */

static int row_cmp(const void *a, const void *b)
{
	const struct hot_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool table_from_counts(struct hot_table *t, const struct interner *rs, const uint64_t *counts)
{
	size_t n = 0;
	for (size_t i = 0; i < rs->n; i++)
		n += counts[i] > 0;
	t->rows = calloc(n + 1, sizeof *t->rows);
	if (!t->rows)
		return false;
	for (size_t i = 0; i < rs->n; i++) {
		if (!counts[i])
			continue;
		t->rows[t->n].name = strdup(intern_str(rs, (uint32_t)i));
		if (!t->rows[t->n].name)
			return false;
		t->rows[t->n++].count = counts[i];
	}
	qsort(t->rows, t->n, sizeof *t->rows, row_cmp);
	return true;
}

/* Fills slice's tables from aggregated counts of the selected threads. */
static enum plumb_err slice_compute(const struct profile *p, const struct hot_frame_map *fm, const bool *selected,
				    const struct profile_count *counts, size_t ncounts, struct hot_slice *sl,
				    struct progress *progress, struct perr *e)
{
	size_t nf = fm->funcs.n ? fm->funcs.n : 1, ng = fm->groups.n ? fm->groups.n : 1;
	uint64_t *fleaf = calloc(nf, sizeof *fleaf), *fincl = calloc(nf, sizeof *fincl);
	uint64_t *gleaf = calloc(ng, sizeof *gleaf), *gincl = calloc(ng, sizeof *gincl);
	uint32_t *fstamp = calloc(nf, sizeof *fstamp), *gstamp = calloc(ng, sizeof *gstamp);
	enum plumb_err rc = PLUMB_OK;
	if (!fleaf || !fincl || !gleaf || !gincl || !fstamp || !gstamp) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto out;
	}
	bool by_function = fm->groups.n == 0;
	uint32_t gen = 0;
	for (size_t i = 0; i < ncounts; i++) {
		const struct profile_count *c = &counts[i];
		if ((i & 0xffff) == 0)
			progress_count(progress, i, ncounts, "stacks counted");
		if (c->thread >= profile_nthreads(p) || !selected[c->thread])
			continue;
		sl->total += c->weight;
		sl->samples += c->samples;
		gen++;
		bool leaf_done = false;
		for (uint32_t node = c->stack; node != PROFILE_ROOT; node = profile_stack_parent(p, node)) {
			uint32_t f = profile_stack_frame(p, node);
			if (f == UINT32_MAX || fm->func_row[f] == HOT_ROW_NONE)
				continue;
			uint32_t fr = fm->func_row[f], gr = fm->group_row[f];
			if (!leaf_done) {
				fleaf[fr] += c->weight;
				if (!by_function)
					gleaf[gr] += c->weight;
				sl->attributed += c->weight;
				leaf_done = true;
			}
			if (fstamp[fr] != gen) {
				fstamp[fr] = gen;
				fincl[fr] += c->weight;
			}
			if (!by_function && gstamp[gr] != gen) {
				gstamp[gr] = gen;
				gincl[gr] += c->weight;
			}
		}
	}
	if (!table_from_counts(&sl->tables[HOT_LEAF], &fm->funcs, fleaf) ||
	    !table_from_counts(&sl->tables[HOT_INCLUSIVE], &fm->funcs, fincl) ||
	    !table_from_counts(&sl->tables[HOT_GROUPED_LEAF], by_function ? &fm->funcs : &fm->groups,
			       by_function ? fleaf : gleaf) ||
	    !table_from_counts(&sl->tables[HOT_GROUPED_INCLUSIVE], by_function ? &fm->funcs : &fm->groups,
			       by_function ? fincl : gincl))
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
out:
	free(fleaf);
	free(fincl);
	free(gleaf);
	free(gincl);
	free(fstamp);
	free(gstamp);
	return rc;
}

struct thread_order {
	uint32_t id;
	uint64_t count;
};

static int thread_cmp(const void *a, const void *b)
{
	const struct thread_order *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Picks threads: thread_re, then the top N by their weight in counts. Fills s->threads. */
static enum plumb_err select_threads(const struct profile *p, const struct hot_opts *o,
				     const struct profile_count *counts, size_t nc, bool *selected, struct hot_summary *s,
				     struct perr *e)
{
	size_t nt = profile_nthreads(p);
	struct thread_order *ord = calloc(nt + 1, sizeof *ord);
	if (!ord)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < nt; i++)
		ord[i].id = (uint32_t)i;
	for (size_t i = 0; i < nc; i++)
		if (counts[i].thread < nt)
			ord[counts[i].thread].count += counts[i].weight;
	regex_t *re = NULL;
	enum plumb_err rc = hot_regex_compile(&o->thread_re, o->thread_re ? 1 : 0, &re, "--thread", e);
	if (rc) {
		free(ord);
		return rc;
	}
	size_t m = 0;
	for (size_t i = 0; i < nt; i++) {
		const struct profile_thread *t = profile_thread_get(p, (uint32_t)i);
		bool keep = true;
		if (re) {
			char full[512];
			const char *name = profile_str(p, t->name);
			snprintf(full, sizeof full, "%s (%u)", name, t->tid);
			keep = regexec(re, name, 0, NULL, 0) == 0 || regexec(re, full, 0, NULL, 0) == 0;
		}
		if (keep)
			ord[m++] = ord[i];
	}
	hot_regex_free(re, 1);
	qsort(ord, m, sizeof *ord, thread_cmp);
	if (o->top_threads > 0 && (size_t)o->top_threads < m)
		m = (size_t)o->top_threads;
	s->threads = calloc(m + 1, sizeof *s->threads);
	if (!s->threads) {
		free(ord);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < m; i++) {
		const struct profile_thread *t = profile_thread_get(p, ord[i].id);
		selected[ord[i].id] = true;
		struct hot_thread_row *r = &s->threads[s->nthreads++];
		r->name = redact_dup(profile_str(p, t->name));
		r->pid = t->pid;
		r->tid = t->tid;
		r->count = ord[i].count;
		if (!r->name) {
			free(ord);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
	}
	free(ord);
	return PLUMB_OK;
}

/* --group-by library on frames that name no library (folded stacks name source files): says so, plainly. */
static void warn_no_library(const struct hot_opts *o, const struct hot_frame_map *fm)
{
	size_t without = fm->user_frames - fm->user_frames_in_library;
	if (!o->warn || !without)
		return;
	char msg[400];
	static const char why[] = "folded stacks keep source files, not libraries: record to .json or .pb.gz to keep them";
	if (!fm->user_frames_in_library)
		snprintf(msg, sizeof msg, "--group-by library: no frame of this profile names its library (the ELF object "
					  "it comes from), so all but the kernel's count under [unknown]; %s", why);
	else
		snprintf(msg, sizeof msg, "--group-by library: %zu of %zu frames name no library (the ELF object they come "
					  "from) and count under [unknown]; %s", without, fm->user_frames, why);
	o->warn(o->warn_ctx, msg);
}

/* The state hot_analyze() and hot_analyze_stages() share. */
struct analysis {
	struct hot_frame_map fm;
	bool *selected;
};

static enum plumb_err analysis_begin(const struct profile *p, const struct hot_opts *o,
				     const struct profile_count *counts, size_t nc, struct analysis *a, struct hot_summary *s,
				     struct perr *e)
{
	memset(a, 0, sizeof *a);
	a->selected = calloc(profile_nthreads(p) + 1, sizeof *a->selected);
	if (!a->selected)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (o->repo_only && !o->root)
		return perr_set(e, PLUMB_EINVAL, "--repo-only needs a root directory");
	enum plumb_err rc = select_threads(p, o, counts, nc, a->selected, s, e);
	if (rc || (rc = hot_frame_map_build(p, o, &a->fm, e)))
		return rc;
	if (o->group_by == HOT_GROUP_LIBRARY)
		warn_no_library(o, &a->fm);
	return PLUMB_OK;
}

static void analysis_end(struct analysis *a)
{
	hot_frame_map_release(&a->fm);
	free(a->selected);
}

enum plumb_err hot_analyze_counts(const struct profile *p, const struct hot_opts *o, const struct profile_count *counts,
				  size_t ncounts, struct hot_summary **out, struct perr *e)
{
	static const struct hot_opts defaults = HOT_OPTS_INIT;
	if (!o)
		o = &defaults;
	struct hot_summary *s = hot_summary_new();
	if (!s)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	s->group_by = o->group_by;
	s->module_depth = o->module_depth > 0 ? o->module_depth : 2;
	s->has_grouped = true;
	const struct profile_meta *m = profile_meta_const(p);
	s->weight_unit = strdup(profile_str(p, m->weight_unit)[0] ? profile_str(p, m->weight_unit) : "samples");
	s->interval_ns = m->interval_ns;
	if (m->format) /* the format read (or recorded to); NULL when out of memory reads as none */
		s->format = strdup(profile_str(p, m->format));
	struct analysis a;
	enum plumb_err rc = analysis_begin(p, o, counts, ncounts, &a, s, e);
	if (!rc && !s->weight_unit)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (!rc)
		rc = slice_compute(p, &a.fm, a.selected, counts, ncounts, &s->all, o->progress, e);
	analysis_end(&a);
	if (rc) {
		hot_summary_free(s);
		return rc;
	}
	*out = s;
	return PLUMB_OK;
}

enum plumb_err hot_analyze(const struct profile *p, const struct hot_opts *o, struct hot_summary **out,
			   struct perr *e)
{
	size_t nc;
	const struct profile_count *counts = profile_counts(p, &nc);
	return hot_analyze_counts(p, o, counts, nc, out, e);
}

enum plumb_err hot_analyze_stages(const struct profile *p, const struct hot_opts *o, const struct fmt_stage *stages,
				  size_t n, struct hot_summary *s, struct perr *e)
{
	static const struct hot_opts defaults = HOT_OPTS_INIT;
	if (!o)
		o = &defaults;
	if (!profile_has_times(p))
		return perr_set(e, PLUMB_EINVAL, "this profile has no sample times, so it cannot be sliced by stages");
	size_t nt;
	const struct profile_sample *tl = profile_timeline(p, &nt);
	uint64_t origin = profile_meta_const(p)->clock_origin_ns;
	struct hot_summary scratch = { 0 };
	struct analysis a;
	size_t nc;
	const struct profile_count *counts = profile_counts(p, &nc);
	enum plumb_err rc = analysis_begin(p, o, counts, nc, &a, &scratch, e);
	for (size_t i = 0; i < scratch.nthreads; i++)
		free(scratch.threads[i].name);
	free(scratch.threads);
	struct profile_count *agg = NULL;
	uint32_t *by_stack = NULL;
	size_t nstacks = profile_nstacks(p);
	struct hmap index = HMAP_INIT;
	if (!rc) {
		bool room = hot_summary_alloc_stages(s, n);
		agg = malloc((nt + 1) * sizeof *agg);
		by_stack = malloc((nstacks + 1) * sizeof *by_stack);
		if (!room || !agg || !by_stack)
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	for (size_t k = 0; !rc && k < n; k++) {
		struct hot_slice *sl = &s->stages[k];
		sl->name = strdup(stages[k].name);
		sl->start_ms = stages[k].start_ms;
		sl->end_ms = stages[k].end_ms;
		s->nstages++;
		if (!sl->name) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
			break;
		}
		size_t nagg = 0;
		hmap_release(&index);
		for (size_t i = 0; i < nstacks; i++)
			by_stack[i] = UINT32_MAX;
		for (size_t i = 0; i < nt; i++) {
			double t_ms = ((double)tl[i].time_ns - (double)origin) / 1e6;
			if (t_ms < sl->start_ms || t_ms >= sl->end_ms)
				continue;
			/* most stacks are seen on one thread: try the stack's first entry before the map */
			uint32_t idx = tl[i].stack < nstacks ? by_stack[tl[i].stack] : UINT32_MAX;
			if (idx != UINT32_MAX && agg[idx].thread == tl[i].thread) {
				agg[idx].weight += tl[i].weight;
				agg[idx].samples += tl[i].samples;
				continue;
			}
			uint64_t key = ((uint64_t)tl[i].stack << 32) | tl[i].thread;
			if (hmap_get(&index, key, &idx)) {
				agg[idx].weight += tl[i].weight;
				agg[idx].samples += tl[i].samples;
			} else {
				if (!hmap_put(&index, key, (uint32_t)nagg)) {
					rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
					break;
				}
				if (tl[i].stack < nstacks && by_stack[tl[i].stack] == UINT32_MAX)
					by_stack[tl[i].stack] = (uint32_t)nagg;
				agg[nagg++] = (struct profile_count){ tl[i].stack, tl[i].thread, tl[i].weight, tl[i].samples };
			}
		}
		if (!rc)
			rc = slice_compute(p, &a.fm, a.selected, agg, nagg, sl, o->progress, e);
	}
	hmap_release(&index);
	free(agg);
	free(by_stack);
	analysis_end(&a);
	return rc;
}
