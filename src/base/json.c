/* json.c — the pull tokenizer. One pass over the text, no allocation except decoded strings the caller asks
 * for; every path that reads past a byte first checks the end, and nesting is counted against the cap, so no
 * input can overrun the text or the C stack. */
#include "base/json.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double jr_pow10[23] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
			      1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };

#define IS_DIGIT(c) ((unsigned)((c) - '0') < 10u)

void jr_init(struct json_reader *j, const char *buf, size_t len, const char *what, struct perr *e)
{
	memset(j, 0, sizeof *j);
	j->buf = j->p = buf;
	j->end = buf + len;
	j->max_depth = JR_MAX_DEPTH;
	j->max_string = JR_MAX_STRING;
	j->what = what ? what : "malformed JSON";
	j->e = e;
	j->scratch = (struct sbuf)SBUF_INIT;
}

void jr_release(struct json_reader *j)
{
	sbuf_release(&j->scratch);
}

static bool fail_code(struct json_reader *j, enum plumb_err code, const char *fmt, va_list ap)
{
	if (j->failed)
		return false;
	j->failed = true;
	const char *at = j->p < j->end ? j->p : j->end;
	struct jr_error *err = &j->err;
	err->code = code;
	err->offset = (size_t)(at - j->buf);
	err->line = 1;
	const char *line_start = j->buf;
	for (const char *q = j->buf; (q = memchr(q, '\n', (size_t)(at - q))) != NULL; q++) {
		err->line++;
		line_start = q + 1;
	}
	err->column = (size_t)(at - line_start) + 1;
	vsnprintf(err->text, sizeof err->text, fmt, ap);
	if (code == PLUMB_EFORMAT && j->p >= j->end) {
		bool blank = true;
		for (const char *q = j->buf; q < j->end && blank; q++)
			blank = *q == ' ' || *q == '\n' || *q == '\r' || *q == '\t';
		snprintf(err->text, sizeof err->text, "%s",
			 blank ? "the input is empty" : "unexpected end of input (the input is truncated)");
	}
	if (j->e)
		perr_set(j->e, code, "%s at byte %zu%s%s: %s (line %zu, column %zu)", j->what, err->offset,
			 j->where[0] ? " in " : "", j->where, err->text, err->line, err->column);
	return false;
}

bool jr_fail(struct json_reader *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_code(j, PLUMB_EFORMAT, fmt, ap);
	va_end(ap);
	return false;
}

static bool oom_v(struct json_reader *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_code(j, PLUMB_ENOMEM, fmt, ap);
	va_end(ap);
	return false;
}

bool jr_oom(struct json_reader *j)
{
	return oom_v(j, "out of memory");
}

void jr_where(struct json_reader *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(j->where, sizeof j->where, fmt, ap);
	va_end(ap);
}

bool jr_key_is(const char *key, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	return n == m && memcmp(key, lit, n) == 0;
}

bool jr_lit(struct json_reader *j, const char *lit, size_t n)
{
	if (j->failed)
		return false;
	jr_ws(j);
	size_t avail = (size_t)(j->end - j->p);
	if (avail < n && memcmp(j->p, lit, avail) == 0)
		j->p = j->end; /* the input ends inside the literal */
	if (avail < n || memcmp(j->p, lit, n) != 0)
		return jr_fail(j, "invalid literal");
	j->p += n;
	return true;
}

bool jr_bool(struct json_reader *j, bool *out)
{
	int c = jr_peek(j);
	if (c == 't') {
		*out = true;
		return jr_lit(j, "true", 4);
	}
	if (c == 'f') {
		*out = false;
		return jr_lit(j, "false", 5);
	}
	return jr_fail(j, "expected true or false");
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool read_hex4(const char *p, const char *end, unsigned *out)
{
	if (end - p < 4)
		return false;
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		int h = hexval((unsigned char)p[i]);
		if (h < 0)
			return false;
		v = v * 16 + (unsigned)h;
	}
	*out = v;
	return true;
}

static void put_utf8(struct sbuf *out, unsigned cp)
{
	char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	sbuf_add(out, b, n);
}

/* The escape at p (just after the backslash; p < end); decodes it into out when out is set. Returns the byte
 * after it, or NULL when it is malformed. */
