/* label.c — the frame-label grammar (docs/design.md §4.1) in both directions: label_render writes a label from
 * a frame's parts, label_parse reads the parts back, and a parse is checked by rendering it again, so
 * render(parse(label)) == label for every label; the label as outputs show it, each part redacted as what it is
 * (§3.6); and the per-output table of those labels, so each distinct frame is labelled and redacted once however
 * many samples or lines use it. */
#include "profile/label.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/redact.h"
#include "profile/cxxname.h"

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

/* The last two components of a span (label_short_path for text that is not NUL-terminated). */
static const char *short_span(const char *s, size_t n, size_t *out_len)
{
	const char *end = s + n, *last = NULL;
	for (const char *q = end; q > s; q--)
		if (q[-1] == '/') {
			last = q - 1;
			break;
		}
	if (!last) {
		*out_len = n;
		return s;
	}
	const char *p = last;
	while (p > s && p[-1] != '/')
		p--;
	if (p == last)
		p = last + 1;
	*out_len = (size_t)(end - p);
	return p;
}

static const char *base_span(const char *s, size_t n, size_t *out_len)
{
	const char *b = s + n;
	while (b > s && b[-1] != '/')
		b--;
	*out_len = (size_t)(s + n - b);
	return b;
}

/* Where a rendering goes: appended to a buffer, or compared with a label (label_parse's check). */
struct sink {
	struct sbuf *out;
	const char *cmp;
	size_t cmp_len, pos;
	bool same;
};

static void put(struct sink *k, const char *s, size_t n)
{
	if (k->out) {
		sbuf_add(k->out, s, n);
		return;
	}
	if (!k->same || n > k->cmp_len - k->pos || memcmp(k->cmp + k->pos, s, n) != 0)
		k->same = false;
	else
		k->pos += n;
}

static void put_str(struct sink *k, const char *s)
{
	put(k, s, strlen(s));
}

static void render(struct sink *k, const struct label_parts *lp, unsigned flags)
{
	size_t bl;
	const char *b;
	bool offset = !lp->func_len && lp->module_len && lp->offset;
	char num[32];
	size_t func_len = lp->func_len;
	if (flags & LABEL_SHORT_NAMES) /* no symbol version, as perf script prints some */
		func_len = label_unversioned_len(lp->func, lp->func_len);
	if (func_len && (flags & LABEL_SHORT_NAMES) && lp->kind == FRAME_USER && label_cxx_name_is_long(lp->func, func_len)) {
		struct sbuf shortened = SBUF_INIT;
		label_cxx_short_name(&shortened, lp->func, func_len);
		if (shortened.oom)
			put(k, lp->func, func_len);
		else
			put(k, shortened.buf, shortened.len);
		sbuf_release(&shortened);
	} else if (func_len) {
		put(k, lp->func, func_len);
	} else if (offset) {
		b = base_span(lp->module, lp->module_len, &bl);
		put(k, b, bl);
		put(k, num, (size_t)snprintf(num, sizeof num, "+0x%llx", (unsigned long long)lp->addr));
	} else {
		put_str(k, "[unknown]");
	}
	if (!(flags & LABEL_FUNC_ONLY)) {
		if (lp->file_len) {
			if (flags & LABEL_NO_FILE)
				goto mark;
			put_str(k, " (");
			b = short_span(lp->file, lp->file_len, &bl);
			put(k, b, bl);
			if (lp->line && !(flags & LABEL_NO_LINES))
				put(k, num, (size_t)snprintf(num, sizeof num, ":%u", lp->line));
			put_str(k, ")");
		} else if (lp->module_len && !offset) {
			put_str(k, " (");
			b = base_span(lp->module, lp->module_len, &bl);
			put(k, b, bl);
			put_str(k, ")");
		}
	}
mark:
	if (!(flags & LABEL_NO_SUFFIX)) {
		if (lp->inlined)
			put_str(k, "_[i]");
		else if (lp->kind == FRAME_KERNEL)
			put_str(k, "_[k]");
		else if (lp->kind == FRAME_JIT)
			put_str(k, "_[j]");
	}
	if ((flags & LABEL_ADDRESS) && lp->insn)
		put(k, num, (size_t)snprintf(num, sizeof num, "@0x%llx", (unsigned long long)lp->insn));
}

void label_render(struct sbuf *out, const struct label_parts *lp, unsigned flags)
{
	struct sink k = { .out = out };
	render(&k, lp, flags);
}

void label_parts_of(const struct profile *p, const struct frame *f, struct label_parts *lp)
{
	memset(lp, 0, sizeof *lp);
	lp->func = profile_str(p, f->func);
	lp->func_len = strlen(lp->func);
	lp->file = profile_str(p, f->file);
	lp->file_len = strlen(lp->file);
	lp->module = profile_str(p, f->module);
	lp->module_len = strlen(lp->module);
	lp->line = f->line;
	lp->addr = f->addr;
	lp->offset = f->offset;
	lp->kind = (enum frame_kind)f->kind;
	lp->inlined = f->inlined;
	lp->insn = profile_frame_insn(f);
}

