/* gecko_read.c — reads Firefox Profiler "processed" profiles (what samply writes), preprocessedProfileVersion
 * 41 to 66, plus samply's `.syms.json` symbol sidecar, into the one profile model.
 * Big profiles are mostly long number arrays (samples.stack, samples.time), so the profile is read with the
 * pull reader (base/json.h) over the in-memory text: this file knows the schema, captures only the columns it
 * needs straight into compact arrays, and skips (while still validating) everything else. No DOM is built. Because keys may
 * come in any order (shared tables after threads, for example), columns are resolved into frames, stacks and
 * samples once the whole document has been read. */
#include "format/format.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/json.h"
#include "base/json_tree.h"
#include "base/sbuf.h"

#define GECKO_MIN_VERSION 41
#define GECKO_MAX_VERSION 66
#define IS_DIGIT(c) ((unsigned)((c) - '0') < 10u)

/* ---- captured columns ------------------------------------------------------------------------------- */

/* A column of numbers; null is NAN. `present` says the key was seen with an array value. */
struct col {
	double *v;
	size_t n, cap;
	bool present;
};

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

/* Validates an array of numbers/nulls and only counts it (a column the caller will not need). */
static bool gk_col_count(struct json_reader *j, struct col *c)
{
	if (jr_peek(j) == 'n') {
		col_release(c);
		return jr_lit(j, "null", 4);
	}
	if (!jr_arr_begin(j))
		return false;
	col_release(c);
	c->present = true;
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
	if (jr_peek(j) == 'n') {
		col_release(c);
		return jr_lit(j, "null", 4);
	}
	if (!jr_arr_begin(j))
		return false;
	col_release(c);
	c->present = true;
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

/* A string array: offsets into one text buffer. */
struct strarr {
	struct sbuf text;
	size_t *off, *len;
	size_t n, cap;
	bool present;
};

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

struct gtables {
	struct col stack_frame, stack_prefix, stack_prefix_offset;
	struct col frame_func, frame_address, frame_line, frame_inline_depth;
	struct col func_name, func_resource, func_file, func_source, func_line;
	struct col res_lib, res_name;
	struct col src_filename;
	struct strarr strings;
	bool has_stack, has_frame, has_func, has_res, has_sources;
};

struct gthread {
	struct gtables t;
	char *name, *process_name, *pid, *tid;
	struct col s_stack, s_time, s_time_deltas, s_weight;
	char *weight_type;
};

struct glib {
	char *name, *path, *debug_name, *debug_id, *code_id;
};

struct gdoc {
	bool want_times; /* keep sample times: the profile keeps a timeline */
	double version;
	double profiling_start;
	bool has_meta;
	struct gtables shared;
	struct gthread *threads;
	size_t nthreads, cap_threads;
	struct glib *libs;
	size_t nlibs, cap_libs;
};

static void gtables_release(struct gtables *t)
{
	struct col *cols[] = { &t->stack_frame,   &t->stack_prefix,  &t->stack_prefix_offset, &t->frame_func,
			       &t->frame_address, &t->frame_line,    &t->frame_inline_depth,  &t->func_name,
			       &t->func_resource, &t->func_file,     &t->func_source,         &t->func_line,
			       &t->res_lib,       &t->res_name,      &t->src_filename };
	for (size_t i = 0; i < sizeof cols / sizeof cols[0]; i++)
		col_release(cols[i]);
	strarr_release(&t->strings);
}

static void gdoc_release(struct gdoc *d)
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
	}
	free(d->threads);
	for (size_t i = 0; i < d->nlibs; i++) {
		free(d->libs[i].name);
		free(d->libs[i].path);
		free(d->libs[i].debug_name);
		free(d->libs[i].debug_id);
		free(d->libs[i].code_id);
	}
	free(d->libs);
}

/* Reads a table object, capturing the named columns; `map` pairs key names with columns. */
struct colmap {
	const char *key;
	struct col *col;
};

static bool gk_table(struct json_reader *j, const struct colmap *map, size_t nmap, bool *seen)
{
	if (jr_peek(j) == 'n')
		return jr_lit(j, "null", 4);
	if (!jr_obj_begin(j))
		return false;
	*seen = true;
	bool first = true;
	const char *k;
	size_t kl;
	int r;
	while ((r = jr_obj_next(j, &first, &k, &kl)) == 1) {
		size_t i;
		for (i = 0; i < nmap; i++)
			if (jr_key_is(k, kl, map[i].key))
				break;
		if (i < nmap) {
			if (!gk_col(j, map[i].col))
				return false;
		} else if (!jr_skip(j)) {
			return false;
		}
	}
	return r == 0;
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
					    { "inlineDepth", &t->frame_inline_depth } };
		return gk_table(j, m, 4, &t->has_frame);
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

