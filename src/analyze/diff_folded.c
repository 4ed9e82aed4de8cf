/* diff_folded.c — differential folded stacks (inferno's diff-folded semantics): each input line is
 * "stack COUNT" split at its last space; a fractional count is truncated (with one warning); a line that does
 * not parse is skipped (one warning per file); --normalize scales the first profile's counts by
 * total2 / total1; --strip-hex turns every "0x<hex>" into "0x...". Output lines are sorted by stack. */
#include "analyze/diff_folded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/grow.h"
#include "base/idtab.h"
#include "base/opt.h"
#include "base/sbuf.h"
#include "cmd/cmd.h"

struct dstack {
	size_t off, len; /* the stack text in dtable.all */
	uint64_t a, b;
};

struct dtable {
	struct sbuf all;
	struct dstack *v;
	size_t n, cap;
	struct idtab index; /* stack text -> index in v */
};

struct dkey {
	const char *s;
	size_t len;
};

static bool dt_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct dtable *t = ctx;
	const struct dkey *k = key;
	const struct dstack *d = &t->v[id];
	return d->len == k->len && memcmp(t->all.buf + d->off, k->s, k->len) == 0;
}

static bool dt_add(struct dtable *t, const char *s, size_t len, uint64_t count, bool first)
{
	uint64_t h = hash_bytes(s, len);
	uint32_t id = idtab_find(&t->index, h, dt_eq, t, &(struct dkey){ s, len });
	if (id != IDTAB_NONE) {
		struct dstack *d = &t->v[id];
		if (first)
			d->a += count;
		else
			d->b += count;
		return true;
	}
	if (!ALLOC_GROW(t->v, t->n + 1, t->cap))
		return false;
	struct dstack *d = &t->v[t->n];
	d->off = t->all.len;
	d->len = len;
	d->a = first ? count : 0;
	d->b = first ? 0 : count;
	sbuf_add(&t->all, s, len);
	if (t->all.oom || t->n >= IDTAB_NONE || !idtab_add(&t->index, h, (uint32_t)t->n))
		return false;
	t->n++;
	return true;
}

/* Splits "stack COUNT" at the last space. Returns false when the count is not a whole or decimal number;
 * *fraction is set when a non-zero fractional part was dropped. */
