/* speedscope_read.c — reads the speedscope file format (https://www.speedscope.app/file-format-schema.json):
 * shared.frames[] and profiles[] of type "sampled" (stacks of frame indexes, outermost first, with weights) or
 * "evented" (open/close events; the stack open between two events gets the time between them as its weight).
 * One speedscope profile is one thread. Time units become nanoseconds; cumulative positions are rounded, not
 * each weight, so totals do not drift. Files are small enough for a jansson DOM. */
#include "format/format.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/json_tree.h"
#include "profile/label.h"

#define SS_MAX_POS 9.0e18 /* positions (after unit scaling) must fit in uint64 */
#define SS_AS_WEIGHT UINT64_MAX /* add_interval: the weight is itself the number of samples */

struct ss_reader {
	struct profile *p;
	struct perr *e;
	uint32_t *frame_ids; /* speedscope frame index -> profile frame id */
	size_t nframes;
	uint32_t *stack;     /* scratch: frame ids outermost first */
	size_t stack_cap;
};

static enum plumb_err ss_fail(struct perr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static enum plumb_err ss_fail(struct perr *e, const char *fmt, ...)
{
	char what[PERR_MSG_MAX - 64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return perr_set(e, PLUMB_EFORMAT, "malformed speedscope file: %s", what);
}

static enum plumb_err ss_nomem(struct perr *e)
{
	return perr_set(e, PLUMB_ENOMEM, "out of memory reading a speedscope file");
}

/* Nanoseconds per unit for time units; 0 for "none", "bytes" and anything else (weights kept as counts). */
static double unit_ns(const char *unit)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = { { "nanoseconds", 1 }, { "microseconds", 1e3 }, { "milliseconds", 1e6 }, { "seconds", 1e9 } };
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcmp(unit, units[i].name) == 0)
			return units[i].ns;
	return 0;
}

static bool ensure_stack(struct ss_reader *r, size_t n)
{
	return ALLOC_GROW(r->stack, n, r->stack_cap);
}

static enum plumb_err read_frames(struct ss_reader *r, json_t *root)
{
	json_t *shared = json_object_get(root, "shared");
	if (!json_is_object(shared))
		return ss_fail(r->e, "\"shared\" is missing or not an object");
	json_t *frames = json_object_get(shared, "frames");
	if (!json_is_array(frames))
		return ss_fail(r->e, "\"shared.frames\" is missing or not an array");
	r->nframes = json_array_size(frames);
	r->frame_ids = malloc((r->nframes ? r->nframes : 1) * sizeof *r->frame_ids);
	if (!r->frame_ids)
		return ss_nomem(r->e);
	for (size_t i = 0; i < r->nframes; i++) {
		json_t *f = json_array_get(frames, i);
		if (!json_is_object(f))
			return ss_fail(r->e, "shared.frames[%zu] is not an object", i);
		json_t *name = json_object_get(f, "name"), *file = json_object_get(f, "file");
		json_t *line = json_object_get(f, "line");
		if (!json_is_string(name))
			return ss_fail(r->e, "shared.frames[%zu].name is missing or not a string", i);
		if (file && !json_is_string(file) && !json_is_null(file))
			return ss_fail(r->e, "shared.frames[%zu].file is not a string", i);
		/* the name is a label (profile/label.h); a "file" key holds the location the name then lacks */
		struct label_parts lp;
		label_parse(json_string_value(name), json_string_length(name), &lp);
		if (json_is_string(file) && json_string_length(file) > 0) {
			lp.file = json_string_value(file);
			lp.file_len = json_string_length(file);
			lp.line = 0;
			if (line && !json_is_null(line)) {
				double v = json_number_value(line);
				if (!json_is_number(line) || v < 0 || v > UINT32_MAX || v != floor(v))
					return ss_fail(r->e, "shared.frames[%zu].line is not a line number", i);
				lp.line = (uint32_t)v;
			}
		}
		uint32_t id = label_parts_frame(r->p, &lp);
		if (id == PROFILE_NOMEM)
			return ss_nomem(r->e);
		r->frame_ids[i] = id;
	}
	return PLUMB_OK;
}

