/* annotate_code.c — the source text and the machine code behind an annotation (annotate.h: annot_add_code). Source
 * files and modules are named by the profile, so untrusted: only regular files outside /proc, /sys and /dev are
 * read, a source up to SOURCE_MAX bytes, and nothing read is trusted to be text (the faces escape it). */
#include "analyze/annotate_code.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "analyze/repo.h"
#include "base/sbuf.h"
#include "symbol/disasm.h"

#define SOURCE_MAX (16u << 20)
#define SPAN_MAX 300 /* a function's lines shown whole up to this span; beyond, only around the lines with samples */

struct source {
	char *data;
	const char **line; /* line[i] is line i + 1, NUL-terminated in data */
	size_t n;
	char path[4096];
};

static bool forbidden(const char *path)
{
	return strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/sys/", 5) == 0 || strncmp(path, "/dev/", 5) == 0;
}

/* Reads path into s when it is a regular file under the cap; false otherwise (errno-like reason in why). */
static bool source_read(const char *path, struct source *s, const char **why)
{
	struct stat st;
	if (forbidden(path)) {
		*why = "not a file plumb reads";
		return false;
	}
	if (stat(path, &st) != 0) {
		*why = strerror(errno);
		return false;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > SOURCE_MAX) {
		*why = S_ISREG(st.st_mode) ? "over 16 MiB" : "not a regular file";
		return false;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > SOURCE_MAX) {
		*why = fd < 0 ? strerror(errno) : "not a regular file";
		if (fd >= 0)
			close(fd);
		return false;
	}
	size_t size = (size_t)st.st_size, got = 0;
	s->data = malloc(size + 1);
	while (s->data && got < size) {
		ssize_t r = read(fd, s->data + got, size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!s->data) {
		*why = "out of memory";
		return false;
	}
	s->data[got] = '\0';
	size_t cap = 0;
	for (char *p = s->data; p < s->data + got;) {
		char *nl = memchr(p, '\n', (size_t)(s->data + got - p));
		if (!ALLOC_GROW(s->line, s->n + 1, cap)) {
			*why = "out of memory";
			return false;
		}
		s->line[s->n++] = p;
		if (!nl)
			break;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		p = nl + 1;
	}
	snprintf(s->path, sizeof s->path, "%s", path);
	return true;
}

static void source_release(struct source *s)
{
	free(s->data);
	free(s->line);
	memset(s, 0, sizeof *s);
}

/* The files under --source-root, walked once when a shortened path needs them (a folded label keeps two
 * components of a path: "targets/annot.c" of tests/targets/annot.c). */
struct roots {
	const char *root;
	bool walked;
	struct hot_repo_files files;
};

/* The source of `file`: the path itself, else under root by its longest tail that exists there, else the file
 * under root that the path is the tail of. */
static bool source_find(const char *file, struct roots *rt, struct source *s, const char **why)
{
	const char *root = rt ? rt->root : NULL;
	*why = "the profile names no source file";
	if (!file || !file[0])
		return false;
	if (source_read(file, s, why)) /* a relative path: from the current directory, as the build saw it */
		return true;
	if (!root)
		return false;
	const char *why_root = *why;
	for (const char *t = file; t; t = strchr(t + 1, '/')) {
		const char *tail = *t == '/' ? t + 1 : t;
		if (!*tail)
			break;
		char cand[4200];
		if ((size_t)snprintf(cand, sizeof cand, "%s/%s", root, tail) >= sizeof cand)
			continue;
		if (source_read(cand, s, why))
			return true;
	}
	if (!rt->walked) {
		rt->walked = true;
		hot_repo_files_load(&rt->files, root); /* what it walked, even when cut short */
	}
	const char *rel = hot_repo_files_rel(&rt->files, file, strlen(file));
	char cand[4200];
	if (rel && (size_t)snprintf(cand, sizeof cand, "%s/%s", root, rel) < sizeof cand && source_read(cand, s, why))
		return true;
	*why = why_root;
	return false;
}

static const char *source_text(const struct source *s, uint32_t line)
{
	return s->data && line > 0 && line <= s->n ? s->line[line - 1] : NULL;
}

static bool wanted(const struct annot_func *f, uint32_t line, uint32_t lo, uint32_t hi, unsigned ctx)
{
	if (hi - lo <= SPAN_MAX)
		return line + ctx >= lo && line <= (uint64_t)hi + ctx;
	for (size_t i = 0; i < f->nlines; i++)
		if (f->lines[i].line && line + ctx >= f->lines[i].line && line <= (uint64_t)f->lines[i].line + ctx)
			return true;
	return false;
}

static enum plumb_err add_rows(struct annot_func *f, const struct source *s, unsigned ctx)
{
	uint32_t lo = UINT32_MAX, hi = 0;
	for (size_t i = 0; i < f->nlines; i++)
		if (f->lines[i].line) {
			lo = f->lines[i].line < lo ? f->lines[i].line : lo;
			hi = f->lines[i].line > hi ? f->lines[i].line : hi;
		}
	for (size_t i = 0; i < f->ninsns; i++) /* the disassembly's lines of this file widen the span */
		if (f->insns[i].in_file && f->insns[i].line) {
			lo = f->insns[i].line < lo ? f->insns[i].line : lo;
			hi = f->insns[i].line > hi ? f->insns[i].line : hi;
		}
	if (!hi)
		return PLUMB_OK;
	uint32_t first = lo > ctx ? lo - ctx : 1, last = hi + ctx;
	if (s->data && last > s->n)
		last = (uint32_t)s->n;
	size_t cap = 0, k = 0;
	for (uint64_t line = first; line <= last; line++) {
		while (k < f->nlines && f->lines[k].line < line)
			k++;
		bool counted = k < f->nlines && f->lines[k].line == line;
		if (!counted && (!s->data || !wanted(f, (uint32_t)line, lo, hi, ctx)))
			continue;
		if (!ALLOC_GROW(f->rows, f->nrows + 1, cap))
			return PLUMB_ENOMEM;
		struct annot_row *r = &f->rows[f->nrows++];
		memset(r, 0, sizeof *r);
		r->line = (uint32_t)line;
		if (counted) {
			r->self = f->lines[k].self;
			r->incl = f->lines[k].incl;
		}
		const char *t = source_text(s, (uint32_t)line);
		if (t && !(r->text = strdup(t)))
			return PLUMB_ENOMEM;
	}
	return PLUMB_OK;
}

static char *dupf(const char *fmt, const char *a, const char *b)
{
	struct sbuf sb = SBUF_INIT;
	sbuf_addf(&sb, fmt, a, b);
	return sbuf_detach(&sb, NULL);
}

static const struct annot_addr *find_addr(const struct annot_func *f, uint64_t addr)
{
	size_t lo = 0, hi = f->naddrs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->addrs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->naddrs && f->addrs[lo].addr == addr ? &f->addrs[lo] : NULL;
}

/* The disassembly's lines are the innermost function's (the line table): only those of the function's own file
 * may widen the span of lines shown. */
static bool same_file(const char *a, const char *b)
{
	return a && b && a[0] && strcmp(a, b) == 0;
}

static enum plumb_err add_insns(struct annot_func *f)
{
	uint64_t at = f->nameless ? f->start : 0;
	for (size_t i = 0; !at && i < f->naddrs; i++)
		if (f->addrs[i].self)
			at = f->addrs[i].addr;
	if (!at && f->naddrs && f->addrs[0].addr)
		at = f->addrs[0].addr - 1; /* only return addresses: the call before one is the function's */
	if (!at) {
		f->asm_missing = strdup(f->naddrs ? "the profile has no sampled instruction of it"
						  : "the profile carries no instruction addresses (a folded file without "
						    "--addresses?)");
		return f->asm_missing ? PLUMB_OK : PLUMB_ENOMEM;
	}
	if (!f->module[0] || f->module[0] != '/') {
		f->asm_missing = strdup("the profile names no module file for it");
		return f->asm_missing ? PLUMB_OK : PLUMB_ENOMEM;
	}
	struct sym_code c;
	struct perr e = PERR_INIT;
	enum plumb_err rc = sym_disasm_function(f->module, at, &c, &e);
	if (rc == PLUMB_ENOMEM)
		return rc;
	if (rc) {
		f->asm_missing = strdup(e.msg);
		return f->asm_missing ? PLUMB_OK : PLUMB_ENOMEM;
	}
	f->insns = calloc(c.n ? c.n : 1, sizeof *f->insns);
	if (!f->insns) {
		sym_code_release(&c);
		return PLUMB_ENOMEM;
	}
	f->asm_start = c.start;
	f->asm_name = c.name;
	c.name = NULL;
	for (size_t i = 0; i < c.n; i++) {
		const struct sym_insn *in = &c.insns[i];
		struct annot_insn *o = &f->insns[f->ninsns++];
		o->addr = in->addr;
		o->size = in->size;
		o->line = in->line;
		o->in_file = same_file(in->file, f->file);
		o->target = in->target;
		o->call = in->call;
		o->jump = in->jump;
		const struct annot_addr *a = find_addr(f, in->addr);
		o->self = a ? a->self : 0;
		const struct annot_addr *r = find_addr(f, in->addr + in->size);
		if (r && r->incl) {
			o->incl = r->incl;
			o->callee = r->callee;
		}
		if (!(o->text = strdup(in->text))) {
			sym_code_release(&c);
			return PLUMB_ENOMEM;
		}
	}
	for (size_t i = 0; i < f->ninsns; i++)
		if (f->insns[i].jump && f->insns[i].target >= c.start && f->insns[i].target < c.end)
			for (size_t j = 0; j < f->ninsns; j++)
				if (f->insns[j].addr == f->insns[i].target)
					f->insns[j].is_target = true;
	sym_code_release(&c);
	return PLUMB_OK;
}

/* The texts of an inlined callee's lines: from the caller's source when it is the same file, else its own. */
static enum plumb_err add_inlined_text(struct annot_inlined *x, const char *caller_file, const struct source *caller,
				       struct roots *root)
{
	struct source own = { 0 };
	const char *why;
	const struct source *s = caller;
	if (strcmp(x->file, caller_file) != 0)
		s = source_find(x->file, root, &own, &why) ? &own : NULL;
	x->texts = calloc(x->nlines ? x->nlines : 1, sizeof *x->texts);
	enum plumb_err rc = x->texts ? PLUMB_OK : PLUMB_ENOMEM;
	for (size_t i = 0; !rc && s && i < x->nlines; i++) {
		const char *t = source_text(s, x->lines[i].line);
		if (t && !(x->texts[i] = strdup(t)))
			rc = PLUMB_ENOMEM;
	}
	source_release(&own);
	return rc;
}

static enum plumb_err annot_add_code_in(struct annot_result *r, const struct annot_code_opts *o, struct roots *rt,
				       struct perr *e)
{
	for (size_t i = 0; i < r->n && (!o->limit || i < o->limit); i++) {
		struct annot_func *f = &r->funcs[i];
		struct source s = { 0 };
		const char *why = NULL;
		enum plumb_err rc = PLUMB_OK;
		if (o->disassemble)
			rc = add_insns(f);
		if (!rc && source_find(f->file, rt, &s, &why)) {
			f->source = strdup(s.path);
			rc = f->source ? PLUMB_OK : PLUMB_ENOMEM;
		} else if (!rc) {
			f->source_missing = f->file[0] ? dupf("%s: %s", f->file, why) : strdup(why);
			rc = f->source_missing ? PLUMB_OK : PLUMB_ENOMEM;
		}
		if (!rc)
			rc = add_rows(f, &s, o->context);
		for (size_t k = 0; !rc && k < f->ninl; k++)
			rc = add_inlined_text(&f->inl[k], f->file, &s, rt);
		source_release(&s);
		if (rc)
			return perr_set(e, rc, "out of memory annotating");
	}
	return PLUMB_OK;
}

enum plumb_err annot_add_code(struct annot_result *r, const struct annot_code_opts *o, struct perr *e)
{
	struct roots rt = { o->source_root, false, HOT_REPO_FILES_INIT };
	enum plumb_err rc = annot_add_code_in(r, o, &rt, e);
	hot_repo_files_release(&rt.files);
	return rc;
}

void annot_code_release(struct annot_func *f)
{
	free(f->source);
	free(f->source_missing);
	for (size_t i = 0; i < f->nrows; i++)
		free(f->rows[i].text);
	free(f->rows);
	for (size_t i = 0; i < f->ninsns; i++)
		free(f->insns[i].text);
	free(f->insns);
	free(f->asm_name);
	free(f->asm_missing);
	for (size_t i = 0; i < f->ninl; i++) {
		for (size_t k = 0; f->inl[i].texts && k < f->inl[i].nlines; k++)
			free(f->inl[i].texts[k]);
		free(f->inl[i].texts);
	}
}
