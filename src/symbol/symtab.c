/* symtab.c — sorted function symbols of a module (symtab.h). */
#include "symbol/symtab.h"

#include <gelf.h>
#include <stdlib.h>

#include "base/grow.h"

struct sym_entry {
	uint64_t start, end; /* end == start: no size */
	const char *name;
	uint8_t rank;        /* 2 global, 1 weak, 0 local */
};

struct symtab {
	struct sym_entry *v;
	size_t n, cap;
};

static int by_start(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank) /* the better name first among equal starts */
		return x->rank > y->rank ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

static uint8_t rank_of(unsigned bind)
{
	return bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;
}

struct symtab *symtab_load(Dwfl_Module *mod)
{
	int nsyms = dwfl_module_getsymtab(mod);
	if (nsyms <= 0)
		return NULL;
	struct symtab *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
		unsigned type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || shndx == SHN_UNDEF || shndx == SHN_ABS ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE))
			continue;
		if (!ALLOC_GROW(t->v, t->n + 1, t->cap)) {
			symtab_free(t);
			return NULL;
		}
		t->v[t->n++] = (struct sym_entry){ addr, addr + sym.st_size, name, rank_of(GELF_ST_BIND(sym.st_info)) };
	}
	if (t->n)
		qsort(t->v, t->n, sizeof *t->v, by_start);
	return t;
}

void symtab_free(struct symtab *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

size_t symtab_count(const struct symtab *t)
{
	return t ? t->n : 0;
}

/* A few symbols back from the nearest start is as far as an enclosing one is looked for (symbols nest rarely:
 * an alias or a local label inside a function). */
#define ENCLOSING_LOOKBACK 16

static const struct sym_entry *find(const struct symtab *t, uint64_t addr)
{
	if (!t || !t->n || addr < t->v[0].start)
		return NULL;
	size_t lo = 0, hi = t->n; /* the last entry with start <= addr: lo after the loop, minus one */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t last = lo - 1;
	/* the first entry of that start: the best-ranked one */
	size_t first = last;
	while (first > 0 && t->v[first - 1].start == t->v[last].start)
		first--;
	for (size_t i = first; i <= last; i++)
		if (addr < t->v[i].end)
			return &t->v[i];
	for (size_t k = 1; k <= ENCLOSING_LOOKBACK && k <= first; k++) {
		const struct sym_entry *e = &t->v[first - k];
		if (e->end > addr)
			return e;
	}
	/* a symbol without a size holds what follows it up to the next start */
	for (size_t i = first; i <= last; i++)
		if (t->v[i].end == t->v[i].start)
			return &t->v[i];
	return NULL;
}

const char *symtab_find(const struct symtab *t, uint64_t addr, uint64_t *start)
{
	const struct sym_entry *e = find(t, addr);
	if (e && start)
		*start = e->start;
	return e ? e->name : NULL;
}
