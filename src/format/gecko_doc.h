/* gecko_doc.h — a Firefox Profiler "processed" profile as read from its text (format/gecko_doc.c): only the
 * columns the resolver needs (format/gecko_read.c), captured straight into compact arrays, with no meaning
 * given to them yet. Keys may come in any order, so nothing is resolved while the document is read.
 *
 * Ownership: a struct gdoc owns everything it holds; gdoc_release() frees it. Internal to format/. */
#ifndef PLUMB_FORMAT_GECKO_DOC_H
#define PLUMB_FORMAT_GECKO_DOC_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/json.h"
#include "base/sbuf.h"

/* A column of numbers; null is NAN. `present` says the key was seen with an array value. */
struct col {
	double *v;
	size_t n, cap;
	bool present;
};

/* A string array: offsets into one text buffer. */
struct strarr {
	struct sbuf text;
	size_t *off, *len;
	size_t n, cap;
	bool present;
};

/* The tables of one thread, or the `shared` ones (v60+). has_*: the table's key was present. */
struct gtables {
	struct col stack_frame, stack_prefix, stack_prefix_offset;
	struct col frame_func, frame_address, frame_line, frame_inline_depth, frame_category;
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
	struct col s_plumb_samples; /* plumb's own: the samples each row stands for */
	char *weight_type;
};

struct glib {
	char *name, *path, *debug_name, *debug_id, *code_id;
};

struct gdoc {
	bool want_times; /* keep sample times (else the time columns are only validated and counted) */
	double version;  /* meta.preprocessedProfileVersion; NAN when absent */
	double profiling_start; /* meta.profilingStartTime in ms; NAN when absent */
	double interval_ms;     /* meta.interval; NAN when absent */
	bool has_meta;
	char **categories;      /* meta.categories[i].name (NULL for one without) */
	size_t ncategories, cap_categories;
	/* meta.plumb, what plumb's writer keeps there (has_plumb: present) */
	bool has_plumb, plumb_timeline;
	char *plumb_weight_unit;
	double plumb_interval_ns;
	struct gtables shared;
	struct gthread *threads;
	size_t nthreads, cap_threads;
	struct glib *libs;
	size_t nlibs, cap_libs;
};

/* Reads the whole document at the reader's cursor into d (zeroed but for want_times, version and
 * profiling_start) and checks that nothing but white space follows. On failure the reader holds the error
 * (with the byte, line, column and the document path); d may be partly filled and must still be released. */
bool gdoc_read(struct json_reader *j, struct gdoc *d);
void gdoc_release(struct gdoc *d);

/* c[row] as an index below limit: false when the column is absent, short, or the value is not a whole number in
 * [0, limit). */
static inline bool gdoc_index(const struct col *c, size_t row, size_t limit, size_t *out)
{
	if (!c->present || row >= c->n)
		return false;
	double v = c->v[row];
	if (!(v >= 0) || v >= (double)limit || v != floor(v))
		return false;
	*out = (size_t)v;
	return true;
}

/* String i of s (i < s->n) and its length. */
static inline const char *gdoc_str(const struct strarr *s, size_t i, size_t *len)
{
	*len = s->len[i];
	return s->text.buf + s->off[i];
}

#endif
