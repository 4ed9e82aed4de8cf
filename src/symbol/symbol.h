/* symbol.h — turns raw frames (module + ELF vaddr, kernel addresses, JIT addresses) into labelled frames:
 * ELF symbols and DWARF file:line through libdw (separate debug info via build-id and .gnu_debuglink),
 * inline chains (an inlined call is its own frame), kernel symbols from /proc/kallsyms, JIT names from
 * /tmp/perf-PID.map, C++/Rust demangling; a function nothing names is `module+0xSTART`, its start from the
 * unwind tables (docs/design.md §4.1, §4.2). Each distinct raw frame is resolved once.
 *
 * Ownership: sym_resolve_profile() returns a new profile the caller frees; the input is unchanged. */
#ifndef PLUMB_SYMBOL_SYMBOL_H
#define PLUMB_SYMBOL_SYMBOL_H

#include <stdbool.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "profile/profile.h"

/* Raw frames, as backends add them:
 *   user:   kind FRAME_USER,   module = mapped file path, addr = ELF vaddr of the instruction
 *   kernel: kind FRAME_KERNEL, module = "[kernel.kallsyms]", addr = absolute address
 *   jit:    kind FRAME_JIT,    module = "/tmp/perf-PID.map", addr = absolute address
 *   unknown:                   module = "[unknown]" or "[anon]" etc., addr = absolute
 * `line` of a raw frame is 1 when the frame is a caller (its address is a return address, so the call site
 * is addr - 1), 0 for the sampled leaf. Frames whose func is already set pass through unchanged. */

struct sym_files;

struct sym_opts {
	bool no_lines;      /* drop line numbers */
	const struct sym_files *files; /* the sampled processes' files as they saw them (symbol/files.h), or NULL:
					* files are opened by the names the raw frames carry */
	struct sbuf *hints; /* when not NULL: one line per module whose samples mostly had no names, saying what
			     * to install (symbol/hint.h), and the notes of files (files refused or gone) */
	/* Called when debuginfod (DEBUGINFOD_URLS) starts fetching a module's debug information, for a progress
	 * line; NULL: nothing is said. Each fetch is bounded (symbol/debuginfod.h). */
	void (*fetching)(void *ctx, const char *module);
	void *fetching_ctx;
};

/* Builds the symbolized profile: same threads, samples, timeline and metadata; frames resolved (an address
 * may expand into several frames when functions were inlined). */
enum plumb_err sym_resolve_profile(const struct profile *raw, const struct sym_opts *opts, struct profile **out,
				   struct perr *e);

/* Demangles C++ and Rust names; returns a malloc'd string or NULL when name is not mangled. */
char *sym_demangle(const char *name);

#endif
