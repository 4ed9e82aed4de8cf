/* diff_folded.h — the differential folded format (inferno's diff-folded, flamegraph.pl's difffolded.pl): one
 * "stack BEFORE AFTER" line per stack, frames separated by ';'. `plumb diff --folded` writes it (through
 * analyze/diff_folded.c); `plumb flame` reads it back into the two profiles of a differential graph. */
#ifndef PLUMB_FORMAT_DIFF_FOLDED_H
#define PLUMB_FORMAT_DIFF_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "format/format.h"
#include "profile/profile.h"

/* Writes one line "stack BEFORE AFTER\n" (stack is len bytes, not NUL-terminated). The caller owns `out` and
 * checks it for errors (ferror) when done. */
void fmt_diff_folded_write_line(FILE *out, const char *stack, size_t len, uint64_t before, uint64_t after);

/* True when the first data line of a folded text (blank lines and '#' comments skipped) has two trailing counts
 * ("stack 12 34"). */
bool fmt_diff_folded_is_two_column(const char *buf, size_t len);

/* Reads a two-column stream into two new profiles, one thread "all" each, every frame a finished label (the
 * caller frees both). Lines that do not parse are skipped with one warning through ro->warn (ro may be NULL); a
 * count past 64 bits, or counts that add up past a profile's, is PLUMB_EFORMAT. */
struct fmt_stream;
enum plumb_err fmt_diff_folded_read_stream(struct fmt_stream *st, const struct fmt_read_opts *ro,
					   struct profile **before, struct profile **after, struct perr *e);
/* The same over a buffer (borrowed). */
enum plumb_err fmt_diff_folded_read(const char *buf, size_t len, const struct fmt_read_opts *ro,
				    struct profile **before, struct profile **after, struct perr *e);

#endif
