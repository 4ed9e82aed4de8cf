/* hot_json.c — the plumb.hot.v1 document: the summary model's (profile/summary.h) writer and reader. Written by
 * hand into an sbuf (key order fixed, so equal summaries are equal bytes); read
 * with jansson (summaries are small). */
#include "format/hot_json.h"

#include <stdlib.h>
#include <string.h>

#include "base/json_tree.h"

/* ---- writing and reading ---------------------------------------------------------------------------- */

static void add_share(struct sbuf *out, uint64_t count, uint64_t total)
{
	double share = total ? 100.0 * (double)count / (double)total : 0.0;
	sbuf_addf(out, "%.4f", share);
}

static void write_table(struct sbuf *out, const struct hot_table *t, uint64_t total, size_t top, const char *indent)
{
	size_t n = top && top < t->n ? top : t->n;
	sbuf_addch(out, '[');
	for (size_t i = 0; i < n; i++) {
		sbuf_addf(out, "%s\n%s  {\"name\": ", i ? "," : "", indent);
		sbuf_add_json_str(out, t->rows[i].name, strlen(t->rows[i].name));
		sbuf_addf(out, ", \"count\": %llu, \"share\": ", (unsigned long long)t->rows[i].count);
		add_share(out, t->rows[i].count, total);
		sbuf_addch(out, '}');
	}
	if (n)
		sbuf_addf(out, "\n%s]", indent);
	else
		sbuf_addch(out, ']');
}

static void write_slice(struct sbuf *out, const struct hot_slice *sl, size_t top, const char *indent)
{
	sbuf_addf(out, "%s\"total\": %llu,\n", indent, (unsigned long long)sl->total);
	sbuf_addf(out, "%s\"samples\": %llu,\n", indent, (unsigned long long)sl->samples);
	sbuf_addf(out, "%s\"attributed\": %llu", indent, (unsigned long long)sl->attributed);
	for (int k = 0; k < HOT_NTABLES; k++) {
		sbuf_addf(out, ",\n%s\"%s\": ", indent, hot_table_name((enum hot_table_kind)k));
		write_table(out, &sl->tables[k], sl->total, top, indent);
	}
}

void fmt_hot_json_write(struct sbuf *out, const struct hot_summary *s, size_t top)
{
	sbuf_addstr(out, "{\n  \"schema\": \"" HOT_JSON_SCHEMA "\",\n  \"source\": ");
	if (s->source)
		sbuf_add_json_str(out, s->source, strlen(s->source));
	else
		sbuf_addstr(out, "null");
	sbuf_addstr(out, ",\n  \"format\": ");
	sbuf_add_json_str(out, s->format ? s->format : "", s->format ? strlen(s->format) : 0);
	sbuf_addstr(out, ",\n  \"weight_unit\": ");
	const char *wu = s->weight_unit ? s->weight_unit : "samples";
	sbuf_add_json_str(out, wu, strlen(wu));
	sbuf_addf(out, ",\n  \"interval_ns\": %llu", (unsigned long long)s->interval_ns);
	sbuf_addf(out, ",\n  \"group_by\": \"%s\",\n  \"module_depth\": %d,\n  \"top\": %zu,\n",
		  hot_group_name(s->group_by), s->module_depth, top);
	sbuf_addstr(out, "  \"threads\": [");
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct hot_thread_row *t = &s->threads[i];
		sbuf_addstr(out, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		sbuf_add_json_str(out, t->name, strlen(t->name));
		sbuf_addf(out, ", \"pid\": %u, \"tid\": %u, \"count\": %llu, \"share\": ", t->pid, t->tid,
			  (unsigned long long)t->count);
		add_share(out, t->count, s->all.total);
		sbuf_addch(out, '}');
	}
	sbuf_addstr(out, s->nthreads ? "\n  ],\n" : "],\n");
	write_slice(out, &s->all, top, "  ");
	sbuf_addstr(out, ",\n  \"stages\": [");
	for (size_t i = 0; i < s->nstages; i++) {
		const struct hot_slice *sl = &s->stages[i];
		sbuf_addstr(out, i ? ",\n    {\n      \"name\": " : "\n    {\n      \"name\": ");
		sbuf_add_json_str(out, sl->name, strlen(sl->name));
		sbuf_addf(out, ",\n      \"start_ms\": %.3f,\n      \"end_ms\": %.3f,\n", sl->start_ms, sl->end_ms);
		write_slice(out, sl, top, "      ");
		sbuf_addstr(out, "\n    }");
	}
	sbuf_addstr(out, s->nstages ? "\n  ]\n}\n" : "]\n}\n");
}

