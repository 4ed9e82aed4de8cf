/* gecko_raw_read.c — reads the Gecko profiler's own JSON, what Firefox writes before profiler.firefox.com
 * processes it (meta.version, no meta.preprocessedProfileVersion): per thread, "samples", "stackTable" and
 * "frameTable" as {schema: {column: index}, data: [rows]} and "stringTable" an array; the subprocesses' profiles in
 * "processes", each with its own threads and start time; and the same wrapped in a Firefox DevTools performance
 * export (its "profile" key). Each sample is one sample (the profile's meta.interval is the period); a frame's
 * location "name (url:line:column)" becomes the function, file and line.
 *
 * Read as a jansson tree (base/json_tree.h); the subprocesses are walked with an explicit list, and a stack's
 * prefix must come before it (as Gecko writes them), so no walk recurses. */
#include "format/format.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/json_tree.h"

struct graw {
	struct profile *p;
	struct perr *e;
	bool failed;
	bool timed;
	double origin_ms;     /* the main process's meta.startTime */
	uint64_t nsamples;
};

static bool gr_fail(struct graw *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool gr_fail(struct graw *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	perr_format_once(g->e, &g->failed, "malformed Gecko profile", fmt, ap);
	va_end(ap);
	return false;
}

static bool gr_nomem(struct graw *g)
{
	if (!g->failed)
		perr_set(g->e, PLUMB_ENOMEM, "out of memory reading a Gecko profile");
	g->failed = true;
	return false;
}

/* A schema'd table: the column index of each name asked for (-1 when the schema has none). */
static bool table_of(struct graw *g, const json_t *t, const char *where, size_t ti, const json_t **data)
{
	if (!json_is_object(t) || !json_is_object(json_object_get(t, "schema")) ||
	    !json_is_array(*data = json_object_get(t, "data")))
		return gr_fail(g, "threads[%zu].%s is not a table with a schema and data", ti, where);
	return true;
}

static long col_of(const json_t *t, const char *name)
{
	const json_t *v = json_object_get(json_object_get(t, "schema"), name);
	return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) < 1024
		       ? (long)json_integer_value(v) : -1;
}

/* Row r's cell in column col, or NULL. */
static const json_t *cell(const json_t *row, long col)
{
	return col >= 0 ? json_array_get(row, (size_t)col) : NULL;
}

/* An index cell: true with *out when it is an integer in [0, n). */
static bool index_of(const json_t *v, size_t n, size_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) >= n)
		return false;
	*out = (size_t)json_integer_value(v);
	return true;
}

/* A location string into a frame: "name (url:line:column)" (JavaScript) gives the function, file and line;
 * anything else (a label, a native symbol, an unsymbolicated address) is the function's name as written. */
static uint32_t frame_of(struct graw *g, const char *loc, uint32_t line_cell)
{
	struct frame f;
	memset(&f, 0, sizeof f);
	size_t n = strlen(loc);
	const char *open = n > 2 && loc[n - 1] == ')' ? strstr(loc, " (") : NULL;
	while (open && strstr(open + 2, " ("))
		open = strstr(open + 2, " (");
	if (open && open > loc) {
		const char *in = open + 2, *end = loc + n - 1;
		/* trailing ":digits" groups are the line and the column */
		const char *c1 = end, *colons[2] = { NULL, NULL };
		for (int k = 0; k < 2; k++) {
			const char *q = c1;
			while (q > in && q[-1] >= '0' && q[-1] <= '9')
				q--;
			if (q == c1 || q <= in || q[-1] != ':')
				break;
			colons[k] = q - 1;
			c1 = q - 1;
		}
		const char *file_end = colons[1] ? colons[1] : colons[0] ? colons[0] : end;
		const char *line_at = colons[1] ? colons[1] + 1 : colons[0] ? colons[0] + 1 : NULL;
		f.func = profile_intern(g->p, loc, (size_t)(open - loc));
		f.file = file_end > in ? profile_intern(g->p, in, (size_t)(file_end - in)) : 0;
		if (line_at) {
			unsigned long v = strtoul(line_at, NULL, 10);
			f.line = v < UINT32_MAX ? (uint32_t)v : 0;
		}
	} else {
		f.func = profile_intern(g->p, loc, n);
		f.line = line_cell;
	}
	if (f.func == PROFILE_NOMEM || f.file == PROFILE_NOMEM)
		return PROFILE_NOMEM;
	return profile_frame(g->p, &f);
}

