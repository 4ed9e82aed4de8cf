/* term.h — a small terminal layer for full-screen views (plumb top, docs/design.md §13): text fitted to a width,
 * a screen composed line by line into one buffer (written with one write, the whole screen each time, so a
 * redraw never shows half a frame), and keys decoded from what the terminal sends. It speaks the ECMA-48 /
 * xterm sequences every terminal emulator in use understands (alternate screen, cursor, bold, reverse video);
 * it opens no terminal and writes nothing itself: the face owns the terminal.
 *
 * Text from a profile is untrusted (a process may name itself with escape sequences): every byte that is a
 * control character or not UTF-8 is shown escaped (`\x1b`, by base/shown.h, the escaper of every message), so
 * nothing drawn can move the cursor or change the terminal. A character is taken to be one column wide, an escape
 * as many columns as it has characters.
 *
 * Ownership: a term_frame owns its buffer (term_frame_release). */
#ifndef PLUMB_RENDER_TERM_H
#define PLUMB_RENDER_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/sbuf.h"

/* What the face writes on entering and on leaving the full-screen view: the alternate screen with the cursor
 * hidden, and back to the normal screen with the cursor shown and attributes reset. */
#define TERM_ENTER "\033[?1049h\033[?25l\033[H\033[2J"
#define TERM_LEAVE "\033[0m\033[?25h\033[?1049l"

/* Columns s takes once shown (its characters, with each escape as wide as it is). */
size_t term_width(const char *s);
/* Appends s cut to at most width columns, made safe as said above; with pad, spaces fill it up to width.
 * Returns the columns appended. */
size_t term_fit(struct sbuf *out, const char *s, size_t width, bool pad);
/* The same, aligned to the right of width columns (numbers). */
void term_fit_right(struct sbuf *out, const char *s, size_t width);

enum term_attr { TERM_PLAIN = 0, TERM_BOLD = 1, TERM_REVERSE = 2 };

/* One whole screen of rows x cols, built line by line. */
struct term_frame {
	struct sbuf out; /* the bytes to write */
	int rows, cols;
	int row;         /* lines added so far */
};

/* Starts a frame (the cursor goes home); out is reset. rows and cols are at least 1. */
void term_frame_begin(struct term_frame *f, int rows, int cols);
/* Adds the next line: text (made safe, cut to cols) drawn with attr (enum term_attr bits), the rest of the line
 * cleared; with TERM_REVERSE the whole width is drawn. Lines past the last row are dropped. */
void term_frame_line(struct term_frame *f, unsigned attr, const char *text);
/* Ends the frame: the rows not drawn are cleared, and the cursor is shown at (row, col), 0-based, or hidden
 * when row < 0. */
void term_frame_end(struct term_frame *f, int cursor_row, int cursor_col);
void term_frame_release(struct term_frame *f);

/* Keys: a printable byte is itself; these are the others. */
enum term_key {
	TERM_KEY_NONE = 0,
	TERM_KEY_ENTER = 0x100,
	TERM_KEY_ESC,
	TERM_KEY_BACKSPACE,
	TERM_KEY_UP,
	TERM_KEY_DOWN,
	TERM_KEY_LEFT,
	TERM_KEY_RIGHT,
	TERM_KEY_PGUP,
	TERM_KEY_PGDN,
	TERM_KEY_HOME,
	TERM_KEY_END,
	TERM_KEY_UNKNOWN, /* a sequence this layer does not know (consumed whole) */
};
#define TERM_CTRL(c) ((c) & 0x1f) /* Ctrl-L is TERM_CTRL('l') */

/* The first key in buf[0..len): returns it and sets *used to the bytes it took. An escape sequence cut short
 * (more bytes to come) is TERM_KEY_NONE with *used 0; a lone ESC at the end of what was read is TERM_KEY_ESC. */
int term_key(const char *buf, size_t len, size_t *used);

#endif