/* The parts of frame_id's label; false, with "[unknown]" written, for an id the profile does not have. */
static bool frame_label_parts(struct sbuf *out, const struct profile *p, uint32_t frame_id, struct label_parts *lp)
{
	const struct frame *f = profile_frame_get(p, frame_id);
	if (!f) {
		sbuf_addstr(out, "[unknown]");
		return false;
	}
	label_parts_of(p, f, lp);
	return true;
}

void label_append(struct sbuf *out, const struct profile *p, uint32_t frame_id, unsigned flags)
{
	struct label_parts lp;
	if (frame_label_parts(out, p, frame_id, &lp))
		label_render(out, &lp, flags);
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
		unsigned long long line = strtoull(loc + k, NULL, 10);
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

bool label_hex(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0 || n > 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c >= '0' && c <= '9')
			v = v << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v << 4 | (uint64_t)(c - 'a' + 10);
		else
			return false;
	}
	*out = v;
	return true;
}

/* "module+0xHEX" (a nameless frame); false when the body is not that shape. */
static bool parse_offset(const char *s, size_t n, struct label_parts *out)
{
	size_t h = n;
	while (h > 0 && ((s[h - 1] >= '0' && s[h - 1] <= '9') || (s[h - 1] >= 'a' && s[h - 1] <= 'f')))
		h--;
	if (h == n || n - h > 16 || h < 4 || memcmp(s + h - 3, "+0x", 3) != 0 || memchr(s, ' ', h - 3))
		return false;
	out->module = s;
	out->module_len = h - 3;
	label_hex(s + h, n - h, &out->addr);
	out->offset = true;
	out->func = NULL;
	out->func_len = 0;
	return true;
}

/* The parts of body (a label without its mark). */
static void parse_body(const char *label, size_t n, struct label_parts *out)
{
	out->func = label;
	out->func_len = n;
	if (n >= 4 && label[n - 1] == ')') {
		/* the parenthesized group at the end, preceded by a space */
		int depth = 0;
		size_t i = n;
		while (i-- > 0) {
			if (label[i] == ')')
				depth++;
			else if (label[i] == '(' && --depth == 0)
				break;
		}
		if (depth == 0 && i > 0 && label[i - 1] == ' ' && n - i - 2 > 0) {
			out->func_len = i - 1;
			parse_location(label + i + 1, n - i - 2, out);
		}
	} else {
		parse_offset(label, n, out);
	}
	if (out->func_len == 9 && memcmp(out->func, "[unknown]", 9) == 0) {
		out->func = NULL;
		out->func_len = 0;
	}
	if (out->kind == FRAME_USER && out->file_len > 3 && memcmp(out->file + out->file_len - 3, ".py", 3) == 0)
		out->kind = FRAME_PYTHON;
}

static bool renders_as(const struct label_parts *lp, const char *label, size_t len)
{
	struct sink k = { .cmp = label, .cmp_len = len, .same = true };
	render(&k, lp, 0);
	return k.same && k.pos == len;
}

static void parse_plain(const char *label, size_t len, struct label_parts *out);

void label_parse(const char *label, size_t len, struct label_parts *out)
{
	/* "LABEL@0xINSN": the address after everything else (folded --addresses) */
	size_t h = len;
	while (h > 0 && len - h <= 16 && ((label[h - 1] >= '0' && label[h - 1] <= '9') || (label[h - 1] >= 'a' && label[h - 1] <= 'f')))
		h--;
	uint64_t insn;
	if (h > 3 && h < len && memcmp(label + h - 3, "@0x", 3) == 0 && label_hex(label + h, len - h, &insn) && insn) {
		parse_plain(label, h - 3, out);
		out->insn = insn;
		return;
	}
	parse_plain(label, len, out);
}

static void parse_plain(const char *label, size_t len, struct label_parts *out)
{
	memset(out, 0, sizeof *out);
	size_t n = len;
	if (n >= 4 && label[n - 4] == '_' && label[n - 3] == '[' && label[n - 1] == ']') {
		char m = label[n - 2];
		if (m == 'k' || m == 'j' || m == 'i') {
			out->kind = m == 'k' ? FRAME_KERNEL : m == 'j' ? FRAME_JIT : FRAME_USER;
			out->inlined = m == 'i';
			n -= 4;
		}
	}
	parse_body(label, n, out);
	if (renders_as(out, label, len))
		return;
	/* outside the grammar: the name, with its mark when that renders back */
	enum frame_kind kind = out->kind == FRAME_PYTHON ? FRAME_USER : out->kind;
	bool inlined = out->inlined;
	memset(out, 0, sizeof *out);
	out->func = label;
	out->func_len = n;
	out->kind = kind;
	out->inlined = inlined;
	if (n && renders_as(out, label, len))
		return;
	memset(out, 0, sizeof *out);
	out->func = label;
	out->func_len = len;
}

