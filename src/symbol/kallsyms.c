/* kallsyms.c — one pass over /proc/kallsyms into a sorted array; names share one buffer. */
#include "symbol/kallsyms.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
	uint64_t addr;
	uint32_t name_off;
};

struct kallsyms {
	struct ksym *syms;
	size_t n;
	char *names;
	uint64_t end; /* end of the last text symbol region (approximate: last + 1 MiB) */
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct kallsyms *kallsyms_load_path(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	struct kallsyms *k = calloc(1, sizeof *k);
	size_t cap = 0, ncap = 0, nlen = 0;
	char line[512];
	bool nonzero = false;
	while (k && fgets(line, sizeof line, f)) {
		unsigned long long addr;
		char type;
		char name[256];
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		nonzero |= addr != 0;
		size_t len = strlen(name) + 1;
		if (k->n == cap) {
			cap = cap ? cap * 2 : 65536;
			struct ksym *ns = realloc(k->syms, cap * sizeof *ns);
			if (!ns)
				goto fail;
			k->syms = ns;
		}
		if (nlen + len > ncap) {
			ncap = ncap ? ncap * 2 : 1 << 20;
			char *nn = realloc(k->names, ncap);
			if (!nn)
				goto fail;
			k->names = nn;
		}
		memcpy(k->names + nlen, name, len);
		k->syms[k->n++] = (struct ksym){ addr, (uint32_t)nlen };
		nlen += len;
	}
	fclose(f);
	if (!k || !nonzero || k->n == 0) {
		kallsyms_free(k);
		return NULL;
	}
	qsort(k->syms, k->n, sizeof *k->syms, cmp_ksym);
	k->end = k->syms[k->n - 1].addr + (1 << 20);
	return k;
fail:
	fclose(f);
	kallsyms_free(k);
	return NULL;
}

struct kallsyms *kallsyms_load(void)
{
	return kallsyms_load_path("/proc/kallsyms");
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr)
{
	if (!k || k->n == 0 || addr < k->syms[0].addr || addr >= k->end)
		return NULL;
	size_t lo = 0, hi = k->n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return k->names + k->syms[lo].name_off;
}
