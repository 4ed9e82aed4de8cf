/* sbuf.c — growable buffer; grows geometrically so appends are amortized O(1). The shared empty string is
 * only ever read: every write goes to storage the buffer owns (cap > 0). */
#include "base/sbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/utf8.h"

char sbuf_slopbuf[1];

void sbuf_init(struct sbuf *sb)
{
	*sb = (struct sbuf)SBUF_INIT;
}

bool sbuf_grow(struct sbuf *sb, size_t extra)
{
	size_t need;
	if (sb->oom)
		return false;
	if (__builtin_add_overflow(sb->len, extra, &need) || need == SIZE_MAX) { /* refused like any failed grow */
		sb->oom = true;
		return false;
	}
	if (++need <= sb->cap)
		return true;
	size_t cap = grow_cap(need < 64 ? 64 : need, sb->cap);
	char *nb = realloc_array(sb->cap ? sb->buf : NULL, cap, 1);
	if (!nb) {
		sb->oom = true;
		return false;
	}
	if (!sb->cap) /* the text was the shared "" (or a zeroed buffer): nothing to keep */
		sb->len = 0;
	sb->buf = nb;
	sb->cap = cap;
	sb->buf[sb->len] = '\0';
	return true;
}

void sbuf_add(struct sbuf *sb, const void *data, size_t len)
{
	if (!len || !sbuf_grow(sb, len))
		return;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void sbuf_addstr(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_addch(struct sbuf *sb, char c)
{
	if (!sbuf_grow(sb, 1))
		return;
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || !sbuf_grow(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

/* The one JSON string writer: quotes, backslashes and control characters are escaped (\n \t \r by name,
 * the rest as \u00XX); with `sanitize`, every byte that is not part of valid UTF-8 becomes '?'. */
static void add_json(struct sbuf *sb, const char *s, size_t len, bool sanitize)
{
	static const char hex[] = "0123456789abcdef";
	if (!sbuf_grow(sb, len + 2))
		return;
	sbuf_addch(sb, '"');
	size_t start = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80 && sanitize) {
			size_t n = utf8_seq_len((const unsigned char *)s + i, len - i);
			if (n) {
				i += n - 1;
				continue;
			}
			sbuf_add(sb, s + start, i - start);
			sbuf_addch(sb, '?');
			start = i + 1;
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		sbuf_add(sb, s + start, i - start);
		start = i + 1;
		switch (c) {
		case '"': sbuf_add(sb, "\\\"", 2); break;
		case '\\': sbuf_add(sb, "\\\\", 2); break;
		case '\n': sbuf_add(sb, "\\n", 2); break;
		case '\t': sbuf_add(sb, "\\t", 2); break;
		case '\r': sbuf_add(sb, "\\r", 2); break;
		default: {
			char u[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			sbuf_add(sb, u, 6);
		}
		}
	}
	sbuf_add(sb, s + start, len - start);
	sbuf_addch(sb, '"');
}

void sbuf_add_json_str(struct sbuf *sb, const char *s, size_t len)
{
	add_json(sb, s, len, false);
}

void sbuf_add_json_text(struct sbuf *sb, const char *s, size_t len)
{
	add_json(sb, s, len, true);
}

void sbuf_reset(struct sbuf *sb)
{
	sbuf_setlen(sb, 0);
}

void sbuf_setlen(struct sbuf *sb, size_t len)
{
	if (!sb->cap) /* the shared "" stays as it is */
		return;
	sb->len = len < sb->len ? len : sb->len;
	sb->buf[sb->len] = '\0';
}

enum plumb_err sbuf_done(const struct sbuf *sb, struct perr *e)
{
	return sb->oom ? perr_set(e, PLUMB_ENOMEM, "out of memory") : PLUMB_OK;
}

char *sbuf_detach(struct sbuf *sb, size_t *len)
{
	if (!sb->cap)
		sbuf_grow(sb, 0);
	char *b = sb->oom ? NULL : sb->buf;
	if (len)
		*len = b ? sb->len : 0;
	if (!b)
		sbuf_release(sb);
	else
		sbuf_init(sb);
	return b;
}

void sbuf_release(struct sbuf *sb)
{
	if (sb->cap)
		free(sb->buf);
	sbuf_init(sb);
}