uint32_t label_parts_frame(struct profile *p, const struct label_parts *lp)
{
	struct frame f = { 0 };
	f.func = profile_intern(p, lp->func ? lp->func : "", lp->func_len);
	f.file = profile_intern(p, lp->file ? lp->file : "", lp->file_len);
	f.module = profile_intern(p, lp->module ? lp->module : "", lp->module_len);
	if (f.func == PROFILE_NOMEM || f.file == PROFILE_NOMEM || f.module == PROFILE_NOMEM)
		return PROFILE_NOMEM;
	f.line = lp->line;
	f.addr = lp->addr;
	f.offset = lp->offset;
	f.kind = (uint8_t)lp->kind;
	f.inlined = lp->inlined;
	if (lp->insn && f.offset)
		f.insn = lp->insn;
	else if (lp->insn)
		f.addr = lp->insn; /* a named frame's address is its instruction (profile.h) */
	return profile_frame(p, &f);
}

uint32_t label_frame(struct profile *p, const char *label, size_t len)
{
	struct label_parts lp;
	label_parse(label, len, &lp);
	return label_parts_frame(p, &lp);
}

bool label_thread_root(const char *label, size_t len, size_t *name_len, uint32_t *tid)
{
	if (len < 5 || label[len - 1] != ')')
		return false;
	size_t d = len - 1;
	while (d > 0 && label[d - 1] >= '0' && label[d - 1] <= '9')
		d--;
	size_t digits = len - 1 - d;
	if (digits == 0 || digits > 10 || d < 3 || label[d - 1] != '(' || label[d - 2] != ' ')
		return false;
	unsigned long long v = strtoull(label + d, NULL, 10);
	if (v > UINT32_MAX)
		return false;
	*name_len = d - 2;
	*tid = (uint32_t)v;
	return true;
}

/* ---- labels as outputs show them (docs/design.md §3.6): each part redacted as what it is ---- */

/* Whether a label's group is all digits: "name (1234)", a thread or process root, whose name is data. */
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

/* The function part: a symbol is code, not a secret (the code redactor); a JIT name or a thread root's name is
 * data, which the running program wrote (redacted as text). */
static void append_func_shown(struct sbuf *out, const struct label_parts *lp)
{
	if (label_func_is_data(lp))
		redact_append(out, lp->func, lp->func_len);
	else
		redact_code_append(out, lp->func, lp->func_len);
}

void label_append_func_shown(struct sbuf *out, const struct profile *p, const struct frame *f)
{
	struct label_parts lp;
	label_parts_of(p, f, &lp);
	if (!lp.func_len)
		sbuf_addstr(out, "[unknown]");
	else
		append_func_shown(out, &lp);
}

/* Renders lp with its function, file and module redacted, each as what it is; the line, the offset and the
 * marks as they are. */
static void render_shown(struct sbuf *out, const struct label_parts *lp, unsigned flags, struct sbuf *parts)
{
	struct sbuf *fn = &parts[0], *file = &parts[1], *mod = &parts[2];
	sbuf_reset(fn);
	sbuf_reset(file);
	sbuf_reset(mod);
	append_func_shown(fn, lp);
	redact_path_append(file, lp->file ? lp->file : "", lp->file_len);
	if (group_is_id(lp))
		sbuf_add(mod, lp->module, lp->module_len);
	else
		redact_path_append(mod, lp->module ? lp->module : "", lp->module_len);
	struct label_parts red = *lp;
	red.func = fn->buf;
	red.func_len = fn->len;
	red.file = file->buf;
	red.file_len = file->len;
	red.module = mod->buf;
	red.module_len = mod->len;
	if (fn->oom || file->oom || mod->oom)
		out->oom = true;
	else
		label_render(out, &red, flags);
}

void label_append_shown(struct sbuf *out, const struct profile *p, uint32_t frame_id, unsigned flags)
{
	struct label_parts lp;
	if (!frame_label_parts(out, p, frame_id, &lp))
		return;
	struct sbuf parts[3] = { SBUF_INIT, SBUF_INIT, SBUF_INIT };
	render_shown(out, &lp, flags, parts);
	for (int k = 0; k < 3; k++)
		sbuf_release(&parts[k]);
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
	struct sbuf red = SBUF_INIT, parts[3] = { SBUF_INIT, SBUF_INIT, SBUF_INIT };
	bool ok = true;
	for (size_t i = 0; ok && i < n; i++) {
		const struct frame *f = profile_frame_get(p, (uint32_t)i);
		struct label_parts lp;
		label_parts_of(p, f, &lp);
		sbuf_reset(&red);
		render_shown(&red, &lp, flags, parts);
		ok = !red.oom && (t->labels[i] = malloc(red.len + 1)) != NULL;
		if (ok) {
			memcpy(t->labels[i], red.buf, red.len + 1);
			t->lens[i] = red.len;
		}
	}
	sbuf_release(&red);
	for (int k = 0; k < 3; k++)
		sbuf_release(&parts[k]);
	if (!ok) {
		label_table_free(t);
		return NULL;
	}
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
