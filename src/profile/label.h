/* label.h — frame labels as docs/design.md §4.1 defines them, both ways (label_append writes one, label_parse
 * reads its parts back), and the redacted label table writers print.
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

/* Appends the label of frame_id as every output shows it (docs/design.md §3.6): the function name through the
 * code redactor (a symbol is code, not a secret: an identifier that starts like a token is kept, a URL with
 * credentials in a frame's name is not), except a JIT name, which the running program wrote and which is
 * redacted as text; the file or module through the path redactor (a directory named "token=..." loses only its
 * value); the line and the _[k] / _[j] mark as they are. A finished label (folded input) is read with
 * label_parse and redacted part by part the same way; its "name (tid)" thread or process root has the name
 * redacted as text. */
void label_append_shown(struct sbuf *out, const struct profile *p, uint32_t frame_id, unsigned flags);
/* Just the function name of f as label_append_shown shows it ("[unknown]" when it has none). */
void label_append_func_shown(struct sbuf *out, const struct profile *p, const struct frame *f);

/* The parts of a finished label as label_append writes it: "func (dir/file.c:LINE)", "func (file.c)",
 * "func (libfoo.so)", "func_[k]", "func (perf-1.map)_[j]". Spans point into the label; an absent part is NULL
 * with length 0 (line 0). A parenthesized group is a file when it ends in ":LINE" or has a source file's
 * extension (and no ".so"), a module otherwise. */
struct label_parts {
	const char *func;
	size_t func_len;
	const char *file;
	size_t file_len;
	uint32_t line;
	const char *module;
	size_t module_len;
	enum frame_kind kind; /* from the _[k] / _[j] suffix */
};
void label_parse(const char *label, size_t len, struct label_parts *out);

/* Whether the function part of lp is data, not code, and so redacted as text in outputs: a JIT name (which the
 * running program wrote), or the name of a finished label's "name (tid)" thread or process root. */
bool label_func_is_data(const struct label_parts *lp);

/* The last two components of a path ("a/b/c/d.c" -> "c/d.c"); returns a pointer into path. */
const char *label_short_path(const char *path);

/* A table of labels as outputs show them (label_append_shown), one per frame id, built once per output. Owned by the caller:
 * label_table_free() releases it. Returns NULL when out of memory. */
struct label_table {
	char **labels;  /* labels[frame_id], NUL-terminated */
	size_t *lens;
	size_t n;
};
struct label_table *label_table_build(const struct profile *p, unsigned flags);
void label_table_free(struct label_table *t);

#endif
