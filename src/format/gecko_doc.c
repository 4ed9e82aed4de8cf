/* gecko_doc.c — reads the text of a Firefox Profiler "processed" profile (preprocessedProfileVersion 41 to 66)
 * into the columns of format/gecko_doc.h. Big profiles are mostly long number arrays (samples.stack,
 * samples.time), so the document is read with the pull reader (base/json.h) over the in-memory text: only the
 * columns the resolver needs are captured, straight into compact arrays, and everything else is skipped (while
 * still validated). No DOM is built; no column is given a meaning here. */
#include "format/gecko_doc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

#define IS_DIGIT(c) ((unsigned)((c) - '0') < 10u)

/* ---- captured columns ------------------------------------------------------------------------------- */

static void col_release(struct col *c)
{
	free(c->v);
	memset(c, 0, sizeof *c);
}

/* Checks a JSON number without converting it; returns its end, or NULL when it is malformed. */
static inline const char *scan_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p >= end || !IS_DIGIT(*p))
		return NULL;
	if (*p == '0')
		p++;
	else
		while (p < end && IS_DIGIT(*p))
			p++;
	if (p < end && *p == '.') {
		p++;
		if (p >= end || !IS_DIGIT(*p))
			return NULL;
		while (p < end && IS_DIGIT(*p))
			p++;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (p >= end || !IS_DIGIT(*p))
			return NULL;
		while (p < end && IS_DIGIT(*p))
			p++;
	}
	return p;
}

/* Starts a column: c is emptied. 1: the array is open and c is present; 0: a null in place of the array was
 * the whole column (c stays absent); -1: the reader failed. */
static int col_begin(struct json_reader *j, struct col *c)
{
	col_release(c);
	if (jr_peek(j) == 'n')
		return jr_lit(j, "null", 4) ? 0 : -1;
	if (!jr_arr_begin(j))
		return -1;
	c->present = true;
	return 1;
}

/* Validates an array of numbers/nulls and only counts it (a column the caller will not need). */
static bool gk_col_count(struct json_reader *j, struct col *c)
{
	int begun = col_begin(j, c);
	if (begun <= 0)
		return begun == 0;
	const char *p = j->p, *end = j->end;
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
			p++;
		if (p >= end) {
			j->p = p;
			return jr_fail(j, "unexpected end of input");
		}
		if (*p == ']') {
			j->p = p + 1;
			j->depth--;
			return true;
		}
		if (c->n) {
			if (*p != ',') {
				j->p = p;
				return jr_fail(j, "expected ',' or ']'");
			}
			p++;
			while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
				p++;
		}
		if (p < end && *p == 'n') {
			j->p = p;
			if (!jr_lit(j, "null", 4))
				return false;
			p = j->p;
		} else {
			const char *q = scan_number(p, end);
			if (!q) {
				j->p = p;
				return jr_fail(j, "expected a number or null");
			}
			p = q;
		}
		c->n++;
	}
}

