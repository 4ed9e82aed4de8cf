/* gecko_syms.h — samply's `.syms.json` symbol sidecar (samply record --unstable-presymbolicate): per library,
 * a symbol table sorted by address and the addresses samply looked up, so the Firefox profile reader
 * (format/gecko_read.c) can name frames that the profile holds only as addresses.
 *
 * Ownership: sidecar_load() returns a sidecar the caller frees with sidecar_free(); every string in it lives as
 * long as the sidecar. Internal to format/. */
#ifndef PLUMB_FORMAT_GECKO_SYMS_H
#define PLUMB_FORMAT_GECKO_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct sym_frame {
	const char *function, *file;
	uint32_t line; /* 0: unknown */
};

struct sym_entry {
	uint64_t rva, size;
	bool has_size;
	const char *symbol;       /* NULL when the sidecar gave none */
	struct sym_frame *frames; /* innermost first */
	size_t nframes;
};

struct sym_lib {
	const char *debug_name, *debug_id, *code_id;
	struct sym_entry *entries; /* sorted by rva */
	size_t nentries;
	uint64_t *known_rva; /* sorted */
	uint32_t *known_idx; /* entry index (into the sorted entries) */
	size_t nknown;
};

struct sidecar;

/* Reads the sidecar at path. PLUMB_EIO when it cannot be read, PLUMB_EFORMAT (with the line and byte) when it is
 * not a sidecar, PLUMB_ENOMEM. */
#define FMT_SYMS_MAX ((size_t)256 << 20) /* bytes of a --syms symbol file (docs/design.md §3.5) */
enum plumb_err sidecar_load(const char *path, struct sidecar **out, struct perr *e);
void sidecar_free(struct sidecar *s);

/* The sidecar's table for a profile library: by debug id (breakpad form in the profile, debugid form in the
 * sidecar, compared as uuid and age) or code id, else by debug name, else by the library's name. NULL: none. */
const struct sym_lib *sidecar_lib(const struct sidecar *s, const char *debug_id, const char *code_id,
				  const char *debug_name, const char *name);

/* The entry for an address (relative to the library): an exact known address, else the last symbol starting at
 * or before it when the address is inside it. NULL: unknown. */
const struct sym_entry *sidecar_lookup(const struct sym_lib *L, uint64_t rva);

/* The sidecar beside a profile at `source`: "<profile without .gz>.syms.json", then "<stem>.syms.json"
 * (without ".json"). A malloc'd path the caller frees, or NULL when there is none (or source is NULL or "-"). */
char *sidecar_find(const char *source);

#endif
