/* hot.c — hot tables. Every frame is mapped once to a function row and a group row (or to "filtered out");
 * then each aggregated (stack, thread) count walks its stack once: the innermost kept frame gets the leaf
 * count, and every distinct row on the stack gets the inclusive count once (a generation stamp per row makes
 * recursion count once per sample). Work grows with distinct stacks, not with the run's length. */
#include "analyze/analyze.h"

#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/intern.h"
#include "base/redact.h"
#include "profile/label.h"

/* ---- generics ---------------------------------------------------------------------------------------- */

void hot_collapse_generics(struct sbuf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool opener = c == '<';
		if (opener) {
			/* operator<, operator<<, operator<=, operator<=> stay as they are */
			if (i >= 8 && memcmp(s + i - 8, "operator", 8) == 0)
				opener = false;
			if (i > 0 && s[i - 1] == '<')
				opener = false;
		}
		if (!opener) {
			sbuf_addch(out, c);
			continue;
		}
		int depth = 0;
		size_t j;
		for (j = i; j < n; j++) {
			if (s[j] == '<') {
				depth++;
			} else if (s[j] == '>' && !(j > 0 && s[j - 1] == '-')) {
				if (--depth == 0)
					break;
			}
		}
		if (j >= n) { /* unbalanced: keep the rest as it is */
			sbuf_add(out, s + i, n - i);
			return;
		}
		sbuf_addstr(out, "<...>");
		i = j;
	}
}

/* ---- row interning ----------------------------------------------------------------------------------- */

/* Row names are interned (base/intern.h): a row's id is its index in the hot table being built. */
static uint32_t rowset_add(struct interner *rs, const char *s, size_t len)
{
	uint32_t id = intern(rs, s, len, NULL);
	return id == INTERN_NOMEM ? UINT32_MAX : id;
}

/* ---- the repository's files (for --repo-only with short paths) ------------------------------------------ */

struct repo_files {
	struct interner paths; /* repo-relative paths and their last-two-component suffixes */
	size_t root_len;
	bool ok;
};

static struct repo_files *walk_target;

static int walk_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	const char *base = path + ftw->base;
	if (flag == FTW_D && ftw->level > 0 && base[0] == '.')
		return FTW_SKIP_SUBTREE;
	if (flag != FTW_F)
		return FTW_CONTINUE;
	if (intern_count(&walk_target->paths) > 2000000)
		return FTW_STOP;
	const char *rel = path + walk_target->root_len;
	while (*rel == '/')
		rel++;
	if (intern(&walk_target->paths, rel, strlen(rel), NULL) == INTERN_NOMEM)
		return FTW_STOP; /* out of memory: the filter keeps what it has */
	const char *shortp = label_short_path(rel);
	if (shortp != rel && intern(&walk_target->paths, shortp, strlen(shortp), NULL) == INTERN_NOMEM)
		return FTW_STOP;
	return FTW_CONTINUE;
}

static void repo_files_load(struct repo_files *rf, const char *root)
{
	rf->root_len = strlen(root);
	walk_target = rf;
	rf->ok = nftw(root, walk_cb, 32, FTW_PHYS | FTW_ACTIONRETVAL) != -1;
	walk_target = NULL;
}

static bool repo_has(const struct repo_files *rf, const char *s, size_t len)
{
	return intern_find(&rf->paths, s, len) != IDTAB_NONE;
}

/* ---- per-frame mapping ----------------------------------------------------------------------------- */

struct frame_map {
	uint32_t *func_row;  /* UINT32_MAX: filtered out */
	uint32_t *group_row;
	struct interner funcs, groups;
};

static bool path_under(const char *path, const char *root, size_t root_len)
{
	return root_len > 0 && strncmp(path, root, root_len) == 0 && (path[root_len] == '/' || root[root_len - 1] == '/');
}

/* The path as shown in file/module keys: repo-relative when under root. */
static const char *display_path(const char *path, const struct hot_opts *o, size_t root_len)
{
	if (o->root && path_under(path, o->root, root_len)) {
		path += root_len;
		while (*path == '/')
			path++;
	}
	return path;
}

