/* utf8.h — checking UTF-8 for writers whose formats (JSON, XML) must be valid UTF-8 whatever bytes a profile's
 * labels hold (perf script text and symbol names are not guaranteed to be UTF-8). */
#ifndef PLUMB_BASE_UTF8_H
#define PLUMB_BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#include "base/sbuf.h"

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when the bytes there are not valid UTF-8. */
static inline size_t utf8_seq_len(const unsigned char *p, size_t avail)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
	if (!len || avail < len)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if (len == 3) {
		unsigned cp = ((c & 0x0f) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
		if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
	} else if (len == 4) {
		unsigned cp = ((c & 0x07) << 18) | ((p[1] & 0x3fu) << 12);
		if (cp < 0x10000 || cp > 0x10ffff)
			return 0;
	}
	return len;
}

/* Whether s[0..n) is all valid UTF-8. */
static inline bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		size_t l = utf8_seq_len(p + i, n - i);
		if (!l)
			return false;
		i += l;
	}
	return true;
}

/* Appends s to out with every byte that is not part of valid UTF-8 replaced by '?'. */
static inline void utf8_sanitize(struct sbuf *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0;
	while (i < n) {
		size_t l = utf8_seq_len(p + i, n - i);
		if (l) {
			i += l;
			continue;
		}
		sbuf_add(out, s + start, i - start);
		sbuf_addch(out, '?');
		start = ++i;
	}
	sbuf_add(out, s + start, n - start);
}

#endif