static bool parse_line(const char *line, size_t n, size_t *stack_len, uint64_t *count, bool *fraction)
{
	const char *sp = memrchr(line, ' ', n);
	if (!sp)
		return false;
	const char *c = sp + 1, *ce = line + n;
	while (ce > c && (ce[-1] == ' ' || ce[-1] == '\t' || ce[-1] == '\r' || ce[-1] == '\n'))
		ce--;
	const char *dot = memchr(c, '.', (size_t)(ce - c));
	const char *ie = dot ? dot : ce;
	if (dot) {
		for (const char *q = dot + 1; q < ce; q++)
			if (*q < '0' || *q > '9')
				return false;
		for (const char *q = dot + 1; q < ce; q++)
			if (*q != '0')
				*fraction = true;
	}
	if (ie == c)
		return false;
	uint64_t v = 0;
	for (const char *q = c; q < ie; q++) {
		if (*q < '0' || *q > '9' || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	const char *se = sp;
	while (se > line && (se[-1] == ' ' || se[-1] == '\t' || se[-1] == '\r' || se[-1] == '\n'))
		se--;
	*stack_len = (size_t)(se - line);
	*count = v;
	return true;
}

static void strip_hex(struct sbuf *out, const char *s, size_t n)
{
	sbuf_reset(out);
	size_t i = 0;
	while (i < n) {
		const char *x = memmem(s + i, n - i, "0x", 2);
		if (!x) {
			sbuf_add(out, s + i, n - i);
			break;
		}
		size_t at = (size_t)(x - s);
		sbuf_add(out, s + i, at + 2 - i);
		size_t j = at + 2;
		while (j < n && ((s[j] >= '0' && s[j] <= '9') || (s[j] >= 'a' && s[j] <= 'f') || (s[j] >= 'A' && s[j] <= 'F')))
			j++;
		if (j > at + 2)
			sbuf_add(out, "...", 3);
		i = j;
	}
}

static enum plumb_err read_side(const char *path, struct dtable *t, bool first, bool hex, uint64_t *total,
				struct perr *e)
{
	struct fmt_input in;
	enum plumb_err rc = fmt_load(path, &in, e);
	if (rc)
		return rc;
	struct sbuf tmp = SBUF_INIT;
	size_t bad = 0, lineno = 0, first_bad = 0;
	char bad_text[120] = "";
	bool fraction = false;
	const char *end = in.data + in.len;
	*total = 0;
	for (const char *line = in.data; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = (size_t)((nl ? nl : end) - line);
		lineno++;
		size_t sl;
		uint64_t count;
		if (!parse_line(line, n, &sl, &count, &fraction)) {
			if (!bad++) {
				first_bad = lineno;
				snprintf(bad_text, sizeof bad_text, "%.*s", (int)(n > 100 ? 100 : n), line);
			}
		} else {
			const char *s = line;
			if (hex) {
				strip_hex(&tmp, line, sl);
				s = tmp.buf;
				sl = tmp.len;
			}
			if (!dt_add(t, s, sl, count, first)) {
				rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
				break;
			}
			*total += count;
		}
		line = nl ? nl + 1 : end;
	}
	if (!rc && fraction)
		plumb_warn("%s: the input data has fractional sample counts that will be truncated to integers", path);
	if (!rc && bad)
		plumb_warn("%s: Unable to parse line: %s (line %zu; %zu line%s skipped)", path, bad_text, first_bad, bad,
			   bad == 1 ? "" : "s");
	sbuf_release(&tmp);
	fmt_input_release(&in);
	return rc;
}

/* Stacks in byte order of their text (ctx: the table holding the text). */
static int cmp_dstack(const void *x, const void *y, void *ctx)
{
	const struct dtable *t = ctx;
	const struct dstack *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(t->all.buf + a->off, t->all.buf + b->off, n);
	return c ? c : (a->len < b->len ? -1 : a->len > b->len);
}

int diff_folded_main(int argc, char **argv)
{
	bool folded = false, normalize = false, hex = false;
	const char *output = "-";
	const struct opt opts[] = {
		{ "folded", 0, OPT_FLAG, &folded, NULL, "write the differential folded format", NULL },
		{ "normalize", 0, OPT_FLAG, &normalize, NULL, "scale BEFORE's counts to AFTER's total", NULL },
		{ "strip-hex", 0, OPT_FLAG, &hex, NULL, "replace hex addresses (0x45ef2173) with 0x...", NULL },
		{ "output", 'o', OPT_STRING, &output, "PATH", "where to write (default: stdout)", NULL },
		{ NULL, 0, OPT_END, NULL, NULL, NULL, NULL },
	};
	struct opt_result res;
	int code;
	if (!cmd_parse_options(opts, "plumb diff BEFORE AFTER --folded [--normalize] [--strip-hex] [-o OUT]",
			       "Write differential folded stacks (\"stack BEFORE AFTER\"), the input of a "
			       "differential flame graph.", argc, argv, &res, &code))
		return code;
	if (res.npos != 2) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "diff --folded: give two folded profiles, BEFORE and AFTER");
	}
	struct dtable t = { SBUF_INIT, NULL, 0, 0, IDTAB_INIT };
	struct perr e = PERR_INIT;
	uint64_t total1 = 0, total2 = 0;
	enum plumb_err rc = read_side(res.pos[0], &t, true, hex, &total1, &e);
	if (!rc)
		rc = read_side(res.pos[1], &t, false, hex, &total2, &e);
	opt_result_release(&res);
	if (!rc && normalize && total1 != total2 && total1)
		for (size_t i = 0; i < t.n; i++)
			t.v[i].a = (uint64_t)((double)t.v[i].a * (double)total2 / (double)total1);
	struct atomic_file af = ATOMIC_FILE_INIT;
	if (!rc) {
		qsort_r(t.v, t.n, sizeof *t.v, cmp_dstack, &t);
		rc = atomic_open(&af, output, &e);
	}
	if (!rc) {
		for (size_t i = 0; i < t.n; i++) {
			fwrite(t.all.buf + t.v[i].off, 1, t.v[i].len, af.fp);
			fprintf(af.fp, " %llu %llu\n", (unsigned long long)t.v[i].a, (unsigned long long)t.v[i].b);
		}
		if (ferror(af.fp)) {
			atomic_abort(&af);
			rc = perr_set(&e, PLUMB_EOUTPUT, "cannot write %s", output);
		} else {
			rc = atomic_commit(&af, &e);
		}
	}
	sbuf_release(&t.all);
	free(t.v);
	idtab_release(&t.index);
	return rc ? perr_report(&e) : EXIT_DONE;
}

/* ---- reading a two-column file back (for flame graphs) ---- */

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

bool diff_folded_is_two_column(const char *buf, size_t len)
{
	const char *end = buf + len;
	for (const char *line = buf; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end;
		const char *s = line;
		while (s < le && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s < le && *s != '#') {
			uint64_t a, b;
			const char *se;
			return two_counts(s, le, &a, &b, &se);
		}
		line = nl ? nl + 1 : end;
	}
	return false;
}

static uint32_t add_stack(struct profile *p, const char *s, const char *se)
{
	uint32_t node = PROFILE_ROOT;
	for (const char *f = s; f <= se;) {
		const char *semi = memchr(f, ';', (size_t)(se - f));
		const char *fe = semi ? semi : se;
		struct frame fr = { 0 };
		fr.is_label = 1;
		fr.func = profile_intern(p, f, (size_t)(fe - f));
		uint32_t id = fr.func == PROFILE_NOMEM ? PROFILE_NOMEM : profile_frame(p, &fr);
		if (id == PROFILE_NOMEM || (node = profile_stack(p, node, id)) == PROFILE_NOMEM)
			return PROFILE_NOMEM;
		if (!semi)
			break;
		f = semi + 1;
	}
	return node;
}

enum plumb_err diff_folded_read_two_column(const char *buf, size_t len, const struct fmt_read_opts *ro,
					   struct profile **before, struct profile **after, struct perr *e)
{
	struct profile *pa = profile_new(), *pb = profile_new();
	uint32_t ta = pa ? profile_thread(pa, 0, 0, "all") : PROFILE_NOMEM;
	uint32_t tb = pb ? profile_thread(pb, 0, 0, "all") : PROFILE_NOMEM;
	size_t bad = 0;
	if (ta == PROFILE_NOMEM || tb == PROFILE_NOMEM)
		goto oom;
	const char *end = buf + len;
	for (const char *line = buf; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end;
		const char *s = line;
		line = nl ? nl + 1 : end;
		while (s < le && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s == le || *s == '#')
			continue;
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