/* Reads an array of numbers/nulls (or a null in place of the array) into c. */
static bool gk_col(struct json_reader *j, struct col *c)
{
	int begun = col_begin(j, c);
	if (begun <= 0)
		return begun == 0;
	const char *p;
	for (;;) {
		jr_ws(j);
		p = j->p;
		if (p >= j->end)
			return jr_fail(j, "unexpected end of input");
		if (*p == ']') {
			j->p++;
			j->depth--;
			return true;
		}
		if (c->n) {
			if (*p != ',')
				return jr_fail(j, "expected ',' or ']'");
			j->p++;
			jr_ws(j);
			p = j->p;
			if (p >= j->end)
				return jr_fail(j, "unexpected end of input");
		}
		double v;
		if (*p == 'n') {
			if (!jr_lit(j, "null", 4))
				return false;
			v = NAN;
		} else if (*p == 't' || *p == 'f') {
			/* booleans where numbers are expected: harmless to keep as 1/0 */
			if (!(*p == 't' ? jr_lit(j, "true", 4) : jr_lit(j, "false", 5)))
				return false;
			v = *p == 't';
		} else {
			/* fast path for small non-negative integers, the bulk of a profile */
			const char *q = p;
			uint64_t m = 0;
			while (q < j->end && IS_DIGIT(*q) && q - p < 15)
				m = m * 10 + (uint64_t)(*q++ - '0');
			bool ok_int = q > p && !(*p == '0' && q - p > 1);
			if (ok_int && q < j->end && (*q == ',' || *q == ']' || *q == ' ' || *q == '\n')) {
				v = (double)m;
				j->p = q;
			} else if (ok_int && q + 1 < j->end && *q == '.' && IS_DIGIT(q[1])) {
				/* "123.456": exact as m / 10^k while the digits fit in 15 */
				const char *r = q + 1;
				int k = 0;
				while (r < j->end && IS_DIGIT(*r) && (q - p) + k < 15) {
					m = m * 10 + (uint64_t)(*r++ - '0');
					k++;
				}
				if (r < j->end && (*r == ',' || *r == ']' || *r == ' ' || *r == '\n')) {
					v = (double)m / jr_pow10[k];
					j->p = r;
				} else if (!jr_number(j, &v)) {
					return false;
				}
			} else if (!jr_number(j, &v)) {
				return false;
			}
		}
		if (!ALLOC_GROW(c->v, c->n + 1, c->cap))
			return jr_oom(j);
		c->v[c->n++] = v;
	}
}


/* Frees what s holds and leaves it empty (also the way to start one: a zeroed strarr is released, then read). */
static void strarr_release(struct strarr *s)
{
	sbuf_release(&s->text);
	free(s->off);
	free(s->len);
	memset(s, 0, sizeof *s);
	sbuf_init(&s->text);
}

static bool gk_strarr(struct json_reader *j, struct strarr *s)
{
	strarr_release(s);
	if (!jr_arr_begin(j))
		return false;
	s->present = true;
	bool first = true;
	int r;
	while ((r = jr_arr_next(j, &first)) == 1) {
		if (s->n == s->cap) {
			size_t nc = grow_cap(s->n + 1, s->cap);
			if (!REALLOC_ARRAY(s->off, nc) || !REALLOC_ARRAY(s->len, nc))
				return jr_oom(j);
			s->cap = nc;
		}
		size_t before = s->text.len;
		if (jr_peek(j) == 'n') { /* tolerate nulls: an empty string */
			if (!jr_lit(j, "null", 4))
				return false;
		} else if (!jr_string(j, &s->text, NULL, NULL, NULL)) {
			return false;
		}
		s->off[s->n] = before;
		s->len[s->n] = s->text.len - before;
		s->n++;
	}
	return r == 0;
}

/* A string or number value as a malloc'd string (numbers as their text); NULL for null. */
static bool gk_scalar_str(struct json_reader *j, char **out)
{
	free(*out);
	*out = NULL;
	int c = jr_peek(j);
	if (c == '"') {
		struct sbuf sb = SBUF_INIT;
		if (!jr_string(j, &sb, NULL, NULL, NULL)) {
			sbuf_release(&sb);
			return false;
		}
		*out = sbuf_detach(&sb, NULL);
		return *out != NULL || jr_oom(j);
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		const char *s = j->p;
		double d;
		if (!jr_number(j, &d))
			return false;
		*out = strndup(s, (size_t)(j->p - s));
		return *out != NULL || jr_oom(j);
	}
	return jr_skip(j);
}

static bool gk_double_or_null(struct json_reader *j, double *out)
{
	int c = jr_peek(j);
	if (c == '-' || (c >= '0' && c <= '9'))
		return jr_number(j, out);
	*out = NAN;
	return jr_skip(j);
}

/* ---- the document ----------------------------------------------------------------------------------- */

static void gtables_release(struct gtables *t)
{
	struct col *cols[] = { &t->stack_frame,   &t->stack_prefix,  &t->stack_prefix_offset, &t->frame_func,
			       &t->frame_address, &t->frame_line,    &t->frame_inline_depth,  &t->func_name,
			       &t->func_resource, &t->func_file,     &t->func_source,         &t->func_line,
			       &t->res_lib,       &t->res_name,      &t->src_filename,        &t->frame_category };
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
		col_release(cols[i]);
	strarr_release(&t->strings);
}