/* want_times: keep sample times (else the time columns are only validated and counted) */
static bool gk_samples(struct json_reader *j, struct gthread *t, bool want_times)
{
	if (jr_peek(j) == 'n')
		return jr_lit(j, "null", 4);
	if (!jr_obj_begin(j))
		return false;
	bool first = true;
	const char *k;
	size_t kl;
	int r;
	while ((r = jr_obj_next(j, &first, &k, &kl)) == 1) {
		bool ok;
		if (jr_key_is(k, kl, "stack"))
			ok = gk_col(j, &t->s_stack);
		else if (jr_key_is(k, kl, "time"))
			ok = want_times ? gk_col(j, &t->s_time) : gk_col_count(j, &t->s_time);
		else if (jr_key_is(k, kl, "timeDeltas"))
			ok = want_times ? gk_col(j, &t->s_time_deltas) : gk_col_count(j, &t->s_time_deltas);
		else if (jr_key_is(k, kl, "weight"))
			ok = gk_col(j, &t->s_weight);
		else if (jr_key_is(k, kl, "weightType"))
			ok = gk_scalar_str(j, &t->weight_type);
		else
			ok = jr_skip(j);
		if (!ok)
			return false;
	}
	return r == 0;
}

static bool gk_thread(struct json_reader *j, struct gthread *t, size_t index, bool want_times)
{
	if (!jr_obj_begin(j))
		return false;
	bool first = true;
	const char *k;
	size_t kl;
	int r;
	while ((r = jr_obj_next(j, &first, &k, &kl)) == 1) {
		bool handled, ok;
		jr_where(j, "threads[%zu].%.*s", index, (int)(kl < 40 ? kl : 40), k);
		ok = gk_tables_key(j, &t->t, k, kl, &handled);
		if (handled) {
			if (!ok)
				return false;
			continue;
		}
		if (jr_key_is(k, kl, "samples"))
			ok = gk_samples(j, t, want_times);
		else if (jr_key_is(k, kl, "name"))
			ok = gk_scalar_str(j, &t->name);
		else if (jr_key_is(k, kl, "processName"))
			ok = gk_scalar_str(j, &t->process_name);
		else if (jr_key_is(k, kl, "pid"))
			ok = gk_scalar_str(j, &t->pid);
		else if (jr_key_is(k, kl, "tid"))
			ok = gk_scalar_str(j, &t->tid);
		else
			ok = jr_skip(j);
		if (!ok)
			return false;
	}
	return r == 0;
}

static bool gk_lib(struct json_reader *j, struct glib *l)
{
	if (jr_peek(j) == 'n')
		return jr_lit(j, "null", 4);
	if (!jr_obj_begin(j))
		return false;
	bool first = true;
	const char *k;
	size_t kl;
	int r;
	while ((r = jr_obj_next(j, &first, &k, &kl)) == 1) {
		bool ok;
		if (jr_key_is(k, kl, "name"))
			ok = gk_scalar_str(j, &l->name);
		else if (jr_key_is(k, kl, "path"))
			ok = gk_scalar_str(j, &l->path);
		else if (jr_key_is(k, kl, "debugName"))
			ok = gk_scalar_str(j, &l->debug_name);
		else if (jr_key_is(k, kl, "breakpadId"))
			ok = gk_scalar_str(j, &l->debug_id);
		else if (jr_key_is(k, kl, "codeId"))
			ok = gk_scalar_str(j, &l->code_id);
		else
			ok = jr_skip(j);
		if (!ok)
			return false;
	}
	return r == 0;
}

static bool gk_meta(struct json_reader *j, struct gdoc *d)
{
	if (!jr_obj_begin(j))
		return false;
	d->has_meta = true;
	bool first = true;
	const char *k;
	size_t kl;
	int r;
	while ((r = jr_obj_next(j, &first, &k, &kl)) == 1) {
		bool ok;
		if (jr_key_is(k, kl, "preprocessedProfileVersion"))
			ok = gk_double_or_null(j, &d->version);
		else if (jr_key_is(k, kl, "profilingStartTime"))
			ok = gk_double_or_null(j, &d->profiling_start);
		else
			ok = jr_skip(j);
		if (!ok)
			return false;
	}
	return r == 0;
}