/* The thread for profiles[idx]: plumb writes "name (tid)", which is read back as that tid; other names get
 * a made-up tid that no earlier profile in the file has taken. */
static enum plumb_err profile_thread_for(struct ss_reader *r, json_t *prof, size_t idx, size_t nprofiles,
					 uint32_t *out)
{
	json_t *pt = json_object_get(prof, "plumb_thread");
	if (json_is_object(pt)) { /* plumb's own: the whole identity */
		json_t *pid = json_object_get(pt, "pid"), *tid = json_object_get(pt, "tid");
		json_t *tn = json_object_get(pt, "name"), *pn = json_object_get(pt, "process");
		json_int_t pv = json_is_integer(pid) ? json_integer_value(pid) : 0;
		json_int_t tv = json_is_integer(tid) ? json_integer_value(tid) : 0;
		if (pv < 0 || pv > UINT32_MAX || tv < 0 || tv > UINT32_MAX)
			return ss_fail(r->e, "profiles[%zu].plumb_thread has a pid or tid out of range", idx);
		*out = profile_thread(r->p, (uint32_t)pv, (uint32_t)tv, json_is_string(tn) ? json_string_value(tn) : "");
		if (*out == PROFILE_NOMEM ||
		    (json_is_string(pn) && !profile_thread_set_process(r->p, *out, json_string_value(pn),
								       json_string_length(pn))))
			return ss_nomem(r->e);
		return PLUMB_OK;
	}
	json_t *jname = json_object_get(prof, "name");
	if (jname && !json_is_string(jname))
		return ss_fail(r->e, "profiles[%zu].name is not a string", idx);
	const char *name = jname ? json_string_value(jname) : "";
	size_t n = strlen(name);
	char *copy = strdup(name);
	if (!copy)
		return ss_nomem(r->e);
	unsigned long tid = 0;
	if (n >= 4 && name[n - 1] == ')') {
		size_t d = n - 1;
		while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
			d--;
		if (d >= 2 && d < n - 1 && n - 1 - d <= 9 && name[d - 1] == '(' && name[d - 2] == ' ') {
			tid = strtoul(name + d, NULL, 10);
			copy[d - 2] = '\0';
		}
	}
	size_t before = profile_nthreads(r->p);
	uint32_t id;
	if (tid) {
		id = profile_thread(r->p, 0, (uint32_t)tid, copy);
	} else {
		/* the profile's index (0 for a single profile, as plumb writes the merged "all" thread), moved on
		 * by the number of profiles while another profile has it */
		uint64_t t = idx;
		for (;;) {
			id = profile_thread(r->p, 0, (uint32_t)t, copy);
			if (id == PROFILE_NOMEM || id >= before || t + nprofiles >= UINT32_MAX)
				break;
			t += nprofiles;
		}
	}
	free(copy);
	if (id == PROFILE_NOMEM)
		return ss_nomem(r->e);
	*out = id;
	return PLUMB_OK;
}

/* Reads a position (startValue, endValue, at) as a finite, non-negative number. */
static bool get_pos(json_t *v, double *out)
{
	if (!json_is_number(v))
		return false;
	double d = json_number_value(v);
	if (!isfinite(d) || d < 0)
		return false;
	*out = d;
	return true;
}

/* Adds the interval [from, to) (in the profile's unit) of `stack` on `thread` over `samples` samples
 * (SS_AS_WEIGHT: the weight is a count of samples): scaled to nanoseconds for time
 * units, rounded at both ends so consecutive intervals sum exactly. */
static enum plumb_err add_interval(struct ss_reader *r, uint32_t stack, uint32_t thread, double from, double to,
				   double scale, uint64_t samples, const char *where)
{
	double a = from * scale, b = to * scale;
	if (b > SS_MAX_POS)
		return ss_fail(r->e, "%s: weights add up to more than plumb can count", where);
	uint64_t ia = (uint64_t)llround(a), ib = (uint64_t)llround(b);
	if (ib <= ia)
		return PLUMB_OK;
	if (!profile_add_weighted(r->p, stack, thread, ia, ib - ia, samples == SS_AS_WEIGHT ? ib - ia : samples))
		return profile_overflowed(r->p) ? ss_fail(r->e, "%s: weights add up to more than plumb can count",
							 where) : ss_nomem(r->e);
	return PLUMB_OK;
}

