/* tree.h — inside render/: the tree a flame graph draws. Frames are merged by their (redacted) label text, so a
 * differential graph compares the same paths in both profiles and --no-lines merges a function's lines. The tree
 * is the profile's own prefix tree when nothing needs merging (one profile, one label per frame: no copy, no
 * hash), else a trie keyed by (parent, label), built from the stacks as they are or reversed (--reverse). Node 0
 * is the root and a parent's id is always below its children's, so one backward pass sums inclusive weights.
 * ftree_prune then keeps the nodes wide enough to draw, which for big profiles is a small part of the tree.
 *
 * Ownership: a tree owns its arrays (ftree_release); a direct tree borrows its profile and label map, which must
 * outlive it. flabels owns its tables; its interner borrows the label text from them. */
#ifndef PLUMB_RENDER_TREE_H
#define PLUMB_RENDER_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"
#include "base/intern.h"
#include "base/progress.h"
#include "profile/label.h"
#include "profile/profile.h"

#define FTREE_NO_LABEL UINT32_MAX /* the root's label */

/* Labels shared by both profiles: label ids by text, each frame's label id, each label's frame kind. */
struct flabels {
	struct interner L;          /* borrows from lt[] */
	struct label_table *lt[2];  /* per side: 0 after, 1 before */
	uint32_t *flab[2];          /* per side: frame id -> label id */
	uint8_t *kind;              /* label id -> enum frame_kind of its first frame */
	size_t kind_cap;
};
#define FLABELS_INIT { INTERNER_BORROW_INIT, { NULL, NULL }, { NULL, NULL }, NULL, 0 }

/* Adds the labels of p's frames as side 0 (after) or 1 (before). False when out of memory. */
bool flabels_add(struct flabels *fl, int side, const struct profile *p, unsigned label_flags);
/* True when side 0's frames each have a label of their own (the profile's tree needs no merging). */
bool flabels_unique(const struct flabels *fl, const struct profile *p);
void flabels_release(struct flabels *fl);

struct ftree {
	size_t n, cap;
	uint32_t *parent, *label;   /* NULL for a direct tree: read through ftree_parent / ftree_label */
	uint64_t *tot[2];           /* weight per node and side (0 after, 1 before); tot[1] NULL without a before */
	const struct profile *direct;
	const uint32_t *direct_flab;
	struct hmap index;          /* trie: parent << 32 | label -> node */
};

/* A direct tree over p's prefix tree, with side 0's weights from p's counts. False when out of memory. */
bool ftree_direct(struct ftree *T, const struct profile *p, const uint32_t *flab);
/* An empty trie (the root only), with a second weight array when `two_sides`. */
bool ftree_trie(struct ftree *T, bool two_sides);
/* Adds every stack node of p to the trie, p's counts to side `side`. With map (may be NULL) the caller gets a
 * malloc'd array from p's stack ids to trie nodes. */
bool ftree_merge(struct ftree *T, const struct profile *p, const uint32_t *flab, int side, uint32_t **map);
/* Adds p's stacks reversed (innermost frame first) to the trie, its counts to side `side`. */
bool ftree_merge_reversed(struct ftree *T, const struct profile *p, const uint32_t *flab, int side);
/* Turns each node's own weight into the weight under it (its own plus its descendants'), telling progress (may
 * be NULL) how far it is. */
void ftree_sum(struct ftree *T, struct progress *progress);
/* Into *out (a trie without index, ids renumbered in order): the root and every node whose side-0 weight is at
 * least min_units and above 0, with their weights; the rest is too narrow to draw, and so is all below it. */
bool ftree_prune(const struct ftree *T, double min_units, struct ftree *out);

uint32_t ftree_parent(const struct ftree *T, uint32_t node);
uint32_t ftree_label(const struct ftree *T, uint32_t node);
void ftree_release(struct ftree *T);

#endif
