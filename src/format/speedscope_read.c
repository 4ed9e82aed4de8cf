/* speedscope_read.c — reads the speedscope file format (https://www.speedscope.app/file-format-schema.json):
 * shared.frames[] and profiles[] of type "sampled" (stacks of frame indexes, outermost first, with weights) or
 * "evented" (open/close events; the stack open between two events gets the time between them as its weight; every
 * frame opened must be closed, as speedscope requires).
 * One speedscope profile is one thread. Time units become nanoseconds; cumulative positions are rounded, not each
 * weight, so totals do not drift. plumb's own keys (plumb, plumb_thread, plumb_samples) give back what the schema
 * has no place for. A frame's name is a label (profile/label.h); a "file" key holds the location it then lacks.
 *
 * The document is read with the pull reader (base/json.h) in two passes over the text, since keys come in any
 * order: the frames, the profiles' types and units and plumb's keys first, then the profiles. Nothing but one
 * profile's columns (a node id, a weight and a count a sample) is held besides the model. */
#include "format/format.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/json.h"
#include "base/u32vec.h"
#include "profile/label.h"

#define SS_MAX_POS 9.0e18        /* positions (after unit scaling) must fit in uint64 */
#define SS_AS_WEIGHT UINT64_MAX  /* add_interval: the weight is itself the number of samples */

/* What the first pass learns of one profile. */
struct ss_kind {
	bool evented;
	double unit_ns; /* nanoseconds per unit; 0 for a unit that is not time */
	char *unit;
};

struct ss_event {
	double at;
	uint32_t frame;
	bool open;
};

/* One profile's columns, held until its object ends (its keys come in any order). */
struct ss_cols {
	struct u32vec nodes;      /* per sample: the node of its stack */
	double *weights;
	size_t nweights, cap_weights;
	uint64_t *counts;         /* plumb_samples */
	size_t ncounts, cap_counts;
	bool has_samples, has_weights, has_events;
	struct ss_event *events;
	size_t nevents, cap_events;
	double start, end;
	char *name;
	bool has_thread;          /* plumb_thread */
	double pid, tid;
	char *tname, *pname;
};

struct ss_reader {
	struct profile *p;
	struct perr *e;
	struct json_reader j;
	uint32_t *frame_ids;      /* speedscope frame index -> profile frame id */
	size_t nframes, cap_frames;
	bool has_shared, has_frames, has_profiles;
	struct ss_kind *kinds;
	size_t nkinds, cap_kinds;
	bool has_plumb, plumb_timeline;
	char *plumb_unit, *exporter, *name;
	double plumb_interval;
	struct u32vec stack;      /* scratch: one sample's frame ids */
	struct u32vec prev, prev_nodes; /* the previous sample's frame ids and the node after each */
	struct ss_cols c;
	size_t idx;               /* the profile being read */
};

static bool ss_fail(struct ss_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool ss_fail(struct ss_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	perr_format_once(r->e, &r->j.failed, "malformed speedscope file", fmt, ap);
	va_end(ap);
	return false;
}

static bool ss_nomem(struct ss_reader *r)
{
	if (!r->j.failed)
		perr_set(r->e, PLUMB_ENOMEM, "out of memory reading a speedscope file");
	r->j.failed = true;
	return false;
}

/* Nanoseconds per unit for time units; 0 for "none", "bytes" and anything else (weights kept as counts). */
static double unit_ns(const char *unit)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = { { "nanoseconds", 1 }, { "microseconds", 1e3 }, { "milliseconds", 1e6 }, { "seconds", 1e9 } };
	for (size_t i = 0; unit && i < sizeof units / sizeof units[0]; i++)
		if (strcmp(unit, units[i].name) == 0)
			return units[i].ns;
	return 0;
}

/* ---- small values ---- */

