/* symbol.h — turns raw frames (module + ELF vaddr, kernel addresses, JIT addresses) into labelled frames:
 * ELF symbols and DWARF file:line through libdw (separate debug info via build-id and .gnu_debuglink),
 * inline chains (an inlined call is its own frame), kernel symbols from /proc/kallsyms, JIT names from
 * /tmp/perf-PID.map, C++/Rust demangling. Each distinct raw frame is resolved once.
 *
 * Ownership: sym_resolve_profile() returns a new profile the caller frees; the input is unchanged. */
#ifndef PLUMB_SYMBOL_SYMBOL_H
#define PLUMB_SYMBOL_SYMBOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "profile/profile.h"

/* Raw frames, as backends add them:
 *   user:   kind FRAME_USER,   module = mapped file path, addr = ELF vaddr of the instruction
 *   kernel: kind FRAME_KERNEL, module = "[kernel.kallsyms]", addr = absolute address
 *   jit:    kind FRAME_JIT,    module = "/tmp/perf-PID.map", addr = absolute address
 *   unknown:                   module = "[unknown]" or "[anon]" etc., addr = absolute
 * `line` of a raw frame is 1 when the frame is a caller (its address is a return address, so the call site
 * is addr - 1), 0 for the sampled leaf. Frames whose func is already set pass through unchanged. */

struct sym_opts {
	bool no_lines;  /* drop line numbers */
};

/* Builds the symbolized profile: same threads, samples, timeline and metadata; frames resolved (an address
 * may expand into several frames when functions were inlined). */
enum plumb_err sym_resolve_profile(const struct profile *raw, const struct sym_opts *opts, struct profile **out,
				   struct perr *e);

/* A symbolizer kept between calls, for a profile that grows while it is read (the live views, plumb top):
 * each module is opened once however many times frames are added. sym_resolver_new() copies opts; NULL when
 * out of memory. sym_resolver_free() accepts NULL. */
struct sym_resolver;
#define SYM_MAX_FRAMES 32 /* the most frames one raw frame becomes (an inline chain) */
struct sym_resolver *sym_resolver_new(const struct sym_opts *opts);
void sym_resolver_free(struct sym_resolver *r);
/* Resolves raw frame frame_id of raw into frames of out, as sym_resolve_profile() does: their ids go to ids,
 * outermost first (at most max; SYM_MAX_FRAMES is always enough). Returns how many (at least 1; an id is
 * PROFILE_NOMEM when out of memory); 0 when frame_id is no frame of raw. */
size_t sym_resolver_frame(struct sym_resolver *r, const struct profile *raw, uint32_t frame_id, struct profile *out,
			  uint32_t *ids, size_t max);

/* Demangles C++ and Rust names; returns a malloc'd string or NULL when name is not mangled. */
char *sym_demangle(const char *name);

#endif
