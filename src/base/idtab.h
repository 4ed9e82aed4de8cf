/* idtab.h — a hash table of ids that compares keys. The caller keeps its items in its own arrays, indexed by a
 * dense id; the table keeps (hash, id) pairs and, on lookup, asks the caller's equality callback whether the
 * item with a candidate id is the key sought. The probe, compare and grow loop lives here once: linear
 * probing over a power-of-two array kept at most half full, the full 64-bit hash compared before the callback.
 * A collision of hashes costs one extra comparison, never a wrong answer.
 * The hash must be well mixed in its low bits (hash_bytes and hash_u64 from base/hashmap.h are).
 * Ownership: the table owns its slot array only (idtab_release frees it); items and keys stay the caller's. */
#ifndef PLUMB_BASE_IDTAB_H
#define PLUMB_BASE_IDTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

#define IDTAB_NONE UINT32_MAX

struct idtab_slot {
	uint64_t hash;
	uint32_t id;
	uint32_t used;
};

struct idtab {
	struct idtab_slot *slots;
	size_t cap;   /* power of two, 0 when empty */
	size_t count;
};
#define IDTAB_INIT { NULL, 0, 0 }

/* Whether the caller's item `id` equals `key` (ctx is the caller's, passed through). */
typedef bool idtab_eq_fn(const void *ctx, uint32_t id, const void *key);

/* The id of the item equal to key, or IDTAB_NONE. Inline, so a constant eq is inlined into hot loops. */
static inline uint32_t idtab_find(const struct idtab *t, uint64_t hash, idtab_eq_fn *eq, const void *ctx,
				  const void *key)
{
	if (!t->cap)
		return IDTAB_NONE;
	size_t mask = t->cap - 1;
	for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
		const struct idtab_slot *s = &t->slots[i];
		if (!s->used)
			return IDTAB_NONE;
		if (s->hash == hash && eq(ctx, s->id, key))
			return s->id;
	}
}

/* Adds id under hash; the caller has just found its key absent. False only when out of memory (the table is
 * unchanged then). */
bool idtab_add(struct idtab *t, uint64_t hash, uint32_t id);
/* Makes room for n entries in all, so the next adds up to n do not grow the table. False when out of memory. */
bool idtab_reserve(struct idtab *t, size_t n);
void idtab_release(struct idtab *t);

#endif
