/* strtab.c — open addressing over string hashes (re-mixed on a collision), copies in the table's arrays. */
#include "base/strtab.h"

#include <stdlib.h>
#include <string.h>

uint32_t str_table_intern(struct str_table *t, const char *s, size_t n, bool *added)
{
	uint64_t h = hash_bytes(s, n);
	uint32_t id;
	*added = false;
	while (hmap_get(&t->index, h, &id)) {
		if (t->len[id] == n && memcmp(t->s[id], s, n) == 0)
			return id;
		h = hash_u64(h + 0x9e3779b97f4a7c15ULL);
	}
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		char **ns = realloc(t->s, nc * sizeof *ns);
		if (!ns)
			return UINT32_MAX;
		t->s = ns;
		size_t *nl = realloc(t->len, nc * sizeof *nl);
		if (!nl)
			return UINT32_MAX;
		t->len = nl;
		t->cap = nc;
	}
	char *copy = malloc(n + 1);
	if (!copy || !hmap_put(&t->index, h, (uint32_t)t->n)) {
		free(copy);
		return UINT32_MAX;
	}
	memcpy(copy, s, n);
	copy[n] = '\0';
	t->s[t->n] = copy;
	t->len[t->n] = n;
	*added = true;
	return (uint32_t)t->n++;
}

void str_table_release(struct str_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->s[i]);
	free(t->s);
	free(t->len);
	hmap_release(&t->index);
	*t = (struct str_table)STR_TABLE_INIT;
}
