/* shown.h — the one escaper for text that goes to a person (docs/design.md §3.3): every message line, the
 * progress line, the `top` screen and the text reports. Text from an input or a target may hold escape
 * sequences (clear the screen, set the title) or newlines (fake a second message): a control byte (C0, DEL, the
 * C1 controls U+0080..U+009F), a Unicode direction override and a byte that is not UTF-8 are written as an
 * escape (`\x1b`, `\n`, `\t`, `\u202e`), so nothing shown drives a terminal or splits a line; text longer than
 * a cap is cut with a marker saying how much was left out. Printable UTF-8 passes as it is.
 * No state, no allocation: base's lowest piece (err.c uses it). */
#ifndef PLUMB_BASE_SHOWN_H
#define PLUMB_BASE_SHOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The longest escape one character becomes ("\u202e"), without a NUL. */
#define SHOWN_ESC_MAX 6
/* What a message line is cut to: this many bytes of the formatted text, then the marker. */
#define SHOWN_LINE_MAX 2048

/* The next character of s[0..n) (n > 0): returns the bytes it takes (>= 1). When it may be shown as it is,
 * returns with *esc_len 0; otherwise esc[0..*esc_len) is what to show instead. */
size_t shown_char(const char *s, size_t n, char esc[SHOWN_ESC_MAX], size_t *esc_len);

/* s[0..len) made safe into dst[0..size) (size >= 64; always NUL-terminated): at most `max` bytes of s are
 * shown, then " [... N more bytes]"; an escape or a character is never cut in two. Returns the bytes written. */
size_t shown_escape(char *dst, size_t size, const char *s, size_t len, size_t max);

/* Writes s escaped to out (a text report on stdout: frame, thread and stage names); nothing is cut (labels are
 * capped where they are made, docs/design.md §4.1). Returns false when a write failed. */
bool shown_fputs(const char *s, FILE *out);

#endif