void gdoc_release(struct gdoc *d)
{
	gtables_release(&d->shared);
	for (size_t i = 0; i < d->nthreads; i++) {
		struct gthread *t = &d->threads[i];
		gtables_release(&t->t);
		free(t->name);
		free(t->process_name);
		free(t->pid);
		free(t->tid);
		free(t->weight_type);
		col_release(&t->s_stack);
		col_release(&t->s_time);
		col_release(&t->s_time_deltas);
		col_release(&t->s_weight);
		col_release(&t->s_plumb_samples);
	}
	free(d->threads);
	for (size_t i = 0; i < d->ncategories; i++)
		free(d->categories[i]);
	free(d->categories);
	free(d->plumb_weight_unit);
	for (size_t i = 0; i < d->nlibs; i++) {
		free(d->libs[i].name);
		free(d->libs[i].path);
		free(d->libs[i].debug_name);
		free(d->libs[i].debug_id);
		free(d->libs[i].code_id);
	}
	free(d->libs);
}


/* Reads an object member by member: member(j, ctx, key, klen) reads or skips each value. With `nullable`, a
 * null in place of the object reads as an empty one. */
typedef bool (*member_fn)(struct json_reader *j, void *ctx, const char *k, size_t kl);

static bool gk_members(struct json_reader *j, bool nullable, member_fn member, void *ctx)
{
	if (nullable && jr_peek(j) == 'n')
		return jr_lit(j, "null", 4);
	if (!jr_obj_begin(j))
		return false;
	bool first = true;
	const char *k;
	size_t kl;
	int r;
	while ((r = jr_obj_next(j, &first, &k, &kl)) == 1)
		if (!member(j, ctx, k, kl))
			return false;
	return r == 0;
}

/* A table object: the keys named in the map are captured as columns, the rest skipped. */
struct colmap {
	const char *key;
	struct col *col;
};

struct table_ctx {
	const struct colmap *map;
	size_t n;
};

static bool table_member(struct json_reader *j, void *ctx, const char *k, size_t kl)
{
	const struct table_ctx *t = ctx;
	for (size_t i = 0; i < t->n; i++)
		if (jr_key_is(k, kl, t->map[i].key))
			return gk_col(j, t->map[i].col);
	return jr_skip(j);
}

static bool gk_table(struct json_reader *j, const struct colmap *map, size_t nmap, bool *seen)
{
	if (jr_peek(j) != 'n')
		*seen = true; /* anything but an object fails the read */
	struct table_ctx t = { map, nmap };
	return gk_members(j, true, table_member, &t);
}

/* A key of a thread or of `shared` that holds one of the tables; returns false when it is none of them. */
static bool gk_tables_key(struct json_reader *j, struct gtables *t, const char *k, size_t kl, bool *handled)
{
	*handled = true;
	if (jr_key_is(k, kl, "stackTable")) {
		const struct colmap m[] = { { "frame", &t->stack_frame },
					    { "prefix", &t->stack_prefix },
					    { "prefixOffset", &t->stack_prefix_offset } };
		return gk_table(j, m, 3, &t->has_stack);
	}
	if (jr_key_is(k, kl, "frameTable")) {
		const struct colmap m[] = { { "func", &t->frame_func },
					    { "address", &t->frame_address },
					    { "line", &t->frame_line },
					    { "inlineDepth", &t->frame_inline_depth },
					    { "category", &t->frame_category } };
		return gk_table(j, m, 5, &t->has_frame);
	}
	if (jr_key_is(k, kl, "funcTable")) {
		const struct colmap m[] = { { "name", &t->func_name },	       { "resource", &t->func_resource },
					    { "fileName", &t->func_file },     { "source", &t->func_source },
					    { "lineNumber", &t->func_line } };
		return gk_table(j, m, 5, &t->has_func);
	}
	if (jr_key_is(k, kl, "resourceTable")) {
		const struct colmap m[] = { { "lib", &t->res_lib }, { "name", &t->res_name } };
		return gk_table(j, m, 2, &t->has_res);
	}
	if (jr_key_is(k, kl, "sources")) {
		const struct colmap m[] = { { "filename", &t->src_filename } };
		return gk_table(j, m, 1, &t->has_sources);
	}
	if (jr_key_is(k, kl, "stringArray") || jr_key_is(k, kl, "stringTable")) {
		if (jr_peek(j) == '[')
			return gk_strarr(j, &t->strings);
		return jr_skip(j); /* old profiles keep a UniqueStringArray object here; not in 41+ */
	}
	*handled = false;
	return true;
}