/* plumb's own keys (speedscope ignores them): the profile's weight unit, and each profile's sample counts. */
struct ss_plumb {
	const char *weight_unit; /* NULL: not a plumb file */
	bool timeline;
};

/* The sample count plumb wrote for samples[i], 0 when there is none. */
static uint64_t plumb_count(json_t *counts, size_t i)
{
	json_t *c = counts ? json_array_get(counts, i) : NULL;
	return json_is_integer(c) && json_integer_value(c) > 0 ? (uint64_t)json_integer_value(c) : 0;
}

static enum plumb_err read_sampled(struct ss_reader *r, json_t *prof, size_t idx, uint32_t thread, double scale,
				   double start, bool counts_are_weights)
{
	char where[96];
	json_t *samples = json_object_get(prof, "samples"), *weights = json_object_get(prof, "weights");
	json_t *counts = json_object_get(prof, "plumb_samples");
	if (!json_is_array(counts) || json_array_size(counts) != json_array_size(samples))
		counts = NULL;
	if (!json_is_array(samples))
		return ss_fail(r->e, "profiles[%zu].samples is missing or not an array", idx);
	if (!json_is_array(weights))
		return ss_fail(r->e, "profiles[%zu].weights is missing or not an array", idx);
	size_t n = json_array_size(samples);
	if (json_array_size(weights) != n)
		return ss_fail(r->e, "profiles[%zu] has %zu samples but %zu weights", idx, n,
			       json_array_size(weights));
	double pos = start;
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(samples, i), *w = json_array_get(weights, i);
		if (!json_is_array(s))
			return ss_fail(r->e, "profiles[%zu].samples[%zu] is not an array", idx, i);
		double wv;
		if (!get_pos(w, &wv))
			return ss_fail(r->e, "profiles[%zu].weights[%zu] is not a non-negative number", idx, i);
		size_t depth = json_array_size(s);
		if (!ensure_stack(r, depth))
			return ss_nomem(r->e);
		for (size_t k = 0; k < depth; k++) {
			json_t *fi = json_array_get(s, k);
			if (!json_is_integer(fi) || json_integer_value(fi) < 0 ||
			    (unsigned long long)json_integer_value(fi) >= r->nframes)
				return ss_fail(r->e, "profiles[%zu].samples[%zu][%zu] is not a frame index (%zu frames)",
					       idx, i, k, r->nframes);
			r->stack[k] = r->frame_ids[json_integer_value(fi)];
		}
		uint32_t st = profile_stack_from(r->p, r->stack, depth);
		if (st == PROFILE_NOMEM)
			return ss_nomem(r->e);
		snprintf(where, sizeof where, "profiles[%zu].weights[%zu]", idx, i);
		uint64_t n_i = plumb_count(counts, i);
		if (counts_are_weights && n_i) /* plumb's sample counts, written as time: counts again */
			wv = (double)n_i;
		/* a count ("none") is its own number of samples; otherwise an entry is one sample, or plumb's count */
		uint64_t ns = n_i ? n_i : scale == 0 || counts_are_weights ? SS_AS_WEIGHT : 1;
		enum plumb_err rc = add_interval(r, st, thread, pos, pos + wv, counts_are_weights || scale == 0 ? 1 : scale,
						 ns, where);
		if (rc)
			return rc;
		pos += wv;
	}
	return PLUMB_OK;
}

