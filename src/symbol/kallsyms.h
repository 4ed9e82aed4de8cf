/* kallsyms.h — kernel symbols from /proc/kallsyms, sorted for binary search. */
#ifndef PLUMB_SYMBOL_KALLSYMS_H
#define PLUMB_SYMBOL_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* Loads the text symbols; NULL when the file is unreadable or addresses are hidden (kptr_restrict). */
struct kallsyms *kallsyms_load(void);
/* Loads from another path (tests). */
struct kallsyms *kallsyms_load_path(const char *path);
void kallsyms_free(struct kallsyms *k);
/* Parses text in /proc/kallsyms form: "ADDR TYPE NAME" lines, optionally followed by "\t[MODULE]" (not
 * kept); text symbols (t, T, w, W) only, malformed lines skipped. Consumes `text`, a malloc'd buffer of len
 * bytes with text[len] == '\0' (it is freed, or kept for the names and freed by kallsyms_free). Returns NULL
 * when no text symbol has a non-zero address. */
struct kallsyms *kallsyms_parse(char *text, size_t len);
/* The symbol containing addr, or NULL. */
const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);

#endif