/* One thread of one process: frames, stacks, then samples. */
static bool read_thread(struct graw *g, const json_t *th, size_t ti, double start_ms, const char *process)
{
	if (json_is_string(th))
		return gr_fail(g, "threads[%zu] is a string (a Gecko profile older than this reader knows)", ti);
	if (!json_is_object(th))
		return gr_fail(g, "threads[%zu] is not an object", ti);
	const json_t *samples = json_object_get(th, "samples"), *stacks = json_object_get(th, "stackTable"),
		     *frames = json_object_get(th, "frameTable"), *strings = json_object_get(th, "stringTable");
	const json_t *sdata, *stdata, *fdata;
	if (!table_of(g, samples, "samples", ti, &sdata) || !table_of(g, stacks, "stackTable", ti, &stdata) ||
	    !table_of(g, frames, "frameTable", ti, &fdata))
		return false;
	if (!json_is_array(strings))
		return gr_fail(g, "threads[%zu].stringTable is missing or not an array", ti);
	long c_loc = col_of(frames, "location"), c_line = col_of(frames, "line");
	long c_prefix = col_of(stacks, "prefix"), c_frame = col_of(stacks, "frame");
	long c_stack = col_of(samples, "stack"), c_time = col_of(samples, "time");
	if (c_loc < 0 || c_prefix < 0 || c_frame < 0 || c_stack < 0)
		return gr_fail(g, "threads[%zu]: a schema lacks location, prefix, frame or stack", ti);
	size_t nstr = json_array_size(strings), nf = json_array_size(fdata), ns = json_array_size(stdata);
	uint32_t *fid = calloc(nf + 1, sizeof *fid), *sid = calloc(ns + 1, sizeof *sid);
	uint32_t *depth = calloc(ns + 1, sizeof *depth);
	bool ok = fid && sid && depth ? true : gr_nomem(g);
	for (size_t i = 0; ok && i < nf; i++) {
		const json_t *row = json_array_get(fdata, i);
		size_t s;
		if (!json_is_array(row) || !index_of(cell(row, c_loc), nstr, &s) ||
		    !json_is_string(json_array_get(strings, s))) {
			ok = gr_fail(g, "threads[%zu].frameTable.data[%zu] has no location string", ti, i);
			break;
		}
		const json_t *line = cell(row, c_line);
		uint32_t ln = json_is_integer(line) && json_integer_value(line) > 0 && json_integer_value(line) < UINT32_MAX
				      ? (uint32_t)json_integer_value(line) : 0;
		if ((fid[i] = frame_of(g, json_string_value(json_array_get(strings, s)), ln)) == PROFILE_NOMEM)
			ok = gr_nomem(g);
	}
	for (size_t i = 0; ok && i < ns; i++) {
		const json_t *row = json_array_get(stdata, i), *pre = cell(row, c_prefix);
		size_t f, pi = 0;
		if (!json_is_array(row) || !index_of(cell(row, c_frame), nf, &f)) {
			ok = gr_fail(g, "threads[%zu].stackTable.data[%zu] has no frame index", ti, i);
			break;
		}
		uint32_t parent = PROFILE_ROOT, d = 0;
		if (pre && !json_is_null(pre)) {
			if (!index_of(pre, i, &pi)) {
				ok = gr_fail(g, "threads[%zu].stackTable.data[%zu]'s prefix is not an earlier stack", ti, i);
				break;
			}
			parent = sid[pi];
			d = depth[pi];
		}
		if (d >= FMT_MAX_FRAMES) {
			ok = gr_fail(g, "threads[%zu].stackTable.data[%zu] is more than %zu frames deep, the cap on one "
				     "stack (docs/design.md §6.6)", ti, i, (size_t)FMT_MAX_FRAMES);
			break;
		}
		depth[i] = d + 1;
		if ((sid[i] = profile_stack(g->p, parent, fid[f])) == PROFILE_NOMEM)
			ok = gr_nomem(g);
	}
	uint32_t thread = 0;
	if (ok) {
		const json_t *pid = json_object_get(th, "pid"), *tid = json_object_get(th, "tid");
		const char *name = json_string_value(json_object_get(th, "name"));
		double v;
		uint32_t upid = 0, utid = 0;
		if (json_is_number(pid) && (v = json_number_value(pid)) >= 0 && v <= UINT32_MAX)
			upid = (uint32_t)v;
		else if (json_is_string(pid))
			upid = (uint32_t)strtoul(json_string_value(pid), NULL, 10);
		if (json_is_number(tid) && (v = json_number_value(tid)) >= 0 && v <= UINT32_MAX)
			utid = (uint32_t)v;
		thread = profile_thread(g->p, upid, utid, name ? name : "");
		const char *pname = json_string_value(json_object_get(th, "processName"));
		if (!pname)
			pname = process;
		if (thread == PROFILE_NOMEM || (pname && !profile_thread_set_process(g->p, thread, pname, strlen(pname))))
			ok = gr_nomem(g);
	}
	for (size_t i = 0; ok && i < json_array_size(sdata); i++) {
		const json_t *row = json_array_get(sdata, i), *st = cell(row, c_stack), *tm = cell(row, c_time);
		size_t s;
		if (!json_is_array(row)) {
			ok = gr_fail(g, "threads[%zu].samples.data[%zu] is not an array", ti, i);
			break;
		}
		if (json_is_null(st) || !st)
			continue; /* a sample with no stack: the profiler had nothing to walk */
		if (!index_of(st, ns, &s)) {
			ok = gr_fail(g, "threads[%zu].samples.data[%zu]'s stack is not a stack index", ti, i);
			break;
		}
		uint64_t at = 0;
		if (g->timed) {
			double ms = json_is_number(tm) ? json_number_value(tm) + start_ms - g->origin_ms : NAN;
			if (!(ms >= 0 && ms < 9e12))
				g->timed = false, profile_keep_timeline(g->p, false);
			else
				at = (uint64_t)llround(ms * 1e6);
		}
		if (!profile_add_sample(g->p, sid[s], thread, at, 1)) {
			ok = gr_nomem(g);
			break;
		}
		g->nsamples++;
	}
	free(fid);
	free(sid);
	free(depth);
	return ok;
}

