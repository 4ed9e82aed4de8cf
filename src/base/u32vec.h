/* u32vec.h — a growable array of uint32_t (ids, records of ids). The vector owns v; u32vec_release frees it. */
#ifndef PLUMB_BASE_U32VEC_H
#define PLUMB_BASE_U32VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u32vec {
	uint32_t *v;
	size_t n, cap;
};
#define U32VEC_INIT { NULL, 0, 0 }

/* Doubles the capacity (64 at first); false when out of memory (the vector is unchanged). */
bool u32vec_grow(struct u32vec *a);
void u32vec_release(struct u32vec *a);

/* Appends x; false when out of memory. The common case is inline: hot loops push once per frame. */
static inline bool u32vec_push(struct u32vec *a, uint32_t x)
{
	if (a->n == a->cap && !u32vec_grow(a))
		return false;
	a->v[a->n++] = x;
	return true;
}

#endif
