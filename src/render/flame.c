/* flame.c — flame graphs as self-contained interactive SVG: which tree to draw (render/tree.h: the profile's own,
 * merged with a before profile, or reversed), how to lay it out, and the SVG (render/svg.h).
 *
 * A flame graph lays each node's children out in label order (as flamegraph.pl's sorted input does), after
 * pruning what is narrower than min_width pixels, which keeps big profiles small and their layout cheap; a flame
 * chart walks samples in time order and merges only adjacent equal prefixes. Output is a pure function of the
 * input: no times, colours from a hash of the label. */
#include "render/flame.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/str.h"
#include "render/svg.h"
#include "render/tree.h"

#define PLOT_PAD 20 /* pixels of the width that are margins (render/svg.c's XPAD on each side) */

/* ---- boxes ---- */

static bool box_add(struct boxes *B, uint64_t x, uint64_t w, uint64_t wb, uint32_t depth, uint32_t label)
{
	if (!ALLOC_GROW(B->v, B->n + 1, B->cap))
		return false;
	B->v[B->n++] = (struct box){ x, w, wb, depth, label };
	if (depth > B->max_depth)
		B->max_depth = depth;
	return true;
}

/* Label ids in byte order of their text (ctx: the interner). */
static int cmp_label_ids(const void *a, const void *b, void *ctx)
{
	const struct interner *L = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t lx = intern_len(L, x), ly = intern_len(L, y);
	int c = memcmp(intern_str(L, x), intern_str(L, y), lx < ly ? lx : ly);
	if (c)
		return c;
	return lx < ly ? -1 : lx > ly;
}

struct children_order {
	const uint32_t *rank;  /* label id -> rank in byte order */
	const uint32_t *label; /* node -> label id */
};

/* Nodes by their label's rank (ctx: a struct children_order). */
static int cmp_children(const void *a, const void *b, void *ctx)
{
	const struct children_order *o = ctx;
	uint32_t x = o->rank[o->label[*(const uint32_t *)a]], y = o->rank[o->label[*(const uint32_t *)b]];
	return x < y ? -1 : x > y;
}

/* Each label's rank in byte order of the text. NULL when out of memory. */
static uint32_t *label_ranks(const struct interner *L)
{
	size_t nl = intern_count(L);
	uint32_t *rank = malloc((nl ? nl : 1) * sizeof *rank), *order = malloc((nl ? nl : 1) * sizeof *order);
	if (rank && order) {
		for (size_t i = 0; i < nl; i++)
			order[i] = (uint32_t)i;
		qsort_r(order, nl, sizeof *order, cmp_label_ids, (void *)L);
		for (size_t i = 0; i < nl; i++)
			rank[order[i]] = (uint32_t)i;
	} else {
		free(rank);
		rank = NULL;
	}
	free(order);
	return rank;
}

/* Flame graph layout of a pruned tree (every node is drawn): children in label order, depth-first. */
static bool layout_graph(const struct ftree *T, const struct interner *L, struct boxes *B)
{
	size_t N = T->n;
	bool ok = false;
	uint32_t *rank = label_ranks(L);
	uint32_t *first = calloc(N + 1, sizeof *first), *kids = malloc((N ? N : 1) * sizeof *kids);
	uint32_t *fill = malloc((N ? N : 1) * sizeof *fill);
	struct {
		uint32_t node, depth;
		uint64_t x;
	} *stack = malloc((N ? N : 1) * sizeof *stack);
	if (!rank || !first || !kids || !fill || !stack)
		goto out;
	for (size_t n = 1; n < N; n++)
		first[T->parent[n] + 1]++;
	for (size_t n = 0; n < N; n++)
		first[n + 1] += first[n];
	memcpy(fill, first, N * sizeof *fill);
	for (size_t n = 1; n < N; n++)
		kids[fill[T->parent[n]]++] = (uint32_t)n;
	struct children_order co = { rank, T->label };
	for (size_t n = 0; n < N; n++)
		if (first[n + 1] - first[n] > 1)
			qsort_r(kids + first[n], first[n + 1] - first[n], sizeof *kids, cmp_children, &co);
	size_t sp = 0;
	stack[sp].node = 0;
	stack[sp].depth = 0;
	stack[sp++].x = 0;
	while (sp) {
		uint32_t n = stack[--sp].node, depth = stack[sp].depth;
		uint64_t x = stack[sp].x;
		if (!box_add(B, x, T->tot[0][n], T->tot[1] ? T->tot[1][n] : 0, depth, T->label[n]))
			goto out;
		/* push children right to left so they come out left to right */
		uint64_t end = x;
		for (uint32_t k = first[n]; k < first[n + 1]; k++)
			end += T->tot[0][kids[k]];
		for (uint32_t k = first[n + 1]; k > first[n]; k--) {
			uint32_t c = kids[k - 1];
			end -= T->tot[0][c];
			stack[sp].node = c;
			stack[sp].depth = depth + 1;
			stack[sp++].x = end;
		}
	}
	ok = true;
out:
	free(rank);
	free(first);
	free(kids);
	free(fill);
	free(stack);
	return ok;
}

