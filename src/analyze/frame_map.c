/* frame_map.c — maps each frame once: the filters see its label; its parts (function, file, module, kind) come
 * from the model's fields (profile/label.h); the function row is
 * "func (dir/file.c)" or "func (libfoo.so)" without a line, and the group row is its file, module or library.
 * Rows are interned in frame order, function rows before group rows. */
#include "analyze/frame_map.h"

#include <stdlib.h>
#include <string.h>

#include "analyze/repo.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "profile/cxxname.h"
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

/* ---- regular expressions ------------------------------------------------------------------------------- */

enum plumb_err hot_regex_compile(const char *const *res, int n, regex_t **out, const char *what, struct perr *e)
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
			hot_regex_free(r, i);
			return perr_set(e, PLUMB_EINVAL, "%s '%s' is not a valid regular expression: %s", what, res[i], msg);
		}
	}
	*out = r;
	return PLUMB_OK;
}

void hot_regex_free(regex_t *r, int n)
{
	if (!r)
		return;
	for (int i = 0; i < n; i++)
		regfree(&r[i]);
	free(r);
}

/* ---- keys -------------------------------------------------------------------------------------------- */

static bool path_under(const char *path, const char *root, size_t root_len)
{
	return root_len > 0 && strncmp(path, root, root_len) == 0 && (path[root_len] == '/' || root[root_len - 1] == '/');
}

static const char *base_name(const char *path, size_t len, size_t *out_len)
{
	const char *s = path + len;
	while (s > path && s[-1] != '/')
		s--;
	*out_len = len - (size_t)(s - path);
	return s;
}

/* Appends the base name of a module path, in brackets when `brackets` ("[libc.so.6]"). */
static void add_module_name(struct sbuf *key, const char *module, size_t modlen, bool brackets)
{
	size_t bl;
	const char *b = base_name(module, modlen, &bl);
	if (brackets)
		sbuf_addch(key, '[');
	sbuf_add(key, b, bl);
	if (brackets)
		sbuf_addch(key, ']');
}

