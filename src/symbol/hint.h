/* hint.h — what to install when a module's samples had no function names (docs/design.md §4.2): one line for
 * the summary naming the Debian package whose -dbgsym package (or DEBUGINFOD_URLS) would name them. Inside
 * symbol/ only.
 *
 * Ownership: the caller owns the buffer; nothing here allocates beyond a file read while it runs. */
#ifndef PLUMB_SYMBOL_HINT_H
#define PLUMB_SYMBOL_HINT_H

#include <stddef.h>
#include <stdint.h>

#include "base/sbuf.h"

/* Thresholds: a module gets a hint when at least SYM_HINT_MIN_SHARE percent of all samples had their leaf in
 * it, at least half of those had no name, and the profile holds at least SYM_HINT_MIN_SAMPLES samples. */
#define SYM_HINT_MIN_SHARE 10
#define SYM_HINT_MIN_SAMPLES 20

/* Appends one line (ending in '\n') to out when the module at path deserves a hint: `unnamed` of its `samples`
 * leaf samples had no name, out of `total` in the profile. `why` (may be NULL) says why separate debug
 * information was not found (e.g. debuginfod's answer). */
void sym_hint_module(struct sbuf *out, const char *path, uint64_t unnamed, uint64_t samples, uint64_t total,
		     const char *why);

/* The Debian package that installed path (its /var/lib/dpkg/info/PKG.list names it; "/usr/bin/x" is also
 * looked up as "/bin/x", as merged-/usr systems list it) into pkg (n bytes, without ":ARCH"); false when none
 * does. dpkg_info is the directory to search (NULL: /var/lib/dpkg/info). */
bool sym_hint_package(const char *path, const char *dpkg_info, char *pkg, size_t n);

#endif