static bool gk_document(struct json_reader *j, struct gdoc *d)
{
	if (!jr_obj_begin(j))
		return false;
	bool first = true;
	const char *k;
	size_t kl;
	int r;
	while ((r = jr_obj_next(j, &first, &k, &kl)) == 1) {
		bool ok = true;
		jr_where(j, "%.*s", (int)(kl < 40 ? kl : 40), k);
		if (jr_key_is(k, kl, "meta")) {
			ok = gk_meta(j, d);
		} else if (jr_key_is(k, kl, "shared")) {
			if (!jr_obj_begin(j))
				return false;
			bool f2 = true;
			int r2;
			while ((r2 = jr_obj_next(j, &f2, &k, &kl)) == 1) {
				bool handled;
				jr_where(j, "shared.%.*s", (int)(kl < 40 ? kl : 40), k);
				ok = gk_tables_key(j, &d->shared, k, kl, &handled);
				if (!handled)
					ok = jr_skip(j);
				if (!ok)
					return false;
			}
			ok = r2 == 0;
		} else if (jr_key_is(k, kl, "threads") || jr_key_is(k, kl, "libs")) {
			bool threads = kl == 7;
			if (!jr_arr_begin(j))
				return false;
			bool f2 = true;
			int r2;
			while ((r2 = jr_arr_next(j, &f2)) == 1) {
				if (threads) {
					if (!ALLOC_GROW(d->threads, d->nthreads + 1, d->cap_threads))
						return jr_oom(j);
					struct gthread *t = &d->threads[d->nthreads++];
					memset(t, 0, sizeof *t);
					ok = gk_thread(j, t, d->nthreads - 1, d->want_times);
				} else {
					if (!ALLOC_GROW(d->libs, d->nlibs + 1, d->cap_libs))
						return jr_oom(j);
					struct glib *l = &d->libs[d->nlibs++];
					memset(l, 0, sizeof *l);
					ok = gk_lib(j, l);
				}
				if (!ok)
					return false;
			}
			ok = r2 == 0;
		} else {
			ok = jr_skip(j);
		}
		if (!ok)
			return false;
	}
	if (r != 0)
		return false;
	j->where[0] = '\0';
	if (jr_peek(j) != -1)
		return jr_fail(j, "trailing data after the profile");
	return true;
}

/* ---- the sidecar (samply --unstable-presymbolicate) ------------------------------------------------- */

struct sym_frame {
	const char *function, *file;
	uint32_t line;
};

struct sym_entry {
	uint64_t rva, size;
	bool has_size;
	const char *symbol;
	struct sym_frame *frames; /* innermost first */
	size_t nframes;
};

struct sym_lib {
	const char *debug_name, *debug_id, *code_id;
	struct sym_entry *entries; /* sorted by rva */
	size_t nentries;
	uint64_t *known_rva; /* sorted */
	uint32_t *known_idx; /* entry index (into the sorted entries) */
	size_t nknown;
};

struct sidecar {
	json_t *root;
	struct sym_lib *libs;
	size_t nlibs;
};

static void sidecar_free(struct sidecar *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nlibs; i++) {
		for (size_t k = 0; k < s->libs[i].nentries; k++)
			free(s->libs[i].entries[k].frames);
		free(s->libs[i].entries);
		free(s->libs[i].known_rva);
		free(s->libs[i].known_idx);
	}
	free(s->libs);
	json_decref(s->root);
	free(s);
}

/* A name in the sidecar: an index into string_table, or (tolerated) a string. */
static const char *sc_str(json_t *strings, json_t *v)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		json_t *s = json_array_get(strings, (size_t)json_integer_value(v));
		if (json_is_string(s))
			return json_string_value(s);
	}
	return NULL;
}

struct known {
	uint64_t rva;
	size_t orig_index;
};

static int known_cmp(const void *a, const void *b)
{
	const struct known *x = a, *y = b;
	return x->rva < y->rva ? -1 : x->rva > y->rva;
}

