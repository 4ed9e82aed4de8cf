/* folded_line.h — the one splitter of a folded text line, under every folded reader (format/folded.c,
 * format/diff_folded.c, analyze/diff_folded.c), so they agree on what a line is:
 *   - leading and trailing blanks (space, tab, CR) are not part of it; a line then empty, or starting with '#'
 *     or "//", is no data (a comment);
 *   - its last blank-separated token is a count: digits with at most one '.' (a fractional part is dropped, as
 *     the FlameGraph tools do; ".5" and "1.2.3" are not counts); the stack is what comes before it, trailing
 *     blanks trimmed, and is never empty;
 *   - when the token before that is a count too, the line has two counts ("stack BEFORE AFTER", the
 *     differential format); a one-column reader keeps that token in its stack;
 *   - a count past 2^64 - 1, in either place, is refused (FOLDED_OVERFLOW), never wrapped or read as text. */
#ifndef PLUMB_FORMAT_FOLDED_LINE_H
#define PLUMB_FORMAT_FOLDED_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fmt_folded_kind {
	FOLDED_NONE,     /* blank or a comment: no data */
	FOLDED_DATA,     /* a stack and one or two counts */
	FOLDED_BAD,      /* not folded: no trailing count, or nothing before it */
	FOLDED_OVERFLOW, /* a count too large for 64 bits */
};

struct fmt_folded_line {
	const char *stack;  /* the stack with the token before the last count (one-column view) */
	size_t stack_len;
	uint64_t count;     /* the last count */
	bool two;           /* the token before the last is a count too: */
	size_t stack2_len;  /*   the stack without it (stack2_len <= stack_len, same start) */
	uint64_t count2;    /*   and its value (BEFORE; count is AFTER) */
	bool fraction;      /* a non-zero fractional part was dropped from a count */
};

/* Splits the line [s, e) (without its '\n'). */
enum fmt_folded_kind fmt_folded_split(const char *s, const char *e, struct fmt_folded_line *out);

/* The next line of [*pos, end): [*s, *le) without its '\n'; *pos moves past it. False at the end. */
bool fmt_folded_next_line(const char **pos, const char *end, const char **s, const char **le);

#endif