static void add_module_key(struct sbuf *key, const char *func, size_t flen, const char *file, size_t filelen,
			   const char *module, size_t modlen, const struct hot_opts *o)
{
	size_t ncomp;
	int depth = o->module_depth > 0 ? o->module_depth : 2;
	if (flen > 0) {
		/* the name read as a name: its namespaces and classes, not the words of its return type */
		struct sbuf shortened = SBUF_INIT;
		label_cxx_short_name(&shortened, func, flen);
		size_t cut = label_cxx_scope_prefix(shortened.buf, shortened.len, depth, &ncomp);
		if (cut > 0)
			sbuf_add(key, shortened.buf, cut);
		bool oom = shortened.oom;
		sbuf_release(&shortened);
		if (cut > 0 || oom) {
			if (oom)
				key->oom = true;
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
		add_module_name(key, module, modlen, true);
		return;
	}
	sbuf_addstr(key, "[unknown]");
}

/* ---- the map ----------------------------------------------------------------------------------------- */

/* What building the map needs besides the map: the options, the compiled filters, the repository's files and
 * scratch buffers reused for every frame. */
struct build {
	const struct profile *p;
	const struct hot_opts *o;
	regex_t *inc, *exc;
	struct label_table *labels;
	struct hot_repo_files repo;
	size_t root_len;                /* o->root without trailing slashes */
	struct sbuf raw, key, red, tmp; /* function row (as shown); group key; redacted key; a path copy */
	struct sbuf part;               /* a part before it is redacted */
};

/* The --include/--exclude verdict on a frame's full label. */
static bool passes_filters(const struct build *b, const char *label)
{
	const struct hot_opts *o = b->o;
	bool keep = true;
	if (b->inc) {
		keep = false;
		for (int k = 0; k < o->ninclude && !keep; k++)
			keep = regexec(&b->inc[k], label, 0, NULL, 0) == 0;
	}
	for (int k = 0; keep && k < o->nexclude; k++)
		if (regexec(&b->exc[k], label, 0, NULL, 0) == 0)
			keep = false;
	return keep;
}

/* The frame's parts as a function row sees them: without the line and the inlined mark (profile/label.h). */
static void frame_parts(const struct profile *p, const struct frame *f, struct label_parts *lp)
{
	label_parts_of(p, f, lp);
	lp->line = 0;
	lp->inlined = false;
}

/* The short path of a file part ("c/d.c" of "a/b/c/d.c"), through the scratch copy. */
static const char *short_path(struct build *b, const struct label_parts *lp)
{
	sbuf_reset(&b->tmp);
	sbuf_add(&b->tmp, lp->file, lp->file_len);
	return label_short_path(b->tmp.buf);
}

/* A relative file path without its leading "./" and "../" components (DWARF names relative to a build
 * directory), as a span of lp's file. */
static const char *relative_tail(const struct label_parts *lp, size_t *len)
{
	const char *f = lp->file;
	size_t n = lp->file_len;
	for (;;) {
		if (n > 2 && memcmp(f, "./", 2) == 0) {
			f += 2;
			n -= 2;
		} else if (n > 3 && memcmp(f, "../", 3) == 0) {
			f += 3;
			n -= 3;
		} else {
			*len = n;
			return f;
		}
	}
}

/* --repo-only: a frame is kept when its file (the model's path, full or shortened) is under the root: an absolute
 * path by its prefix, a relative one when it is a repository path or a tail of one (repo.h). */
static bool in_repo(struct build *b, const struct label_parts *lp)
{
	if (!lp->file_len)
		return false;
	if (lp->file[0] == '/') {
		sbuf_reset(&b->tmp);
		sbuf_add(&b->tmp, lp->file, lp->file_len);
		return path_under(b->tmp.buf, b->o->root, b->root_len);
	}
	size_t n;
	const char *f = relative_tail(lp, &n);
	return hot_repo_files_has(&b->repo, f, n);
}

/* The function row into b->raw as outputs show it (docs/design.md §3.6: the function kept unless it is data,
 * the path or module redacted as a path): "func (dir/file.c)" / "func (libfoo.so)", no line, generics folded on
 * request, the kind's suffix. Returns the length of the function part. */
static size_t function_row(struct build *b, const struct label_parts *lp)
{
	struct sbuf *raw = &b->raw, *part = &b->part;
	sbuf_reset(raw);
	sbuf_reset(part);
	if (!lp->func_len) /* no name: module+0xOFFSET, or [unknown] (profile/label.h) */
		label_render(part, lp, LABEL_FUNC_ONLY | LABEL_NO_SUFFIX);
	else if (b->o->collapse_generics)
		hot_collapse_generics(part, lp->func, lp->func_len);
	else if ((b->o->label_flags & LABEL_SHORT_NAMES) && lp->kind == FRAME_USER)
		label_cxx_short_name(part, lp->func, label_unversioned_len(lp->func, lp->func_len));
	else
		sbuf_add(part, lp->func, lp->func_len);
	if (label_func_is_data(lp))
		redact_append(raw, part->buf, part->len);
	else
		redact_code_append(raw, part->buf, part->len);
	size_t fname_len = raw->len;
	if (lp->file_len) {
		const char *sp = short_path(b, lp);
		sbuf_addstr(raw, " (");
		redact_path_append(raw, sp, strlen(sp));
		sbuf_addch(raw, ')');
	} else if (lp->module_len && (lp->func_len || !lp->offset)) {
		sbuf_reset(part);
		add_module_name(part, lp->module, lp->module_len, false);
		sbuf_addstr(raw, " (");
		redact_path_append(raw, part->buf, part->len);
		sbuf_addch(raw, ')');
	}
	if (lp->kind == FRAME_KERNEL)
		sbuf_addstr(raw, "_[k]");
	else if (lp->kind == FRAME_JIT)
		sbuf_addstr(raw, "_[j]");
	return fname_len;
}

/* The library of a frame: [kernel], its module's base name (in brackets when `brackets`), or [unknown]. */
static void add_library_key(struct sbuf *key, const struct label_parts *lp, bool brackets)
{
	if (lp->kind == FRAME_KERNEL)
		sbuf_addstr(key, "[kernel]");
	else if (lp->module_len)
		add_module_name(key, lp->module, lp->module_len, brackets);
	else
		sbuf_addstr(key, "[unknown]");
}

/* The group key (not grouping by function) into b->key: the file (repo-relative under the root), the module or
 * the library, with [kernel], [libname] and [unknown] for frames without one. */
static void group_key(struct build *b, const struct label_parts *lp, size_t fname_len)
{
	struct sbuf *key = &b->key;
	const char *dfile = lp->file;
	size_t dfilelen = lp->file_len;
	if (lp->file_len) {
		sbuf_reset(&b->tmp);
		sbuf_add(&b->tmp, lp->file, lp->file_len);
		const char *d = b->tmp.buf;
		if (b->o->root && path_under(d, b->o->root, b->root_len)) {
			d += b->root_len;
			while (*d == '/')
				d++;
		}
		dfile = lp->file + (d - b->tmp.buf);
		dfilelen = lp->file_len - (size_t)(d - b->tmp.buf);
		size_t n;
		const char *f = relative_tail(lp, &n);
		const char *rel = lp->file[0] != '/' && b->o->repo_only ? hot_repo_files_rel(&b->repo, f, n) : NULL;
		if (rel) { /* a shortened path the repository knows: its path there */
			dfile = rel;
			dfilelen = strlen(rel);
		}
	}
	sbuf_reset(key);
	switch (b->o->group_by) {
	case HOT_GROUP_FUNCTION:
		break;
	case HOT_GROUP_FILE:
		if (dfilelen)
			sbuf_add(key, dfile, dfilelen);
		else
			add_library_key(key, lp, true);
		break;
	case HOT_GROUP_MODULE:
		if (lp->kind == FRAME_KERNEL && !dfilelen)
			sbuf_addstr(key, "[kernel]");
		else
			add_module_key(key, b->raw.buf, fname_len, dfile, dfilelen, lp->module, lp->module_len, b->o);
		break;
	case HOT_GROUP_LIBRARY:
		add_library_key(key, lp, false);
		break;
	}
}

/* A row's id in `rows` for the text of `s` (a function row, shown already), or with `redact` for its text
 * through the path redactor (a group key: a file, a module, a library); HOT_ROW_NONE when out of memory. */
static uint32_t row_add(struct build *b, struct interner *rows, const struct sbuf *s, bool redact)
{
	sbuf_reset(&b->red);
	if (redact)
		redact_path_append(&b->red, s->buf, s->len);
	else
		sbuf_add(&b->red, s->buf, s->len);
	uint32_t id = intern(rows, b->red.buf, b->red.len, NULL);
	return id == INTERN_NOMEM ? HOT_ROW_NONE : id;
}

/* Maps frame i (left HOT_ROW_NONE when a filter drops it). */
static enum plumb_err map_frame(struct build *b, struct hot_frame_map *fm, uint32_t i, struct perr *e)
{
	const struct hot_opts *o = b->o;
	fm->func_row[i] = fm->group_row[i] = HOT_ROW_NONE;
	bool keep = passes_filters(b, b->labels->labels[i]);
	struct label_parts lp;
	frame_parts(b->p, profile_frame_get(b->p, i), &lp);
	if (keep && o->repo_only)
		keep = in_repo(b, &lp);
	if (!keep)
		return PLUMB_OK;
	size_t fname_len = function_row(b, &lp);
	uint32_t fr = row_add(b, &fm->funcs, &b->raw, false), gr = fr;
	if (o->group_by != HOT_GROUP_FUNCTION) {
		group_key(b, &lp, fname_len);
		gr = row_add(b, &fm->groups, &b->key, true);
	}
	if (fr == HOT_ROW_NONE || gr == HOT_ROW_NONE || b->raw.oom || b->red.oom || b->key.oom || b->tmp.oom ||
	    b->part.oom)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	fm->func_row[i] = fr;
	fm->group_row[i] = gr;
	if (lp.kind != FRAME_KERNEL) {
		fm->user_frames++;
		fm->user_frames_in_library += lp.module_len > 0;
	}
	return PLUMB_OK;
}

enum plumb_err hot_frame_map_build(const struct profile *p, const struct hot_opts *o, struct hot_frame_map *fm,
				   struct perr *e)
{
	size_t nframes = profile_nframes(p);
	struct build b = { p, o, NULL, NULL, NULL, HOT_REPO_FILES_INIT, 0, SBUF_INIT, SBUF_INIT, SBUF_INIT, SBUF_INIT,
			   SBUF_INIT };
	b.root_len = o->root ? strlen(o->root) : 0;
	while (b.root_len > 1 && o->root[b.root_len - 1] == '/')
		b.root_len--;
	fm->func_row = malloc((nframes + 1) * sizeof *fm->func_row);
	fm->group_row = malloc((nframes + 1) * sizeof *fm->group_row);
	if (!fm->func_row || !fm->group_row)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	enum plumb_err rc;
	if ((rc = hot_regex_compile(o->include, o->ninclude, &b.inc, "--include", e)) ||
	    (rc = hot_regex_compile(o->exclude, o->nexclude, &b.exc, "--exclude", e)))
		goto out;
	if (!(b.labels = label_table_build(p, o->label_flags))) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto out;
	}
	if (o->repo_only && o->root)
		hot_repo_files_load(&b.repo, o->root);
	for (size_t i = 0; !rc && i < nframes; i++)
		rc = map_frame(&b, fm, (uint32_t)i, e);
out:
	hot_regex_free(b.inc, o->ninclude);
	hot_regex_free(b.exc, o->nexclude);
	label_table_free(b.labels);
	hot_repo_files_release(&b.repo);
	sbuf_release(&b.raw);
	sbuf_release(&b.key);
	sbuf_release(&b.red);
	sbuf_release(&b.tmp);
	sbuf_release(&b.part);
	return rc;
}

void hot_frame_map_release(struct hot_frame_map *fm)
{
	free(fm->func_row);
	free(fm->group_row);
	interner_release(&fm->funcs);
	interner_release(&fm->groups);
}