static enum plumb_err read_evented(struct ss_reader *r, json_t *prof, size_t idx, uint32_t thread, double scale,
				   double start, double end)
{
	char where[96];
	json_t *events = json_object_get(prof, "events");
	if (!json_is_array(events))
		return ss_fail(r->e, "profiles[%zu].events is missing or not an array", idx);
	size_t n = json_array_size(events), depth = 0;
	size_t *open_idx = NULL; /* speedscope frame index of each open frame */
	size_t open_cap = 0;
	uint32_t st = PROFILE_ROOT;
	double prev = start;
	enum plumb_err rc = PLUMB_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		json_t *ev = json_array_get(events, i);
		if (!json_is_object(ev)) {
			rc = ss_fail(r->e, "profiles[%zu].events[%zu] is not an object", idx, i);
			break;
		}
		json_t *type = json_object_get(ev, "type"), *fi = json_object_get(ev, "frame");
		double at;
		const char *t = json_is_string(type) ? json_string_value(type) : "";
		bool is_open = strcmp(t, "O") == 0;
		if (!is_open && strcmp(t, "C") != 0) {
			rc = ss_fail(r->e, "profiles[%zu].events[%zu].type is not \"O\" or \"C\"", idx, i);
			break;
		}
		if (!json_is_integer(fi) || json_integer_value(fi) < 0 ||
		    (unsigned long long)json_integer_value(fi) >= r->nframes) {
			rc = ss_fail(r->e, "profiles[%zu].events[%zu].frame is not a frame index (%zu frames)", idx, i,
				     r->nframes);
			break;
		}
		if (!get_pos(json_object_get(ev, "at"), &at)) {
			rc = ss_fail(r->e, "profiles[%zu].events[%zu].at is not a non-negative number", idx, i);
			break;
		}
		if (at < prev) {
			rc = ss_fail(r->e, "profiles[%zu].events[%zu].at goes back in time (%g after %g)", idx, i, at,
				     prev);
			break;
		}
		if (depth) {
			snprintf(where, sizeof where, "profiles[%zu].events[%zu]", idx, i);
			rc = add_interval(r, st, thread, prev, at, scale, 1, where);
			if (rc)
				break;
		}
		prev = at;
		size_t f = (size_t)json_integer_value(fi);
		if (is_open) {
			if (!ALLOC_GROW(open_idx, depth + 1, open_cap)) {
				rc = ss_nomem(r->e);
				break;
			}
			open_idx[depth++] = f;
			st = profile_stack(r->p, st, r->frame_ids[f]);
			if (st == PROFILE_NOMEM)
				rc = ss_nomem(r->e);
		} else {
			if (!depth || open_idx[depth - 1] != f) {
				if (depth)
					rc = ss_fail(r->e, "profiles[%zu].events[%zu] closes frame %zu but frame %zu is open",
						     idx, i, f, open_idx[depth - 1]);
				else
					rc = ss_fail(r->e, "profiles[%zu].events[%zu] closes frame %zu but no frame is open",
						     idx, i, f);
				break;
			}
			depth--;
			st = profile_stack_parent(r->p, st);
		}
	}
	/* frames still open at the end run to endValue */
	if (!rc && depth && end > prev) {
		snprintf(where, sizeof where, "profiles[%zu].endValue", idx);
		rc = add_interval(r, st, thread, prev, end, scale, 1, where);
	}
	free(open_idx);
	return rc;
}