static const char *read_escape(const char *p, const char *end, struct sbuf *out)
{
	char simple;
	switch (*p) {
	case '"': simple = '"'; break;
	case '\\': simple = '\\'; break;
	case '/': simple = '/'; break;
	case 'b': simple = '\b'; break;
	case 'f': simple = '\f'; break;
	case 'n': simple = '\n'; break;
	case 'r': simple = '\r'; break;
	case 't': simple = '\t'; break;
	case 'u': {
		unsigned cp, lo;
		if (!read_hex4(p + 1, end, &cp))
			return NULL;
		p += 5;
		if (cp >= 0xd800 && cp < 0xdc00 && end - p >= 6 && p[0] == '\\' && p[1] == 'u' &&
		    read_hex4(p + 2, end, &lo) && lo >= 0xdc00 && lo < 0xe000) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			p += 6;
		}
		if (cp >= 0xd800 && cp < 0xe000)
			cp = 0xfffd; /* a lone surrogate */
		if (out)
			put_utf8(out, cp);
		return p;
	}
	default: return NULL;
	}
	if (out)
		sbuf_addch(out, simple);
	return p + 1;
}

bool jr_string(struct json_reader *j, struct sbuf *out, const char **raw, size_t *rawlen, bool *escaped)
{
	if (jr_peek(j) != '"')
		return jr_fail(j, "expected a string");
	const char *p = ++j->p, *end = j->end, *start = p;
	bool esc = false;
	for (;;) {
		const char *run = p;
		while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
			p++;
		if (out && p > run)
			sbuf_add(out, run, (size_t)(p - run));
		if ((size_t)(p - start) > j->max_string) {
			j->p = start - 1;
			return jr_fail(j, "a string longer than %zu bytes", j->max_string);
		}
		if (p >= end) {
			j->p = p;
			return jr_fail(j, "unterminated string");
		}
		if (*p == '"')
			break;
		if (*p != '\\') {
			j->p = p;
			return jr_fail(j, "control character in a string");
		}
		esc = true;
		if (p + 1 >= end) {
			j->p = end;
			return jr_fail(j, "unterminated string");
		}
		const char *next = read_escape(p + 1, end, out);
		if (!next) {
			const char *h = p + 2;
			while (p[1] == 'u' && h < end && hexval((unsigned char)*h) >= 0)
				h++;
			j->p = p[1] == 'u' && h == end && end - p < 6 ? end : p; /* cut inside \uXXXX: truncated */
			return jr_fail(j, p[1] == 'u' ? "bad \\u escape" : "bad escape in a string");
		}
		p = next;
	}
	if (out && out->oom)
		return jr_oom(j);
	if (raw)
		*raw = start;
	if (rawlen)
		*rawlen = (size_t)(p - start);
	if (escaped)
		*escaped = esc;
	j->p = p + 1;
	return true;
}

bool jr_number_span(struct json_reader *j, double *out, const char **text, size_t *len, bool *integer)
{
	if (j->failed)
		return false;
	jr_ws(j);
	const char *p = j->p, *end = j->end, *start = p;
	bool neg = false, is_int = true;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (p >= end || !IS_DIGIT(*p)) {
		j->p = p;
		return jr_fail(j, "expected a number");
	}
	uint64_t m = 0;
	int digits = 0, exp10 = 0;
	if (*p == '0') {
		p++;
	} else {
		while (p < end && IS_DIGIT(*p)) {
			if (digits < 19) {
				m = m * 10 + (uint64_t)(*p - '0');
				digits++;
			} else {
				exp10++;
			}
			p++;
		}
	}
	if (p < end && *p == '.') {
		is_int = false;
		p++;
		if (p >= end || !IS_DIGIT(*p)) {
			j->p = p;
			return jr_fail(j, "bad number");
		}
		while (p < end && IS_DIGIT(*p)) {
			if (m == 0 && *p == '0') {
				exp10--;
			} else if (digits < 19) {
				m = m * 10 + (uint64_t)(*p - '0');
				digits++;
				exp10--;
			}
			p++;
		}
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		is_int = false;
		p++;
		int esign = 1, ev = 0;
		if (p < end && (*p == '+' || *p == '-'))
			esign = *p++ == '-' ? -1 : 1;
		if (p >= end || !IS_DIGIT(*p)) {
			j->p = p;
			return jr_fail(j, "bad number");
		}
		while (p < end && IS_DIGIT(*p)) {
			if (ev < 100000)
				ev = ev * 10 + (*p - '0');
			p++;
		}
		exp10 += esign * ev;
	}
	double v;
	if (digits <= 15 && exp10 >= -22 && exp10 <= 22) {
		v = (double)m;
		v = exp10 < 0 ? v / jr_pow10[-exp10] : v * jr_pow10[exp10];
		if (neg)
			v = -v;
	} else {
		char tmp[128];
		size_t n = (size_t)(p - start);
		if (n < sizeof tmp) {
			memcpy(tmp, start, n);
			tmp[n] = '\0';
			v = strtod(tmp, NULL);
		} else {
			char *heap = strndup(start, n);
			if (!heap)
				return jr_oom(j);
			v = strtod(heap, NULL);
			free(heap);
		}
	}
	j->p = p;
	*out = v;
	if (text)
		*text = start;
	if (len)
		*len = (size_t)(p - start);
	if (integer)
		*integer = is_int;
	return true;
}

