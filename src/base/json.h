/* json.h — the one JSON reader: a pull tokenizer over a document held in memory. It builds nothing: the
 * caller asks for what it expects next (an object and its keys, an array's elements, a string, a number, a
 * literal) or skips a value, which is still fully validated. Big documents (Firefox profiles, bench artifacts)
 * are read with it directly; small ones go through base/json_tree.h, which builds a jansson tree on top.
 *
 * Caps: containers nest at most JR_MAX_DEPTH deep and a string is at most JR_MAX_STRING bytes (both fields of
 * the reader, lowerable). Errors say at which byte, line and column the input went wrong.
 * Ownership: the reader borrows the text (it must outlive the reader) and owns only its scratch buffer, which
 * jr_release() frees. Keys and strings it hands out point into the text or into that scratch buffer and stay
 * valid until the next call on the reader. */
#ifndef PLUMB_BASE_JSON_H
#define PLUMB_BASE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/sbuf.h"

#define JR_MAX_DEPTH 256                    /* open arrays and objects at once */
#define JR_MAX_STRING ((size_t)64 << 20)    /* bytes of one string between its quotes */

/* Where and why reading failed. line and column count from 1; offset from 0. */
struct jr_error {
	enum plumb_err code; /* PLUMB_EFORMAT, or PLUMB_ENOMEM when memory ran out (PLUMB_EIO: a file unread) */
	size_t offset, line, column;
	char text[160];
};

struct json_reader {
	const char *buf, *p, *end; /* the text; p is the cursor (callers may advance it over bytes they checked) */
	int depth, max_depth;      /* open containers; the cap */
	size_t max_string;
	bool failed;               /* set by the first error; every later call fails at once */
	const char *what;          /* the message prefix ("malformed Firefox profile") */
	struct perr *e;            /* filled on error when not NULL */
	char where[96];            /* an optional path in the document for messages (jr_where) */
	struct jr_error err;
	struct sbuf scratch;       /* decoded keys that held escapes */
};

/* Starts reading buf[0..len) with the default caps. what prefixes error messages; e may be NULL. */
void jr_init(struct json_reader *j, const char *buf, size_t len, const char *what, struct perr *e);
void jr_release(struct json_reader *j);

/* Fails the reader at the cursor: fills j->err and, when j->e is set, the message
 * "WHAT at byte N[ in WHERE]: REASON (line L, column C)" with PLUMB_EFORMAT. Only the first failure counts.
 * Returns false. jr_oom() is the same with "out of memory" and PLUMB_ENOMEM. */
bool jr_fail(struct json_reader *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool jr_oom(struct json_reader *j);
/* Sets the document path named in later messages ("threads[0].samples"); "" clears it. */
void jr_where(struct json_reader *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Skips white space. */
static inline void jr_ws(struct json_reader *j)
{
	const char *p = j->p, *end = j->end;
	while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	j->p = p;
}

/* The next byte after white space, or -1 at the end of the text. */
static inline int jr_peek(struct json_reader *j)
{
	jr_ws(j);
	return j->p < j->end ? (unsigned char)*j->p : -1;
}

/* Reads the literal lit (n bytes: "null", "true", "false") at the cursor. */
bool jr_lit(struct json_reader *j, const char *lit, size_t n);
/* Reads true or false. */
bool jr_bool(struct json_reader *j, bool *out);

/* Reads a string. With out, the decoded text (UTF-8; \u escapes and surrogate pairs decoded, a lone surrogate
 * becomes U+FFFD) is appended to it; without, it is only checked. *raw and *rawlen (when not NULL) get the span
 * between the quotes as written, *escaped whether it held escapes. */
bool jr_string(struct json_reader *j, struct sbuf *out, const char **raw, size_t *rawlen, bool *escaped);

/* Reads a number as a double: exact for up to 15 significant digits and small exponents, strtod otherwise. */
bool jr_number(struct json_reader *j, double *out);
/* Reads a number and tells its span and whether it is written as an integer (no fraction, no exponent). */
bool jr_number_span(struct json_reader *j, double *out, const char **text, size_t *len, bool *integer);

/* Skips one value of any kind, validating it (nesting counts against the depth cap). */
bool jr_skip(struct json_reader *j);

/* Objects: jr_obj_begin(), then jr_obj_next() until it returns 0 (the closing brace) or -1 (error); after 1 the
 * cursor is at the member's value, which the caller must read or skip. first starts true. Keys come decoded:
 * pointing into the text when they had no escapes, else into the scratch buffer (valid until the next key). */
bool jr_obj_begin(struct json_reader *j);
int jr_obj_next(struct json_reader *j, bool *first, const char **key, size_t *klen);

/* Arrays: jr_arr_begin(), then jr_arr_next() until 0 (the closing bracket) or -1; after 1 the cursor is at the
 * element. A caller that consumes the closing ']' itself must decrement j->depth. */
bool jr_arr_begin(struct json_reader *j);
int jr_arr_next(struct json_reader *j, bool *first);

/* True when only white space is left. */
static inline bool jr_at_end(struct json_reader *j)
{
	return jr_peek(j) == -1;
}

/* Exact powers of ten 1e0..1e22, for callers' own number fast paths. */
extern const double jr_pow10[23];

/* Whether key[0..n) is the C string lit. */
bool jr_key_is(const char *key, size_t n, const char *lit);

#endif