/* A string value into *out (malloc'd); with `nullable`, null reads as absent. */
static bool get_string(struct ss_reader *r, char **out, bool *is_string)
{
	free(*out);
	*out = NULL;
	*is_string = jr_peek(&r->j) == '"';
	if (!*is_string)
		return jr_skip(&r->j);
	struct sbuf sb = SBUF_INIT;
	if (!jr_string(&r->j, &sb, NULL, NULL, NULL)) {
		sbuf_release(&sb);
		return false;
	}
	*out = sbuf_detach(&sb, NULL);
	return *out || ss_nomem(r);
}

/* A number value; *is_number false (and the value skipped) for anything else. */
static bool get_number(struct ss_reader *r, double *out, bool *is_number)
{
	int c = jr_peek(&r->j);
	*is_number = c == '-' || (c >= '0' && c <= '9');
	if (!*is_number)
		return jr_skip(&r->j);
	return jr_number(&r->j, out);
}

/* Reads an object member by member. */
typedef bool (*member_fn)(struct ss_reader *r, const char *k, size_t kl);

static bool members(struct ss_reader *r, member_fn member)
{
	if (!jr_obj_begin(&r->j))
		return false;
	bool first = true;
	const char *k;
	size_t kl;
	int got;
	while ((got = jr_obj_next(&r->j, &first, &k, &kl)) == 1)
		if (!member(r, k, kl))
			return false;
	return got == 0;
}

/* ---- pass 1: frames, the profiles' types and units, plumb's keys ---- */

/* shared.frames[i]: a label name, and a file and line when the name lacks them. */
static bool read_frame(struct ss_reader *r, size_t i)
{
	if (jr_peek(&r->j) != '{')
		return ss_fail(r, "shared.frames[%zu] is not an object", i);
	char *name = NULL, *file = NULL;
	bool have_name = false, file_ok = true, line_ok = true, is, isn;
	double line = NAN;
	bool ok = jr_obj_begin(&r->j), first = true;
	const char *k;
	size_t kl;
	int got = 0;
	while (ok && (got = jr_obj_next(&r->j, &first, &k, &kl)) == 1) {
		if (jr_key_is(k, kl, "name")) {
			ok = get_string(r, &name, &have_name);
		} else if (jr_key_is(k, kl, "file")) {
			bool null = jr_peek(&r->j) == 'n';
			ok = get_string(r, &file, &is);
			file_ok = is || null;
		} else if (jr_key_is(k, kl, "line")) {
			bool null = jr_peek(&r->j) == 'n';
			ok = get_number(r, &line, &isn);
			line_ok = isn || null;
			if (null)
				line = NAN;
		} else {
			ok = jr_skip(&r->j);
		}
	}
	ok = ok && got == 0;
	if (ok && !have_name)
		ok = ss_fail(r, "shared.frames[%zu].name is missing or not a string", i);
	else if (ok && !file_ok)
		ok = ss_fail(r, "shared.frames[%zu].file is not a string", i);
	else if (ok && (!line_ok || (!isnan(line) && (line < 0 || line > UINT32_MAX || line != floor(line)))))
		ok = ss_fail(r, "shared.frames[%zu].line is not a line number", i);
	if (ok) {
		struct label_parts lp;
		label_parse(name, strlen(name), &lp);
		if (file && file[0]) {
			lp.file = file;
			lp.file_len = strlen(file);
			lp.line = isnan(line) ? 0 : (uint32_t)line;
		}
		uint32_t id = label_parts_frame(r->p, &lp);
		if (id == PROFILE_NOMEM || !ALLOC_GROW(r->frame_ids, r->nframes + 1, r->cap_frames))
			ok = ss_nomem(r);
		else
			r->frame_ids[r->nframes++] = id;
	}
	free(name);
	free(file);
	return ok;
}

static bool shared_member(struct ss_reader *r, const char *k, size_t kl)
{
	if (!jr_key_is(k, kl, "frames"))
		return jr_skip(&r->j);
	if (jr_peek(&r->j) != '[')
		return jr_skip(&r->j);
	r->has_frames = true;
	if (!jr_arr_begin(&r->j))
		return false;
	bool first = true;
	int got;
	while ((got = jr_arr_next(&r->j, &first)) == 1)
		if (!read_frame(r, r->nframes))
			return false;
	return got == 0;
}