static const char *base_name(const char *path, size_t len, size_t *out_len)
{
	const char *s = path + len;
	while (s > path && s[-1] != '/')
		s--;
	*out_len = len - (size_t)(s - path);
	return s;
}

/* Splits a "::" name at top level (outside <...> and (...)); returns the number of components found and
 * the byte length of the first `keep` components. */
static size_t colon_prefix(const char *s, size_t n, int keep, size_t *ncomp)
{
	int depth = 0;
	size_t comps = 1, cut = n;
	int seen = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		char c = s[i];
		if (c == '<' || c == '(' || c == '[')
			depth++;
		else if ((c == '>' || c == ')' || c == ']') && depth > 0)
			depth--;
		else if (c == ':' && s[i + 1] == ':' && depth == 0) {
			comps++;
			if (++seen == keep && cut == n)
				cut = i;
			i++;
		}
	}
	*ncomp = comps;
	return cut;
}

static void add_module_key(struct sbuf *key, const char *func, size_t flen, const char *file, size_t filelen,
			   const char *module, size_t modlen, const struct hot_opts *o)
{
	size_t ncomp;
	int depth = o->module_depth > 0 ? o->module_depth : 2;
	if (flen > 0) {
		size_t cut = colon_prefix(func, flen, depth, &ncomp);
		if (ncomp > 1) {
			/* never the function itself: at most ncomp - 1 components */
			if ((size_t)depth >= ncomp)
				cut = colon_prefix(func, flen, (int)ncomp - 1, &ncomp);
			sbuf_add(key, func, cut);
			return;
		}
	}
	if (filelen > 0) {
		size_t i = 0;
		int comps = 0;
		if (file[0] == '/')
			i = 1;
		for (; i < filelen; i++)
			if (file[i] == '/' && ++comps == depth)
				break;
		sbuf_add(key, file, i);
		return;
	}
	if (modlen > 0) {
		size_t bl;
		const char *b = base_name(module, modlen, &bl);
		sbuf_addch(key, '[');
		sbuf_add(key, b, bl);
		sbuf_addch(key, ']');
		return;
	}
	sbuf_addstr(key, "[unknown]");
}

static enum plumb_err compile_all(const char *const *res, int n, regex_t **out, struct perr *e, const char *what)
{
	*out = NULL;
	if (n <= 0)
		return PLUMB_OK;
	regex_t *r = calloc((size_t)n, sizeof *r);
	if (!r)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		int rc = regcomp(&r[i], res[i], REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[256];
			regerror(rc, &r[i], msg, sizeof msg);
			for (int k = 0; k < i; k++)
				regfree(&r[k]);
			free(r);
			return perr_set(e, PLUMB_EINVAL, "%s '%s' is not a valid regular expression: %s", what, res[i], msg);
		}
	}
	*out = r;
	return PLUMB_OK;
}

static void free_all(regex_t *r, int n)
{
	if (!r)
		return;
	for (int i = 0; i < n; i++)
		regfree(&r[i]);
	free(r);
}

static enum plumb_err frame_map_build(const struct profile *p, const struct hot_opts *o, struct frame_map *fm,
				      struct perr *e)
{
	size_t nframes = profile_nframes(p);
	enum plumb_err rc = PLUMB_OK;
	regex_t *inc = NULL, *exc = NULL;
	struct label_table *labels = NULL;
	struct repo_files rf = { INTERNER_INIT, 0, false };
	struct sbuf raw = SBUF_INIT, key = SBUF_INIT, red = SBUF_INIT, tmp = SBUF_INIT;
	size_t root_len = o->root ? strlen(o->root) : 0;
	while (root_len > 1 && o->root[root_len - 1] == '/')
		root_len--;

