/* pyspy.h — the pieces of the py-spy backend that tests reach: locating py-spy and reading its folded output
 * into a profile with plumb's label shortening. */
#ifndef PLUMB_SAMPLE_PYSPY_H
#define PLUMB_SAMPLE_PYSPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/sbuf.h"
#include "profile/profile.h"

/* Finds an executable py-spy: /usr/local/bin, ~/.cargo/bin, ~/.local/bin, /opt/homebrew/bin, then PATH.
 * Writes its path to out and returns true when found. */
bool pyspy_locate(char *out, size_t n);
/* Appends one py-spy frame with its "(path:LINE)" path cut to the last two components. */
void pyspy_shorten_frame(struct sbuf *out, const char *frame, size_t len);
/* Adds every "a;b;c COUNT" line of text to p as finished labels on thread; lines of another shape are skipped.
 * *total receives the sum of the counts. */
enum plumb_err pyspy_read_folded(const char *text, size_t len, struct profile *p, uint32_t thread, uint64_t *total,
				 struct perr *e);

#endif
