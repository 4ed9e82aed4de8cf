/* intern.c — new strings and their copies. Copies go into 256 KiB chunks (pointers never move); a string bigger
 * than a chunk gets a chunk of its own and the current one keeps filling. */
#include "base/intern.h"

#include <stdlib.h>

#include "base/grow.h"

#define CHUNK_SIZE ((size_t)256 * 1024)

struct intern_chunk {
	struct intern_chunk *next;
	size_t used, cap;
	char data[];
};

static char *chunk_alloc(struct interner *in, size_t n)
{
	struct intern_chunk *c = in->chunks;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > CHUNK_SIZE ? n : CHUNK_SIZE;
		if (cap > SIZE_MAX - sizeof *c)
			return NULL;
		struct intern_chunk *nc = malloc(sizeof *nc + cap);
		if (!nc)
			return NULL;
		nc->used = 0;
		nc->cap = cap;
		if (c && n > CHUNK_SIZE) { /* a big string gets its own chunk; keep filling the current one */
			nc->next = c->next;
			c->next = nc;
		} else {
			nc->next = c;
			in->chunks = nc;
		}
		c = nc;
	}
	char *r = c->data + c->used;
	c->used += n;
	return r;
}

static bool grow(struct interner *in)
{
	size_t nc = grow_cap(in->n + 1, in->cap);
	if (!REALLOC_ARRAY(in->strs, nc) || !REALLOC_ARRAY(in->lens, nc))
		return false;
	in->cap = nc;
	return true;
}

uint32_t intern_add_h(struct interner *in, uint64_t hash, const char *s, size_t len)
{
	if (in->n >= UINT32_MAX - 1 || len > UINT32_MAX || (in->n == in->cap && !grow(in)))
		return INTERN_NOMEM;
	const char *text = s;
	if (!in->borrow) {
		if (len == SIZE_MAX)
			return INTERN_NOMEM;
		char *copy = chunk_alloc(in, len + 1);
		if (!copy)
			return INTERN_NOMEM;
		memcpy(copy, s, len);
		copy[len] = '\0';
		text = copy;
	}
	uint32_t id = (uint32_t)in->n;
	if (!idtab_add(&in->index, hash, id))
		return INTERN_NOMEM; /* a copy, if any, stays in the chunk unused */
	in->strs[id] = text;
	in->lens[id] = (uint32_t)len;
	in->n++;
	return id;
}

void interner_release(struct interner *in)
{
	for (struct intern_chunk *c = in->chunks, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(in->strs);
	free(in->lens);
	idtab_release(&in->index);
	bool borrow = in->borrow;
	*in = (struct interner)INTERNER_INIT;
	in->borrow = borrow;
}
