/* annotate.c — per-line and per-instruction counts of the functions a regular expression names (annotate.h). Each
 * frame is mapped once to its function (or none); each distinct stack is walked once, leaf to root, so the cost
 * follows the number of distinct stacks. Inclusive counts once per sample, per function and per line. */
#include "analyze/annotate.h"
#include "analyze/annotate_code.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/intern.h"
#include "base/sbuf.h"
#include "profile/label.h"

#define NO_FUNC UINT32_MAX

struct fstate {
	struct annot_func f;
	size_t cap_lines, cap_inl, cap_addrs;
	/* which file is the function's: the files of its non-inlined frames, counted */
	struct interner files;
	uint64_t *file_hits;
	size_t cap_hits;
};

struct walk {
	const struct profile *p;
	struct fstate *fs;
	size_t nfs, capfs;
	uint32_t *func_of;   /* per frame id */
	struct interner keys;
	bool oom;
	/* per stack scratch */
	uint32_t *path;      /* frame ids, outermost first */
	size_t cap_path;
};

static char *dup_span(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* The function state of key (label without line), made on first sight. */
static uint32_t func_for(struct walk *w, const struct frame *fr, const char *key, size_t klen)
{
	bool added;
	uint32_t id = intern(&w->keys, key, klen, &added);
	if (id == INTERN_NOMEM)
		return NO_FUNC;
	if (!added)
		return id;
	if (!ALLOC_GROW(w->fs, w->nfs + 1, w->capfs))
		return NO_FUNC;
	struct fstate *s = &w->fs[w->nfs++];
	memset(s, 0, sizeof *s);
	s->files = (struct interner)INTERNER_INIT;
	struct sbuf b = SBUF_INIT;
	label_append_func_shown(&b, w->p, fr);
	s->f.label = dup_span(key, klen);
	s->f.name = fr->func ? sbuf_detach(&b, NULL) : dup_span(key, klen); /* nameless: module+0xSTART */
	sbuf_release(&b);
	s->f.module = strdup(profile_str(w->p, fr->module));
	s->f.file = NULL;
	s->f.nameless = fr->offset && !fr->func;
	s->f.start = fr->offset ? fr->addr : 0;
	if (!s->f.label || !s->f.name || !s->f.module)
		w->oom = true;
	return id;
}

static enum plumb_err map_frames(struct walk *w, const regex_t *re, const char *literal)
{
	size_t nf = profile_nframes(w->p);
	w->func_of = malloc((nf ? nf : 1) * sizeof *w->func_of);
	if (!w->func_of)
		return PLUMB_ENOMEM;
	struct sbuf key = SBUF_INIT, name = SBUF_INIT;
	for (size_t i = 0; i < nf; i++) {
		const struct frame *fr = profile_frame_get(w->p, (uint32_t)i);
		w->func_of[i] = NO_FUNC;
		if (fr->kind == FRAME_KERNEL || (!fr->func && !fr->offset))
			continue;
		sbuf_reset(&key);
		sbuf_reset(&name);
		label_append_shown(&key, w->p, (uint32_t)i, LABEL_NO_LINES | LABEL_NO_SUFFIX);
		label_append_func_shown(&name, w->p, fr);
		if (key.oom || name.oom) {
			w->oom = true;
			break;
		}
		if (regexec(re, key.buf, 0, NULL, 0) != 0 && regexec(re, name.buf, 0, NULL, 0) != 0 &&
		    !strstr(key.buf, literal))
			continue;
		w->func_of[i] = func_for(w, fr, key.buf, key.len);
		if (w->func_of[i] == NO_FUNC)
			w->oom = true;
	}
	sbuf_release(&key);
	sbuf_release(&name);
	return w->oom ? PLUMB_ENOMEM : PLUMB_OK;
}

static struct annot_count *line_of(struct annot_count **v, size_t *n, size_t *cap, uint32_t line)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].line == line)
			return &(*v)[i];
	if (!ALLOC_GROW(*v, *n + 1, *cap))
		return NULL;
	(*v)[*n] = (struct annot_count){ line, 0, 0 };
	return &(*v)[(*n)++];
}

