/* label.h — frame labels as docs/design.md §4.1 defines them, and the redacted label table writers print.
 *   function (dir/file.c:LINE)   with line info (the last two path components)
 *   function (libfoo.so.1)       without line info (the module's base name)
 *   [unknown] (libfoo.so.1)      without a symbol
 * Kernel frames end in "_[k]", JIT frames in "_[j]". */
#ifndef PLUMB_PROFILE_LABEL_H
#define PLUMB_PROFILE_LABEL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/sbuf.h"
#include "profile/profile.h"

enum label_flags {
	LABEL_NO_LINES = 1 << 0, /* drop ":LINE" so one function is one frame */
	LABEL_NO_SUFFIX = 1 << 1, /* no _[k] / _[j] */
	LABEL_FUNC_ONLY = 1 << 2, /* just the function name (no "(file)" part) */
};

/* Appends the (unredacted) label of frame_id to out. */
void label_append(struct sbuf *out, const struct profile *p, uint32_t frame_id, unsigned flags);

/* The last two components of a path ("a/b/c/d.c" -> "c/d.c"); returns a pointer into path. */
const char *label_short_path(const char *path);

/* A table of redacted labels, one per frame id, built once per output. Owned by the caller:
 * label_table_free() releases it. Returns NULL when out of memory. */
struct label_table {
	char **labels;  /* labels[frame_id], NUL-terminated */
	size_t *lens;
	size_t n;
};
struct label_table *label_table_build(const struct profile *p, unsigned flags);
void label_table_free(struct label_table *t);

#endif
