/* term.c — text fitted to columns, screens composed into one buffer, keys decoded (term.h). Every byte that
 * reaches the terminal from a caller's text goes through put_safe(), which lets only printable UTF-8 through
 * (the escaper of base/shown.h). */
#include "render/term.h"

#include <string.h>

#include "base/shown.h"

/* The next character of s at *i: its bytes (*len of them, at s + *start) when it is printable UTF-8, else
 * the escape the one escaper (base/shown.h) shows instead, in esc. Advances *i; returns the columns it takes. */
static size_t next_char(const char *s, size_t n, size_t *i, size_t *start, size_t *len, char esc[SHOWN_ESC_MAX],
			size_t *esc_len)
{
	*start = *i;
	*len = shown_char(s + *i, n - *i, esc, esc_len);
	*i += *len;
	return *esc_len ? *esc_len : 1;
}

size_t term_width(const char *s)
{
	size_t n = strlen(s), w = 0, start, len, el;
	char esc[SHOWN_ESC_MAX];
	for (size_t i = 0; i < n;)
		w += next_char(s, n, &i, &start, &len, esc, &el);
	return w;
}

size_t term_fit(struct sbuf *out, const char *s, size_t width, bool pad)
{
	size_t n = strlen(s), w = 0, start, len, el;
	char esc[SHOWN_ESC_MAX];
	for (size_t i = 0; i < n && w < width;) {
		size_t cols = next_char(s, n, &i, &start, &len, esc, &el);
		if (w + cols > width)
			break; /* an escape is never cut in two */
		if (el)
			sbuf_add(out, esc, el);
		else
			sbuf_add(out, s + start, len);
		w += cols;
	}
	for (; pad && w < width; w++)
		sbuf_addch(out, ' ');
	return w;
}

void term_fit_right(struct sbuf *out, const char *s, size_t width)
{
	size_t w = term_width(s);
	for (; w < width; w++)
		sbuf_addch(out, ' ');
	term_fit(out, s, width, false);
}

void term_frame_begin(struct term_frame *f, int rows, int cols)
{
	if (!f->out.buf)
		sbuf_init(&f->out);
	sbuf_reset(&f->out);
	f->rows = rows > 0 ? rows : 1;
	f->cols = cols > 0 ? cols : 1;
	f->row = 0;
	sbuf_addstr(&f->out, "\033[H\033[0m");
}

void term_frame_line(struct term_frame *f, unsigned attr, const char *text)
{
	if (f->row >= f->rows)
		return;
	if (f->row > 0)
		sbuf_addstr(&f->out, "\r\n");
	if (attr & TERM_BOLD)
		sbuf_addstr(&f->out, "\033[1m");
	if (attr & TERM_REVERSE)
		sbuf_addstr(&f->out, "\033[7m");
	term_fit(&f->out, text, (size_t)f->cols, (attr & TERM_REVERSE) != 0);
	if (attr)
		sbuf_addstr(&f->out, "\033[0m");
	sbuf_addstr(&f->out, "\033[K");
	f->row++;
}

void term_frame_end(struct term_frame *f, int cursor_row, int cursor_col)
{
	if (f->row < f->rows) /* below the last line drawn */
		sbuf_addstr(&f->out, f->row > 0 ? "\r\n\033[J" : "\033[J");
	if (cursor_row >= 0 && cursor_row < f->rows)
		sbuf_addf(&f->out, "\033[%d;%dH\033[?25h", cursor_row + 1,
			  (cursor_col < f->cols ? cursor_col : f->cols - 1) + 1);
	else
		sbuf_addstr(&f->out, "\033[?25l");
}

void term_frame_release(struct term_frame *f)
{
	sbuf_release(&f->out);
}

/* The key a CSI or SS3 sequence's final byte (with its number, for "ESC [ N ~") stands for. */
static int sequence_key(char final, int number)
{
	switch (final) {
	case 'A': return TERM_KEY_UP;
	case 'B': return TERM_KEY_DOWN;
	case 'C': return TERM_KEY_RIGHT;
	case 'D': return TERM_KEY_LEFT;
	case 'H': return TERM_KEY_HOME;
	case 'F': return TERM_KEY_END;
	case '~':
		switch (number) {
		case 1: case 7: return TERM_KEY_HOME;
		case 4: case 8: return TERM_KEY_END;
		case 5: return TERM_KEY_PGUP;
		case 6: return TERM_KEY_PGDN;
		default: return TERM_KEY_UNKNOWN;
		}
	default:
		return TERM_KEY_UNKNOWN;
	}
}

int term_key(const char *buf, size_t len, size_t *used)
{
	*used = 0;
	if (len == 0)
		return TERM_KEY_NONE;
	unsigned char c = (unsigned char)buf[0];
	*used = 1;
	if (c == '\r' || c == '\n')
		return TERM_KEY_ENTER;
	if (c == 0x7f || c == 0x08)
		return TERM_KEY_BACKSPACE;
	if (c != 0x1b)
		return c;
	if (len == 1)
		return TERM_KEY_ESC;
	if (buf[1] != '[' && buf[1] != 'O')
		return TERM_KEY_ESC; /* ESC then another key: the ESC alone, the key next time */
	/* ESC [ params final, or ESC O final */
	int number = 0;
	for (size_t i = 2; i < len; i++) {
		unsigned char b = (unsigned char)buf[i];
		if (b >= '0' && b <= '9') {
			number = number * 10 + (b - '0');
			if (number > 10000)
				number = 10000;
		} else if (b >= 0x40 && b <= 0x7e) {
			*used = i + 1;
			return sequence_key((char)b, number);
		} else if (b < 0x20 || b > 0x7e) { /* not a sequence after all */
			*used = i;
			return TERM_KEY_UNKNOWN;
		}
	}
	*used = 0; /* cut short: wait for the rest */
	return TERM_KEY_NONE;
}