enum plumb_err fmt_speedscope_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				   struct perr *e)
{
	struct jr_error jerr;
	json_t *root = jr_parse(buf, len, 0, &jerr);
	if (!root)
		return ss_fail(e, "not valid JSON at line %zu column %zu (byte %zu): %s", jerr.line, jerr.column,
			       jerr.offset, jerr.text);
	struct ss_reader r = { .p = p, .e = e };
	enum plumb_err rc;
	if (!json_is_object(root)) {
		rc = ss_fail(e, "the top level is not an object");
		goto out;
	}
	rc = read_frames(&r, root);
	if (rc)
		goto out;
	json_t *profiles = json_object_get(root, "profiles");
	if (!json_is_array(profiles)) {
		rc = ss_fail(e, "\"profiles\" is missing or not an array");
		goto out;
	}
	size_t np = json_array_size(profiles);
	/* plumb's own keys: its weight unit and whether the samples were timed */
	struct ss_plumb pl = { NULL, true };
	json_t *ext = json_object_get(root, "plumb");
	if (json_is_object(ext) && json_is_string(json_object_get(ext, "weight_unit"))) {
		pl.weight_unit = json_string_value(json_object_get(ext, "weight_unit"));
		pl.timeline = json_is_true(json_object_get(ext, "timeline"));
		json_t *iv = json_object_get(ext, "interval_ns");
		if (json_is_integer(iv) && json_integer_value(iv) > 0)
			profile_meta(p)->interval_ns = (uint64_t)json_integer_value(iv);
	}
	/* first pass: types and units; the timeline is kept only when every profile is in a time unit */
	bool timed = opts && opts->keep_timeline && pl.timeline;
	const char *weight_unit = NULL;
	for (size_t i = 0; i < np; i++) {
		json_t *prof = json_array_get(profiles, i);
		if (!json_is_object(prof)) {
			rc = ss_fail(e, "profiles[%zu] is not an object", i);
			goto out;
		}
		json_t *type = json_object_get(prof, "type"), *unit = json_object_get(prof, "unit");
		if (!json_is_string(type) || (strcmp(json_string_value(type), "sampled") != 0 &&
					      strcmp(json_string_value(type), "evented") != 0)) {
			rc = ss_fail(e, "profiles[%zu].type is not \"sampled\" or \"evented\"", i);
			goto out;
		}
		if (unit && !json_is_string(unit)) {
			rc = ss_fail(e, "profiles[%zu].unit is not a string", i);
			goto out;
		}
		const char *u = unit ? json_string_value(unit) : "none";
		if (unit_ns(u) == 0)
			timed = false;
		const char *wu = unit_ns(u) ? "nanoseconds" : strcmp(u, "none") == 0 ? NULL : u;
		if (wu && !weight_unit)
			weight_unit = wu;
	}
	bool counts_are_weights = pl.weight_unit && strcmp(pl.weight_unit, "samples") == 0;
	if (pl.weight_unit)
		weight_unit = pl.weight_unit;
	profile_keep_timeline(p, timed);
	for (size_t i = 0; i < np && !rc; i++) {
		json_t *prof = json_array_get(profiles, i);
		json_t *unit = json_object_get(prof, "unit");
		double ns = unit_ns(unit ? json_string_value(unit) : "none");
		double scale = ns ? ns : 1, start = 0, end = 0;
		json_t *sv = json_object_get(prof, "startValue"), *ev = json_object_get(prof, "endValue");
		if (sv && !get_pos(sv, &start)) {
			rc = ss_fail(e, "profiles[%zu].startValue is not a non-negative number", i);
			break;
		}
		if (ev && !get_pos(ev, &end)) {
			rc = ss_fail(e, "profiles[%zu].endValue is not a non-negative number", i);
			break;
		}
		uint32_t thread = 0;
		rc = profile_thread_for(&r, prof, i, np, &thread);
		if (rc)
			break;
		if (strcmp(json_string_value(json_object_get(prof, "type")), "sampled") == 0)
			rc = read_sampled(&r, prof, i, thread, ns ? scale : 0, start, counts_are_weights);
		else
			rc = read_evented(&r, prof, i, thread, scale, start, end);
	}
	if (rc)
		goto out;
	struct profile_meta *m = profile_meta(p);
	m->backend = profile_intern_cstr(p, "speedscope");
	if (weight_unit)
		m->weight_unit = profile_intern_cstr(p, weight_unit);
	json_t *exporter = json_object_get(root, "exporter"), *name = json_object_get(root, "name");
	if (json_is_string(exporter) && strcmp(json_string_value(exporter), "plumb") == 0 && json_is_string(name) &&
	    strcmp(json_string_value(name), "plumb profile") != 0)
		m->command = profile_intern_cstr(p, json_string_value(name));
	if (m->backend == PROFILE_NOMEM || m->weight_unit == PROFILE_NOMEM || m->command == PROFILE_NOMEM)
		rc = ss_nomem(e);
out:
	free(r.frame_ids);
	free(r.stack);
	json_decref(root);
	return rc;
}
