/* speedscope.c — the speedscope file format (https://www.speedscope.app/file-format-schema.json): one shared
 * frame table and one "sampled" profile per thread. A speedscope frame is a function — `name` (the label
 * without its location) and `file`, with `line` when the function had one line — so the frames of one function
 * at different addresses and lines are one frame (speedscope's sandwich view lists it once). Weights are in the profile's unit: nanoseconds or bytes as they are, sample counts as nanoseconds when
 * the sampling period is known and as "none" (speedscope's unit for plain counts) when it is not. What the
 * schema has no place for travels in keys speedscope ignores ("plumb", "plumb_thread", "plumb_samples"), so
 * plumb reads its own files back whole. With a timeline the samples are in time order; without one each
 * distinct stack appears once with its aggregated weight. Nothing here recurses. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/intern.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "format/out.h"
#include "profile/label.h"

/* The speedscope frames: one per distinct (name, file) — a function, whatever lines its samples were at, so the
 * sandwich view lists each function once — ids in first-seen frame order. A frame's line is written when every
 * frame of its function had that one line. */
struct ss_frames {
	uint32_t *of_frame; /* profile frame id -> speedscope frame index */
	struct interner keys;
	size_t n;
};

/* The key of frame f (name, file: with their NULs, so the parts never blur) into key, its redacted file into
 * file. */
static void ss_frame_key(const struct profile *p, const struct frame *fr, const struct label_table *names, size_t f,
			 struct sbuf *key, struct sbuf *file)
{
	sbuf_reset(key);
	sbuf_reset(file);
	if (fr->file)
		redact_path_append(file, profile_str(p, fr->file), strlen(profile_str(p, fr->file)));
	sbuf_add(key, names->labels[f], names->lens[f] + 1);
	sbuf_add(key, file->buf, file->len + 1);
}

static bool ss_frames_build(struct fmt_out *o, const struct profile *p, unsigned flags, struct ss_frames *sf)
{
	size_t nf = profile_nframes(p);
	struct label_table *names = label_table_build(p, flags | LABEL_NO_FILE);
	struct sbuf key = SBUF_INIT, file = SBUF_INIT;
	sf->of_frame = malloc((nf ? nf : 1) * sizeof *sf->of_frame);
	uint32_t *first = malloc((nf ? nf : 1) * sizeof *first); /* speedscope frame -> its first profile frame */
	uint32_t *line = malloc((nf ? nf : 1) * sizeof *line);   /* its one line, 0 unknown, UINT32_MAX several */
	sf->keys = (struct interner)INTERNER_INIT;
	bool ok = names && sf->of_frame && first && line;
	for (size_t f = 0; ok && f < nf; f++) {
		const struct frame *fr = profile_frame_get(p, (uint32_t)f);
		uint32_t ln = flags & LABEL_NO_LINES ? 0 : fr->line;
		ss_frame_key(p, fr, names, f, &key, &file);
		bool added;
		uint32_t id = key.oom || file.oom ? INTERN_NOMEM : intern(&sf->keys, key.buf, key.len, &added);
		if (id == INTERN_NOMEM) {
			ok = false;
			break;
		}
		sf->of_frame[f] = id;
		if (added) {
			first[id] = (uint32_t)f;
			line[id] = ln;
		} else if (line[id] != ln) {
			line[id] = UINT32_MAX;
		}
	}
	sf->n = ok ? intern_count(&sf->keys) : 0;
	for (size_t id = 0; ok && id < sf->n; id++) {
		const struct frame *fr = profile_frame_get(p, first[id]);
		ss_frame_key(p, fr, names, first[id], &key, &file);
		fmt_out_str(o, id ? ",{\"name\":" : "{\"name\":");
		fmt_out_json(o, names->labels[first[id]], names->lens[first[id]], false); /* labels are redacted already */
		if (file.len) {
			fmt_out_str(o, ",\"file\":");
			fmt_out_json(o, file.buf, file.len, false);
			if (line[id] && line[id] != UINT32_MAX) {
				fmt_out_str(o, ",\"line\":");
				fmt_out_u64(o, line[id]);
			}
		}
		fmt_out_ch(o, '}');
	}
	free(first);
	free(line);
	label_table_free(names);
	sbuf_release(&key);
	sbuf_release(&file);
	return ok;
}

/* How weights are written: the speedscope unit and the factor from the profile's weight. */
struct ss_unit {
	const char *unit;
	uint64_t factor;
};

static struct ss_unit ss_unit_of(const struct profile *p)
{
	const struct profile_meta *m = profile_meta_const(p);
	const char *u = profile_str(p, m->weight_unit);
	if (strcmp(u, "nanoseconds") == 0)
		return (struct ss_unit){ "nanoseconds", 1 };
	if (strcmp(u, "bytes") == 0)
		return (struct ss_unit){ "bytes", 1 };
	if ((!u[0] || strcmp(u, "samples") == 0) && m->interval_ns &&
	    m->interval_ns <= PROFILE_MAX_WEIGHT / (profile_total_weight(p) ? profile_total_weight(p) : 1))
		return (struct ss_unit){ "nanoseconds", m->interval_ns };
	return (struct ss_unit){ "none", 1 };
}

/* One thread's sampled profile: its samples (stacks of speedscope frame indexes, outermost first), weights and
 * sample counts, from the timeline or the aggregated counts. */