	fm->func_row = malloc((nframes + 1) * sizeof *fm->func_row);
	fm->group_row = malloc((nframes + 1) * sizeof *fm->group_row);
	if (!fm->func_row || !fm->group_row)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	if ((rc = compile_all(o->include, o->ninclude, &inc, e, "--include")) ||
	    (rc = compile_all(o->exclude, o->nexclude, &exc, e, "--exclude")))
		goto out;
	labels = label_table_build(p, o->label_flags);
	if (!labels) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto out;
	}
	if (o->repo_only && o->root)
		repo_files_load(&rf, o->root);

	for (size_t i = 0; i < nframes; i++) {
		const struct frame *f = profile_frame_get(p, (uint32_t)i);
		const char *label = labels->labels[i];
		fm->func_row[i] = fm->group_row[i] = UINT32_MAX;
		/* filters on the full label */
		bool keep = true;
		if (inc) {
			keep = false;
			for (int k = 0; k < o->ninclude && !keep; k++)
				keep = regexec(&inc[k], label, 0, NULL, 0) == 0;
		}
		for (int k = 0; keep && k < o->nexclude; k++)
			if (regexec(&exc[k], label, 0, NULL, 0) == 0)
				keep = false;
		/* the frame's parts: from the model, or parsed back out of a finished label */
		const char *func, *file, *module;
		size_t flen, filelen, modlen;
		int kind;
		if (f->is_label) {
			struct label_parts lp;
			const char *fl = profile_str(p, f->func);
			label_parse(fl, strlen(fl), &lp);
			func = lp.func, flen = lp.func_len;
			file = lp.file, filelen = lp.file_len;
			module = lp.module, modlen = lp.module_len;
			kind = lp.kind;
		} else {
			func = profile_str(p, f->func);
			flen = strlen(func);
			if (!flen) {
				func = "[unknown]";
				flen = 9;
			}
			file = profile_str(p, f->file);
			filelen = strlen(file);
			module = profile_str(p, f->module);
			modlen = strlen(module);
			kind = f->kind;
		}
		if (keep && o->repo_only) {
			if (!filelen) {
				keep = false;
			} else if (file[0] == '/') {
				keep = path_under(file, o->root, root_len);
			} else {
				keep = repo_has(&rf, file, filelen);
				if (!keep) {
					sbuf_reset(&tmp);
					sbuf_add(&tmp, file, filelen);
					const char *sp = label_short_path(tmp.buf);
					keep = repo_has(&rf, sp, strlen(sp));
				}
			}
		}
		if (!keep)
			continue;
		/* function row: "func (dir/file.c)" / "func (libfoo.so)", no line, generics folded on request */
		sbuf_reset(&raw);
		if (o->collapse_generics)
			hot_collapse_generics(&raw, func, flen);
		else
			sbuf_add(&raw, func, flen);
		size_t fname_len = raw.len;
		if (filelen) {
			sbuf_reset(&tmp);
			sbuf_add(&tmp, file, filelen);
			sbuf_addstr(&raw, " (");
			sbuf_addstr(&raw, label_short_path(tmp.buf));
			sbuf_addch(&raw, ')');
		} else if (modlen) {
			size_t bl;
			const char *b = base_name(module, modlen, &bl);
			sbuf_addstr(&raw, " (");
			sbuf_add(&raw, b, bl);
			sbuf_addch(&raw, ')');
		}
		if (kind == FRAME_KERNEL)
			sbuf_addstr(&raw, "_[k]");
		else if (kind == FRAME_JIT)
			sbuf_addstr(&raw, "_[j]");
		sbuf_reset(&red);
		redact_append(&red, raw.buf, raw.len);
		uint32_t fr = rowset_add(&fm->funcs, red.buf, red.len);
		/* group row */
		sbuf_reset(&key);
		const char *dfile = file;
		size_t dfilelen = filelen;
		if (filelen) {
			sbuf_reset(&tmp);
			sbuf_add(&tmp, file, filelen);
			const char *d = display_path(tmp.buf, o, root_len);
			dfile = file + (d - tmp.buf);
			dfilelen = filelen - (size_t)(d - tmp.buf);
		}
		switch (o->group_by) {
		case HOT_GROUP_FUNCTION:
			sbuf_add(&key, red.buf, red.len);
			break;
		case HOT_GROUP_FILE:
			if (dfilelen) {
				sbuf_add(&key, dfile, dfilelen);
			} else if (kind == FRAME_KERNEL) {
				sbuf_addstr(&key, "[kernel]");
			} else if (modlen) {
				size_t bl;
				const char *b = base_name(module, modlen, &bl);
				sbuf_addch(&key, '[');
				sbuf_add(&key, b, bl);
				sbuf_addch(&key, ']');
			} else {
				sbuf_addstr(&key, "[unknown]");
			}
			break;
		case HOT_GROUP_MODULE:
			if (kind == FRAME_KERNEL && !dfilelen)
				sbuf_addstr(&key, "[kernel]");
			else
				add_module_key(&key, raw.buf, fname_len, dfile, dfilelen, module, modlen, o);
			break;
		case HOT_GROUP_LIBRARY:
			if (kind == FRAME_KERNEL) {
				sbuf_addstr(&key, "[kernel]");
			} else if (modlen) {
				size_t bl;
				const char *b = base_name(module, modlen, &bl);
				sbuf_add(&key, b, bl);
			} else {
				sbuf_addstr(&key, "[unknown]");
			}
			break;
		}
		uint32_t gr;
		if (o->group_by == HOT_GROUP_FUNCTION) {
			gr = fr;
		} else {
			sbuf_reset(&red);
			redact_append(&red, key.buf, key.len);
			gr = rowset_add(&fm->groups, red.buf, red.len);
		}
		if (fr == UINT32_MAX || gr == UINT32_MAX || raw.oom || red.oom || key.oom || tmp.oom) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
			goto out;
		}
		fm->func_row[i] = fr;
		fm->group_row[i] = gr;
	}
