/* label.c — the frame-label grammar (docs/design.md §4.1) in both directions: label_append writes a label,
 * label_parse reads its parts back (so one file holds the grammar); the label as outputs show it, each part
 * redacted as what it is (§3.6); and the per-output table of those labels, so each distinct frame is labelled
 * and redacted once however many samples or lines use it. */
#include "profile/label.h"

#include <stdlib.h>
#include <string.h>

#include "base/redact.h"

const char *label_short_path(const char *path)
{
	const char *last = strrchr(path, '/');
	if (!last)
		return path;
	const char *p = last;
	while (p > path && p[-1] != '/')
		p--;
	/* p starts the second-to-last component; when it is empty ("/file.c") keep just the file */
	return p == last ? last + 1 : p;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

void label_append(struct sbuf *out, const struct profile *p, uint32_t frame_id, unsigned flags)
{
	const struct frame *f = profile_frame_get(p, frame_id);
	if (!f) {
		sbuf_addstr(out, "[unknown]");
		return;
	}
	const char *func = profile_str(p, f->func);
	if (f->is_label) {
		sbuf_addstr(out, func);
		return;
	}
	const char *file = profile_str(p, f->file);
	const char *module = profile_str(p, f->module);
	if (!func[0] && module[0] && f->addr) { /* no name: the module and its function's offset */
		sbuf_addf(out, "%s+0x%llx", base_name(module), (unsigned long long)f->addr);
	} else {
		sbuf_addstr(out, func[0] ? func : "[unknown]");
	}
	if (!(flags & LABEL_FUNC_ONLY) && (func[0] || !module[0] || !f->addr)) {
		if (file[0]) {
			sbuf_addstr(out, " (");
			sbuf_addstr(out, label_short_path(file));
			if (f->line && !(flags & LABEL_NO_LINES))
				sbuf_addf(out, ":%u", f->line);
			sbuf_addch(out, ')');
		} else if (module[0]) {
			sbuf_addstr(out, " (");
			sbuf_addstr(out, base_name(module));
			sbuf_addch(out, ')');
		}
	}
	if (!(flags & LABEL_NO_SUFFIX)) {
		if (f->kind == FRAME_KERNEL)
			sbuf_addstr(out, "_[k]");
		else if (f->kind == FRAME_JIT)
			sbuf_addstr(out, "_[j]");
	}
}

static bool has_source_ext(const char *s, size_t n)
{
	static const char *const exts[] = { ".c",  ".h",  ".cc",   ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".rs",
					    ".go", ".py", ".java", ".js",  ".ts",  ".m",   ".mm", ".s",   ".S",
					    ".zig", ".swift", ".kt", ".rb", ".inc", ".inl", ".pyx", ".d" };
	for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
		size_t m = strlen(exts[i]);
		if (n > m && memcmp(s + n - m, exts[i], m) == 0)
			return true;
	}
	return false;
}

/* Reads the "(...)" group of a label into file and line, or module. */
static void parse_location(const char *loc, size_t loclen, struct label_parts *out)
{
	/* "file:LINE" */
	size_t k = loclen;
	while (k > 0 && loc[k - 1] >= '0' && loc[k - 1] <= '9')
		k--;
	if (k > 1 && k < loclen && loc[k - 1] == ':') {
		unsigned long line = strtoul(loc + k, NULL, 10);
		out->file = loc;
		out->file_len = k - 1;
		out->line = line > UINT32_MAX ? 0 : (uint32_t)line;
		return;
	}
	if (has_source_ext(loc, loclen) && !memmem(loc, loclen, ".so", 3)) {
		out->file = loc;
		out->file_len = loclen;
		return;
	}
	out->module = loc;
	out->module_len = loclen;
}

void label_parse(const char *label, size_t len, struct label_parts *out)
{
	memset(out, 0, sizeof *out);
	size_t n = len;
	if (n >= 4 && memcmp(label + n - 4, "_[k]", 4) == 0) {
		out->kind = FRAME_KERNEL;
		n -= 4;
	} else if (n >= 4 && memcmp(label + n - 4, "_[j]", 4) == 0) {
		out->kind = FRAME_JIT;
		n -= 4;
	}
	out->func = label;
	out->func_len = n;
	if (n < 4 || label[n - 1] != ')')
		return;
	/* the parenthesized group at the end, preceded by a space */
	int depth = 0;
	size_t i = n;
	while (i-- > 0) {
		if (label[i] == ')')
			depth++;
		else if (label[i] == '(' && --depth == 0)
			break;
	}
	if (depth != 0 || i == 0 || label[i - 1] != ' ')
		return;
	if (n - i - 2 == 0)
		return;
	out->func_len = i - 1;
	parse_location(label + i + 1, n - i - 2, out);
}