/* A profile's type and unit (pass 1 skips the rest). */
static bool kind_member(struct ss_reader *r, const char *k, size_t kl)
{
	struct ss_kind *kd = &r->kinds[r->nkinds - 1];
	bool is;
	if (jr_key_is(k, kl, "type")) {
		char *t = NULL;
		if (!get_string(r, &t, &is))
			return false;
		bool sampled = is && strcmp(t, "sampled") == 0;
		kd->evented = is && strcmp(t, "evented") == 0;
		free(t);
		if (!sampled && !kd->evented)
			return ss_fail(r, "profiles[%zu].type is not \"sampled\" or \"evented\"", r->nkinds - 1);
		return true;
	}
	if (jr_key_is(k, kl, "unit")) {
		if (!get_string(r, &kd->unit, &is))
			return false;
		if (!is)
			return ss_fail(r, "profiles[%zu].unit is not a string", r->nkinds - 1);
		kd->unit_ns = unit_ns(kd->unit);
		return true;
	}
	return jr_skip(&r->j);
}

static bool plumb_member(struct ss_reader *r, const char *k, size_t kl)
{
	bool is;
	if (jr_key_is(k, kl, "weight_unit"))
		return get_string(r, &r->plumb_unit, &is);
	if (jr_key_is(k, kl, "timeline"))
		return jr_peek(&r->j) == 't' || jr_peek(&r->j) == 'f' ? jr_bool(&r->j, &r->plumb_timeline) : jr_skip(&r->j);
	if (jr_key_is(k, kl, "interval_ns"))
		return get_number(r, &r->plumb_interval, &is);
	return jr_skip(&r->j);
}

static bool pass1_member(struct ss_reader *r, const char *k, size_t kl)
{
	bool is;
	if (jr_key_is(k, kl, "shared")) {
		if (jr_peek(&r->j) != '{')
			return jr_skip(&r->j);
		r->has_shared = true;
		return members(r, shared_member);
	}
	if (jr_key_is(k, kl, "profiles")) {
		if (jr_peek(&r->j) != '[')
			return jr_skip(&r->j);
		r->has_profiles = true;
		if (!jr_arr_begin(&r->j))
			return false;
		bool first = true;
		int got;
		while ((got = jr_arr_next(&r->j, &first)) == 1) {
			if (!ALLOC_GROW(r->kinds, r->nkinds + 1, r->cap_kinds))
				return ss_nomem(r);
			memset(&r->kinds[r->nkinds++], 0, sizeof *r->kinds);
			if (jr_peek(&r->j) != '{')
				return jr_peek(&r->j) == -1 ? jr_skip(&r->j) /* the reader says where the text ends */
							    : ss_fail(r, "profiles[%zu] is not an object", r->nkinds - 1);
			if (!members(r, kind_member))
				return false;
		}
		return got == 0;
	}
	if (jr_key_is(k, kl, "plumb") && jr_peek(&r->j) == '{') {
		r->has_plumb = true;
		r->plumb_timeline = true;
		return members(r, plumb_member);
	}
	if (jr_key_is(k, kl, "exporter"))
		return get_string(r, &r->exporter, &is);
	if (jr_key_is(k, kl, "name"))
		return get_string(r, &r->name, &is);
	return jr_skip(&r->j);
}

/* ---- pass 2: the profiles ---- */

/* A non-negative finite number, or false with the message naming `what`. */
static bool get_pos(struct ss_reader *r, double *out, const char *what)
{
	bool is;
	if (!get_number(r, out, &is))
		return false;
	if (!is || !isfinite(*out) || *out < 0)
		return ss_fail(r, "profiles[%zu].%s is not a non-negative number", r->idx, what);
	return true;
}

