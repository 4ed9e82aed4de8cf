/* sbuf.h — a growable byte buffer, always NUL-terminated (git's strbuf, smaller).
 * SBUF_INIT is a valid empty buffer; the buffer owns `buf` until sbuf_detach() hands it to the caller. */
#ifndef PLUMB_BASE_SBUF_H
#define PLUMB_BASE_SBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct sbuf {
	char *buf;   /* NUL-terminated; never NULL after a successful grow (points at "" when empty) */
	size_t len;
	size_t cap;
	bool oom;    /* set when a grow failed; later appends are dropped */
};
#define SBUF_INIT { NULL, 0, 0, false }

bool sbuf_grow(struct sbuf *sb, size_t extra);
void sbuf_add(struct sbuf *sb, const void *data, size_t len);
void sbuf_addstr(struct sbuf *sb, const char *s);
void sbuf_addch(struct sbuf *sb, char c);
void sbuf_addf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap);
/* Appends s as a JSON string literal, quotes included: the one JSON string writer (quotes, backslashes and
 * control characters escaped; other bytes as they are, so s must be UTF-8 for the result to be JSON). */
void sbuf_add_json_str(struct sbuf *sb, const char *s, size_t len);
/* The same for any bytes: each byte that is not part of valid UTF-8 is written as '?', so the result always
 * parses (labels from perf script text and symbol tables are not guaranteed to be UTF-8). */
void sbuf_add_json_text(struct sbuf *sb, const char *s, size_t len);
void sbuf_reset(struct sbuf *sb);
/* Returns the NUL-terminated string ("" when empty); never NULL unless out of memory. */
const char *sbuf_str(struct sbuf *sb);
/* Hands the storage to the caller (free() it); the buffer is empty afterwards. */
char *sbuf_detach(struct sbuf *sb, size_t *len);
void sbuf_release(struct sbuf *sb);

#endif
