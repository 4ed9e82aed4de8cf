/* folded_line.c — splits a folded text line into its stack and one or two counts (format/folded_line.h holds
 * the rules). Works backwards from the line's end, so a stack may hold any byte, blanks and digits included. */
#include "format/folded_line.h"

#include <string.h>

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The count token that ends at e (after blanks were trimmed): its start in *start. 1 a count (value in *v),
 * 0 no count token there, -1 a count past 64 bits. */
static int count_before(const char *s, const char *e, const char **start, uint64_t *v, bool *fraction)
{
	const char *p = e;
	while (p > s && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.'))
		p--;
	if (p == e || *p == '.' || (p > s && !blank(p[-1])))
		return 0;
	const char *dot = memchr(p, '.', (size_t)(e - p));
	if (dot && memchr(dot + 1, '.', (size_t)(e - dot - 1)))
		return 0;
	uint64_t x = 0;
	for (const char *q = p; q < (dot ? dot : e); q++) {
		unsigned d = (unsigned)(*q - '0');
		if (x > (UINT64_MAX - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	for (const char *q = dot ? dot + 1 : e; q < e; q++)
		if (*q != '0')
			*fraction = true;
	*start = p;
	*v = x;
	return 1;
}

static const char *trim_end(const char *s, const char *e)
{
	while (e > s && blank(e[-1]))
		e--;
	return e;
}

enum fmt_folded_kind fmt_folded_split(const char *s, const char *e, struct fmt_folded_line *out)
{
	memset(out, 0, sizeof *out);
	while (s < e && blank(*s))
		s++;
	if (s == e || *s == '#' || (e - s >= 2 && s[0] == '/' && s[1] == '/'))
		return FOLDED_NONE;
	e = trim_end(s, e);
	const char *c1;
	int got = count_before(s, e, &c1, &out->count, &out->fraction);
	if (got < 0)
		return FOLDED_OVERFLOW;
	const char *se = got ? trim_end(s, c1) : s;
	if (!got || se == s)
		return FOLDED_BAD;
	out->stack = s;
	out->stack_len = (size_t)(se - s);
	const char *c2;
	bool fraction2 = false;
	got = count_before(s, se, &c2, &out->count2, &fraction2);
	if (got < 0)
		return FOLDED_OVERFLOW;
	if (got && trim_end(s, c2) > s) {
		out->two = true;
		out->stack2_len = (size_t)(trim_end(s, c2) - s);
		out->fraction |= fraction2;
	} else {
		out->count2 = 0;
	}
	return FOLDED_DATA;
}

bool fmt_folded_next_line(const char **pos, const char *end, const char **s, const char **le)
{
	if (*pos >= end)
		return false;
	const char *nl = memchr(*pos, '\n', (size_t)(end - *pos));
	*s = *pos;
	*le = nl ? nl : end;
	*pos = nl ? nl + 1 : end;
	return true;
}