/* samples: each a stack of frame indexes, outermost first, into its node. */
static bool read_samples(struct ss_reader *r)
{
	struct ss_cols *c = &r->c;
	if (jr_peek(&r->j) != '[')
		return ss_fail(r, "profiles[%zu].samples is missing or not an array", r->idx);
	c->has_samples = true;
	bool first = true;
	int got;
	if (!jr_arr_begin(&r->j))
		return false;
	while ((got = jr_arr_next(&r->j, &first)) == 1) {
		size_t i = c->nodes.n;
		if (jr_peek(&r->j) != '[')
			return ss_fail(r, "profiles[%zu].samples[%zu] is not an array", r->idx, i);
		r->stack.n = 0;
		bool f2 = true;
		int g2;
		if (!jr_arr_begin(&r->j))
			return false;
		while ((g2 = jr_arr_next(&r->j, &f2)) == 1) {
			double v;
			bool is;
			size_t k = r->stack.n;
			if (!get_number(r, &v, &is))
				return false;
			if (!is || !(v >= 0) || v >= (double)r->nframes || v != floor(v))
				return ss_fail(r, "profiles[%zu].samples[%zu][%zu] is not a frame index (%zu frames)", r->idx,
					       i, k, r->nframes);
			if (k >= FMT_MAX_FRAMES)
				return ss_fail(r, "profiles[%zu].samples[%zu] has more than %zu frames, the cap on one stack "
					       "(docs/design.md §6.6)", r->idx, i, (size_t)FMT_MAX_FRAMES);
			if (!u32vec_push(&r->stack, r->frame_ids[(size_t)v]))
				return ss_nomem(r);
		}
		if (g2 < 0)
			return false;
		/* the part shared with the previous sample is not looked up again */
		size_t k = 0, n = r->stack.n;
		while (k < n && k < r->prev.n && r->prev.v[k] == r->stack.v[k])
			k++;
		while (r->prev_nodes.n < n)
			if (!u32vec_push(&r->prev_nodes, 0))
				return ss_nomem(r);
		uint32_t st = k ? r->prev_nodes.v[k - 1] : PROFILE_ROOT;
		if (k < n)
			st = profile_stack_path(r->p, st, r->stack.v + k, n - k, r->prev_nodes.v + k);
		if (st == PROFILE_NOMEM || !u32vec_push(&c->nodes, st))
			return ss_nomem(r);
		struct u32vec t = r->prev; /* the stack becomes the previous one */
		r->prev = r->stack;
		r->stack = t;
	}
	return got == 0;
}

/* An array of numbers: weights (non-negative) or plumb's sample counts. */
static bool read_numbers(struct ss_reader *r, bool weights)
{
	struct ss_cols *c = &r->c;
	if (jr_peek(&r->j) != '[') {
		if (weights)
			return ss_fail(r, "profiles[%zu].weights is missing or not an array", r->idx);
		return jr_skip(&r->j);
	}
	if (weights)
		c->has_weights = true;
	bool first = true;
	int got;
	if (!jr_arr_begin(&r->j))
		return false;
	while ((got = jr_arr_next(&r->j, &first)) == 1) {
		double v;
		bool is;
		if (!get_number(r, &v, &is))
			return false;
		if (weights) {
			if (!is || !isfinite(v) || v < 0)
				return ss_fail(r, "profiles[%zu].weights[%zu] is not a non-negative number", r->idx,
					       c->nweights);
			if (!ALLOC_GROW(c->weights, c->nweights + 1, c->cap_weights))
				return ss_nomem(r);
			c->weights[c->nweights++] = v;
		} else {
			if (!ALLOC_GROW(c->counts, c->ncounts + 1, c->cap_counts))
				return ss_nomem(r);
			c->counts[c->ncounts++] = is && v > 0 && v < 9e18 ? (uint64_t)v : 0;
		}
	}
	return got == 0;
}

