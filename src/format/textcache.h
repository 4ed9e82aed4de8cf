/* textcache.h — a map from a byte string to a u32 for readers that parse each distinct piece of text once.
 * Keys are not copied: they point into the reader's input buffer, which outlives the cache. The top bit of a
 * key length is free for the caller to tag keys (it takes part in equality, not in the compared bytes).
 * A zeroed struct tcache is empty; tc_release() frees what it holds. */
#ifndef PLUMB_FORMAT_TEXTCACHE_H
#define PLUMB_FORMAT_TEXTCACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/idtab.h"

/* A map from a byte string (kept in the input buffer) to a u32: entries in insertion order, found through the
 * id table (base/idtab.h), which owns the probing. */
struct tc_ent {
	const char *key;
	uint32_t len;
	uint32_t val;
	const char *key2; /* optional second part of the key (tc_get2/tc_put2), NULL otherwise */
	uint32_t len2;
};

struct tcache {
	struct idtab index;
	struct tc_ent *e;
	size_t cap, n;
};

/* Byte equality, inlined (keys are short: a call to memcmp costs more than the compare). The last word is
 * compared overlapping the one before it, so there is no byte loop for the tail. */
static inline bool tc_eq(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			if (x != y)
				return false;
		}
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		return x == y;
	}
	if (n >= 4) {
		uint32_t u, v, u2, v2;
		memcpy(&u, a, 4);
		memcpy(&v, b, 4);
		memcpy(&u2, a + n - 4, 4);
		memcpy(&v2, b + n - 4, 4);
		return u == v && u2 == v2;
	}
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

struct tc_key {
	const char *key, *key2;
	uint32_t len, len2;
};

static inline bool tc_match(const void *ctx, uint32_t id, const void *key)
{
	const struct tc_ent *x = &((const struct tcache *)ctx)->e[id];
	const struct tc_key *k = key;
	return x->len == k->len && tc_eq(x->key, k->key, k->len & 0x7fffffffu) &&
	       (!k->key2 || (x->len2 == k->len2 && tc_eq(x->key2, k->key2, k->len2)));
}

static inline bool tc_get(const struct tcache *c, uint64_t h, const char *key, uint32_t len, uint32_t *val)
{
	uint32_t id = idtab_find(&c->index, h, tc_match, c, &(struct tc_key){ key, NULL, len, 0 });
	if (id == IDTAB_NONE)
		return false;
	*val = c->e[id].val;
	return true;
}

/* The same with a key in two pieces (both kept in the input buffer). */
static inline bool tc_get2(const struct tcache *c, uint64_t h, const char *key, uint32_t len, const char *key2,
			   uint32_t len2, uint32_t *val)
{
	uint32_t id = idtab_find(&c->index, h, tc_match, c, &(struct tc_key){ key, key2, len, len2 });
	if (id == IDTAB_NONE)
		return false;
	*val = c->e[id].val;
	return true;
}

/* Adds a key the caller has just looked up in vain (key2 may be NULL). False when out of memory. */
static inline bool tc_put2(struct tcache *c, uint64_t h, const char *key, uint32_t len, const char *key2,
			   uint32_t len2, uint32_t val)
{
	if (c->n >= IDTAB_NONE || !ALLOC_GROW(c->e, c->n + 1, c->cap))
		return false;
	if (!idtab_add(&c->index, h, (uint32_t)c->n))
		return false;
	c->e[c->n++] = (struct tc_ent){ key, len, val, key2, len2 };
	return true;
}

static inline bool tc_put(struct tcache *c, uint64_t h, const char *key, uint32_t len, uint32_t val)
{
	return tc_put2(c, h, key, len, NULL, 0, val);
}

static inline void tc_release(struct tcache *c)
{
	idtab_release(&c->index);
	free(c->e);
	c->e = NULL;
	c->cap = c->n = 0;
}

#endif
