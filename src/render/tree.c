/* tree.c — the tree a flame graph draws (render/tree.h): labels shared by the profiles, the profile's own prefix
 * tree when nothing needs merging, a (parent, label) trie otherwise, inclusive weights in one backward pass, and
 * the pruned copy of what is wide enough to draw. */
#include "render/tree.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

/* ---- labels ------------------------------------------------------------------------------------------ */

bool flabels_add(struct flabels *fl, int side, const struct profile *p, unsigned label_flags)
{
	struct label_table *lt = label_table_build(p, label_flags);
	if (!lt)
		return false;
	fl->lt[side] = lt;
	size_t nf = profile_nframes(p);
	uint32_t *flab = malloc((nf ? nf : 1) * sizeof *flab);
	if (!flab)
		return false;
	fl->flab[side] = flab;
	for (size_t f = 0; f < nf; f++) {
		bool added;
		uint32_t id = intern(&fl->L, lt->labels[f], lt->lens[f], &added);
		if (id == INTERN_NOMEM)
			return false;
		flab[f] = id;
		if (!added)
			continue;
		if (!ALLOC_GROW(fl->kind, (size_t)id + 1, fl->kind_cap))
			return false;
		fl->kind[id] = profile_frame_get(p, (uint32_t)f)->kind;
	}
	return true;
}

bool flabels_unique(const struct flabels *fl, const struct profile *p)
{
	return intern_count(&fl->L) == profile_nframes(p) && !fl->lt[1];
}

void flabels_release(struct flabels *fl)
{
	interner_release(&fl->L);
	for (int i = 0; i < 2; i++) {
		label_table_free(fl->lt[i]);
		free(fl->flab[i]);
	}
	free(fl->kind);
}

/* ---- trees ------------------------------------------------------------------------------------------- */

uint32_t ftree_parent(const struct ftree *T, uint32_t node)
{
	return T->parent ? T->parent[node] : profile_stack_parent(T->direct, node);
}

uint32_t ftree_label(const struct ftree *T, uint32_t node)
{
	if (!node)
		return FTREE_NO_LABEL;
	return T->label ? T->label[node] : T->direct_flab[profile_stack_frame(T->direct, node)];
}

bool ftree_direct(struct ftree *T, const struct profile *p, const uint32_t *flab)
{
	memset(T, 0, sizeof *T);
	T->direct = p;
	T->direct_flab = flab;
	T->n = T->cap = profile_nstacks(p);
	T->tot[0] = calloc(T->n ? T->n : 1, sizeof *T->tot[0]);
	if (!T->tot[0])
		return false;
	size_t nc;
	const struct profile_count *c = profile_counts(p, &nc);
	for (size_t i = 0; i < nc; i++)
		if (c[i].stack < T->n)
			T->tot[0][c[i].stack] += c[i].weight;
	return true;
}

/* Makes room for `need` nodes in a trie. */
static bool trie_grow(struct ftree *T, size_t need)
{
	if (need <= T->cap)
		return true;
	size_t nc = grow_cap(need, T->cap);
	if (!REALLOC_ARRAY(T->parent, nc) || !REALLOC_ARRAY(T->label, nc) || !REALLOC_ARRAY(T->tot[0], nc) ||
	    (T->tot[1] && !REALLOC_ARRAY(T->tot[1], nc)))
		return false;
	T->cap = nc;
	return true;
}

/* A new node without looking it up (the caller knows it is not there). UINT32_MAX when out of memory. */
static uint32_t trie_add(struct ftree *T, uint32_t parent, uint32_t label)
{
	if (T->n >= UINT32_MAX - 1 || !trie_grow(T, T->n + 1))
		return UINT32_MAX;
	uint32_t id = (uint32_t)T->n++;
	T->parent[id] = parent;
	T->label[id] = label;
	T->tot[0][id] = 0;
	if (T->tot[1])
		T->tot[1][id] = 0;
	return id;
}

bool ftree_trie(struct ftree *T, bool two_sides)
{
	memset(T, 0, sizeof *T);
	if (two_sides && !(T->tot[1] = malloc(64 * sizeof *T->tot[1])))
		return false;
	return trie_add(T, 0, FTREE_NO_LABEL) == 0;
}

