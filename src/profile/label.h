/* label.h — frame labels as docs/design.md §4.1 defines them, both ways: label_append writes a frame's label,
 * label_parse reads a label into the frame's fields, and label_parse(label) always renders back to the same
 * bytes (a label outside the grammar is a function name with no other parts). Also the redacted label table
 * writers print.
 *   function (dir/file.c:LINE)   with line info (the last two path components)
 *   function (libfoo.so.1)       without line info (the module's base name)
 *   libfoo.so.1+0x4300           without a name: the module and the function's offset in it
 *   [unknown] (libfoo.so.1)      without a name or an offset
 *   function                     nothing but the name; [unknown] without even that
 * then one mark: "_[k]" kernel, "_[j]" JIT, "_[i]" inlined into its caller. A Python frame is one whose file is
 * ".py". A `--threads` root "name (tid)" is a thread's identity, not a frame (label_thread_root). */
#ifndef PLUMB_PROFILE_LABEL_H
#define PLUMB_PROFILE_LABEL_H

#include <stdbool.h>
#include <stddef.h>

#include "base/sbuf.h"
#include "profile/profile.h"

enum label_flags {
	LABEL_NO_LINES = 1 << 0, /* drop ":LINE" so one function is one frame */
	LABEL_NO_SUFFIX = 1 << 1, /* no _[k] / _[j] / _[i] */
	LABEL_FUNC_ONLY = 1 << 2, /* just the name: the function, or module+0xOFFSET, or [unknown] */
	LABEL_NO_FILE = 1 << 3,   /* no "(dir/file.c:LINE)" group (a format that holds the file and line itself) */
	LABEL_ADDRESS = 1 << 4,   /* then "@0xINSN", the frame's instruction address (folded --addresses, §6.8) */
	LABEL_SHORT_NAMES = 1 << 5, /* C++ names as ns::Class::method (profile/cxxname.h): what commands show unless
				     * --full-names; never set, the label is the name as the model holds it */
};

/* A frame's parts as spans (not NUL-terminated; an absent part is NULL with length 0, line 0, addr 0). */
struct label_parts {
	const char *func;
	size_t func_len;
	const char *file;
	size_t file_len;
	uint32_t line;
	const char *module;
	size_t module_len;
	uint64_t addr;        /* with `offset`: the offset of a nameless frame (`module+0xOFFSET`) */
	bool offset;
	enum frame_kind kind; /* from the _[k] / _[j] mark, or FRAME_PYTHON for a ".py" file */
	bool inlined;         /* the _[i] mark */
	uint64_t insn;        /* the instruction address (profile_frame_insn), "@0xINSN" after the mark; 0: none */
};

/* The parts of frame f of p, from the model's fields (spans point into p's strings). */
void label_parts_of(const struct profile *p, const struct frame *f, struct label_parts *lp);
/* Appends the (unredacted) label of frame_id to out. */
void label_append(struct sbuf *out, const struct profile *p, uint32_t frame_id, unsigned flags);
/* Appends the label of parts (file shortened to its last two components, module to its base name). */
void label_render(struct sbuf *out, const struct label_parts *lp, unsigned flags);

/* Reads a finished label into its parts (spans point into label). Guarantees that label_render(out, 0) gives
 * label back byte for byte (LABEL_ADDRESS when it ends in an address, "@0x" and 1-16 lowercase hex digits, which
 * goes to insn): when the parts would render otherwise (a longer path, a line past 32 bits, a module path with a
 * '/'), the label is a plain function name with only its mark split off, or none. */
void label_parse(const char *label, size_t len, struct label_parts *out);

/* A frame of p for a finished label: its parts interned. Returns the frame id, PROFILE_NOMEM when out of
 * memory. */
uint32_t label_frame(struct profile *p, const char *label, size_t len);
/* The frame of p with these parts (interned). Returns PROFILE_NOMEM when out of memory. */
uint32_t label_parts_frame(struct profile *p, const struct label_parts *lp);

/* True when label is a `--threads` root "name (tid)" (a decimal tid of 1 to 10 digits); *name_len is the name's
 * length and *tid the thread id. */
bool label_thread_root(const char *label, size_t len, size_t *name_len, uint32_t *tid);

/* Reads s[0..n) as lowercase hex without a prefix (1 to 16 digits, the spelling label_render gives an offset);
 * false for anything else. */
bool label_hex(const char *s, size_t n, uint64_t *out);

/* Appends the label of frame_id as every output shows it (docs/design.md §3.6): the function name through the
 * code redactor (a symbol is code, not a secret), except a JIT name or a thread root's name, which the running
 * program wrote and which is redacted as text; the file or module through the path redactor; the line, the
 * offset and the _[k] / _[j] / _[i] mark as they are. */
void label_append_shown(struct sbuf *out, const struct profile *p, uint32_t frame_id, unsigned flags);
/* Just the function name of f as label_append_shown shows it ("[unknown]" when it has none). */
void label_append_func_shown(struct sbuf *out, const struct profile *p, const struct frame *f);
/* Whether the function part of lp is data, not code, and so redacted as text in outputs: a JIT name, or the
 * name of a "name (tid)" thread or process root. */
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
