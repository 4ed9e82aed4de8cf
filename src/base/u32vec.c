/* u32vec.c — see u32vec.h. */
#include "base/u32vec.h"

#include <stdlib.h>

#include "base/grow.h"

bool u32vec_grow(struct u32vec *a)
{
	return ALLOC_GROW(a->v, a->n + 1, a->cap);
}

void u32vec_release(struct u32vec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}