/* ---- labels as outputs show them (docs/design.md §3.6): each part redacted as what it is ---- */

/* Whether a finished label's group is all digits: "name (1234)", a thread or process root, whose name is data. */
static bool group_is_id(const struct label_parts *lp)
{
	if (lp->file_len || !lp->module || !lp->module_len)
		return false;
	for (size_t i = 0; i < lp->module_len; i++)
		if (lp->module[i] < '0' || lp->module[i] > '9')
			return false;
	return true;
}

bool label_func_is_data(const struct label_parts *lp)
{
	return lp->kind == FRAME_JIT || group_is_id(lp);
}

void label_append_func_shown(struct sbuf *out, const struct profile *p, const struct frame *f)
{
	const char *func = profile_str(p, f->func);
	if (!func[0])
		sbuf_addstr(out, "[unknown]");
	else if (f->kind == FRAME_JIT) /* named by the running program in its perf map: may carry anything */
		redact_append(out, func, strlen(func));
	else /* a symbol is code, not a secret */
		redact_code_append(out, func, strlen(func));
}

/* A finished label (read from text), its spans redacted in place: the function kept unless it is a JIT name or
 * a thread or process name ("name (tid)"), the file or module as a path, everything else (the line, the mark,
 * the punctuation) as it was. */
static void append_label_text_shown(struct sbuf *out, const char *label, size_t len)
{
	struct label_parts lp;
	label_parse(label, len, &lp);
	const char *group = lp.file ? lp.file : lp.module;
	size_t glen = lp.file ? lp.file_len : lp.module_len;
	if (label_func_is_data(&lp))
		redact_append(out, lp.func, lp.func_len);
	else
		redact_code_append(out, lp.func, lp.func_len);
	size_t at = lp.func_len;
	if (group && !group_is_id(&lp)) {
		size_t g = (size_t)(group - label);
		sbuf_add(out, label + at, g - at);
		redact_path_append(out, group, glen);
		at = g + glen;
	}
	sbuf_add(out, label + at, len - at);
}

void label_append_shown(struct sbuf *out, const struct profile *p, uint32_t frame_id, unsigned flags)
{
	const struct frame *f = profile_frame_get(p, frame_id);
	if (!f) {
		sbuf_addstr(out, "[unknown]");
		return;
	}
	if (f->is_label) {
		const char *text = profile_str(p, f->func);
		append_label_text_shown(out, text, strlen(text));
		return;
	}
	const char *file = profile_str(p, f->file);
	const char *module = profile_str(p, f->module);
	label_append_func_shown(out, p, f);
	if (!(flags & LABEL_FUNC_ONLY)) {
		if (file[0]) {
			const char *shown = label_short_path(file);
			sbuf_addstr(out, " (");
			redact_path_append(out, shown, strlen(shown));
			if (f->line && !(flags & LABEL_NO_LINES))
				sbuf_addf(out, ":%u", f->line);
			sbuf_addch(out, ')');
		} else if (module[0]) {
			const char *base = base_name(module);
			sbuf_addstr(out, " (");
			redact_path_append(out, base, strlen(base));
			sbuf_addch(out, ')');
		}
	}
	if (!(flags & LABEL_NO_SUFFIX)) {
		if (f->kind == FRAME_KERNEL)
			sbuf_addstr(out, "_[k]");
		else if (f->kind == FRAME_JIT)
			sbuf_addstr(out, "_[j]");
	}
}

struct label_table *label_table_build(const struct profile *p, unsigned flags)
{
	struct label_table *t = calloc(1, sizeof *t);
	size_t n = profile_nframes(p);
	if (!t)
		return NULL;
	t->n = n;
	t->labels = calloc(n ? n : 1, sizeof *t->labels);
	t->lens = calloc(n ? n : 1, sizeof *t->lens);
	if (!t->labels || !t->lens) {
		label_table_free(t);
		return NULL;
	}
	struct sbuf red = SBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		sbuf_reset(&red);
		label_append_shown(&red, p, (uint32_t)i, flags);
		if (red.oom || !(t->labels[i] = malloc(red.len + 1))) {
			sbuf_release(&red);
			label_table_free(t);
			return NULL;
		}
		memcpy(t->labels[i], red.buf, red.len + 1);
		t->lens[i] = red.len;
	}
	sbuf_release(&red);
	return t;
}

void label_table_free(struct label_table *t)
{
	if (!t)
		return;
	if (t->labels)
		for (size_t i = 0; i < t->n; i++)
			free(t->labels[i]);
	free(t->labels);
	free(t->lens);
	free(t);
}