/* events: open and close events, checked as they come. */
static bool read_events(struct ss_reader *r)
{
	struct ss_cols *c = &r->c;
	if (jr_peek(&r->j) != '[')
		return ss_fail(r, "profiles[%zu].events is missing or not an array", r->idx);
	c->has_events = true;
	bool first = true;
	int got;
	if (!jr_arr_begin(&r->j))
		return false;
	while ((got = jr_arr_next(&r->j, &first)) == 1) {
		size_t i = c->nevents;
		if (jr_peek(&r->j) != '{')
			return ss_fail(r, "profiles[%zu].events[%zu] is not an object", r->idx, i);
		char *type = NULL;
		double frame = NAN, at = NAN;
		bool has_type = false, has_frame = false, has_at = false, f2 = true, ok = jr_obj_begin(&r->j);
		const char *k;
		size_t kl;
		int g2 = 0;
		while (ok && (g2 = jr_obj_next(&r->j, &f2, &k, &kl)) == 1) {
			if (jr_key_is(k, kl, "type"))
				ok = get_string(r, &type, &has_type);
			else if (jr_key_is(k, kl, "frame"))
				ok = get_number(r, &frame, &has_frame);
			else if (jr_key_is(k, kl, "at"))
				ok = get_number(r, &at, &has_at);
			else
				ok = jr_skip(&r->j);
		}
		bool open = has_type && strcmp(type, "O") == 0, close = has_type && strcmp(type, "C") == 0;
		free(type);
		if (!ok || g2 < 0)
			return false;
		if (!open && !close)
			return ss_fail(r, "profiles[%zu].events[%zu].type is not \"O\" or \"C\"", r->idx, i);
		if (!has_frame || !(frame >= 0) || frame >= (double)r->nframes || frame != floor(frame))
			return ss_fail(r, "profiles[%zu].events[%zu].frame is not a frame index (%zu frames)", r->idx, i,
				       r->nframes);
		if (!has_at || !isfinite(at) || at < 0)
			return ss_fail(r, "profiles[%zu].events[%zu].at is not a non-negative number", r->idx, i);
		if (!ALLOC_GROW(c->events, c->nevents + 1, c->cap_events))
			return ss_nomem(r);
		c->events[c->nevents++] = (struct ss_event){ at, (uint32_t)frame, open };
	}
	return got == 0;
}

static bool thread_member(struct ss_reader *r, const char *k, size_t kl)
{
	struct ss_cols *c = &r->c;
	bool is;
	if (jr_key_is(k, kl, "pid"))
		return get_number(r, &c->pid, &is);
	if (jr_key_is(k, kl, "tid"))
		return get_number(r, &c->tid, &is);
	if (jr_key_is(k, kl, "name"))
		return get_string(r, &c->tname, &is);
	if (jr_key_is(k, kl, "process"))
		return get_string(r, &c->pname, &is);
	return jr_skip(&r->j);
}

static bool profile_member(struct ss_reader *r, const char *k, size_t kl)
{
	struct ss_cols *c = &r->c;
	bool is;
	if (jr_key_is(k, kl, "samples"))
		return read_samples(r);
	if (jr_key_is(k, kl, "weights"))
		return read_numbers(r, true);
	if (jr_key_is(k, kl, "plumb_samples"))
		return read_numbers(r, false);
	if (jr_key_is(k, kl, "events"))
		return read_events(r);
	if (jr_key_is(k, kl, "startValue"))
		return get_pos(r, &c->start, "startValue");
	if (jr_key_is(k, kl, "endValue"))
		return get_pos(r, &c->end, "endValue");
	if (jr_key_is(k, kl, "name")) {
		if (!get_string(r, &c->name, &is))
			return false;
		return is || ss_fail(r, "profiles[%zu].name is not a string", r->idx);
	}
	if (jr_key_is(k, kl, "plumb_thread") && jr_peek(&r->j) == '{') {
		c->has_thread = true;
		return members(r, thread_member);
	}
	return jr_skip(&r->j);
}

