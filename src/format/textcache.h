/* textcache.h — a map from a byte string to a u32 for readers that parse each distinct piece of text once.
 * Keys are not copied: they point into the reader's input buffer, which outlives the cache. The top bit of a
 * key length is free for the caller to tag keys (it takes part in equality, not in the compared bytes). */
#ifndef PLUMB_FORMAT_TEXTCACHE_H
#define PLUMB_FORMAT_TEXTCACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"

/* A map from a byte string (kept in the input buffer) to a u32. */
struct tc_ent {
	uint64_t h;
	const char *key;
	uint32_t len;
	uint32_t val;
	const char *key2; /* optional second part of the key (tc_get2/tc_put2), NULL otherwise */
	uint64_t len2;
};

struct tcache {
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

static inline bool tc_get(const struct tcache *c, uint64_t h, const char *key, uint32_t len, uint32_t *val)
{
	if (!c->cap)
		return false;
	for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		const struct tc_ent *x = &c->e[i];
		if (!x->key)
			return false;
		if (x->h == h && x->len == len && tc_eq(x->key, key, len & 0x7fffffffu)) {
			*val = x->val;
			return true;
		}
	}
}

static inline bool tc_put(struct tcache *c, uint64_t h, const char *key, uint32_t len, uint32_t val)
{
	if ((c->n + 1) * 2 > c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 1024;
		struct tc_ent *ne = table_zalloc(ncap * sizeof *ne);
		if (!ne)
			return false;
		for (size_t i = 0; i < c->cap; i++) {
			if (!c->e[i].key)
				continue;
			size_t j = c->e[i].h & (ncap - 1);
			while (ne[j].key)
				j = (j + 1) & (ncap - 1);
			ne[j] = c->e[i];
		}
		table_free(c->e, c->cap * sizeof *c->e);
		c->e = ne;
		c->cap = ncap;
	}
	size_t i = h & (c->cap - 1);
	while (c->e[i].key)
		i = (i + 1) & (c->cap - 1);
	c->e[i] = (struct tc_ent){ h, key, len, val, NULL, 0 };
	c->n++;
	return true;
}

/* The same with a key in two pieces (both kept in the input buffer). */
static inline bool tc_get2(const struct tcache *c, uint64_t h, const char *key, uint32_t len, const char *key2,
			   uint32_t len2, uint32_t *val)
{
	if (!c->cap)
		return false;
	for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
		const struct tc_ent *x = &c->e[i];
		if (!x->key)
			return false;
		if (x->h == h && x->len == len && x->len2 == len2 && tc_eq(x->key, key, len & 0x7fffffffu) &&
		    tc_eq(x->key2, key2, len2)) {
			*val = x->val;
			return true;
		}
	}
}

static inline bool tc_put2(struct tcache *c, uint64_t h, const char *key, uint32_t len, const char *key2,
			   uint32_t len2, uint32_t val)
{
	if (!tc_put(c, h, key, len, val))
		return false;
	size_t i = h & (c->cap - 1);
	while (c->e[i].key != key || c->e[i].h != h || c->e[i].key2)
		i = (i + 1) & (c->cap - 1);
	c->e[i].key2 = key2;
	c->e[i].len2 = len2;
	return true;
}

static inline void tc_release(struct tcache *c)
{
	table_free(c->e, c->cap * sizeof *c->e);
	c->e = NULL;
	c->cap = c->n = 0;
}

#endif