struct seq {
	uint32_t node; /* tree node */
	uint64_t time;
	uint64_t weight;
	size_t pos;
};

static int cmp_seq_time(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* An open box of the flame chart: a node of the current path, where it started and how wide it is so far. */
struct open_box {
	uint32_t node;
	uint64_t x, w;
};

/* Closes the open boxes above depth `keep` (those wide enough become boxes). */
static bool close_boxes(const struct ftree *T, struct open_box *open, size_t *open_n, size_t keep, double min_units,
			struct boxes *B)
{
	while (*open_n > keep) {
		struct open_box *b = &open[--*open_n];
		if ((double)b->w >= min_units && !box_add(B, b->x, b->w, 0, (uint32_t)*open_n + 1, ftree_label(T, b->node)))
			return false;
	}
	return true;
}

/* Flame chart: samples in order; a box spans adjacent samples that share its whole prefix. */
static bool layout_chart(const struct ftree *T, const struct seq *seq, size_t nseq, double min_units, struct boxes *B)
{
	size_t cap = 64, open_n = 0;
	struct open_box *open = malloc(cap * sizeof *open);
	uint32_t *path = malloc(cap * sizeof *path);
	uint64_t x = 0;
	bool ok = false;
	if (!open || !path)
		goto out;
	for (size_t i = 0; i < nseq; i++) {
		size_t d = 0;
		for (uint32_t n = seq[i].node; n; n = ftree_parent(T, n)) {
			if (d == cap) {
				size_t nc = grow_cap(d + 1, cap);
				if (!REALLOC_ARRAY(open, nc) || !REALLOC_ARRAY(path, nc))
					goto out;
				cap = nc;
			}
			path[d++] = n;
		}
		for (size_t a = 0, b = d; a + 1 < b; a++, b--) { /* outermost first */
			uint32_t t = path[a];
			path[a] = path[b - 1];
			path[b - 1] = t;
		}
		size_t common = 0;
		while (common < open_n && common < d && open[common].node == path[common])
			common++;
		if (!close_boxes(T, open, &open_n, common, min_units, B))
			goto out;
		for (; open_n < d; open_n++)
			open[open_n] = (struct open_box){ path[open_n], x, 0 };
		for (size_t j = 0; j < open_n; j++)
			open[j].w += seq[i].weight;
		x += seq[i].weight;
	}
	ok = close_boxes(T, open, &open_n, 0, min_units, B) && box_add(B, 0, x, 0, 0, FTREE_NO_LABEL);
out:
	free(open);
	free(path);
	return ok;
}

/* The chart's samples in order: the timeline's when the profile has one (sorted by time), else the counts in
 * input order. *seq is malloc'd. */
static bool chart_samples(const struct profile *p, const uint32_t *map, struct seq **seq_out, size_t *n_out)
{
	size_t nt, nc;
	const struct profile_sample *tl = profile_timeline(p, &nt);
	const struct profile_count *c = profile_counts(p, &nc);
	size_t n = nt ? nt : nc, k = 0;
	struct seq *seq = malloc((n ? n : 1) * sizeof *seq);
	if (!seq)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint32_t st = nt ? tl[i].stack : c[i].stack;
		uint64_t w = nt ? tl[i].weight : c[i].weight;
		if (st == PROFILE_ROOT || !w)
			continue;
		seq[k] = (struct seq){ map ? map[st] : st, nt ? tl[i].time_ns : i, w, k };
		k++;
	}
	if (nt) /* time order; equal times keep their input order */
		qsort(seq, k, sizeof *seq, cmp_seq_time);
	*seq_out = seq;
	*n_out = k;
	return true;
}

/* ---- the whole graph ---- */

/* The tree to draw, with inclusive weights: the profile's own when nothing needs merging, else a trie of
 * both sides (reversed with o->reverse). *map gets the after side's stack -> node map when the tree is a trie
 * (NULL for a direct tree). */