/* The thread of profile idx: plumb's plumb_thread, or plumb's "name (tid)", or the profile's index as a made-up
 * tid that no earlier profile has taken. */
static uint32_t profile_thread_of(struct ss_reader *r, size_t nprofiles)
{
	struct ss_cols *c = &r->c;
	if (c->has_thread) {
		if (!(c->pid >= 0 && c->pid <= UINT32_MAX) || !(c->tid >= 0 && c->tid <= UINT32_MAX)) {
			ss_fail(r, "profiles[%zu].plumb_thread has a pid or tid out of range", r->idx);
			return PROFILE_NOMEM;
		}
		uint32_t id = profile_thread(r->p, (uint32_t)c->pid, (uint32_t)c->tid, c->tname ? c->tname : "");
		if (id != PROFILE_NOMEM && c->pname && !profile_thread_set_process(r->p, id, c->pname, strlen(c->pname)))
			id = PROFILE_NOMEM;
		return id == PROFILE_NOMEM ? (ss_nomem(r), PROFILE_NOMEM) : id;
	}
	const char *name = c->name ? c->name : "";
	size_t n = strlen(name), name_len;
	uint32_t tid;
	char *copy = strdup(name);
	if (!copy) {
		ss_nomem(r);
		return PROFILE_NOMEM;
	}
	uint32_t id;
	if (label_thread_root(name, n, &name_len, &tid) && tid) {
		copy[name_len] = '\0';
		id = profile_thread(r->p, 0, tid, copy);
	} else {
		/* the profile's index (0 for a single profile, as plumb writes the merged "all" thread), moved on by
		 * the number of profiles while another profile has it */
		size_t before = profile_nthreads(r->p);
		uint64_t t = r->idx;
		for (;;) {
			id = profile_thread(r->p, 0, (uint32_t)t, copy);
			if (id == PROFILE_NOMEM || id >= before || t + nprofiles >= UINT32_MAX)
				break;
			t += nprofiles;
		}
	}
	free(copy);
	if (id == PROFILE_NOMEM)
		ss_nomem(r);
	return id;
}

/* Adds the interval [from, to) (in the profile's unit) of `stack` on `thread` over `samples` samples
 * (SS_AS_WEIGHT: the weight is a count of samples): scaled to nanoseconds for time units, rounded at both ends
 * so consecutive intervals sum exactly. */
static bool add_interval(struct ss_reader *r, uint32_t stack, uint32_t thread, double from, double to, double scale,
			 uint64_t samples, const char *where, size_t i)
{
	double a = from * scale, b = to * scale;
	if (b > SS_MAX_POS)
		return ss_fail(r, "profiles[%zu].%s[%zu]: weights add up to more than plumb can count", r->idx, where, i);
	uint64_t ia = (uint64_t)llround(a), ib = (uint64_t)llround(b);
	if (ib <= ia)
		return true;
	if (!profile_add_weighted(r->p, stack, thread, ia, ib - ia, samples == SS_AS_WEIGHT ? ib - ia : samples)) {
		if (profile_overflowed(r->p))
			return ss_fail(r, "profiles[%zu].%s[%zu]: weights add up to more than plumb can count", r->idx,
				       where, i);
		return ss_nomem(r);
	}
	return true;
}

