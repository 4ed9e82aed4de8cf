/* shown.c — the escaper of shown.h: what a character becomes on a terminal, and a string cut to a cap. */
#include "base/shown.h"

#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

size_t shown_char(const char *s, size_t n, char esc[SHOWN_ESC_MAX], size_t *esc_len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t l = utf8_seq_len(p, n);
	*esc_len = 0;
	if (l == 1 && p[0] >= 0x20 && p[0] != 0x7f)
		return 1;
	if (l == 1) {
		const char *name = p[0] == '\n' ? "\\n" : p[0] == '\t' ? "\\t" : p[0] == '\r' ? "\\r" : NULL;
		if (name) {
			memcpy(esc, name, 2);
			*esc_len = 2;
		} else {
			snprintf(esc, SHOWN_ESC_MAX, "\\x%02x", p[0]);
			*esc_len = 4;
		}
		return 1;
	}
	if (l == 0) { /* not UTF-8: the byte itself, escaped */
		char tmp[8];
		snprintf(tmp, sizeof tmp, "\\x%02x", p[0]);
		memcpy(esc, tmp, 4);
		*esc_len = 4;
		return 1;
	}
	unsigned cp = l == 2 ? ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu)
		     : l == 3 ? ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu) : 0x10000;
	/* C1 controls (some terminals obey them), line and paragraph separators, direction embeddings, overrides
	 * and isolates (they reorder what a person reads) */
	if ((cp >= 0x80 && cp < 0xa0) || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f) {
		char tmp[8];
		snprintf(tmp, sizeof tmp, "\\u%04x", cp);
		memcpy(esc, tmp, 6);
		*esc_len = 6;
	}
	return l;
}

size_t shown_escape(char *dst, size_t size, const char *s, size_t len, size_t max)
{
	enum { RESERVE = 40 }; /* " [... N more bytes]" with N up to 20 digits */
	if (size <= RESERVE)
		return size ? (dst[0] = '\0', 0) : 0;
	size_t j = 0, i = 0, room = size - 1 - RESERVE;
	while (i < len && i < max) {
		char esc[SHOWN_ESC_MAX];
		size_t el, take = shown_char(s + i, len - i, esc, &el);
		size_t out = el ? el : take;
		if (i + take > max || j + out > room)
			break;
		memcpy(dst + j, el ? esc : s + i, out);
		j += out;
		i += take;
	}
	if (i < len)
		j += (size_t)snprintf(dst + j, size - j, " [... %zu more bytes]", len - i);
	dst[j] = '\0';
	return j;
}

bool shown_fputs(const char *s, FILE *out)
{
	size_t n = strlen(s), i = 0, plain = 0;
	bool ok = true;
	while (i < n) {
		char esc[SHOWN_ESC_MAX];
		size_t el, take = shown_char(s + i, n - i, esc, &el);
		if (el) {
			ok &= fwrite(s + plain, 1, i - plain, out) == i - plain && fwrite(esc, 1, el, out) == el;
			plain = i + take;
		}
		i += take;
	}
	ok &= fwrite(s + plain, 1, n - plain, out) == n - plain;
	return ok;
}