static enum plumb_err read_table(json_t *arr, struct hot_table *t, const char *where, struct perr *e)
{
	if (!arr)
		return PLUMB_OK;
	if (!json_is_array(arr))
		return perr_set(e, PLUMB_EFORMAT, "plumb.hot.v1: %s is not an array", where);
	size_t n = json_array_size(arr);
	t->rows = calloc(n + 1, sizeof *t->rows);
	if (!t->rows)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_t *r = json_array_get(arr, i);
		json_t *name = json_object_get(r, "name"), *count = json_object_get(r, "count");
		if (!json_is_string(name) || !json_is_integer(count) || json_integer_value(count) < 0)
			return perr_set(e, PLUMB_EFORMAT, "plumb.hot.v1: %s[%zu] needs a name and a count", where, i);
		t->rows[t->n].name = strdup(json_string_value(name));
		if (!t->rows[t->n].name)
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		t->rows[t->n++].count = (uint64_t)json_integer_value(count);
	}
	return PLUMB_OK;
}

static enum plumb_err read_slice(json_t *obj, struct hot_slice *sl, bool *grouped, const char *where,
				 struct perr *e)
{
	json_t *total = json_object_get(obj, "total"), *attr = json_object_get(obj, "attributed");
	if (!total)
		return perr_set(e, PLUMB_EFORMAT, "plumb.hot.v1: %s.total is missing", where);
	if (!json_is_integer(total))
		return perr_set(e, PLUMB_EFORMAT, "plumb.hot.v1: %s.total is not a whole number", where);
	if (json_integer_value(total) < 0)
		return perr_set(e, PLUMB_EFORMAT, "plumb.hot.v1: %s.total is negative (%lld)", where,
				(long long)json_integer_value(total));
	sl->total = (uint64_t)json_integer_value(total);
	sl->attributed = json_is_integer(attr) ? (uint64_t)json_integer_value(attr) : sl->total;
	json_t *samples = json_object_get(obj, "samples");
	sl->samples = json_is_integer(samples) && json_integer_value(samples) > 0 ? (uint64_t)json_integer_value(samples)
										      : 0;
	for (int k = 0; k < HOT_NTABLES; k++) {
		const char *key = hot_table_name((enum hot_table_kind)k);
		json_t *arr = json_object_get(obj, key);
		if (k >= HOT_GROUPED_LEAF && !arr)
			*grouped = false;
		char w[96];
		snprintf(w, sizeof w, "%s.%s", where, key);
		enum plumb_err rc = read_table(arr, &sl->tables[k], w, e);
		if (rc)
			return rc;
	}
	return PLUMB_OK;
}

/* The optional array `key` of root (*arr, *n entries; none when absent or not an array) and zeroed room for as
 * many elements of `size` bytes, plus one. NULL when out of memory. */
static void *array_rows(json_t *root, const char *key, size_t size, json_t **arr, size_t *n)
{
	*arr = json_object_get(root, key);
	*n = json_is_array(*arr) ? json_array_size(*arr) : 0;
	return calloc(*n + 1, size);
}

/* A copy of an object's "name" ("" when it has none); NULL when out of memory. */
static char *name_of(json_t *obj)
{
	const char *name = json_string_value(json_object_get(obj, "name"));
	return strdup(name ? name : "");
}

