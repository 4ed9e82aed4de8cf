/* folded.c — the folded-stacks format: one line per distinct stack, "outermost;...;innermost COUNT".
 * The writer puts the hottest stack first and breaks ties by the stack text, so output is deterministic. */
#include "format/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/redact.h"
#include "base/hashmap.h"
#include "base/sbuf.h"
#include "format/textcache.h"
#include "profile/label.h"

/* Parses the trailing count of a folded line. Accepts integers and decimals (truncated toward zero, as the
 * FlameGraph tools do). Returns the start of the count, or NULL when the line has none. */
static const char *parse_count(const char *line, const char *end, uint64_t *count)
{
	const char *p = end;
	while (p > line && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r'))
		p--;
	const char *num_end = p;
	while (p > line && ((p[-1] >= '0' && p[-1] <= '9') || p[-1] == '.'))
		p--;
	if (p == num_end || p == line || (p[-1] != ' ' && p[-1] != '\t'))
		return NULL;
	uint64_t v = 0;
	const char *q = p;
	if (*q == '.')
		return NULL;
	for (; q < num_end && *q != '.'; q++) {
		if (v > (UINT64_MAX - 9) / 10)
			return NULL;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	if (q < num_end && memchr(q + 1, '.', (size_t)(num_end - q - 1)))
		return NULL;
	*count = v;
	return p;
}

enum plumb_err fmt_folded_read(const char *buf, size_t len, struct profile *p, struct perr *e)
{
	static const struct fmt_read_opts strict;
	return fmt_folded_read_opts(buf, len, &strict, p, e);
}

/* Reads folded stacks. Sorted input (what collapsers write) shares long prefixes between neighbouring lines, so
 * the frames a line shares with the previous one are not parsed again: the walk resumes from the previous
 * line's node at the last shared frame boundary. Each distinct label is interned once (textcache). In lenient
 * mode a line that is not "stack COUNT" is skipped and reported once at the end. */
enum plumb_err fmt_folded_read_opts(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				    struct perr *e)
{
	uint32_t thread = profile_thread(p, 0, 0, "all");
	struct tcache labels = { NULL, 0, 0 };
	uint32_t *nodes = NULL; /* previous line: node after frame k */
	size_t *ends = NULL;    /* previous line: offset (from its start) where frame k ends */
	size_t depth = 0, cap = 0, prev_len = 0;
	const char *prev = NULL;
	const char *end = buf + len;
	size_t lineno = 0, bad = 0, first_bad_line = 0;
	char first_bad[100] = "";
	enum plumb_err rc = PLUMB_OK;
	if (thread == PROFILE_NOMEM)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	const char *line = buf;
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end;
		const char *s = line;
		line = nl ? nl + 1 : end;
		lineno++;
		while (s < le && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s == le || *s == '#')
			continue;
		uint64_t count;
		const char *cstart = parse_count(s, le, &count);
		if (!cstart) {
			if (!opts->lenient) {
				rc = perr_set(e, PLUMB_EFORMAT, "line %zu is not folded stacks (\"stack COUNT\"): %.*s",
					      lineno, (int)(le - s > 60 ? 60 : le - s), s);
				goto out;
			}
			if (!bad++) {
				first_bad_line = lineno;
				snprintf(first_bad, sizeof first_bad, "%.*s", (int)(le - s > 60 ? 60 : le - s), s);
			}
			continue;
		}
		const char *stack_end = cstart;
		while (stack_end > s && (stack_end[-1] == ' ' || stack_end[-1] == '\t'))
			stack_end--;
		size_t slen = (size_t)(stack_end - s);
		/* shared prefix with the previous line, cut back to a frame boundary */
		size_t common = 0, lim = slen < prev_len ? slen : prev_len;
		while (common + 8 <= lim) {
			uint64_t a, b;
			memcpy(&a, s + common, 8);
			memcpy(&b, prev + common, 8);
			if (a != b)
				break;
			common += 8;
		}
		while (common < lim && s[common] == prev[common])
			common++;
		size_t k = 0; /* frames reused */
		while (k < depth && ends[k] <= common && (ends[k] == slen || s[ends[k]] == ';' || ends[k] < common))
			k++;
		while (k > 0 && !(ends[k - 1] == slen || s[ends[k - 1]] == ';'))
			k--;
		uint32_t node = k ? nodes[k - 1] : PROFILE_ROOT;
		size_t off = k ? ends[k - 1] + 1 : 0;
		depth = k;
		while (off <= slen && slen) {
			const char *f = s + off;
			const char *semi = memchr(f, ';', slen - off);
			size_t fl = semi ? (size_t)(semi - f) : slen - off;
			uint64_t h = hash_bytes(f, fl);
			uint32_t fid;
			if (!tc_get(&labels, h, f, (uint32_t)fl, &fid)) {
				struct frame fr = { 0 };
				fr.is_label = 1;
				fr.func = profile_intern(p, f, fl);
				if (fl > 4 && memcmp(f + fl - 4, "_[k]", 4) == 0)
					fr.kind = FRAME_KERNEL;
				else if (fl > 4 && memcmp(f + fl - 4, "_[j]", 4) == 0)
					fr.kind = FRAME_JIT;
				if (fr.func == PROFILE_NOMEM || (fid = profile_frame(p, &fr)) == PROFILE_NOMEM ||
				    !tc_put(&labels, h, profile_str(p, fr.func), (uint32_t)fl, fid))
					goto oom;
			}
			node = profile_stack(p, node, fid);
			if (node == PROFILE_NOMEM)
				goto oom;
			if (depth == cap) {
				size_t nc = cap ? cap * 2 : 64;
				uint32_t *nn = realloc(nodes, nc * sizeof *nn);
				if (!nn)
					goto oom;
				nodes = nn;
				size_t *ne = realloc(ends, nc * sizeof *ne);
				if (!ne)
					goto oom;
				ends = ne;
				cap = nc;
			}
			nodes[depth] = node;
			ends[depth++] = off + fl;
			off += fl + 1;
		}
		prev = s;
		prev_len = slen;
		if (!profile_add_sample(p, node, thread, 0, count))
			goto oom;
	}
	if (bad && profile_total_weight(p) == 0 && profile_nstacks(p) == 1) {
		rc = perr_set(e, PLUMB_EFORMAT, "no line is folded stacks (\"stack COUNT\"); line %zu reads: %s",
			      first_bad_line, first_bad);
		goto out;
	}
	if (bad && opts->warn) {
		char msg[300];
		snprintf(msg, sizeof msg, "skipped %zu line%s that %s not folded stacks (\"stack COUNT\"); the first, line "
			 "%zu: %s", bad, bad == 1 ? "" : "s", bad == 1 ? "is" : "are", first_bad_line, first_bad);
		opts->warn(opts->warn_ctx, msg);
	}
	goto out;
oom:
	rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
out:
	tc_release(&labels);
	free(nodes);
	free(ends);
	profile_meta(p)->backend = profile_intern_cstr(p, "folded");
	return rc;
}

struct folded_line {
	uint32_t stack;
	uint32_t thread; /* UINT32_MAX when threads are merged */
	uint64_t weight;
	size_t off;      /* text offset in the shared buffer */
	size_t len;
};

static const char *line_base;

static int cmp_text(const struct folded_line *x, const struct folded_line *y)
{
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(line_base + x->off, line_base + y->off, n);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int cmp_by_weight(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return cmp_text(x, y);
}

/* Appends the stack's labels outermost first, joined by ';'. */
static void append_stack(struct sbuf *sb, const struct profile *p, const struct label_table *labels, uint32_t stack,
			 uint32_t **scratch, size_t *scap)
{
	uint32_t depth = profile_stack_depth(p, stack);
	if (depth > *scap) {
		uint32_t *ns = realloc(*scratch, depth * sizeof *ns);
		if (!ns) {
			sb->oom = true;
			return;
		}
		*scratch = ns;
		*scap = depth;
	}
	uint32_t i = depth;
	for (uint32_t s = stack; s != PROFILE_ROOT; s = profile_stack_parent(p, s))
		(*scratch)[--i] = profile_stack_frame(p, s);
	for (i = 0; i < depth; i++) {
		uint32_t f = (*scratch)[i];
		if (i)
			sbuf_addch(sb, ';');
		sbuf_add(sb, labels->labels[f], labels->lens[f]);
	}
}

enum plumb_err fmt_folded_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts,
				struct perr *e)
{
	size_t ncounts;
	const struct profile_count *counts = profile_counts(p, &ncounts);
	struct label_table *labels = label_table_build(p, opts->label_flags);
	struct folded_line *lines = calloc(ncounts ? ncounts : 1, sizeof *lines);
	struct sbuf all = SBUF_INIT;
	uint32_t *scratch = NULL;
	size_t scap = 0, nlines = 0;
	enum plumb_err rc = PLUMB_OK;
	if (!labels || !lines) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < ncounts; i++) {
		if (counts[i].stack == PROFILE_ROOT || counts[i].weight == 0)
			continue;
		struct folded_line *l = &lines[nlines++];
		l->stack = counts[i].stack;
		l->thread = opts->threads ? counts[i].thread : UINT32_MAX;
		l->weight = counts[i].weight;
		l->off = all.len;
		if (l->thread != UINT32_MAX) {
			const struct profile_thread *t = profile_thread_get(p, l->thread);
			char *name = redact_dup(profile_str(p, t->name));
			sbuf_addf(&all, "%s (%u);", name && name[0] ? name : "thread", t->tid);
			free(name);
		}
		append_stack(&all, p, labels, l->stack, &scratch, &scap);
		l->len = all.len - l->off;
	}
	if (all.oom) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto done;
	}
	/* different frames can share a label (same function, other addresses): merge equal texts, by a hash of the
	 * text (a sort by text would compare long shared prefixes over and over) */
	line_base = all.buf;
	struct hmap seen = HMAP_INIT;
	size_t m = 0;
	for (size_t i = 0; i < nlines; i++) {
		uint64_t h = hash_bytes(all.buf + lines[i].off, lines[i].len);
		uint32_t at;
		bool merged = false;
		while (hmap_get(&seen, h, &at)) {
			if (cmp_text(&lines[at], &lines[i]) == 0) {
				lines[at].weight += lines[i].weight;
				merged = true;
				break;
			}
			h = hash_u64(h + 1);
		}
		if (merged)
			continue;
		if (!hmap_put(&seen, h, (uint32_t)m)) {
			hmap_release(&seen);
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
			goto done;
		}
		lines[m++] = lines[i];
	}
	hmap_release(&seen);
	qsort(lines, m, sizeof *lines, cmp_by_weight);
	/* lines go out through one block buffer: stdio's per-call locking showed up when writing millions */
	char block[1 << 16];
	size_t used = 0;
	for (size_t i = 0; i < m; i++) {
		char num[24];
		size_t nd = 0;
		uint64_t w = lines[i].weight;
		do
			num[sizeof num - 1 - nd++] = (char)('0' + w % 10);
		while ((w /= 10) && nd < sizeof num - 1);
		num[sizeof num - 1 - nd++] = ' ';
		if (used + lines[i].len + nd + 1 > sizeof block) {
			fwrite(block, 1, used, out);
			used = 0;
		}
		if (lines[i].len + nd + 1 > sizeof block) { /* a stack longer than the block */
			fwrite(all.buf + lines[i].off, 1, lines[i].len, out);
		} else {
			memcpy(block + used, all.buf + lines[i].off, lines[i].len);
			used += lines[i].len;
		}
		memcpy(block + used, num + sizeof num - nd, nd);
		used += nd;
		block[used++] = '\n';
	}
	fwrite(block, 1, used, out);
	if (ferror(out))
		rc = perr_set(e, PLUMB_EOUTPUT, "write failed");
done:
	line_base = NULL;
	free(scratch);
	sbuf_release(&all);
	free(lines);
	label_table_free(labels);
	return rc;
}