/* A sampled profile: each sample is one sample (or plumb's count of them, or as many as a count unit says). */
static bool finish_sampled(struct ss_reader *r, uint32_t thread, const struct ss_kind *kd, bool counts_are_weights)
{
	struct ss_cols *c = &r->c;
	if (!c->has_samples)
		return ss_fail(r, "profiles[%zu].samples is missing or not an array", r->idx);
	if (!c->has_weights)
		return ss_fail(r, "profiles[%zu].weights is missing or not an array", r->idx);
	size_t n = c->nodes.n;
	if (c->nweights != n)
		return ss_fail(r, "profiles[%zu] has %zu samples but %zu weights", r->idx, n, c->nweights);
	bool counts = c->ncounts == n;
	double scale = kd->unit_ns && !counts_are_weights ? kd->unit_ns : 1, pos = c->start;
	for (size_t i = 0; i < n; i++) {
		uint64_t n_i = counts ? c->counts[i] : 0;
		double wv = counts_are_weights && n_i ? (double)n_i : c->weights[i];
		uint64_t ns = n_i ? n_i : !kd->unit_ns || counts_are_weights ? SS_AS_WEIGHT : 1;
		if (!add_interval(r, c->nodes.v[i], thread, pos, pos + wv, scale, ns, "weights", i))
			return false;
		pos += wv;
	}
	return true;
}

/* An evented profile: the stack open between two events weighs the time between them. It has no samples: a time
 * unit's weight is a time over no samples (nothing invents a count of them); a count unit's weight is itself the
 * count. */
static bool finish_evented(struct ss_reader *r, uint32_t thread, const struct ss_kind *kd)
{
	uint64_t evented_samples = kd->unit_ns ? 0 : SS_AS_WEIGHT;
	struct ss_cols *c = &r->c;
	if (!c->has_events)
		return ss_fail(r, "profiles[%zu].events is missing or not an array", r->idx);
	double scale = kd->unit_ns ? kd->unit_ns : 1, prev = c->start;
	struct u32vec open = U32VEC_INIT;
	uint32_t st = PROFILE_ROOT;
	bool ok = true;
	for (size_t i = 0; ok && i < c->nevents; i++) {
		const struct ss_event *ev = &c->events[i];
		if (ev->at < prev) {
			ok = ss_fail(r, "profiles[%zu].events[%zu].at goes back in time (%g after %g)", r->idx, i, ev->at,
				     prev);
			break;
		}
		if (open.n && !(ok = add_interval(r, st, thread, prev, ev->at, scale, evented_samples, "events", i)))
			break;
		prev = ev->at;
		if (ev->open) {
			if (open.n >= FMT_MAX_FRAMES) {
				ok = ss_fail(r, "profiles[%zu].events[%zu] opens more than %zu frames, the cap on one stack",
					     r->idx, i, (size_t)FMT_MAX_FRAMES);
				break;
			}
			st = profile_stack(r->p, st, r->frame_ids[ev->frame]);
			if (st == PROFILE_NOMEM || !u32vec_push(&open, ev->frame))
				ok = ss_nomem(r);
		} else if (!open.n) {
			ok = ss_fail(r, "profiles[%zu].events[%zu] closes frame %u but no frame is open", r->idx, i,
				     ev->frame);
		} else if (open.v[open.n - 1] != ev->frame) {
			ok = ss_fail(r, "profiles[%zu].events[%zu] closes frame %u but frame %u is open", r->idx, i,
				     ev->frame, open.v[open.n - 1]);
		} else {
			open.n--;
			st = profile_stack_parent(r->p, st);
		}
	}
	/* a frame still open at the end is an incomplete trace: speedscope refuses it, and so does plumb */
	if (ok && open.n)
		ok = ss_fail(r, "profiles[%zu]: frame %u is opened and never closed (%zu frames open at the end)",
			     r->idx, open.v[open.n - 1], open.n);
	u32vec_release(&open);
	return ok;
}

static void cols_reset(struct ss_cols *c)
{
	u32vec_release(&c->nodes);
	free(c->weights);
	free(c->counts);
	free(c->events);
	free(c->name);
	free(c->tname);
	free(c->pname);
	memset(c, 0, sizeof *c);
}

