/* folded.c — the folded-stacks format: one line per distinct stack, "outermost;...;innermost COUNT".
 * The writer puts the hottest stack first and breaks ties by the stack text, so output is deterministic. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

#include "base/redact.h"
#include "base/sbuf.h"
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

enum plumb_err fmt_folded_read_opts(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				    struct perr *e)
{
	uint32_t thread = profile_thread(p, 0, 0, "all");
	uint32_t *frames = NULL;
	size_t cap = 0;
	const char *end = buf + len;
	size_t lineno = 0;
	enum plumb_err rc = PLUMB_OK;
	if (thread == PROFILE_NOMEM)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (const char *line = buf; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end;
		lineno++;
		const char *s = line;
		while (s < le && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s == le || *s == '#') {
			line = nl ? nl + 1 : end;
			continue;
		}
		uint64_t count;
		const char *cstart = parse_count(s, le, &count);
		if (!cstart) {
			rc = perr_set(e, PLUMB_EFORMAT, "line %zu is not folded stacks (\"stack COUNT\"): %.60s", lineno, s);
			break;
		}
		const char *stack_end = cstart;
		while (stack_end > s && (stack_end[-1] == ' ' || stack_end[-1] == '\t'))
			stack_end--;
		size_t n = 0;
		for (const char *f = s; f < stack_end;) {
			const char *semi = memchr(f, ';', (size_t)(stack_end - f));
			const char *fe = semi ? semi : stack_end;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				uint32_t *nf = realloc(frames, nc * sizeof *nf);
				if (!nf) {
					rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
					goto out;
				}
				frames = nf;
				cap = nc;
			}
			struct frame fr = { 0 };
			fr.is_label = 1;
			fr.func = profile_intern(p, f, (size_t)(fe - f));
			size_t fl = (size_t)(fe - f);
			if (fl > 4 && memcmp(fe - 4, "_[k]", 4) == 0)
				fr.kind = FRAME_KERNEL;
			else if (fl > 4 && memcmp(fe - 4, "_[j]", 4) == 0)
				fr.kind = FRAME_JIT;
			if (fr.func == PROFILE_NOMEM || (frames[n++] = profile_frame(p, &fr)) == PROFILE_NOMEM) {
				rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
				goto out;
			}
			f = semi ? semi + 1 : stack_end;
		}
		uint32_t stack = profile_stack_from(p, frames, n);
		if (stack == PROFILE_NOMEM || !profile_add_sample(p, stack, thread, 0, count)) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
			goto out;
		}
		line = nl ? nl + 1 : end;
	}
out:
	free(frames);
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

static int cmp_by_text(const void *a, const void *b)
{
	return cmp_text(a, b);
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
	/* different frames can share a label (same function, other addresses): merge equal texts */
	line_base = all.buf;
	qsort(lines, nlines, sizeof *lines, cmp_by_text);
	size_t m = 0;
	for (size_t i = 0; i < nlines; i++) {
		if (m && cmp_text(&lines[m - 1], &lines[i]) == 0)
			lines[m - 1].weight += lines[i].weight;
		else
			lines[m++] = lines[i];
	}
	qsort(lines, m, sizeof *lines, cmp_by_weight);
	for (size_t i = 0; i < m; i++) {
		fwrite(all.buf + lines[i].off, 1, lines[i].len, out);
		fprintf(out, " %llu\n", (unsigned long long)lines[i].weight);
	}
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