static bool write_thread(struct fmt_out *o, const struct profile *p, uint32_t t, const struct ss_frames *sf,
			 struct ss_unit u, uint64_t total, const size_t *order, uint32_t **scratch, size_t *cap)
{
	size_t nc, nt;
	const struct profile_count *counts = profile_counts(p, &nc);
	const struct profile_sample *tl = profile_timeline(p, &nt);
	size_t n = nt ? nt : nc;
	const struct profile_thread *th = profile_thread_get(p, t);
	const char *tname = profile_str(p, th->name), *proc = profile_process_name(p, t);
	char name[300];
	if (th->tid)
		snprintf(name, sizeof name, "%s (%u)", tname[0] ? tname : "thread", th->tid);
	else
		snprintf(name, sizeof name, "%s", tname[0] ? tname : "all");
	fmt_out_str(o, "{\"type\":\"sampled\",\"name\":");
	fmt_out_json(o, name, strlen(name), true);
	fmt_out_str(o, ",\"unit\":\"");
	fmt_out_str(o, u.unit);
	fmt_out_str(o, "\",\"startValue\":0,\"endValue\":");
	fmt_out_u64(o, total * u.factor);
	fmt_out_str(o, ",\"plumb_thread\":{\"pid\":");
	fmt_out_u64(o, th->pid);
	fmt_out_str(o, ",\"tid\":");
	fmt_out_u64(o, th->tid);
	fmt_out_str(o, ",\"name\":");
	fmt_out_json(o, tname, strlen(tname), true);
	fmt_out_str(o, ",\"process\":");
	fmt_out_json(o, proc, strlen(proc), true);
	fmt_out_str(o, "},\"samples\":[");
	bool first = true;
	for (size_t at = 0; at < n; at++) {
		size_t i = nt ? order[at] : at;
		uint32_t st = nt ? tl[i].stack : counts[i].stack, thr = nt ? tl[i].thread : counts[i].thread;
		if (thr != t || !(nt ? tl[i].weight : counts[i].weight))
			continue;
		uint32_t depth = profile_stack_depth(p, st), k = depth;
		if (!ALLOC_GROW(*scratch, depth, *cap))
			return false;
		for (uint32_t s = st; s != PROFILE_ROOT; s = profile_stack_parent(p, s))
			(*scratch)[--k] = sf->of_frame[profile_stack_frame(p, s)];
		fmt_out_str(o, first ? "[" : ",[");
		first = false;
		for (k = 0; k < depth; k++) {
			if (k)
				fmt_out_ch(o, ',');
			fmt_out_u64(o, (*scratch)[k]);
		}
		fmt_out_ch(o, ']');
	}
	for (int pass = 0; pass < 2; pass++) {
		fmt_out_str(o, pass ? "],\"plumb_samples\":[" : "],\"weights\":[");
		first = true;
		for (size_t at = 0; at < n; at++) {
			size_t i = nt ? order[at] : at;
			uint32_t thr = nt ? tl[i].thread : counts[i].thread;
			uint64_t w = nt ? tl[i].weight : counts[i].weight;
			if (thr != t || !w)
				continue;
			if (!first)
				fmt_out_ch(o, ',');
			first = false;
			fmt_out_u64(o, pass ? (nt ? tl[i].samples : counts[i].samples) : w * u.factor);
		}
	}
	fmt_out_str(o, "]}");
	return true;
}

enum plumb_err fmt_speedscope_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts,
				    struct perr *e)
{
	struct fmt_out *o = fmt_out_new(out, false);
	size_t nthreads = profile_nthreads(p), nc, scap = 0;
	const struct profile_count *counts = profile_counts(p, &nc);
	uint64_t *tw = calloc(nthreads ? nthreads : 1, sizeof *tw);
	uint32_t *scratch = NULL;
	struct ss_frames sf = { 0 };
	size_t ntl;
	size_t *order = profile_timeline_order(p, &ntl); /* samples in time order, whatever order they were added in */
	if (o)
		fmt_out_progress(o, opts->progress);
	if (!o || !tw || (ntl && !order)) {
		free(tw);
		free(order);
		if (o)
			fmt_out_close(o, e);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	const struct profile_meta *m = profile_meta_const(p);
	struct ss_unit u = ss_unit_of(p);
	const char *cmd = profile_str(p, m->command), *wu = profile_str(p, m->weight_unit);
	fmt_out_str(o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"plumb\","
		       "\"name\":");
	fmt_out_json(o, cmd[0] ? cmd : "plumb profile", strlen(cmd[0] ? cmd : "plumb profile"), true);
	fmt_out_str(o, ",\"activeProfileIndex\":0,\"plumb\":{\"weight_unit\":");
	fmt_out_json(o, wu[0] ? wu : "samples", strlen(wu[0] ? wu : "samples"), false);
	fmt_out_str(o, ",\"interval_ns\":");
	fmt_out_u64(o, m->interval_ns);
	fmt_out_str(o, profile_has_times(p) ? ",\"timeline\":true}" : ",\"timeline\":false}");
	fmt_out_str(o, ",\"shared\":{\"frames\":[");
	bool ok = ss_frames_build(o, p, opts->label_flags, &sf);
	fmt_out_str(o, "]},\"profiles\":[");
	for (size_t i = 0; i < nc; i++)
		tw[counts[i].thread] += counts[i].weight;
	bool first_profile = true;
	for (size_t t = 0; ok && t < nthreads; t++) {
		if (!tw[t])
			continue;
		if (!first_profile)
			fmt_out_ch(o, ',');
		first_profile = false;
		ok = write_thread(o, p, (uint32_t)t, &sf, u, tw[t], order, &scratch, &scap);
	}
	fmt_out_str(o, "]}\n");
	if (!ok)
		fmt_out_fail(o);
	free(tw);
	free(order);
	free(scratch);
	free(sf.of_frame);
	interner_release(&sf.keys);
	return fmt_out_close(o, e);
}
