/* sbuf.h — a growable byte buffer, always NUL-terminated, whose buf is never NULL (git's strbuf and its
 * slopbuf): SBUF_INIT points buf at one shared empty string, so an empty buffer, and one whose grow failed,
 * still reads as "" and callers need no guards. Appends do not fail one by one: a failed grow (out of memory,
 * or a size that would overflow) sets oom and drops every later append; sbuf_done() or sbuf_detach() then
 * reports it once.
 * Ownership: the buffer owns buf once it has grown (cap > 0; the shared empty string is never written or
 * freed); sbuf_release() frees it, sbuf_detach() hands it to the caller. A zeroed struct sbuf is accepted by
 * every function here, but only SBUF_INIT (or sbuf_init) makes buf readable before the first append. */
#ifndef PLUMB_BASE_SBUF_H
#define PLUMB_BASE_SBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

struct sbuf {
	char *buf;   /* NUL-terminated, never NULL: the shared "" until the first grow */
	size_t len;
	size_t cap;  /* 0 while buf is the shared "" */
	bool oom;    /* set when a grow failed; later appends are dropped */
};

extern char sbuf_slopbuf[];
#define SBUF_INIT { sbuf_slopbuf, 0, 0, false }

/* Makes *sb an empty buffer (SBUF_INIT), for buffers inside zeroed or reused structs. */
void sbuf_init(struct sbuf *sb);
/* Makes room for extra more bytes (and the NUL). False, with oom set, when it cannot. */
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
/* Empties the buffer, keeping its storage (and its oom state). */
void sbuf_reset(struct sbuf *sb);
/* Cuts the text to its first len bytes (len <= sb->len). */
void sbuf_setlen(struct sbuf *sb, size_t len);
/* PLUMB_OK, or PLUMB_ENOMEM with "out of memory" in e when a grow failed: the one check after a series of
 * appends. */
enum plumb_err sbuf_done(const struct sbuf *sb, struct perr *e);
/* Hands the text to the caller (malloc'd, NUL-terminated; free() it) and *len its length when len is not NULL.
 * NULL when a grow failed or memory runs out: then the text is freed. The buffer is SBUF_INIT afterwards. */
char *sbuf_detach(struct sbuf *sb, size_t *len);
/* Frees the storage; the buffer is SBUF_INIT afterwards (it accepts SBUF_INIT and zeroed buffers). */
void sbuf_release(struct sbuf *sb);

#endif