static bool build_tree(const struct profile *after, const struct flame_opts *o, const struct flabels *fl,
		       struct ftree *T, uint32_t **map)
{
	*map = NULL;
	bool ok;
	if (!o->reverse && flabels_unique(fl, after)) {
		ok = ftree_direct(T, after, fl->flab[0]);
	} else if (!ftree_trie(T, o->before != NULL)) {
		ok = false;
	} else if (o->reverse) {
		ok = ftree_merge_reversed(T, after, fl->flab[0], 0) &&
		     (!o->before || ftree_merge_reversed(T, o->before, fl->flab[1], 1));
	} else {
		ok = ftree_merge(T, after, fl->flab[0], 0, o->flamechart ? map : NULL) &&
		     (!o->before || ftree_merge(T, o->before, fl->flab[1], 1, NULL));
	}
	/* the index is only for building */
	hmap_release(&T->index);
	if (ok && !o->flamechart)
		ftree_sum(T, o->progress);
	return ok;
}

/* Title and subtitle, by the options. */
static void titles(const struct flame_opts *o, const struct profile *after, uint64_t total, const char *unit,
		   const char **title, char *subtitle, size_t size)
{
	*title = o->title;
	if (!*title) {
		static const char *const names[2][2] = { { "Flame Graph", "Icicle Graph" },
							 { "Reversed Flame Graph", "Reversed Icicle Graph" } };
		*title = o->before ? "Differential Flame Graph" : o->flamechart ? "Flame Chart"
								: names[o->reverse][o->inverted];
	}
	char tbuf[40];
	str_commas(tbuf, sizeof tbuf, total);
	const char *order = o->flamechart ? (profile_has_timeline(after) ? ", in time order" : ", in input order")
			    : o->reverse ? ", stacks reversed: each leaf at the base, its callers above" : "";
	if (o->before)
		snprintf(subtitle, size, "%s %s%s; red grew, blue shrank (share of all %s, before vs after)", tbuf,
			 unit, o->reverse ? ", stacks reversed" : "", unit);
	else
		snprintf(subtitle, size, "%s %s%s", tbuf, unit, order);
}

enum plumb_err flame_write_svg(const struct profile *after, FILE *out, const struct flame_opts *o, struct perr *e)
{
	if (o->reverse && o->flamechart)
		return perr_set(e, PLUMB_EINVAL, "a flame chart keeps time order: it cannot be reversed");
	struct flabels fl = FLABELS_INIT;
	struct ftree T = { 0 }, K = { 0 };
	struct boxes B = { 0 };
	uint32_t *map = NULL;
	struct seq *seq = NULL;
	enum plumb_err rc = PLUMB_OK;
	unsigned W = o->width ? o->width : 1200;
	double minw = o->min_width < 0 ? 0.1 : o->min_width;
	if (!flabels_add(&fl, 0, after, o->label_flags) || (o->before && !flabels_add(&fl, 1, o->before, o->label_flags)) ||
	    !build_tree(after, o, &fl, &T, &map))
		goto oom;
	uint64_t total = profile_total_weight(after), total_b = o->before ? profile_total_weight(o->before) : 0;
	double min_units = total ? minw * (double)total / (double)(W - PLOT_PAD) : 0;
	if (o->flamechart) {
		size_t nseq;
		if (!chart_samples(after, map, &seq, &nseq) || !layout_chart(&T, seq, nseq, min_units, &B))
			goto oom;
	} else if (!ftree_prune(&T, min_units, &K) || !layout_graph(&K, &fl.L, &B)) {
		goto oom;
	}
	const struct profile_meta *m = profile_meta_const(after);
	const char *unit = profile_str(after, m->weight_unit);
	if (!unit[0])
		unit = "samples";
	struct svg_doc doc = { o, &fl, &B, total, total_b, unit, NULL, NULL };
	char subtitle[256];
	titles(o, after, total, unit, &doc.title, subtitle, sizeof subtitle);
	doc.subtitle = subtitle;
	svg_write(out, &doc);
	if (ferror(out))
		rc = perr_set(e, PLUMB_EOUTPUT, "writing the flame graph failed");
	goto done;
oom:
	rc = perr_set(e, PLUMB_ENOMEM, "out of memory drawing the flame graph");
done:
	free(seq);
	free(map);
	flabels_release(&fl);
	ftree_release(&T);
	ftree_release(&K);
	free(B.v);
	return rc;
}