/* Members that are strings (or numbers kept as their text): the map pairs keys with fields. */
struct strmap {
	const char *key;
	char **dst;
};

/* Reads key k's value into its field when the map names k; false in *handled when it does not. */
static bool gk_str_member(struct json_reader *j, const struct strmap *map, size_t n, const char *k, size_t kl,
			  bool *handled)
{
	for (size_t i = 0; i < n; i++)
		if (jr_key_is(k, kl, map[i].key)) {
			*handled = true;
			return gk_scalar_str(j, map[i].dst);
		}
	*handled = false;
	return true;
}

struct thread_ctx {
	struct gthread *t;
	size_t index;
	bool want_times;
};

static bool samples_member(struct json_reader *j, void *ctx, const char *k, size_t kl)
{
	struct thread_ctx *c = ctx;
	struct gthread *t = c->t;
	if (jr_key_is(k, kl, "stack"))
		return gk_col(j, &t->s_stack);
	if (jr_key_is(k, kl, "time"))
		return c->want_times ? gk_col(j, &t->s_time) : gk_col_count(j, &t->s_time);
	if (jr_key_is(k, kl, "timeDeltas"))
		return c->want_times ? gk_col(j, &t->s_time_deltas) : gk_col_count(j, &t->s_time_deltas);
	if (jr_key_is(k, kl, "weight"))
		return gk_col(j, &t->s_weight);
	if (jr_key_is(k, kl, "weightType"))
		return gk_scalar_str(j, &t->weight_type);
	if (jr_key_is(k, kl, "plumbSamples"))
		return gk_col(j, &t->s_plumb_samples);
	return jr_skip(j);
}

static bool thread_member(struct json_reader *j, void *ctx, const char *k, size_t kl)
{
	struct thread_ctx *c = ctx;
	struct gthread *t = c->t;
	bool handled;
	jr_where(j, "threads[%zu].%.*s", c->index, (int)(kl < 40 ? kl : 40), k);
	bool ok = gk_tables_key(j, &t->t, k, kl, &handled);
	if (handled)
		return ok;
	if (jr_key_is(k, kl, "samples"))
		return gk_members(j, true, samples_member, c);
	const struct strmap m[] = { { "name", &t->name }, { "processName", &t->process_name }, { "pid", &t->pid },
				    { "tid", &t->tid } };
	ok = gk_str_member(j, m, 4, k, kl, &handled);
	return handled ? ok : jr_skip(j);
}

static bool lib_member(struct json_reader *j, void *ctx, const char *k, size_t kl)
{
	struct glib *l = ctx;
	const struct strmap m[] = { { "name", &l->name }, { "path", &l->path }, { "debugName", &l->debug_name },
				    { "breakpadId", &l->debug_id }, { "codeId", &l->code_id } };
	bool handled, ok = gk_str_member(j, m, 5, k, kl, &handled);
	return handled ? ok : jr_skip(j);
}

/* An element of meta.categories: its name. */
static bool category_member(struct json_reader *j, void *ctx, const char *k, size_t kl)
{
	return jr_key_is(k, kl, "name") ? gk_scalar_str(j, ctx) : jr_skip(j);
}

static bool category_element(struct json_reader *j, void *ctx)
{
	struct gdoc *d = ctx;
	if (!ALLOC_GROW(d->categories, d->ncategories + 1, d->cap_categories))
		return jr_oom(j);
	char **name = &d->categories[d->ncategories++];
	*name = NULL;
	return gk_members(j, true, category_member, name);
}

/* Reads an array element by element: element(j, ctx) reads each one. */
typedef bool (*element_fn)(struct json_reader *j, void *ctx);
static bool gk_elements(struct json_reader *j, element_fn element, void *ctx);