static struct annot_addr *addr_of(struct fstate *s, uint64_t addr)
{
	for (size_t i = 0; i < s->f.naddrs; i++)
		if (s->f.addrs[i].addr == addr)
			return &s->f.addrs[i];
	if (!ALLOC_GROW(s->f.addrs, s->f.naddrs + 1, s->cap_addrs))
		return NULL;
	s->f.addrs[s->f.naddrs] = (struct annot_addr){ addr, 0, 0, NULL };
	return &s->f.addrs[s->f.naddrs++];
}

static struct annot_inlined *inl_of(struct walk *w, struct fstate *s, uint32_t at_line, const struct frame *callee)
{
	struct sbuf b = SBUF_INIT;
	label_append_func_shown(&b, w->p, callee);
	const char *file = profile_str(w->p, callee->file);
	for (size_t i = 0; i < s->f.ninl; i++) {
		struct annot_inlined *x = &s->f.inl[i];
		if (x->at_line == at_line && strcmp(x->func, b.buf) == 0 && strcmp(x->file, file) == 0) {
			sbuf_release(&b);
			return x;
		}
	}
	if (b.oom || !ALLOC_GROW(s->f.inl, s->f.ninl + 1, s->cap_inl)) {
		sbuf_release(&b);
		return NULL;
	}
	struct annot_inlined *x = &s->f.inl[s->f.ninl++];
	memset(x, 0, sizeof *x);
	x->at_line = at_line;
	x->func = sbuf_detach(&b, NULL);
	x->file = strdup(file);
	return x->func && x->file ? x : NULL;
}

static void note_file(struct walk *w, struct fstate *s, const struct frame *fr, uint64_t weight)
{
	const char *file = profile_str(w->p, fr->file);
	uint32_t id = intern(&s->files, file, strlen(file), NULL);
	if (id == INTERN_NOMEM)
		return (void)(w->oom = true);
	if (id >= s->cap_hits) {
		size_t old = s->cap_hits;
		if (!ALLOC_GROW(s->file_hits, (size_t)id + 1, s->cap_hits))
			return (void)(w->oom = true);
		memset(s->file_hits + old, 0, (s->cap_hits - old) * sizeof *s->file_hits);
	}
	s->file_hits[id] += weight;
}

/* The innermost position of the inline chain that starts at position i (the frames below i marked inlined). */
static size_t chain_end(const struct walk *w, size_t i, size_t d)
{
	while (i + 1 < d && profile_frame_get(w->p, w->path[i + 1])->inlined)
		i++;
	return i;
}

/* The function of position i of the current path (NO_FUNC: none matched). */
static uint32_t fn_at(const struct walk *w, size_t i)
{
	return w->func_of[w->path[i]];
}

