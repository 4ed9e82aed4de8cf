/* diff_folded.c — differential folded stacks (inferno's diff-folded semantics): each input is read as a stream,
 * its lines split by the one folded splitter (format/folded_line.h: "stack COUNT", blank lines and '#' comments
 * passed over, a count past 64 bits refused); a fractional count is truncated (with one warning); a line that
 * does not parse is skipped (one warning per input); normalize scales the first profile's counts by
 * total2 / total1; strip_hex turns every "0x<hex>" into "0x...". Output lines are sorted by stack. */
#include "analyze/diff_folded.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/shown.h"
#include "base/grow.h"
#include "base/idtab.h"
#include "base/sbuf.h"
#include "base/str.h"
#include "format/diff_folded.h"
#include "format/folded_line.h"
#include "format/stream.h"

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

static void warnf(const struct diff_folded_opts *opt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warnf(const struct diff_folded_opts *opt, const char *fmt, ...)
{
	if (!opt->warn)
		return;
	struct sbuf msg = SBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sbuf_vaddf(&msg, fmt, ap);
	va_end(ap);
	opt->warn(opt->warn_ctx, msg.buf);
	sbuf_release(&msg);
}

/* Adds one input's stacks to side A (first) or B of the table; *total is the input's weight. */
static enum plumb_err read_side(const struct diff_folded_opts *opt, const struct diff_folded_input *in,
				struct dtable *t, bool first, uint64_t *total, struct perr *e)
{
	enum plumb_err rc = PLUMB_OK;
	struct sbuf tmp = SBUF_INIT;
	size_t bad = 0, lineno = 0, first_bad = 0;
	char bad_text[120] = "";
	bool fraction = false;
	const char *block;
	size_t blen;
	int got;
	*total = 0;
	in->st->text = true;
	while (!rc && (got = fmt_stream_lines(in->st, &block, &blen, e)) == 1) {
		const char *pos = block, *line, *le;
		while (fmt_folded_next_line(&pos, block + blen, &line, &le)) {
			lineno++;
			struct fmt_folded_line fl;
			enum fmt_folded_kind k = fmt_folded_split(line, le, &fl);
			if (k == FOLDED_NONE)
				continue;
			if (k == FOLDED_OVERFLOW) {
				rc = perr_set(e, PLUMB_EFORMAT, "%s: line %zu: a count past %llu, more than a profile can "
					      "count", in->name, lineno, (unsigned long long)UINT64_MAX);
				break;
			}
			if (k == FOLDED_BAD) {
				if (!bad++) {
					size_t n = (size_t)(le - line);
					first_bad = lineno;
					shown_escape(bad_text, sizeof bad_text, line, n, 60);
				}
				continue;
			}
			fraction |= fl.fraction;
			const char *s = fl.stack;
			size_t sl = fl.stack_len;
			if (opt->strip_hex) {
				strip_hex(&tmp, s, sl);
				s = tmp.buf;
				sl = tmp.len;
			}
			if (*total > UINT64_MAX - fl.count) {
				rc = perr_set(e, PLUMB_EFORMAT, "%s: line %zu: the counts add up past %llu", in->name, lineno,
					      (unsigned long long)UINT64_MAX);
				break;
			}
			if (!dt_add(t, s, sl, fl.count, first)) {
				rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
				break;
			}
			*total += fl.count;
		}
	}
	if (!rc && got < 0)
		rc = e->code ? e->code : PLUMB_EFORMAT;
	if (!rc && fraction)
		warnf(opt, "%s: the input data has fractional sample counts that will be truncated to integers", in->name);
	if (!rc && bad)
		warnf(opt, "%s: Unable to parse line: %s (line %zu; %zu line%s skipped)", in->name, bad_text, first_bad, bad,
		      bad == 1 ? "" : "s");
	sbuf_release(&tmp);
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

enum plumb_err diff_folded_from_readers(const struct diff_folded_opts *opt, const struct diff_folded_input *before,
					const struct diff_folded_input *after, FILE *out, struct perr *e)
{
	static const struct diff_folded_opts defaults = DIFF_FOLDED_OPTS_INIT;
	if (!opt)
		opt = &defaults;
	struct dtable t = { SBUF_INIT, NULL, 0, 0, IDTAB_INIT };
	uint64_t total1 = 0, total2 = 0;
	enum plumb_err rc = read_side(opt, before, &t, true, &total1, e);
	if (!rc)
		rc = read_side(opt, after, &t, false, &total2, e);
	if (!rc && opt->normalize && total1 != total2 && total1)
		for (size_t i = 0; i < t.n; i++)
			t.v[i].a = (uint64_t)((double)t.v[i].a * (double)total2 / (double)total1);
	if (!rc) {
		if (t.n > 1) /* t.v is NULL when both inputs were empty */
			qsort_r(t.v, t.n, sizeof *t.v, cmp_dstack, &t);
		for (size_t i = 0; i < t.n; i++)
			fmt_diff_folded_write_line(out, t.all.buf + t.v[i].off, t.v[i].len, t.v[i].a, t.v[i].b);
	}
	sbuf_release(&t.all);
	free(t.v);
	idtab_release(&t.index);
	return rc;
}
