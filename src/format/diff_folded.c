/* diff_folded.c — reads and writes differential folded lines ("stack BEFORE AFTER"). A line is taken as
 * differential when its last two white-space separated tokens are counts; a fractional count keeps its whole
 * part. Reading builds the BEFORE and AFTER profiles with the same stacks. */
#include "format/diff_folded.h"

#include <string.h>

#include "profile/label.h"

void fmt_diff_folded_write_line(FILE *out, const char *stack, size_t len, uint64_t before, uint64_t after)
{
	fwrite(stack, 1, len, out);
	fprintf(out, " %llu %llu\n", (unsigned long long)before, (unsigned long long)after);
}

/* The last two whitespace-separated tokens of [s, e) as numbers; *stack_end is where the stack text ends. */
static bool two_counts(const char *s, const char *e, uint64_t *a, uint64_t *b, const char **stack_end)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		e--;
	uint64_t v[2];
	for (int k = 1; k >= 0; k--) {
		const char *ne = e;
		while (e > s && ((e[-1] >= '0' && e[-1] <= '9') || e[-1] == '.'))
			e--;
		if (e == ne || e == s || (e[-1] != ' ' && e[-1] != '\t') || *e == '.')
			return false;
		uint64_t x = 0;
		for (const char *q = e; q < ne && *q != '.'; q++)
			x = x * 10 + (uint64_t)(*q - '0');
		v[k] = x;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
	}
	*a = v[0];
	*b = v[1];
	*stack_end = e;
	return e > s;
}

/* The next data line of [*line, end): its first non-blank byte in *s and its end in *le; blank lines and '#'
 * comments are passed over. Returns false at the end of the text. */
static bool next_data_line(const char **line, const char *end, const char **s, const char **le)
{
	while (*line < end) {
		const char *nl = memchr(*line, '\n', (size_t)(end - *line));
		*le = nl ? nl : end;
		*s = *line;
		*line = nl ? nl + 1 : end;
		while (*s < *le && (**s == ' ' || **s == '\t' || **s == '\r'))
			(*s)++;
		if (*s < *le && **s != '#')
			return true;
	}
	return false;
}

bool fmt_diff_folded_is_two_column(const char *buf, size_t len)
{
	const char *line = buf, *s, *le, *se;
	uint64_t a, b;
	return next_data_line(&line, buf + len, &s, &le) && two_counts(s, le, &a, &b, &se);
}

static uint32_t add_stack(struct profile *p, const char *s, const char *se)
{
	uint32_t node = PROFILE_ROOT;
	for (const char *f = s; f <= se;) {
		const char *semi = memchr(f, ';', (size_t)(se - f));
		const char *fe = semi ? semi : se;
		uint32_t id = label_frame(p, f, (size_t)(fe - f));
		if (id == PROFILE_NOMEM || (node = profile_stack(p, node, id)) == PROFILE_NOMEM)
			return PROFILE_NOMEM;
		if (!semi)
			break;
		f = semi + 1;
	}
	return node;
}

enum plumb_err fmt_diff_folded_read(const char *buf, size_t len, const struct fmt_read_opts *ro,
				    struct profile **before, struct profile **after, struct perr *e)
{
	struct profile *pa = profile_new(), *pb = profile_new();
	uint32_t ta = pa ? profile_thread(pa, 0, 0, "all") : PROFILE_NOMEM;
	uint32_t tb = pb ? profile_thread(pb, 0, 0, "all") : PROFILE_NOMEM;
	size_t bad = 0;
	if (ta == PROFILE_NOMEM || tb == PROFILE_NOMEM)
		goto oom;
	const char *line = buf, *s, *le;
	while (next_data_line(&line, buf + len, &s, &le)) {
		uint64_t a, b;
		const char *se;
		if (!two_counts(s, le, &a, &b, &se)) {
			bad++;
			continue;
		}
		uint32_t sa = add_stack(pa, s, se), sb = add_stack(pb, s, se);
		if (sa == PROFILE_NOMEM || sb == PROFILE_NOMEM || !profile_add_sample(pa, sa, ta, 0, b) ||
		    !profile_add_sample(pb, sb, tb, 0, a))
			goto oom;
	}
	if (bad && ro && ro->warn) {
		char msg[160];
		snprintf(msg, sizeof msg, "skipped %zu line%s that %s not differential folded (\"stack BEFORE AFTER\")",
			 bad, bad == 1 ? "" : "s", bad == 1 ? "is" : "are");
		ro->warn(ro->warn_ctx, msg);
	}
	*before = pb;
	*after = pa;
	return PLUMB_OK;
oom:
	profile_free(pa);
	profile_free(pb);
	return perr_set(e, PLUMB_ENOMEM, "out of memory");
}
