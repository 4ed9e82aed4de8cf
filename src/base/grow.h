/* grow.h — the one way plumb grows an array (git's ALLOC_GROW and st_mult, minus the dying): the capacity at
 * least doubles, and a size whose byte count would overflow size_t is refused like a failed allocation,
 * never wrapped into a small buffer. Nothing here exits: every macro yields false and leaves the array as it
 * was when it cannot grow. Header-only (libplumb uses it too).
 * Ownership: the arrays are the caller's, malloc'd memory (free() them); these only realloc them. */
#ifndef PLUMB_BASE_GROW_H
#define PLUMB_BASE_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define GROW_MIN 16 /* the first capacity of an empty array */

/* n * elem bytes, or false when that overflows size_t (st_mult). */
static inline bool grow_mul(size_t n, size_t elem, size_t *bytes)
{
	return !__builtin_mul_overflow(n, elem, bytes);
}

/* realloc(p, n * elem) with the multiplication checked; NULL (p untouched) on overflow or out of memory. */
static inline void *realloc_array(void *p, size_t n, size_t elem)
{
	size_t bytes;
	if (!grow_mul(n, elem, &bytes))
		return NULL;
	return realloc(p, bytes ? bytes : 1);
}

/* The capacity to grow an array of capacity cap to so that need elements fit: at least double, at least
 * GROW_MIN, at least need. Saturates instead of wrapping (realloc_array then refuses what is too big). */
static inline size_t grow_cap(size_t need, size_t cap)
{
	size_t nc = cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2;
	if (nc < GROW_MIN)
		nc = GROW_MIN;
	return nc < need ? need : nc;
}

/* Reallocates array x (any element type) to n elements: true, or false with x unchanged. */
#define REALLOC_ARRAY(x, n)                                                   \
	({                                                                    \
		void *grow_p_ = realloc_array((x), (n), sizeof *(x));         \
		grow_p_ ? ((x) = grow_p_, true) : false;                       \
	})

/* Makes array x, of capacity alloc (a size_t lvalue), hold at least nr elements: true, or false (x and alloc
 * unchanged) when it cannot. Typical use: if (!ALLOC_GROW(v, n + 1, cap)) return oom; v[n++] = item; */
#define ALLOC_GROW(x, nr, alloc)                                              \
	({                                                                    \
		size_t grow_nr_ = (nr);                                       \
		bool grow_ok_ = true;                                         \
		if (grow_nr_ > (alloc)) {                                     \
			size_t grow_nc_ = grow_cap(grow_nr_, (alloc));        \
			grow_ok_ = REALLOC_ARRAY((x), grow_nc_);              \
			if (grow_ok_)                                         \
				(alloc) = grow_nc_;                           \
		}                                                             \
		grow_ok_;                                                     \
	})

#endif