out:
	free_all(inc, o->ninclude);
	free_all(exc, o->nexclude);
	label_table_free(labels);
	interner_release(&rf.paths);
	sbuf_release(&raw);
	sbuf_release(&key);
	sbuf_release(&red);
	sbuf_release(&tmp);
	return rc;
}

static void frame_map_release(struct frame_map *fm)
{
	free(fm->func_row);
	free(fm->group_row);
	interner_release(&fm->funcs);
	interner_release(&fm->groups);
}

/* ---- tables ------------------------------------------------------------------------------------------ */

static int row_cmp(const void *a, const void *b)
{
	const struct hot_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool table_from_counts(struct hot_table *t, const struct interner *rs, const uint64_t *counts)
{
	size_t n = 0;
	for (size_t i = 0; i < rs->n; i++)
		n += counts[i] > 0;
	t->rows = calloc(n + 1, sizeof *t->rows);
	if (!t->rows)
		return false;
	for (size_t i = 0; i < rs->n; i++) {
		if (!counts[i])
			continue;
		t->rows[t->n].name = strdup(intern_str(rs, (uint32_t)i));
		if (!t->rows[t->n].name)
			return false;
		t->rows[t->n++].count = counts[i];
	}
	qsort(t->rows, t->n, sizeof *t->rows, row_cmp);
	return true;
}

/* Fills slice's tables from aggregated counts of the selected threads. */
static enum plumb_err slice_compute(const struct profile *p, const struct frame_map *fm, const bool *selected,
				    const struct profile_count *counts, size_t ncounts, struct hot_slice *sl,
				    struct perr *e)
{
	size_t nf = fm->funcs.n ? fm->funcs.n : 1, ng = fm->groups.n ? fm->groups.n : 1;
	uint64_t *fleaf = calloc(nf, sizeof *fleaf), *fincl = calloc(nf, sizeof *fincl);
	uint64_t *gleaf = calloc(ng, sizeof *gleaf), *gincl = calloc(ng, sizeof *gincl);
	uint32_t *fstamp = calloc(nf, sizeof *fstamp), *gstamp = calloc(ng, sizeof *gstamp);
	enum plumb_err rc = PLUMB_OK;
	if (!fleaf || !fincl || !gleaf || !gincl || !fstamp || !gstamp) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto out;
	}
	bool by_function = fm->groups.n == 0;
	uint32_t gen = 0;
	for (size_t i = 0; i < ncounts; i++) {
		const struct profile_count *c = &counts[i];
		if (c->thread >= profile_nthreads(p) || !selected[c->thread])
			continue;
		sl->total += c->weight;
		gen++;
		bool leaf_done = false;
		for (uint32_t node = c->stack; node != PROFILE_ROOT; node = profile_stack_parent(p, node)) {
			uint32_t f = profile_stack_frame(p, node);
			if (f == UINT32_MAX || fm->func_row[f] == UINT32_MAX)
				continue;
			uint32_t fr = fm->func_row[f], gr = fm->group_row[f];
			if (!leaf_done) {
				fleaf[fr] += c->weight;
				if (!by_function)
					gleaf[gr] += c->weight;
				sl->attributed += c->weight;
				leaf_done = true;
			}
			if (fstamp[fr] != gen) {
				fstamp[fr] = gen;
				fincl[fr] += c->weight;
			}
			if (!by_function && gstamp[gr] != gen) {
				gstamp[gr] = gen;
				gincl[gr] += c->weight;
			}
		}
	}
	if (!table_from_counts(&sl->tables[HOT_LEAF], &fm->funcs, fleaf) ||
	    !table_from_counts(&sl->tables[HOT_INCLUSIVE], &fm->funcs, fincl) ||
	    !table_from_counts(&sl->tables[HOT_GROUPED_LEAF], by_function ? &fm->funcs : &fm->groups,
			       by_function ? fleaf : gleaf) ||
	    !table_from_counts(&sl->tables[HOT_GROUPED_INCLUSIVE], by_function ? &fm->funcs : &fm->groups,
			       by_function ? fincl : gincl))
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
out:
	free(fleaf);
	free(fincl);
	free(gleaf);
	free(gincl);
	free(fstamp);
	free(gstamp);
	return rc;
}