/* The child of `parent` with `label`, added when missing. UINT32_MAX when out of memory. */
static uint32_t trie_child(struct ftree *T, uint32_t parent, uint32_t label)
{
	uint64_t key = ((uint64_t)parent << 32) | label;
	uint32_t id;
	/* the newest node has no children yet: a child of it is new without a look-up */
	if (!(parent + 1 == T->n && parent) && hmap_get(&T->index, key, &id))
		return id;
	id = trie_add(T, parent, label);
	if (id == UINT32_MAX || !hmap_put(&T->index, key, id))
		return UINT32_MAX;
	return id;
}

bool ftree_merge(struct ftree *T, const struct profile *p, const uint32_t *flab, int side, uint32_t **map_out)
{
	size_t ns = profile_nstacks(p), nf = profile_nframes(p);
	uint32_t *map = malloc((ns ? ns : 1) * sizeof *map);
	if (!map)
		return false;
	map[0] = 0;
	for (size_t s = 1; s < ns; s++) {
		uint32_t par = profile_stack_parent(p, (uint32_t)s), fr = profile_stack_frame(p, (uint32_t)s);
		if (par >= s || fr >= nf || (map[s] = trie_child(T, map[par], flab[fr])) == UINT32_MAX) {
			free(map);
			return false;
		}
	}
	size_t nc;
	const struct profile_count *c = profile_counts(p, &nc);
	for (size_t i = 0; i < nc; i++)
		if (c[i].stack < ns)
			T->tot[side][map[c[i].stack]] += c[i].weight;
	if (map_out)
		*map_out = map;
	else
		free(map);
	return true;
}

bool ftree_merge_reversed(struct ftree *T, const struct profile *p, const uint32_t *flab, int side)
{
	size_t nc, nf = profile_nframes(p), ns = profile_nstacks(p);
	const struct profile_count *c = profile_counts(p, &nc);
	for (size_t i = 0; i < nc; i++) {
		uint32_t node = 0;
		for (uint32_t s = c[i].stack; s != PROFILE_ROOT && s < ns; s = profile_stack_parent(p, s)) {
			uint32_t fr = profile_stack_frame(p, s);
			if (fr >= nf || (node = trie_child(T, node, flab[fr])) == UINT32_MAX)
				return false;
		}
		T->tot[side][node] += c[i].weight;
	}
	return true;
}

void ftree_sum(struct ftree *T, struct progress *progress)
{
	for (size_t n = T->n; n-- > 1;) {
		if ((n & 0xfffff) == 0)
			progress_count(progress, T->n - n, T->n, "tree nodes summed");
		uint32_t par = ftree_parent(T, (uint32_t)n);
		T->tot[0][par] += T->tot[0][n];
		if (T->tot[1])
			T->tot[1][par] += T->tot[1][n];
	}
}

bool ftree_prune(const struct ftree *T, double min_units, struct ftree *out)
{
	memset(out, 0, sizeof *out);
	uint32_t *renum = malloc((T->n ? T->n : 1) * sizeof *renum);
	if (!renum)
		return false;
	size_t k = 0;
	for (size_t n = 0; n < T->n; n++) {
		uint64_t w = T->tot[0][n];
		/* a node narrower than the cut has only narrower nodes below it: its subtree goes with it */
		bool keep = n == 0 || (w > 0 && (double)w >= min_units && renum[ftree_parent(T, (uint32_t)n)] != UINT32_MAX);
		renum[n] = keep ? (uint32_t)k++ : UINT32_MAX;
	}
	out->tot[1] = T->tot[1] ? malloc(k * sizeof *out->tot[1]) : NULL;
	bool ok = trie_grow(out, k) && (!T->tot[1] || out->tot[1]);
	for (size_t n = 0; ok && n < T->n; n++) {
		uint32_t id = renum[n];
		if (id == UINT32_MAX)
			continue;
		out->parent[id] = n ? renum[ftree_parent(T, (uint32_t)n)] : 0;
		out->label[id] = ftree_label(T, (uint32_t)n);
		out->tot[0][id] = T->tot[0][n];
		if (T->tot[1])
			out->tot[1][id] = T->tot[1][n];
	}
	out->n = ok ? k : 0;
	free(renum);
	return ok;
}

void ftree_release(struct ftree *T)
{
	free(T->parent);
	free(T->label);
	free(T->tot[0]);
	free(T->tot[1]);
	hmap_release(&T->index);
	memset(T, 0, sizeof *T);
}
