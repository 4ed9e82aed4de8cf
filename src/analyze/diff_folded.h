/* diff_folded.h — differential folded stacks, as inferno's `differential::from_readers(opt, r1, r2, writer)`:
 * two folded profiles in, "stack BEFORE AFTER" lines out (format/diff_folded.h), the input of a differential
 * flame graph. The command (cmd/diff.c) owns the options, the messages and the output file; this library takes
 * an options struct, the two inputs, an output stream and a warning callback. */
#ifndef PLUMB_ANALYZE_DIFF_FOLDED_H
#define PLUMB_ANALYZE_DIFF_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/err.h"

struct diff_folded_opts {
	bool normalize; /* scale BEFORE's counts by total(AFTER) / total(BEFORE) */
	bool strip_hex; /* turn every "0x<hex digits>" into "0x..." */
	void (*warn)(void *ctx, const char *msg); /* one call per warning; may be NULL */
	void *warn_ctx;
};
#define DIFF_FOLDED_OPTS_INIT { false, false, NULL, NULL }

struct fmt_stream;
/* One folded input: its name (for messages) and the stream it is read from (format/stream.h), the caller's. */
struct diff_folded_input {
	const char *name;
	struct fmt_stream *st;
};

/* Reads both inputs to their end (lines split by format/folded_line.h; a fractional count is truncated with one
 * warning per input; a line that does not parse is skipped with one warning per input) and writes one
 * "stack BEFORE AFTER" line per stack seen in either, sorted by stack bytes. The caller owns `out` and checks it
 * (ferror) afterwards. Returns PLUMB_ENOMEM when memory runs out, PLUMB_EFORMAT for a count past 64 bits or an
 * input the stream refuses (nothing written then). */
enum plumb_err diff_folded_from_readers(const struct diff_folded_opts *opt, const struct diff_folded_input *before,
					const struct diff_folded_input *after, FILE *out, struct perr *e);

#endif