bool jr_number(struct json_reader *j, double *out)
{
	return jr_number_span(j, out, NULL, NULL, NULL);
}

static bool open_container(struct json_reader *j)
{
	if (++j->depth > j->max_depth)
		return jr_fail(j, "nested too deeply (more than %d levels)", j->max_depth);
	j->p++;
	return true;
}

static bool skip_container(struct json_reader *j, char close)
{
	if (!open_container(j))
		return false;
	if (jr_peek(j) == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		if (close == '}') {
			if (!jr_string(j, NULL, NULL, NULL, NULL))
				return false;
			if (jr_peek(j) != ':')
				return jr_fail(j, "expected ':'");
			j->p++;
		}
		if (!jr_skip(j))
			return false;
		int c = jr_peek(j);
		if (c == ',') {
			j->p++;
			continue;
		}
		if (c == close) {
			j->p++;
			j->depth--;
			return true;
		}
		return jr_fail(j, close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

bool jr_skip(struct json_reader *j)
{
	double d;
	if (j->failed)
		return false;
	switch (jr_peek(j)) {
	case '{': return skip_container(j, '}');
	case '[': return skip_container(j, ']');
	case '"': return jr_string(j, NULL, NULL, NULL, NULL);
	case 't': return jr_lit(j, "true", 4);
	case 'f': return jr_lit(j, "false", 5);
	case 'n': return jr_lit(j, "null", 4);
	case -1: return jr_fail(j, "unexpected end of input");
	case '-': return jr_number(j, &d);
	default: return IS_DIGIT(*j->p) ? jr_number(j, &d) : jr_fail(j, "expected a value");
	}
}

bool jr_obj_begin(struct json_reader *j)
{
	if (j->failed)
		return false;
	if (jr_peek(j) != '{')
		return jr_fail(j, "expected an object");
	return open_container(j);
}

int jr_obj_next(struct json_reader *j, bool *first, const char **key, size_t *klen)
{
	if (j->failed)
		return -1;
	int c = jr_peek(j);
	if (c == '}') {
		j->p++;
		j->depth--;
		return 0;
	}
	if (!*first) {
		if (c != ',') {
			jr_fail(j, "expected ',' or '}'");
			return -1;
		}
		j->p++;
	}
	*first = false;
	bool esc;
	if (!jr_string(j, NULL, key, klen, &esc))
		return -1;
	if (esc) { /* rare: decode into scratch */
		const char *after = j->p;
		j->p = *key - 1;
		sbuf_reset(&j->scratch);
		if (!jr_string(j, &j->scratch, NULL, NULL, NULL))
			return -1;
		j->p = after;
		*key = j->scratch.buf;
		*klen = j->scratch.len;
	}
	if (jr_peek(j) != ':') {
		jr_fail(j, "expected ':'");
		return -1;
	}
	j->p++;
	return 1;
}

bool jr_arr_begin(struct json_reader *j)
{
	if (j->failed)
		return false;
	if (jr_peek(j) != '[')
		return jr_fail(j, "expected an array");
	return open_container(j);
}

int jr_arr_next(struct json_reader *j, bool *first)
{
	if (j->failed)
		return -1;
	int c = jr_peek(j);
	if (c == ']') {
		j->p++;
		j->depth--;
		return 0;
	}
	if (!*first) {
		if (c != ',') {
			jr_fail(j, "expected ',' or ']'");
			return -1;
		}
		j->p++;
	}
	*first = false;
	return 1;
}
