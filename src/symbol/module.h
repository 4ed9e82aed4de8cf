/* module.h — one ELF module as the symbolizer sees it (inside symbol/ only): opened once through libdw, it
 * turns an ELF virtual address into frames — names from the symbol tables and DWARF (with inline chains and
 * lines), and where nothing names the function, the start of its function from the unwind tables
 * (docs/design.md §4.2, in that order).
 *
 * Ownership: the symbolizer owns each sym_module (sym_module_release); resolved frames point into the module's
 * libdw data or into their own `owned` string, which the caller frees. */
#ifndef PLUMB_SYMBOL_MODULE_H
#define PLUMB_SYMBOL_MODULE_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbol/debuginfod.h"
#include "symbol/funcstart.h"
#include "symbol/plt.h"

#define SYM_MAX_INLINE 32

struct sym_files;
struct sym_cache;
struct symtab;

struct sym_module {
	const char *path;   /* the module's path as the raw frames name it (held by the symbolizer) */
	const struct sym_files *files; /* the target's view of its files, or NULL: open path by name */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	struct funcstarts *funcs; /* loaded on the first address nothing names */
	struct symtab *syms;      /* its symbols sorted by address (symbol/symtab.h), loaded on the first lookup */
	struct plt_stubs *plt;    /* PLT stub names, loaded with funcs */
	bool tried, funcs_tried, cache_tried, syms_tried;
	struct sym_cache *cache; /* what its addresses resolved to in earlier runs (symbol/cache.h), or NULL */
	struct sym_fetch_state fetch; /* what debuginfod did for it (its address is held by libdw's client) */
	uint64_t samples;   /* samples whose leaf is in this module */
	uint64_t unnamed;   /* ... of which the leaf had no name */
};

/* One resolved frame before interning. */
struct sym_resolved {
	const char *func;  /* may point into libdw data or `owned` */
	char *owned;       /* demangled name to free */
	const char *file;
	int line;
};

/* Opens the module on first use ("[vdso]" is plumb's own image; other paths are files). */
void sym_module_open(struct sym_module *m);
/* Resolves vaddr (caller: a return address, looked up at vaddr - 1) into frames, innermost first (an inline
 * chain); returns how many (0: nothing names it). An address resolved in an earlier run comes from the symbol
 * cache without reading the debug information. */
size_t sym_module_resolve(struct sym_module *m, uint64_t vaddr, bool caller, struct sym_resolved *out, size_t max);
/* The start (ELF vaddr) of the function holding vaddr from the unwind tables; false when no FDE covers it. */
bool sym_module_func_start(struct sym_module *m, uint64_t vaddr, uint64_t *start);
/* Writes what this run added to the symbol cache, then frees the module's data. */
void sym_module_release(struct sym_module *m);

/* Demangles C++ and Rust names (symbol.h: sym_demangle). */
char *sym_module_demangle(const char *name);

#endif