struct thread_order {
	uint32_t id;
	uint64_t count;
};

static int thread_cmp(const void *a, const void *b)
{
	const struct thread_order *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Picks threads: thread_re, then the top N by samples. Fills s->threads. */
static enum plumb_err select_threads(const struct profile *p, const struct hot_opts *o, bool *selected,
				     struct hot_summary *s, struct perr *e)
{
	size_t nt = profile_nthreads(p);
	struct thread_order *ord = calloc(nt + 1, sizeof *ord);
	if (!ord)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	size_t nc;
	const struct profile_count *counts = profile_counts(p, &nc);
	for (size_t i = 0; i < nt; i++)
		ord[i].id = (uint32_t)i;
	for (size_t i = 0; i < nc; i++)
		if (counts[i].thread < nt)
			ord[counts[i].thread].count += counts[i].weight;
	regex_t re;
	if (o->thread_re) {
		int rc = regcomp(&re, o->thread_re, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char msg[256];
			regerror(rc, &re, msg, sizeof msg);
			free(ord);
			return perr_set(e, PLUMB_EINVAL, "--thread '%s' is not a valid regular expression: %s", o->thread_re,
					msg);
		}
	}
	size_t m = 0;
	for (size_t i = 0; i < nt; i++) {
		const struct profile_thread *t = profile_thread_get(p, (uint32_t)i);
		bool keep = true;
		if (o->thread_re) {
			char full[512];
			const char *name = profile_str(p, t->name);
			snprintf(full, sizeof full, "%s (%u)", name, t->tid);
			keep = regexec(&re, name, 0, NULL, 0) == 0 || regexec(&re, full, 0, NULL, 0) == 0;
		}
		if (keep)
			ord[m++] = ord[i];
	}
	if (o->thread_re)
		regfree(&re);
	qsort(ord, m, sizeof *ord, thread_cmp);
	if (o->top_threads > 0 && (size_t)o->top_threads < m)
		m = (size_t)o->top_threads;
	s->threads = calloc(m + 1, sizeof *s->threads);
	if (!s->threads) {
		free(ord);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < m; i++) {
		const struct profile_thread *t = profile_thread_get(p, ord[i].id);
		selected[ord[i].id] = true;
		struct hot_thread_row *r = &s->threads[s->nthreads++];
		r->name = redact_dup(profile_str(p, t->name));
		r->pid = t->pid;
		r->tid = t->tid;
		r->count = ord[i].count;
		if (!r->name) {
			free(ord);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
	}
	free(ord);
	return PLUMB_OK;
}

/* The state hot_analyze() and hot_analyze_stages() share. */
struct analysis {
	struct frame_map fm;
	bool *selected;
};

static enum plumb_err analysis_begin(const struct profile *p, const struct hot_opts *o, struct analysis *a,
				     struct hot_summary *s, struct perr *e)
{
	memset(a, 0, sizeof *a);
	a->selected = calloc(profile_nthreads(p) + 1, sizeof *a->selected);
	if (!a->selected)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (o->repo_only && !o->root)
		return perr_set(e, PLUMB_EINVAL, "--repo-only needs a root directory");
	enum plumb_err rc = select_threads(p, o, a->selected, s, e);
	if (rc)
		return rc;
	return frame_map_build(p, o, &a->fm, e);
}

static void analysis_end(struct analysis *a)
{
	frame_map_release(&a->fm);
	free(a->selected);
}

enum plumb_err hot_analyze(const struct profile *p, const struct hot_opts *o, struct hot_summary **out,
			   struct perr *e)
{
	static const struct hot_opts defaults = HOT_OPTS_INIT;
	if (!o)
		o = &defaults;
	struct hot_summary *s = calloc(1, sizeof *s);
	if (!s)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	s->group_by = o->group_by;
	s->module_depth = o->module_depth > 0 ? o->module_depth : 2;
	s->has_grouped = true;
	const struct profile_meta *m = profile_meta_const(p);
	s->weight_unit = strdup(profile_str(p, m->weight_unit)[0] ? profile_str(p, m->weight_unit) : "samples");
	struct analysis a;
	enum plumb_err rc = analysis_begin(p, o, &a, s, e);
	if (!rc && !s->weight_unit)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (!rc) {
		size_t nc;
		const struct profile_count *counts = profile_counts(p, &nc);
		rc = slice_compute(p, &a.fm, a.selected, counts, nc, &s->all, e);
	}
	analysis_end(&a);
	if (rc) {
		hot_summary_free(s);
		return rc;
	}
	*out = s;
	return PLUMB_OK;
}

enum plumb_err hot_analyze_stages(const struct profile *p, const struct hot_opts *o, const struct fmt_stage *stages,
				  size_t n, struct hot_summary *s, struct perr *e)
{
	static const struct hot_opts defaults = HOT_OPTS_INIT;
	if (!o)
		o = &defaults;
	if (!profile_has_timeline(p))
		return perr_set(e, PLUMB_EINVAL, "this profile has no sample times, so it cannot be sliced by stages");
	size_t nt;
	const struct profile_sample *tl = profile_timeline(p, &nt);
	uint64_t origin = profile_meta_const(p)->clock_origin_ns;
	struct hot_summary scratch = { 0 };
	struct analysis a;
	enum plumb_err rc = analysis_begin(p, o, &a, &scratch, e);
	for (size_t i = 0; i < scratch.nthreads; i++)
		free(scratch.threads[i].name);
	free(scratch.threads);
	struct profile_count *agg = NULL;
	uint32_t *by_stack = NULL;
	size_t nstacks = profile_nstacks(p);
	struct hmap index = HMAP_INIT;
	if (!rc) {
		s->stages = calloc(n + 1, sizeof *s->stages);
		agg = malloc((nt + 1) * sizeof *agg);
		by_stack = malloc((nstacks + 1) * sizeof *by_stack);
		if (!s->stages || !agg || !by_stack)
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	for (size_t k = 0; !rc && k < n; k++) {
		struct hot_slice *sl = &s->stages[k];
		sl->name = strdup(stages[k].name);
		sl->start_ms = stages[k].start_ms;
		sl->end_ms = stages[k].end_ms;
		s->nstages++;
		if (!sl->name) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
			break;
		}
		size_t nagg = 0;
		hmap_release(&index);
		for (size_t i = 0; i < nstacks; i++)
			by_stack[i] = UINT32_MAX;
		for (size_t i = 0; i < nt; i++) {
			double t_ms = ((double)tl[i].time_ns - (double)origin) / 1e6;
			if (t_ms < sl->start_ms || t_ms >= sl->end_ms)
				continue;
			/* most stacks are seen on one thread: try the stack's first entry before the map */
			uint32_t idx = tl[i].stack < nstacks ? by_stack[tl[i].stack] : UINT32_MAX;
			if (idx != UINT32_MAX && agg[idx].thread == tl[i].thread) {
				agg[idx].weight += tl[i].weight;
				continue;
			}
			uint64_t key = ((uint64_t)tl[i].stack << 32) | tl[i].thread;
			if (hmap_get(&index, key, &idx)) {
				agg[idx].weight += tl[i].weight;
			} else {
				if (!hmap_put(&index, key, (uint32_t)nagg)) {
					rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
					break;
				}
				if (tl[i].stack < nstacks && by_stack[tl[i].stack] == UINT32_MAX)
					by_stack[tl[i].stack] = (uint32_t)nagg;
				agg[nagg++] = (struct profile_count){ tl[i].stack, tl[i].thread, tl[i].weight };
			}
		}
		if (!rc)
			rc = slice_compute(p, &a.fm, a.selected, agg, nagg, sl, e);
	}
	hmap_release(&index);
	free(agg);
	free(by_stack);
	analysis_end(&a);
	return rc;
}

/* ---- diff -------------------------------------------------------------------------------------------- */

static int diff_cmp(const void *a, const void *b)
{
	const struct hot_diff_row *x = a, *y = b;
	double dx = fabs(x->delta_points), dy = fabs(y->delta_points);
	if (fabs(dx - dy) > 1e-9)
		return dx > dy ? -1 : 1;
	uint64_t cx = (uint64_t)llabs(x->delta_count), cy = (uint64_t)llabs(y->delta_count);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(x->name, y->name);
}

enum plumb_err hot_diff(const struct hot_table *before, uint64_t before_total, const struct hot_table *after,
			uint64_t after_total, struct hot_diff_row **rows_out, size_t *n_out, struct perr *e)
{
	size_t cap = before->n + after->n + 1;
	struct hot_diff_row *rows = calloc(cap, sizeof *rows);
	struct interner index = INTERNER_BORROW_INIT; /* row names -> rows; the tables' names outlive it */
	size_t n = 0;
	if (!rows)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (int side = 0; side < 2; side++) {
		const struct hot_table *t = side ? after : before;
		for (size_t i = 0; i < t->n; i++) {
			const char *name = t->rows[i].name;
			bool added;
			uint32_t idx = intern(&index, name, strlen(name), &added);
			if (idx == INTERN_NOMEM) {
				free(rows);
				interner_release(&index);
				return perr_set(e, PLUMB_ENOMEM, "out of memory");
			}
			if (added) {
				rows[idx].name = name;
				n++;
			}
			if (side)
				rows[idx].after += t->rows[i].count;
			else
				rows[idx].before += t->rows[i].count;
		}
	}
	interner_release(&index);
	for (size_t i = 0; i < n; i++) {
		struct hot_diff_row *r = &rows[i];
		r->before_share = before_total ? 100.0 * (double)r->before / (double)before_total : 0;
		r->after_share = after_total ? 100.0 * (double)r->after / (double)after_total : 0;
		r->delta_points = r->after_share - r->before_share;
		r->delta_count = (int64_t)r->after - (int64_t)r->before;
	}
	qsort(rows, n, sizeof *rows, diff_cmp);
	*rows_out = rows;
	*n_out = n;
	return PLUMB_OK;
}
