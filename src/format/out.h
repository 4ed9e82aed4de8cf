/* out.h — where writers put their bytes: a block buffer over the output FILE, gzip-compressed on the way when
 * asked (zlib's streaming deflate), so no writer holds its whole output in memory and none pays stdio's
 * per-call locking for millions of small writes. Internal to format/.
 *
 * Ownership: fmt_out_new() returns a writer the caller ends with fmt_out_close() (which flushes, finishes the
 * gzip stream, checks the FILE and frees the writer). The FILE stays the caller's. */
#ifndef PLUMB_FORMAT_OUT_H
#define PLUMB_FORMAT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "base/progress.h"
#include "base/sbuf.h"

struct fmt_out;

/* zlib's level for what plumb gzips: 1, the fastest. Profiles compress well at any level (a Firefox JSON to a
 * fifth at 1, a sixth at 6) and level 6 ran at a third of the speed, slower than reading the input. */
#define FMT_GZIP_LEVEL 1

/* A writer to fp; gzip: compress what is written. NULL when out of memory. */
struct fmt_out *fmt_out_new(FILE *fp, bool gzip);
/* Reports the bytes written so far to a progress display (base/progress.h; NULL: none). */
void fmt_out_progress(struct fmt_out *o, struct progress *p);
void fmt_out_bytes(struct fmt_out *o, const void *s, size_t n);
void fmt_out_str(struct fmt_out *o, const char *s);
void fmt_out_ch(struct fmt_out *o, char c);
void fmt_out_u64(struct fmt_out *o, uint64_t v);
/* A JSON string literal of s[0..n) (redacted through base/redact.h when `redact`). */
void fmt_out_json(struct fmt_out *o, const char *s, size_t n, bool redact);
/* A decimal with up to `decimals` digits after the point, trailing zeros dropped (for JSON numbers). */
void fmt_out_fixed(struct fmt_out *o, uint64_t whole, uint64_t frac, unsigned decimals);
/* Marks the writer failed (a caller's own out of memory); fmt_out_close then reports it. */
void fmt_out_fail(struct fmt_out *o);
/* Flushes and frees o; PLUMB_EOUTPUT when a write failed, PLUMB_ENOMEM after fmt_out_fail or a failed
 * scratch buffer. */
enum plumb_err fmt_out_close(struct fmt_out *o, struct perr *e);

#endif
