/* diff_folded.h — the two-column differential folded format (inferno's diff-folded, flamegraph.pl's
 * difffolded.pl): "stack BEFORE AFTER" per line, the input of a differential flame graph. */
#ifndef PLUMB_ANALYZE_DIFF_FOLDED_H
#define PLUMB_ANALYZE_DIFF_FOLDED_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "format/format.h"
#include "profile/profile.h"

/* `plumb diff A B --folded [--normalize] [--strip-hex] [-o OUT]`: argv[0] is the command name; --folded is
 * accepted and ignored. Writes "stack countA countB" lines sorted by stack. Returns an exit code. */
int diff_folded_main(int argc, char **argv);

/* True when the first data line of a folded text has two trailing counts ("stack 12 34"). */
bool diff_folded_is_two_column(const char *buf, size_t len);

/* Reads a two-column file into two new profiles (caller frees both). Lines that do not parse are skipped with
 * one warning through ro->warn. */
enum plumb_err diff_folded_read_two_column(const char *buf, size_t len, const struct fmt_read_opts *ro,
					   struct profile **before, struct profile **after, struct perr *e);

#endif
