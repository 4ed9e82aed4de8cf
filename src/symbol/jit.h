/* jit.h — names of JIT-compiled code from perf maps (/tmp/perf-PID.map: "START SIZE NAME" lines), inside
 * symbol/ only. Each map is read once, when its first address is looked up.
 *
 * Ownership: sym_jits_new() / sym_jits_free(); names returned live as long as the set. */
#ifndef PLUMB_SYMBOL_JIT_H
#define PLUMB_SYMBOL_JIT_H

#include <stdint.h>

struct sym_files;
struct sym_jits;

/* files: the target's view (the perf maps the backend opened), or NULL to open maps by their path. */
struct sym_jits *sym_jits_new(const struct sym_files *files);
void sym_jits_free(struct sym_jits *j);
/* The name of the code at addr in the map at path (the raw frame's module), or NULL. */
const char *sym_jits_lookup(struct sym_jits *j, const char *path, uint64_t addr);

#endif