/* meta.plumb: what plumb's writer says of its samples (times or positions, the weight unit, the period). */
static bool plumb_member(struct json_reader *j, void *ctx, const char *k, size_t kl)
{
	struct gdoc *d = ctx;
	if (jr_key_is(k, kl, "timeline"))
		return jr_peek(j) == 't' || jr_peek(j) == 'f' ? jr_bool(j, &d->plumb_timeline) : jr_skip(j);
	if (jr_key_is(k, kl, "weightUnit"))
		return gk_scalar_str(j, &d->plumb_weight_unit);
	if (jr_key_is(k, kl, "intervalNs"))
		return gk_double_or_null(j, &d->plumb_interval_ns);
	return jr_skip(j);
}

static bool meta_member(struct json_reader *j, void *ctx, const char *k, size_t kl)
{
	struct gdoc *d = ctx;
	if (jr_key_is(k, kl, "preprocessedProfileVersion"))
		return gk_double_or_null(j, &d->version);
	if (jr_key_is(k, kl, "profilingStartTime"))
		return gk_double_or_null(j, &d->profiling_start);
	if (jr_key_is(k, kl, "interval"))
		return gk_double_or_null(j, &d->interval_ms);
	if (jr_key_is(k, kl, "categories") && jr_peek(j) == '[')
		return gk_elements(j, category_element, d);
	if (jr_key_is(k, kl, "plumb") && jr_peek(j) == '{') {
		d->has_plumb = true;
		d->plumb_timeline = true;
		return gk_members(j, false, plumb_member, d);
	}
	return jr_skip(j);
}

static bool shared_member(struct json_reader *j, void *ctx, const char *k, size_t kl)
{
	struct gdoc *d = ctx;
	bool handled;
	jr_where(j, "shared.%.*s", (int)(kl < 40 ? kl : 40), k);
	bool ok = gk_tables_key(j, &d->shared, k, kl, &handled);
	return handled ? ok : jr_skip(j);
}

static bool gk_elements(struct json_reader *j, element_fn element, void *ctx)
{
	if (!jr_arr_begin(j))
		return false;
	bool first = true;
	int r;
	while ((r = jr_arr_next(j, &first)) == 1)
		if (!element(j, ctx))
			return false;
	return r == 0;
}

/* An element of "threads": an object. */
static bool thread_element(struct json_reader *j, void *ctx)
{
	struct gdoc *d = ctx;
	if (!ALLOC_GROW(d->threads, d->nthreads + 1, d->cap_threads))
		return jr_oom(j);
	struct gthread *t = &d->threads[d->nthreads++];
	memset(t, 0, sizeof *t);
	struct thread_ctx c = { t, d->nthreads - 1, d->want_times };
	return gk_members(j, false, thread_member, &c);
}

/* An element of "libs": an object or null. */
static bool lib_element(struct json_reader *j, void *ctx)
{
	struct gdoc *d = ctx;
	if (!ALLOC_GROW(d->libs, d->nlibs + 1, d->cap_libs))
		return jr_oom(j);
	struct glib *l = &d->libs[d->nlibs++];
	memset(l, 0, sizeof *l);
	return gk_members(j, true, lib_member, l);
}

static bool document_member(struct json_reader *j, void *ctx, const char *k, size_t kl)
{
	struct gdoc *d = ctx;
	jr_where(j, "%.*s", (int)(kl < 40 ? kl : 40), k);
	if (jr_key_is(k, kl, "meta")) {
		if (jr_peek(j) == '{')
			d->has_meta = true; /* anything else fails the read */
		return gk_members(j, false, meta_member, d);
	}
	if (jr_key_is(k, kl, "shared"))
		return gk_members(j, false, shared_member, d);
	if (jr_key_is(k, kl, "threads"))
		return gk_elements(j, thread_element, d);
	if (jr_key_is(k, kl, "libs"))
		return gk_elements(j, lib_element, d);
	return jr_skip(j);
}

bool gdoc_read(struct json_reader *j, struct gdoc *d)
{
	if (!gk_members(j, false, document_member, d))
		return false;
	j->where[0] = '\0';
	if (jr_peek(j) != -1)
		return jr_fail(j, "trailing data after the profile");
	return true;
}
