/* cache.h — what a module's addresses resolved to, kept between runs (docs/symbols.md, "The symbol cache"):
 * one file per build-id under $PLUMB_HOME/symbols/, so the second run of a program never opens (nor inflates)
 * the debug information again. Keyed on the build-id, never the path: a file replaced under the same path is
 * another module. An entry is trusted only while the file its names came from (the debug file, or the module
 * itself when it carries its DWARF) has the size and mtime it had; only modules named from DWARF are cached
 * (a module without it is cheap to read, and installing its -dbgsym package must change the names at once).
 * Files are written whole and renamed into place (concurrent runs: the last one wins, none is ever torn); the
 * directory is kept under SYM_CACHE_MAX_BYTES by removing the least recently written files.
 *
 * Ownership: sym_cache_open() returns a cache freed by sym_cache_close(); strings it hands out live until then. */
#ifndef PLUMB_SYMBOL_CACHE_H
#define PLUMB_SYMBOL_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbol/module.h"

#define SYM_CACHE_MAX_BYTES (64u << 20)  /* the whole directory */
#define SYM_CACHE_MAX_ENTRIES 200000u    /* one module's file */

struct sym_cache;

/* The cache of the module with this build-id (bytes), loaded from $PLUMB_HOME/symbols/ when its file exists and
 * its source is unchanged; NULL when there is no home, the id is empty, or PLUMB_SYMBOL_CACHE=0. */
struct sym_cache *sym_cache_open(const unsigned char *build_id, size_t len);
/* The frames cached for (vaddr, caller), innermost first, as sym_module_resolve gives them (none owned): true
 * and *n when known. */
bool sym_cache_get(struct sym_cache *c, uint64_t vaddr, bool caller, struct sym_resolved *out, size_t max,
		   size_t *n);
/* Remembers what sym_module_resolve found (n > 0; frames whose strings cannot be stored are skipped). */
void sym_cache_put(struct sym_cache *c, uint64_t vaddr, bool caller, const struct sym_resolved *r, size_t n);
/* Whether this run added entries (only then is the source worth looking up and the file rewritten). */
bool sym_cache_dirty(const struct sym_cache *c);
/* Writes the file when something was added, naming `source` (the file the names came from) as its stamp. */
void sym_cache_save(struct sym_cache *c, const char *source);
void sym_cache_close(struct sym_cache *c);

#endif
