/* kallsyms.h — kernel symbols from /proc/kallsyms, sorted for binary search. */
#ifndef PLUMB_SYMBOL_KALLSYMS_H
#define PLUMB_SYMBOL_KALLSYMS_H

#include <stdint.h>

struct kallsyms;

/* Loads the text symbols; NULL when the file is unreadable or addresses are hidden (kptr_restrict). */
struct kallsyms *kallsyms_load(void);
/* Loads from another path (tests). */
struct kallsyms *kallsyms_load_path(const char *path);
void kallsyms_free(struct kallsyms *k);
/* The symbol containing addr, or NULL. */
const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);

#endif
