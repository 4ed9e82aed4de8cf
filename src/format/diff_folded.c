/* diff_folded.c — reads and writes differential folded lines ("stack BEFORE AFTER"). Lines are split by the
 * one folded splitter (format/folded_line.h): differential when its last two tokens are counts, a fractional
 * count keeps its whole part, a count past 64 bits is refused. Reading builds the BEFORE and AFTER profiles with
 * the same stacks. */
#include "format/diff_folded.h"

#include <string.h>

#include "format/folded_line.h"
#include "format/stream.h"
#include "profile/label.h"

void fmt_diff_folded_write_line(FILE *out, const char *stack, size_t len, uint64_t before, uint64_t after)
{
	fwrite(stack, 1, len, out);
	fprintf(out, " %llu %llu\n", (unsigned long long)before, (unsigned long long)after);
}

bool fmt_diff_folded_is_two_column(const char *buf, size_t len)
{
	const char *pos = buf, *end = buf + len, *s, *le;
	while (fmt_folded_next_line(&pos, end, &s, &le)) {
		struct fmt_folded_line fl;
		enum fmt_folded_kind k = fmt_folded_split(s, le, &fl);
		if (k == FOLDED_NONE)
			continue;
		return k == FOLDED_DATA && fl.two;
	}
	return false;
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

enum plumb_err fmt_diff_folded_read_stream(struct fmt_stream *st, const struct fmt_read_opts *ro,
					   struct profile **before, struct profile **after, struct perr *e)
{
	struct profile *pa = profile_new(), *pb = profile_new();
	uint32_t ta = pa ? profile_thread(pa, 0, 0, "all") : PROFILE_NOMEM;
	uint32_t tb = pb ? profile_thread(pb, 0, 0, "all") : PROFILE_NOMEM;
	size_t bad = 0;
	uint64_t lineno = 0;
	enum plumb_err rc = PLUMB_OK;
	if (ta == PROFILE_NOMEM || tb == PROFILE_NOMEM)
		goto oom;
	st->text = true;
	const char *block;
	size_t blen;
	int got;
	while ((got = fmt_stream_lines(st, &block, &blen, e)) == 1) {
		const char *pos = block, *s, *le;
		while (fmt_folded_next_line(&pos, block + blen, &s, &le)) {
			lineno++;
			struct fmt_folded_line fl;
			enum fmt_folded_kind k = fmt_folded_split(s, le, &fl);
			if (k == FOLDED_NONE)
				continue;
			if (k == FOLDED_OVERFLOW) {
				rc = perr_set(e, PLUMB_EFORMAT, "line %llu: a count past %llu, more than a profile can "
					      "count", (unsigned long long)lineno, (unsigned long long)UINT64_MAX);
				goto fail;
			}
			if (k != FOLDED_DATA || !fl.two) {
				bad++;
				continue;
			}
			const char *se = fl.stack + fl.stack2_len;
			uint32_t sa = add_stack(pa, fl.stack, se), sb = add_stack(pb, fl.stack, se);
			if (sa == PROFILE_NOMEM || sb == PROFILE_NOMEM || !profile_add_sample(pa, sa, ta, 0, fl.count) ||
			    !profile_add_sample(pb, sb, tb, 0, fl.count2)) {
				if (profile_overflowed(pa) || profile_overflowed(pb)) {
					rc = perr_set(e, PLUMB_EFORMAT, "line %llu: the counts add up past %llu, more than "
						      "a profile can count", (unsigned long long)lineno,
						      (unsigned long long)PROFILE_MAX_WEIGHT);
					goto fail;
				}
				goto oom;
			}
		}
	}
	if (got < 0) {
		rc = e->code ? e->code : PLUMB_EFORMAT;
		goto fail;
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
	rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
fail: /* neither profile is handed out */
	profile_free(pb);
	profile_free(pa);
	return rc;
}

enum plumb_err fmt_diff_folded_read(const char *buf, size_t len, const struct fmt_read_opts *ro,
				    struct profile **before, struct profile **after, struct perr *e)
{
	struct fmt_stream st;
	enum plumb_err rc = fmt_stream_mem(&st, buf, len, "differential folded text", e);
	if (!rc)
		rc = fmt_diff_folded_read_stream(&st, ro, before, after, e);
	fmt_stream_close(&st);
	return rc;
}
