/* intern.h — the one interner of byte strings: equal strings get one id, ids count up from 0 in first-seen
 * order, and id -> text is an array lookup. Built on the id table (base/idtab.h), which compares the keys.
 * Ownership: INTERNER_INIT copies every new string into the interner's own chunks (NUL-terminated; pointers
 * stay valid until interner_release). INTERNER_BORROW_INIT keeps the caller's pointers instead (the caller's
 * text must outlive the interner; strings are then not NUL-terminated by the interner). */
#ifndef PLUMB_BASE_INTERN_H
#define PLUMB_BASE_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/idtab.h"

#define INTERN_NOMEM UINT32_MAX

struct intern_chunk;

struct interner {
	struct idtab index;
	const char **strs;
	uint32_t *lens;
	size_t n, cap;
	bool borrow;                 /* keep the caller's pointers, copy nothing */
	struct intern_chunk *chunks; /* the copies */
};
#define INTERNER_INIT { IDTAB_INIT, NULL, NULL, 0, 0, false, NULL }
#define INTERNER_BORROW_INIT { IDTAB_INIT, NULL, NULL, 0, 0, true, NULL }

struct intern_key {
	const char *s;
	size_t len;
};

static inline bool intern_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct interner *in = ctx;
	const struct intern_key *k = key;
	return in->lens[id] == k->len && memcmp(in->strs[id], k->s, k->len) == 0;
}

/* The id of s[0..len) under its hash (hash_bytes(s, len), or the caller's own well-mixed hash used the same
 * way for every call on this interner), or IDTAB_NONE when it was never interned. */
static inline uint32_t intern_find_h(const struct interner *in, uint64_t hash, const char *s, size_t len)
{
	struct intern_key k = { s, len };
	return idtab_find(&in->index, hash, intern_eq, in, &k);
}

static inline uint32_t intern_find(const struct interner *in, const char *s, size_t len)
{
	return intern_find_h(in, hash_bytes(s, len), s, len);
}

/* Adds s[0..len) under hash; the caller has just found it absent. Returns its id, or INTERN_NOMEM. */
uint32_t intern_add_h(struct interner *in, uint64_t hash, const char *s, size_t len);

/* The id of s[0..len), adding it when new (*added tells, when not NULL). INTERN_NOMEM when out of memory. */
static inline uint32_t intern_h(struct interner *in, uint64_t hash, const char *s, size_t len, bool *added)
{
	uint32_t id = intern_find_h(in, hash, s, len);
	if (added)
		*added = id == IDTAB_NONE;
	return id != IDTAB_NONE ? id : intern_add_h(in, hash, s, len);
}

static inline uint32_t intern(struct interner *in, const char *s, size_t len, bool *added)
{
	return intern_h(in, hash_bytes(s, len), s, len, added);
}

/* The text and length of an id (id < intern_count()). */
static inline const char *intern_str(const struct interner *in, uint32_t id)
{
	return in->strs[id];
}

static inline size_t intern_len(const struct interner *in, uint32_t id)
{
	return in->lens[id];
}

static inline size_t intern_count(const struct interner *in)
{
	return in->n;
}

void interner_release(struct interner *in);

#endif