/* The process profiles, the main one first, each with its threads and then its own subprocesses. */
static bool read_processes(struct graw *g, const json_t *main)
{
	const json_t **todo = NULL;
	size_t ntodo = 0, cap = 0, seen = 0;
	bool ok = true;
	if (!ALLOC_GROW(todo, 1, cap))
		return gr_nomem(g);
	todo[ntodo++] = main;
	while (ok && ntodo) {
		const json_t *prof = todo[--ntodo];
		const json_t *meta = json_object_get(prof, "meta"), *threads = json_object_get(prof, "threads");
		if (!json_is_object(prof) || !json_is_object(meta) || !json_is_array(threads)) {
			ok = gr_fail(g, "process %zu has no meta object and threads array", seen);
			break;
		}
		double start = json_is_number(json_object_get(meta, "startTime"))
				       ? json_number_value(json_object_get(meta, "startTime")) : g->origin_ms;
		const char *process = NULL;
		const json_t *pn = json_object_get(meta, "product");
		if (seen == 0 && json_is_string(pn))
			process = json_string_value(pn);
		for (size_t i = 0; ok && i < json_array_size(threads); i++)
			ok = read_thread(g, json_array_get(threads, i), i, start, process);
		const json_t *subs = json_object_get(prof, "processes");
		size_t nsub = json_array_size(subs);
		if (ok && !ALLOC_GROW(todo, ntodo + nsub, cap))
			ok = gr_nomem(g);
		for (size_t k = nsub; ok && k-- > 0;) {
			const json_t *sp = json_array_get(subs, k);
			if (json_is_string(sp)) {
				ok = gr_fail(g, "a subprocess profile is a string (a Gecko profile older than this reader "
					     "knows)");
				break;
			}
			todo[ntodo++] = sp;
		}
		seen++;
	}
	free(todo);
	return ok;
}

enum plumb_err fmt_gecko_raw_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				  struct perr *e)
{
	(void)opts;
	struct jr_error err;
	json_t *root = jr_parse(buf, len, JR_TREE_BIG_AS_REAL, &err);
	if (!root) {
		if (err.code == PLUMB_ENOMEM)
			return perr_set(e, PLUMB_ENOMEM, "out of memory reading a Gecko profile");
		return perr_set(e, PLUMB_EFORMAT, "malformed Gecko profile at byte %zu: %s (line %zu, column %zu)",
				err.offset, err.text, err.line, err.column);
	}
	struct graw g = { .p = p, .e = e, .timed = profile_has_timeline(p) };
	/* a Firefox DevTools performance export holds the Gecko profile under "profile" */
	const json_t *prof = root;
	if (json_is_object(json_object_get(root, "profile")) && !json_object_get(root, "threads"))
		prof = json_object_get(root, "profile");
	const json_t *meta = json_object_get(prof, "meta"), *version = json_object_get(meta, "version");
	bool ok = true;
	if (!json_is_object(meta) || !json_is_number(version))
		ok = gr_fail(&g, "no meta.version: not a profile the Gecko profiler wrote");
	if (ok) {
		const json_t *st = json_object_get(meta, "startTime");
		g.origin_ms = json_is_number(st) ? json_number_value(st) : 0;
		ok = read_processes(&g, prof);
	}
	if (ok) {
		struct profile_meta *m = profile_meta(p);
		const json_t *iv = json_object_get(meta, "interval");
		m->backend = profile_intern_cstr(p, "gecko");
		if (json_is_number(iv) && json_number_value(iv) > 0 && json_number_value(iv) < 1e9)
			m->interval_ns = (uint64_t)llround(json_number_value(iv) * 1e6);
		if (g.origin_ms > 0 && g.origin_ms < 1.8e13)
			m->start_unix = g.origin_ms / 1e3;
		if (m->backend == PROFILE_NOMEM)
			ok = gr_nomem(&g);
	}
	json_decref(root);
	return ok ? PLUMB_OK : (e->code ? e->code : PLUMB_EFORMAT);
}