/* Inclusive at position i: once per sample for the function, once per line, once per call site. */
static bool add_inclusive(struct walk *w, size_t i, size_t d, uint64_t wt)
{
	uint32_t fi = fn_at(w, i);
	struct fstate *s = &w->fs[fi];
	const struct frame *fr = profile_frame_get(w->p, w->path[i]);
	bool func_seen = false, line_seen = false;
	for (size_t j = 0; j < i && !line_seen; j++)
		if (fn_at(w, j) == fi) {
			func_seen = true;
			line_seen = profile_frame_get(w->p, w->path[j])->line == fr->line;
		}
	if (!func_seen)
		s->f.incl += wt;
	if (!fr->inlined || i == d - 1)
		note_file(w, s, fr, wt);
	if (!line_seen) {
		struct annot_count *c = line_of(&s->f.lines, &s->f.nlines, &s->cap_lines, fr->line);
		if (!c)
			return false;
		c->incl += wt;
	}
	size_t end = chain_end(w, i, d);
	/* a caller: the innermost frame of its chain holds the return address; below a user frame a kernel frame is
	 * an interrupt or a system call, not a call of this code */
	if (end == d - 1 || (fr->kind != FRAME_KERNEL && profile_frame_get(w->p, w->path[end + 1])->kind == FRAME_KERNEL))
		return true;
	uint64_t ret = profile_frame_insn(profile_frame_get(w->p, w->path[end]));
	if (!ret)
		return true;
	for (size_t j = 0; j < i; j++) /* the same call site higher up (recursion): counted once */
		if (fn_at(w, j) == fi && chain_end(w, j, d) < d - 1 &&
		    profile_frame_insn(profile_frame_get(w->p, w->path[chain_end(w, j, d)])) == ret)
			return true;
	struct annot_addr *a = addr_of(s, ret);
	if (!a)
		return false;
	a->incl += wt;
	struct sbuf b = SBUF_INIT; /* an indirect call's callees: the first by name, whatever the order */
	label_append_shown(&b, w->p, w->path[end + 1], LABEL_NO_LINES | LABEL_NO_SUFFIX);
	if (!a->callee || strcmp(b.buf, a->callee) < 0) {
		free(a->callee);
		a->callee = sbuf_detach(&b, NULL);
	}
	sbuf_release(&b);
	return true;
}

/* Self at position j, the outermost frame of the function in the leaf's chain: its line (inlined code on the line
 * that inlined it, the callee's own line under it) and the sampled instruction. */
static bool add_self(struct walk *w, size_t j, size_t d, uint64_t wt)
{
	struct fstate *s = &w->fs[fn_at(w, j)];
	const struct frame *fr = profile_frame_get(w->p, w->path[j]);
	s->f.self += wt;
	struct annot_count *c = line_of(&s->f.lines, &s->f.nlines, &s->cap_lines, fr->line);
	if (!c)
		return false;
	c->self += wt;
	if (j + 1 < d) {
		const struct frame *callee = profile_frame_get(w->p, w->path[j + 1]);
		struct annot_inlined *x = inl_of(w, s, fr->line, callee);
		if (!x)
			return false;
		size_t cap = x->nlines;
		struct annot_count *lc = line_of(&x->lines, &x->nlines, &cap, callee->line);
		if (!lc)
			return false;
		lc->self += wt;
		x->self += wt;
	}
	uint64_t at = profile_frame_insn(profile_frame_get(w->p, w->path[d - 1]));
	if (!at) {
		s->f.no_addr += wt;
		return true;
	}
	struct annot_addr *a = addr_of(s, at);
	if (!a)
		return false;
	a->self += wt;
	return true;
}

/* Adds one stack of weight wt to every function on it: each frame is looked at against the frames above it only
 * (a stack's depth squared, not the number of functions). */
static void walk_stack(struct walk *w, uint32_t stack, uint64_t wt)
{
	size_t d = profile_stack_depth(w->p, stack);
	if (!d || !ALLOC_GROW(w->path, d, w->cap_path)) {
		w->oom = w->oom || d;
		return;
	}
	size_t k = d;
	for (uint32_t s = stack; s != PROFILE_ROOT && k > 0; s = profile_stack_parent(w->p, s))
		w->path[--k] = profile_stack_frame(w->p, s);
	for (size_t i = 0; i < d; i++)
		if (fn_at(w, i) != NO_FUNC && !add_inclusive(w, i, d, wt))
			return (void)(w->oom = true);
	/* the leaf's chain: its outermost (non-inlined) frame holds the code that ran */
	size_t root = d - 1;
	while (root > 0 && profile_frame_get(w->p, w->path[root])->inlined)
		root--;
	for (size_t j = root; j < d; j++) {
		uint32_t fi = fn_at(w, j);
		bool first = fi != NO_FUNC;
		for (size_t q = root; q < j && first; q++)
			first = fn_at(w, q) != fi;
		if (first && !add_self(w, j, d, wt))
			return (void)(w->oom = true);
	}
}