static enum plumb_err sidecar_load(const char *path, struct sidecar **out, struct perr *e)
{
	struct jr_error je;
	json_t *root = jr_parse_file(path, 0, &je);
	if (!root) {
		if (je.line < 1) /* could not open or read it */
			return perr_set(e, PLUMB_EIO, "cannot read the symbol sidecar %s: %s", path, je.text);
		return perr_set(e, PLUMB_EFORMAT, "symbol sidecar %s: %s (line %zu, byte %zu)", path, je.text, je.line,
				je.offset);
	}
	struct sidecar *s = calloc(1, sizeof *s);
	if (!s) {
		json_decref(root);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	s->root = root;
	json_t *strings = json_object_get(root, "string_table");
	json_t *data = json_object_get(root, "data");
	if (!json_is_array(strings) || !json_is_array(data)) {
		sidecar_free(s);
		return perr_set(e, PLUMB_EFORMAT,
				"symbol sidecar %s: expected {\"string_table\": [...], \"data\": [...]}", path);
	}
	s->libs = calloc(json_array_size(data) + 1, sizeof *s->libs);
	if (!s->libs) {
		sidecar_free(s);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	size_t li;
	json_t *lib;
	json_array_foreach(data, li, lib)
	{
		struct sym_lib *L = &s->libs[s->nlibs];
		if (!json_is_object(lib))
			continue;
		L->debug_name = sc_str(strings, json_object_get(lib, "debug_name"));
		L->debug_id = sc_str(strings, json_object_get(lib, "debug_id"));
		L->code_id = sc_str(strings, json_object_get(lib, "code_id"));
		json_t *table = json_object_get(lib, "symbol_table");
		json_t *known = json_object_get(lib, "known_addresses");
		size_t nt = json_is_array(table) ? json_array_size(table) : 0;
		L->entries = calloc(nt + 1, sizeof *L->entries);
		size_t *order = calloc(nt + 1, sizeof *order); /* original index -> sorted index */
		if (!L->entries || !order) {
			free(order);
			sidecar_free(s);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
		s->nlibs++;
		for (size_t k = 0; k < nt; k++) {
			json_t *ent = json_array_get(table, k);
			struct sym_entry *E = &L->entries[k];
			json_t *rva = json_object_get(ent, "rva"), *size = json_object_get(ent, "size");
			E->rva = json_is_integer(rva) ? (uint64_t)json_integer_value(rva) : 0;
			E->has_size = json_is_integer(size);
			E->size = E->has_size ? (uint64_t)json_integer_value(size) : 0;
			E->symbol = sc_str(strings, json_object_get(ent, "symbol"));
			json_t *frames = json_object_get(ent, "frames");
			if (json_is_array(frames) && json_array_size(frames) > 0) {
				size_t nf = json_array_size(frames);
				E->frames = calloc(nf, sizeof *E->frames);
				if (!E->frames) {
					free(order);
					sidecar_free(s);
					return perr_set(e, PLUMB_ENOMEM, "out of memory");
				}
				for (size_t f = 0; f < nf; f++) {
					json_t *fr = json_array_get(frames, f);
					json_t *line = json_object_get(fr, "line");
					E->frames[f].function = sc_str(strings, json_object_get(fr, "function"));
					E->frames[f].file = sc_str(strings, json_object_get(fr, "file"));
					E->frames[f].line = json_is_integer(line) && json_integer_value(line) > 0
								    ? (uint32_t)json_integer_value(line)
								    : 0;
				}
				E->nframes = nf;
			}
			order[k] = k;
		}
		L->nentries = nt;
		/* sort entries by rva, keeping a map from the original index for known_addresses */
		struct known *tmp = calloc(nt + 1, sizeof *tmp);
		struct sym_entry *sorted = calloc(nt + 1, sizeof *sorted);
		if (!tmp || !sorted) {
			free(tmp);
			free(sorted);
			free(order);
			sidecar_free(s);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
		for (size_t k = 0; k < nt; k++)
			tmp[k] = (struct known){ L->entries[k].rva, k };
		qsort(tmp, nt, sizeof *tmp, known_cmp);
		for (size_t k = 0; k < nt; k++) {
			sorted[k] = L->entries[tmp[k].orig_index];
			order[tmp[k].orig_index] = k;
		}
		free(L->entries);
		L->entries = sorted;
		free(tmp);
		size_t nk = json_is_array(known) ? json_array_size(known) : 0;
		struct known *ks = calloc(nk + 1, sizeof *ks);
		L->known_rva = calloc(nk + 1, sizeof *L->known_rva);
		L->known_idx = calloc(nk + 1, sizeof *L->known_idx);
		if (!ks || !L->known_rva || !L->known_idx) {
			free(ks);
			free(order);
			sidecar_free(s);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
		size_t m = 0;
		for (size_t k = 0; k < nk; k++) {
			json_t *pair = json_array_get(known, k);
			json_t *a = json_array_get(pair, 0), *b = json_array_get(pair, 1);
			if (!json_is_integer(a) || !json_is_integer(b) || json_integer_value(b) < 0 ||
			    (size_t)json_integer_value(b) >= nt)
				continue;
			ks[m++] = (struct known){ (uint64_t)json_integer_value(a), order[json_integer_value(b)] };
		}
		qsort(ks, m, sizeof *ks, known_cmp);
		for (size_t k = 0; k < m; k++) {
			L->known_rva[k] = ks[k].rva;
			L->known_idx[k] = (uint32_t)ks[k].orig_index;
		}
		L->nknown = m;
		free(ks);
		free(order);
	}
	*out = s;
	return PLUMB_OK;
}

static bool str_eq_ci(const char *a, const char *b)
{
	return a && b && a[0] && strcasecmp(a, b) == 0;
}

/* Debug ids come as breakpad ids in the profile ("F635824E318B3F0C842CC369737F2B680": 32 hex digits of the
 * UUID, then the age in hex) and as debugid strings in the sidecar ("f635824e-318b-3f0c-842c-c369737f2b68",
 * "-N" for a non-zero age). Compares them as (uuid, age). */
static bool debug_id_eq(const char *a, const char *b)
{
	char na[80], nb[80];
	const char *src[2] = { a, b };
	char *dst[2] = { na, nb };
	if (!a || !b || !a[0] || !b[0])
		return false;
	for (int k = 0; k < 2; k++) {
		size_t n = 0;
		for (const char *p = src[k]; *p && n + 1 < sizeof na; p++)
			if (*p != '-')
				dst[k][n++] = (char)((*p >= 'a' && *p <= 'z') ? *p - 32 : *p);
		dst[k][n] = '\0';
		if (n < 32)
			return strcmp(na, nb) == 0 && k == 1;
	}
	if (strncmp(na, nb, 32) != 0)
		return false;
	unsigned long age_a = strtoul(na + 32, NULL, 16), age_b = strtoul(nb + 32, NULL, 16);
	return age_a == age_b;
}

static const struct sym_lib *sidecar_lib(const struct sidecar *s, const struct glib *lib)
{
	for (size_t i = 0; i < s->nlibs; i++)
		if (debug_id_eq(s->libs[i].debug_id, lib->debug_id) || str_eq_ci(s->libs[i].code_id, lib->code_id))
			return &s->libs[i];
	for (size_t i = 0; i < s->nlibs; i++)
		if (s->libs[i].debug_name && lib->debug_name && strcmp(s->libs[i].debug_name, lib->debug_name) == 0)
			return &s->libs[i];
	for (size_t i = 0; i < s->nlibs; i++)
		if (s->libs[i].debug_name && lib->name && strcmp(s->libs[i].debug_name, lib->name) == 0)
			return &s->libs[i];
	return NULL;
}

static const struct sym_entry *sidecar_lookup(const struct sym_lib *L, uint64_t rva)
{
	size_t lo = 0, hi = L->nknown;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->known_rva[mid] < rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < L->nknown && L->known_rva[lo] == rva)
		return &L->entries[L->known_idx[lo]];
	/* the last entry starting at or before rva */
	lo = 0;
	hi = L->nentries;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->entries[mid].rva <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct sym_entry *E = &L->entries[lo - 1];
	if (E->has_size && E->size > 0 && rva >= E->rva + E->size)
		return NULL;
	if (!E->has_size && lo == L->nentries && rva != E->rva)
		return NULL; /* past the last symbol with no size: unknown */
	return E;
}

/* ---- resolving the columns into the model ----------------------------------------------------------- */

struct resolve {
	struct profile *p;
	struct perr *e;
	const struct gdoc *d;
	const struct sidecar *sc;
	str_id *lib_module;     /* per lib: interned module (path or name) */
	const struct sym_lib **lib_syms;
};

static bool idx_ok(const struct col *c, size_t row, size_t limit, size_t *out)
{
	if (!c->present || row >= c->n)
		return false;
	double v = c->v[row];
	if (!(v >= 0) || v >= (double)limit || v != floor(v))
		return false;
	*out = (size_t)v;
	return true;
}

static const char *tbl_str(const struct strarr *s, size_t i, size_t *len)
{
	*len = s->len[i];
	return s->text.buf + s->off[i];
}

static bool looks_like_address(const char *s, size_t n)
{
	if (n < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	for (size_t i = 2; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool res_fail(struct resolve *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool res_fail(struct resolve *r, const char *fmt, ...)
{
	char msg[PERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	perr_set(r->e, strcmp(msg, "out of memory") == 0 ? PLUMB_ENOMEM : PLUMB_EFORMAT, "%s", msg);
	return false;
}
#define RES_FAIL res_fail

/* Resolves frameTable row f of thread ti into a chain of profile frames (outermost first). */
static bool resolve_frame(struct resolve *r, size_t ti, const struct gtables *T, const struct strarr *S,
			  const struct gtables *SRC, size_t f, uint32_t *chain, size_t *nchain)
{
	size_t func, nfunc = T->func_name.n, nstr = S->n;
	if (!idx_ok(&T->frame_func, f, nfunc, &func))
		return RES_FAIL(r, "threads[%zu]: frameTable.func[%zu] is not a valid funcTable index", ti, f);
	size_t name_i;
	if (!idx_ok(&T->func_name, func, nstr, &name_i))
		return RES_FAIL(r, "threads[%zu]: funcTable.name[%zu] is not a valid string index", ti, func);
	struct frame fr = { 0 };
	size_t nlen;
	const char *name = tbl_str(S, name_i, &nlen);
	fr.func = profile_intern(r->p, name, nlen);
	size_t file_i, src_i;
	if (idx_ok(&T->func_file, func, nstr, &file_i)) {
		size_t flen;
		const char *file = tbl_str(S, file_i, &flen);
		fr.file = profile_intern(r->p, file, flen);
	} else if (SRC && idx_ok(&T->func_source, func, SRC->src_filename.n, &src_i) &&
		   idx_ok(&SRC->src_filename, src_i, nstr, &file_i)) {
		size_t flen;
		const char *file = tbl_str(S, file_i, &flen);
		fr.file = profile_intern(r->p, file, flen);
	}
	double line = NAN;
	if (T->frame_line.present && f < T->frame_line.n)
		line = T->frame_line.v[f];
	if (!(line > 0) && T->func_line.present && func < T->func_line.n)
		line = T->func_line.v[func];
	if (line > 0 && line < 4e9)
		fr.line = (uint32_t)line;
	size_t res, lib = SIZE_MAX;
	const struct glib *L = NULL;
	if (idx_ok(&T->func_resource, func, T->res_lib.n > T->res_name.n ? T->res_lib.n : T->res_name.n, &res)) {
		if (idx_ok(&T->res_lib, res, r->d->nlibs, &lib)) {
			L = &r->d->libs[lib];
			fr.module = r->lib_module[lib];
		} else {
			size_t rn;
			if (idx_ok(&T->res_name, res, nstr, &rn)) {
				size_t rl;
				const char *rs = tbl_str(S, rn, &rl);
				fr.module = profile_intern(r->p, rs, rl);
			}
		}
	}
	double addr = T->frame_address.present && f < T->frame_address.n ? T->frame_address.v[f] : NAN;
	if (addr >= 0 && addr < 1.8e19)
		fr.addr = (uint64_t)addr;
	double depth = T->frame_inline_depth.present && f < T->frame_inline_depth.n ? T->frame_inline_depth.v[f] : 0;
	fr.inlined = depth > 0;
	const char *mod = profile_str(r->p, fr.module);
	if (strncmp(mod, "[kernel", 7) == 0 || strstr(mod, "vmlinux"))
		fr.kind = FRAME_KERNEL;
	if (fr.func == PROFILE_NOMEM || fr.file == PROFILE_NOMEM || fr.module == PROFILE_NOMEM) {
		perr_set(r->e, PLUMB_ENOMEM, "out of memory");
		return false;
	}
	*nchain = 0;
	/* symbolicate through the sidecar: names that are only an address */
	if (L && r->lib_syms[lib] && addr >= 0 && (nlen == 0 || looks_like_address(name, nlen))) {
		const struct sym_entry *E = sidecar_lookup(r->lib_syms[lib], fr.addr);
		if (E && (E->symbol || E->nframes)) {
			/* samply keeps one entry per symbol, its inline frames taken at the first address looked up:
			 * right for the function and its file, not for other addresses' lines or inline chains. So the
			 * frame gets the symbol, the outermost frame's file, and no line. */
			if (E->nframes && E->frames[E->nframes - 1].file) {
				fr.file = profile_intern_cstr(r->p, E->frames[E->nframes - 1].file);
				fr.line = 0;
				if (fr.file == PROFILE_NOMEM)
					return RES_FAIL(r, "out of memory");
			}
			if (!E->symbol && E->nframes && E->frames[E->nframes - 1].function)
				fr.func = profile_intern_cstr(r->p, E->frames[E->nframes - 1].function);
			else if (E->symbol)
				fr.func = profile_intern_cstr(r->p, E->symbol);
			if (fr.func == PROFILE_NOMEM)
				return RES_FAIL(r, "out of memory");
		}
	}
	uint32_t id = profile_frame(r->p, &fr);
	if (id == PROFILE_NOMEM)
		return RES_FAIL(r, "out of memory");
	chain[(*nchain)++] = id;
	return true;
}

static uint32_t parse_u32(const char *s)
{
	if (!s)
		return 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	return end != s && v <= UINT32_MAX ? (uint32_t)v : 0;
}

static bool resolve_thread(struct resolve *r, size_t ti, bool timed)
{
	const struct gdoc *d = r->d;
	const struct gthread *th = &d->threads[ti];
	const struct gtables *T = &th->t, *SH = &d->shared;
	/* per-thread tables win; shared ones (v60+) otherwise. Each table is taken as a whole. */
	struct gtables view = { 0 };
	view.stack_frame = T->has_stack ? T->stack_frame : SH->stack_frame;
	view.stack_prefix = T->has_stack ? T->stack_prefix : SH->stack_prefix;
	view.stack_prefix_offset = T->has_stack ? T->stack_prefix_offset : SH->stack_prefix_offset;
	const struct gtables *FT = T->has_frame ? T : SH;
	view.frame_func = FT->frame_func;
	view.frame_address = FT->frame_address;
	view.frame_line = FT->frame_line;
	view.frame_inline_depth = FT->frame_inline_depth;
	const struct gtables *FN = T->has_func ? T : SH;
	view.func_name = FN->func_name;
	view.func_resource = FN->func_resource;
	view.func_file = FN->func_file;
	view.func_source = FN->func_source;
	view.func_line = FN->func_line;
	const struct gtables *RS = T->has_res ? T : SH;
	view.res_lib = RS->res_lib;
	view.res_name = RS->res_name;
	const struct strarr *S = T->strings.present ? &T->strings : &SH->strings;
	const struct gtables *SRC = T->has_sources ? T : (SH->has_sources ? SH : NULL);

	const char *tname = th->name && th->name[0] ? th->name : (th->process_name ? th->process_name : "");
	uint32_t thread = profile_thread(r->p, parse_u32(th->pid), parse_u32(th->tid), tname);
	if (thread == PROFILE_NOMEM)
		return RES_FAIL(r, "out of memory");
	size_t nsamples = th->s_stack.n;
	if (nsamples == 0)
		return true;
	size_t nstacks = view.stack_frame.n, nframes = view.frame_func.n;
	bool use_offset = !view.stack_prefix.present && view.stack_prefix_offset.present;
	uint32_t *sid = malloc((nstacks + 1) * sizeof *sid);
	uint32_t *fstart = malloc((nframes + 1) * sizeof *fstart);
	uint8_t *flen = calloc(nframes + 1, 1);
	uint32_t *chains = NULL;
	uint64_t *agg = NULL;
	size_t nchains = 0, capchains = 0;
	bool ok = false;
	if (!sid || !fstart || !flen) {
		perr_set(r->e, PLUMB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nstacks; i++) {
		size_t f, prefix_node = PROFILE_ROOT;
		if (!idx_ok(&view.stack_frame, i, nframes, &f)) {
			RES_FAIL(r, "threads[%zu]: stackTable.frame[%zu] is not a valid frameTable index", ti, i);
			goto out;
		}
		double pv = NAN;
		if (use_offset) {
			double off = i < view.stack_prefix_offset.n ? view.stack_prefix_offset.v[i] : NAN;
			if (off > 0)
				pv = (double)i - off;
		} else if (view.stack_prefix.present && i < view.stack_prefix.n) {
			pv = view.stack_prefix.v[i];
		}
		if (!isnan(pv)) {
			if (!(pv >= 0 && pv < (double)i && pv == floor(pv))) {
				RES_FAIL(r, "threads[%zu]: stackTable row %zu has a prefix that is not an earlier row", ti, i);
				goto out;
			}
			prefix_node = sid[(size_t)pv];
		}
		if (!flen[f]) {
			uint32_t chain[64];
			size_t n = 0;
			if (!resolve_frame(r, ti, &view, S, SRC, f, chain, &n))
				goto out;
			if (!ALLOC_GROW(chains, nchains + n, capchains)) {
				perr_set(r->e, PLUMB_ENOMEM, "out of memory");
				goto out;
			}
			memcpy(chains + nchains, chain, n * sizeof *chain);
			fstart[f] = (uint32_t)nchains;
			flen[f] = (uint8_t)n;
			nchains += n;
		}
		uint32_t node = (uint32_t)prefix_node;
		for (size_t k = 0; k < flen[f]; k++) {
			node = profile_stack(r->p, node, chains[fstart[f] + k]);
			if (node == PROFILE_NOMEM) {
				perr_set(r->e, PLUMB_ENOMEM, "out of memory");
				goto out;
			}
		}
		sid[i] = node;
	}
	if (th->s_weight.present && th->s_weight.n < nsamples) {
		RES_FAIL(r, "threads[%zu]: samples.weight has %zu entries for %zu samples", ti, th->s_weight.n, nsamples);
		goto out;
	}
	const struct col *tc = th->s_time.present ? &th->s_time : &th->s_time_deltas;
	bool deltas = !th->s_time.present;
	if (timed && tc->n < nsamples) {
		RES_FAIL(r, "threads[%zu]: samples.%s has %zu entries for %zu samples", ti, deltas ? "timeDeltas" : "time",
			 tc->n, nsamples);
		goto out;
	}
	double t = 0;
	const double *stk = th->s_stack.v, *w = th->s_weight.present ? th->s_weight.v : NULL;
	/* "tracing-ms" weights are milliseconds: kept as nanoseconds, the model's time unit */
	double scale = th->weight_type && strcmp(th->weight_type, "tracing-ms") == 0 ? 1e6 : 1;
	/* without a timeline, sum per stack row first: one model update per distinct stack, not per sample */
	if (!timed) {
		agg = calloc(nstacks + 1, sizeof *agg);
		if (!agg) {
			perr_set(r->e, PLUMB_ENOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < nsamples; i++) {
		if (timed) {
			double tv = tc->v[i];
			if (isnan(tv))
				tv = 0;
			t = deltas ? t + tv : tv;
		}
		double sv = stk[i];
		if (isnan(sv))
			continue; /* a sample without a stack (e.g. while idle): no frames to count */
		if (!(sv >= 0 && sv < (double)nstacks && sv == floor(sv))) {
			RES_FAIL(r, "threads[%zu]: samples.stack[%zu] is not a valid stackTable index", ti, i);
			goto out;
		}
		uint64_t weight = 1;
		if (w) {
			double wv = w[i];
			if (isnan(wv))
				wv = 1;
			wv *= scale;
			if (!(wv >= 0 && wv < 1.8e19)) {
				RES_FAIL(r, "threads[%zu]: samples.weight[%zu] is negative or too large", ti, i);
				goto out;
			}
			weight = (uint64_t)llround(wv);
		}
		if (agg) {
			agg[(size_t)sv] += weight;
			continue;
		}
		double ns = t * 1e6;
		uint64_t tns = ns > 0 && ns < 1.8e19 ? (uint64_t)llround(ns) : 0; /* sample times are whole ns */
		if (!profile_add_sample(r->p, sid[(size_t)sv], thread, tns, weight)) {
			perr_set(r->e, PLUMB_ENOMEM, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; agg && i < nstacks; i++) {
		if (agg[i] && !profile_add_sample(r->p, sid[i], thread, 0, agg[i])) {
			perr_set(r->e, PLUMB_ENOMEM, "out of memory");
			goto out;
		}
	}
	ok = true;
out:
	free(agg);
	free(sid);
	free(fstart);
	free(flen);
	free(chains);
	return ok;
}

static bool file_exists(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	fclose(f);
	return true;
}

/* The sidecar beside `source`: "<profile without .gz>.syms.json", then "<stem>.syms.json". */
static char *find_sidecar(const char *source)
{
	if (!source || strcmp(source, "-") == 0)
		return NULL;
	size_t n = strlen(source);
	char *base = strdup(source);
	if (!base)
		return NULL;
	if (n > 3 && strcmp(base + n - 3, ".gz") == 0)
		base[n -= 3] = '\0';
	char *cand = malloc(n + 16);
	if (!cand) {
		free(base);
		return NULL;
	}
	snprintf(cand, n + 16, "%s.syms.json", base);
	if (file_exists(cand)) {
		free(base);
		return cand;
	}
	if (n > 5 && strcmp(base + n - 5, ".json") == 0) {
		base[n - 5] = '\0';
		snprintf(cand, n + 16, "%s.syms.json", base);
		if (file_exists(cand)) {
			free(base);
			return cand;
		}
	}
	free(base);
	free(cand);
	return NULL;
}

enum plumb_err fmt_gecko_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
			      struct perr *e)
{
	struct json_reader j;
	jr_init(&j, buf, len, "malformed Firefox profile", e);
	struct gdoc d;
	memset(&d, 0, sizeof d);
	d.want_times = profile_has_timeline(p);
	d.version = NAN;
	d.profiling_start = NAN;
	struct sidecar *sc = NULL;
	struct resolve r = { .p = p, .e = e, .d = &d };
	enum plumb_err rc = PLUMB_EFORMAT;
	if (!gk_document(&j, &d)) {
		rc = e->code ? e->code : PLUMB_EFORMAT;
		goto out;
	}
	if (!d.has_meta || isnan(d.version)) {
		perr_set(e, PLUMB_EFORMAT,
			 "not a processed Firefox Profiler profile (no meta.preprocessedProfileVersion); "
			 "load it in profiler.firefox.com and save it again, or record with samply");
		goto out;
	}
	if (d.version < GECKO_MIN_VERSION || d.version > GECKO_MAX_VERSION) {
		perr_set(e, PLUMB_EFORMAT, "Firefox profile format version %g is not understood (this build reads %d to %d)",
			 d.version, GECKO_MIN_VERSION, GECKO_MAX_VERSION);
		goto out;
	}
	const char *syms = opts ? opts->syms_path : NULL;
	char *found = NULL;
	if (!syms && opts)
		syms = found = find_sidecar(opts->source_path);
	if (syms) {
		rc = sidecar_load(syms, &sc, e);
		free(found);
		if (rc)
			goto out;
		rc = PLUMB_EFORMAT;
	}
	r.sc = sc;
	r.lib_module = calloc(d.nlibs + 1, sizeof *r.lib_module);
	r.lib_syms = calloc(d.nlibs + 1, sizeof *r.lib_syms);
	if (!r.lib_module || !r.lib_syms) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < d.nlibs; i++) {
		const struct glib *L = &d.libs[i];
		const char *m = L->path && L->path[0] ? L->path : (L->name ? L->name : "");
		r.lib_module[i] = profile_intern_cstr(p, m);
		if (r.lib_module[i] == PROFILE_NOMEM) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
			goto out;
		}
		if (sc)
			r.lib_syms[i] = sidecar_lib(sc, L);
	}
	/* timestamps only when every thread that has samples has times */
	bool timed = d.want_times;
	for (size_t i = 0; i < d.nthreads; i++)
		if (d.threads[i].s_stack.n && !d.threads[i].s_time.present && !d.threads[i].s_time_deltas.present)
			timed = false;
	if (!timed)
		profile_keep_timeline(p, false);
	struct profile_meta *meta = profile_meta(p);
	meta->backend = profile_intern_cstr(p, "gecko");
	if (d.profiling_start > 0 && d.profiling_start < 1.8e13)
		meta->clock_origin_ns = (uint64_t)(d.profiling_start * 1e6);
	for (size_t i = 0; i < d.nthreads; i++) {
		if (!resolve_thread(&r, i, timed)) {
			rc = e->code ? e->code : PLUMB_EFORMAT;
			goto out;
		}
		const char *wt = d.threads[i].weight_type;
		if (wt && wt[0] && strcmp(wt, "samples") != 0)
			meta->weight_unit = profile_intern_cstr(p, strcmp(wt, "tracing-ms") == 0 ? "nanoseconds" : wt);
	}
	rc = PLUMB_OK;
out:
	free(r.lib_module);
	free(r.lib_syms);
	sidecar_free(sc);
	gdoc_release(&d);
	jr_release(&j);
	return rc;
}