/* The "threads" array (optional) into s->threads. */
static enum plumb_err read_threads(json_t *root, struct hot_summary *s, struct perr *e)
{
	json_t *threads;
	size_t nt;
	if (!(s->threads = array_rows(root, "threads", sizeof *s->threads, &threads, &nt)))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < nt; i++) {
		json_t *t = json_array_get(threads, i);
		json_t *count = json_object_get(t, "count");
		struct hot_thread_row *r = &s->threads[s->nthreads];
		if (!(r->name = name_of(t)))
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		s->nthreads++;
		r->pid = (uint32_t)json_integer_value(json_object_get(t, "pid"));
		r->tid = (uint32_t)json_integer_value(json_object_get(t, "tid"));
		r->count = json_is_integer(count) && json_integer_value(count) > 0 ? (uint64_t)json_integer_value(count) : 0;
	}
	return PLUMB_OK;
}

/* The "stages" array (optional) into s->stages, one slice each. */
static enum plumb_err read_stages(json_t *root, struct hot_summary *s, struct perr *e)
{
	json_t *stages;
	size_t ns;
	if (!(s->stages = array_rows(root, "stages", sizeof *s->stages, &stages, &ns)))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < ns; i++) {
		json_t *st = json_array_get(stages, i);
		struct hot_slice *sl = &s->stages[s->nstages++];
		sl->name = name_of(st);
		sl->start_ms = json_number_value(json_object_get(st, "start_ms"));
		sl->end_ms = json_number_value(json_object_get(st, "end_ms"));
		char w[64];
		snprintf(w, sizeof w, "stages[%zu]", i);
		bool g = true;
		if (!sl->name)
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		enum plumb_err rc = read_slice(st, sl, &g, w, e);
		if (rc)
			return rc;
	}
	return PLUMB_OK;
}

/* The document's head: schema, source, format, weight unit and grouping. */
static enum plumb_err read_head(json_t *root, struct hot_summary *s, struct perr *e)
{
	const char *schema = json_string_value(json_object_get(root, "schema"));
	if (!schema || strcmp(schema, HOT_JSON_SCHEMA) != 0)
		return perr_set(e, PLUMB_EFORMAT, "summary schema %s is not understood (expected " HOT_JSON_SCHEMA ")",
				schema ? schema : "(missing)");
	const char *src = json_string_value(json_object_get(root, "source"));
	const char *fmt = json_string_value(json_object_get(root, "format"));
	const char *wu = json_string_value(json_object_get(root, "weight_unit"));
	const char *gb = json_string_value(json_object_get(root, "group_by"));
	json_t *md = json_object_get(root, "module_depth");
	s->source = src ? strdup(src) : NULL;
	s->format = strdup(fmt ? fmt : HOT_JSON_SCHEMA);
	s->weight_unit = strdup(wu ? wu : "samples");
	if (gb && !hot_group_from_name(gb, &s->group_by))
		return perr_set(e, PLUMB_EFORMAT, "plumb.hot.v1: unknown group_by \"%s\"", gb);
	s->module_depth = json_is_integer(md) ? (int)json_integer_value(md) : 2;
	json_t *iv = json_object_get(root, "interval_ns");
	s->interval_ns = json_is_integer(iv) && json_integer_value(iv) > 0 ? (uint64_t)json_integer_value(iv) : 0;
	s->has_grouped = true;
	if (!s->format || !s->weight_unit)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	return PLUMB_OK;
}

enum plumb_err fmt_hot_json_read(const char *buf, size_t len, struct hot_summary **out, struct perr *e)
{
	struct jr_error je;
	json_t *root = jr_parse(buf, len, 0, &je);
	if (!root)
		return perr_set(e, PLUMB_EFORMAT, "summary is not valid JSON: %s (line %zu, byte %zu)", je.text, je.line,
				je.offset);
	enum plumb_err rc;
	struct hot_summary *s = hot_summary_new();
	if (!s)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	else if (!(rc = read_head(root, s, e)) && !(rc = read_threads(root, s, e)) &&
		 !(rc = read_slice(root, &s->all, &s->has_grouped, "summary", e)))
		rc = read_stages(root, s, e);
	json_decref(root);
	if (rc) {
		hot_summary_free(s);
		return rc;
	}
	*out = s;
	return PLUMB_OK;
}