static int count_cmp(const void *a, const void *b)
{
	const struct annot_count *x = a, *y = b;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int addr_cmp(const void *a, const void *b)
{
	const struct annot_addr *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int func_cmp(const void *a, const void *b)
{
	const struct annot_func *x = a, *y = b;
	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return strcmp(x->label, y->label);
}

static void finish(struct walk *w, struct fstate *s)
{
	uint64_t best = 0;
	const char *file = "";
	for (size_t i = 0; i < intern_count(&s->files) && i < s->cap_hits; i++)
		if (s->file_hits[i] > best) {
			best = s->file_hits[i];
			file = intern_str(&s->files, (uint32_t)i);
		}
	s->f.file = strdup(file);
	if (!s->f.file)
		w->oom = true;
	qsort(s->f.lines, s->f.nlines, sizeof *s->f.lines, count_cmp);
	qsort(s->f.addrs, s->f.naddrs, sizeof *s->f.addrs, addr_cmp);
	for (size_t i = 0; i < s->f.ninl; i++)
		qsort(s->f.inl[i].lines, s->f.inl[i].nlines, sizeof *s->f.inl[i].lines, count_cmp);
	interner_release(&s->files);
	free(s->file_hits);
}

static void func_release(struct annot_func *f)
{
	annot_code_release(f);
	free(f->label);
	free(f->name);
	free(f->file);
	free(f->module);
	free(f->lines);
	for (size_t i = 0; i < f->ninl; i++) {
		free(f->inl[i].func);
		free(f->inl[i].file);
		free(f->inl[i].lines);
	}
	free(f->inl);
	for (size_t i = 0; i < f->naddrs; i++)
		free(f->addrs[i].callee);
	free(f->addrs);
}

enum plumb_err annot_analyze(const struct profile *p, const char *re_text, struct annot_result **out, struct perr *e)
{
	*out = NULL;
	regex_t re;
	int rc = regcomp(&re, re_text, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char why[256];
		regerror(rc, &re, why, sizeof why);
		return perr_set(e, PLUMB_EINVAL, "FUNCTION '%s' is not a valid regular expression: %s", re_text, why);
	}
	struct walk w = { 0 };
	w.p = p;
	w.keys = (struct interner)INTERNER_INIT;
	enum plumb_err err = map_frames(&w, &re, re_text);
	regfree(&re);
	size_t n;
	const struct profile_count *c = profile_counts(p, &n);
	for (size_t i = 0; !err && !w.oom && w.nfs && i < n; i++)
		if (c[i].stack != PROFILE_ROOT)
			walk_stack(&w, c[i].stack, c[i].weight);
	for (size_t i = 0; i < w.nfs; i++)
		finish(&w, &w.fs[i]);
	struct annot_result *r = calloc(1, sizeof *r);
	if (!err && !w.oom && r && w.nfs && !(r->funcs = calloc(w.nfs, sizeof *r->funcs)))
		w.oom = true;
	if (err || w.oom || !r) {
		for (size_t i = 0; i < w.nfs; i++)
			func_release(&w.fs[i].f);
		free(r);
		r = NULL;
	} else {
		for (size_t i = 0; i < w.nfs; i++)
			r->funcs[r->n++] = w.fs[i].f;
		qsort(r->funcs, r->n, sizeof *r->funcs, func_cmp);
		r->total = profile_total_weight(p);
		r->unit = profile_str(p, profile_meta_const(p)->weight_unit);
		if (!r->unit[0])
			r->unit = "samples";
	}
	free(w.fs);
	free(w.func_of);
	free(w.path);
	interner_release(&w.keys);
	if (!r)
		return perr_set(e, PLUMB_ENOMEM, "out of memory annotating");
	*out = r;
	return PLUMB_OK;
}

void annot_result_free(struct annot_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		func_release(&r->funcs[i]);
	free(r->funcs);
	free(r);
}
