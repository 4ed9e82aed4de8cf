/* u32vec.c — see u32vec.h. */
#include "base/u32vec.h"

#include <stdlib.h>

bool u32vec_grow(struct u32vec *a)
{
	size_t nc = a->cap ? a->cap * 2 : 64;
	uint32_t *nv = realloc(a->v, nc * sizeof *nv);
	if (!nv)
		return false;
	a->v = nv;
	a->cap = nc;
	return true;
}

void u32vec_release(struct u32vec *a)
{
	free(a->v);
	a->v = NULL;
	a->n = a->cap = 0;
}