static bool pass2_member(struct ss_reader *r, const char *k, size_t kl)
{
	if (!jr_key_is(k, kl, "profiles") || jr_peek(&r->j) != '[')
		return jr_skip(&r->j);
	bool counts_are_weights = r->plumb_unit && strcmp(r->plumb_unit, "samples") == 0;
	bool first = true;
	int got;
	if (!jr_arr_begin(&r->j))
		return false;
	for (r->idx = 0; (got = jr_arr_next(&r->j, &first)) == 1; r->idx++) {
		cols_reset(&r->c);
		jr_where(&r->j, "profiles[%zu]", r->idx);
		if (!members(r, profile_member))
			return false;
		const struct ss_kind *kd = &r->kinds[r->idx];
		uint32_t thread = profile_thread_of(r, r->nkinds);
		if (thread == PROFILE_NOMEM)
			return false;
		if (!(kd->evented ? finish_evented(r, thread, kd) : finish_sampled(r, thread, kd, counts_are_weights)))
			return false;
	}
	return got == 0;
}

static void reader_release(struct ss_reader *r)
{
	cols_reset(&r->c);
	for (size_t i = 0; i < r->nkinds; i++)
		free(r->kinds[i].unit);
	free(r->kinds);
	free(r->frame_ids);
	free(r->plumb_unit);
	free(r->exporter);
	free(r->name);
	u32vec_release(&r->stack);
	u32vec_release(&r->prev);
	u32vec_release(&r->prev_nodes);
	jr_release(&r->j);
}

/* The profile's metadata: the backend, the weight unit (plumb's own, else the first unit that is not "none"),
 * plumb's period, and the command plumb named the file after. */
static enum plumb_err set_meta(struct ss_reader *r)
{
	struct profile_meta *m = profile_meta(r->p);
	const char *unit = r->plumb_unit;
	for (size_t i = 0; !unit && i < r->nkinds; i++)
		if (r->kinds[i].unit && strcmp(r->kinds[i].unit, "none") != 0)
			unit = r->kinds[i].unit_ns ? "nanoseconds" : r->kinds[i].unit;
	m->backend = profile_intern_cstr(r->p, "speedscope");
	if (unit)
		m->weight_unit = profile_intern_cstr(r->p, unit);
	if (r->plumb_interval > 0 && r->plumb_interval < 1.8e19)
		m->interval_ns = (uint64_t)r->plumb_interval;
	if (r->exporter && strcmp(r->exporter, "plumb") == 0 && r->name && strcmp(r->name, "plumb profile") != 0)
		m->command = profile_intern_cstr(r->p, r->name);
	if (m->backend == PROFILE_NOMEM || m->weight_unit == PROFILE_NOMEM || m->command == PROFILE_NOMEM)
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory reading a speedscope file");
	return PLUMB_OK;
}

enum plumb_err fmt_speedscope_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				   struct perr *e)
{
	struct ss_reader r;
	memset(&r, 0, sizeof r);
	r.p = p;
	r.e = e;
	jr_init(&r.j, buf, len, "malformed speedscope file", e);
	bool ok = jr_peek(&r.j) == '{' ? members(&r, pass1_member) : ss_fail(&r, "the top level is not an object");
	if (ok && !r.has_shared)
		ok = ss_fail(&r, "\"shared\" is missing or not an object");
	else if (ok && !r.has_frames)
		ok = ss_fail(&r, "\"shared.frames\" is missing or not an array");
	else if (ok && !r.has_profiles)
		ok = ss_fail(&r, "\"profiles\" is missing or not an array");
	if (ok) {
		/* the timeline is kept only when every profile is in a time unit (and plumb's were timed) */
		bool timed = opts && opts->keep_timeline && (!r.has_plumb || r.plumb_timeline);
		for (size_t i = 0; i < r.nkinds; i++)
			timed = timed && r.kinds[i].unit_ns;
		profile_keep_timeline(p, timed);
		jr_release(&r.j);
		jr_init(&r.j, buf, len, "malformed speedscope file", e);
		ok = members(&r, pass2_member) && (jr_at_end(&r.j) || jr_fail(&r.j, "trailing data after the document"));
	}
	enum plumb_err rc = ok ? set_meta(&r) : (e->code ? e->code : PLUMB_EFORMAT);
	reader_release(&r);
	return rc;
}
