/* symtab.h — a module's function symbols sorted by address, for the name of an address in O(log n).
 * libdw's dwfl_module_addrinfo scans the whole symbol table at every lookup: `top --all` on a machine running a
 * build spent 67% of its time there (47 s of CPU for 3 screens), one scan per new address of a compiler.
 *
 * Ownership: symtab_load() returns a table the caller frees with symtab_free(); the names point into the
 * module's ELF string table, which lives as long as the Dwfl that holds the module. */
#ifndef PLUMB_SYMBOL_SYMTAB_H
#define PLUMB_SYMBOL_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

struct symtab;

/* Reads the module's code symbols (functions, indirect functions and untyped symbols of a section, the way
 * libdw's lookup takes them) in the module's Dwfl addresses. NULL when out of memory or the module has no
 * symbol table. */
struct symtab *symtab_load(Dwfl_Module *mod);
void symtab_free(struct symtab *t);
/* The name of the symbol holding Dwfl address addr: the one whose [start, start + size) holds it, the nearest
 * start winning, then a global over a weak over a local one; a symbol without a size holds what follows it up
 * to the next symbol. NULL when none does; *start (when not NULL) is where that symbol starts. */
const char *symtab_find(const struct symtab *t, uint64_t addr, uint64_t *start);
/* How many symbols it holds (tests). */
size_t symtab_count(const struct symtab *t);

#endif
