/* funcstart.h — where each function of an ELF file starts and ends, from its unwind tables (the FDEs of
 * .eh_frame and .debug_frame): what names a function that no symbol table names, as `module+0xSTART`
 * (docs/design.md §4.1), so that two functions are never merged into one unnamed frame.
 *
 * Ownership: funcstarts_load() returns a table the caller frees with funcstarts_free(); it copies what it needs
 * and keeps nothing of the Elf. */
#ifndef PLUMB_SYMBOL_FUNCSTART_H
#define PLUMB_SYMBOL_FUNCSTART_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct funcstarts;

/* Reads every FDE of elf's .eh_frame and .debug_frame (ELF virtual addresses). NULL when out of memory; a
 * file without unwind tables gives an empty table. */
struct funcstarts *funcstarts_load(Elf *elf);
void funcstarts_free(struct funcstarts *t);
/* The start of the function whose FDE covers vaddr: true and *start, false when no FDE covers it. */
bool funcstarts_find(const struct funcstarts *t, uint64_t vaddr, uint64_t *start);
/* The same with the end of that function (its FDE's range is [*start, *end)). */
bool funcstarts_find_range(const struct funcstarts *t, uint64_t vaddr, uint64_t *start, uint64_t *end);
/* How many functions the table knows (tests). */
size_t funcstarts_count(const struct funcstarts *t);

#endif
