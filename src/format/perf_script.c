/* perf_script.c — reads `perf script` text (stackcollapse-perf semantics: format/perf_script_parse.c and
 * format/perf_script_frames.c) from a stream into the one profile model, block by block, and says what its
 * weights are: an event's period in the event's own unit (nanoseconds for cpu-clock and task-clock, "cycles"
 * for cycles, ...), each event one sample, so a profile of 1,186 events of about a million nanoseconds each says
 * 1,186 samples and 1.19 s; without periods each event weighs one sample. */
#include "format/perf_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/stream.h"

/* The weight unit of an event kept: its name without modifiers ("cycles:u" -> "cycles"); the two clock events
 * count nanoseconds. */
static void event_unit(const char *ev, size_t len, char *out, size_t n)
{
	const char *colon = memchr(ev, ':', len);
	size_t l = colon ? (size_t)(colon - ev) : len;
	if ((l == 9 && memcmp(ev, "cpu-clock", 9) == 0) || (l == 10 && memcmp(ev, "task-clock", 10) == 0))
		snprintf(out, n, "nanoseconds");
	else
		snprintf(out, n, "%.*s", (int)(l > 60 ? 60 : l), ev);
}

/* The warnings kept while reading, then the profile's metadata: backend, clock origin, the event type kept and
 * what the weights are. */
static void ps_finish(const struct ps *s, struct profile *p, const struct fmt_read_opts *opts)
{
	if (opts->warn && s->warned_event)
		opts->warn(opts->warn_ctx, s->msg_event);
	if (opts->warn && s->warned_stack)
		opts->warn(opts->warn_ctx, s->msg_stack);
	struct profile_meta *m = profile_meta(p);
	m->backend = profile_intern_cstr(p, "perf-script");
	if (s->have_time)
		m->clock_origin_ns = s->first_time;
	if (!s->have_event || !s->event_len)
		return;
	char ev[128], unit[64];
	snprintf(ev, sizeof ev, "%.*s", (int)(s->event_len > 100 ? 100 : s->event_len), s->event);
	m->mode = profile_intern_cstr(p, ev);
	if (s->samples && s->with_period == s->samples) {
		event_unit(s->event, s->event_len, unit, sizeof unit);
		m->weight_unit = profile_intern_cstr(p, unit);
		/* the mean period of a clock event is its sampling period */
		if (strcmp(unit, "nanoseconds") == 0)
			m->interval_ns = (profile_total_weight(p) + s->samples / 2) / s->samples;
	}
	if (s->filtered && opts->warn) {
		char msg[256];
		snprintf(msg, sizeof msg,
			 "kept only events of the first type seen (%s); skipped %llu events of other types", ev,
			 (unsigned long long)s->filtered);
		opts->warn(opts->warn_ctx, msg);
	}
}

enum plumb_err fmt_perf_script_read_stream(struct fmt_stream *st, const struct fmt_read_opts *opts, struct profile *p,
					   struct perr *e)
{
	struct ps s;
	ps_init(&s, p, opts, e);
	st->text = true;
	const char *block;
	size_t len;
	int got = 0;
	while (!s.oom && !s.capped && (got = fmt_stream_lines(st, &block, &len, e)) == 1) {
		/* a block ends with a newline (or the text): the runs of white space ps_run trims end with it */
		ps_run(&s, block, block + len);
	}
	if (!s.oom && !s.capped && got == 0)
		ps_end(&s);
	enum plumb_err rc = PLUMB_OK;
	if (got < 0 || s.capped)
		rc = e->code ? e->code : PLUMB_EFORMAT;
	else if (s.oom)
		rc = profile_overflowed(p) ? perr_set(e, PLUMB_EFORMAT, "the periods add up past %llu, more than a "
					   "profile can count", (unsigned long long)PROFILE_MAX_WEIGHT)
					   : perr_set(e, PLUMB_ENOMEM, "out of memory reading perf script text");
	else if (s.events && !s.sym_lines)
		rc = s.nosym_lines ? perr_set(e, PLUMB_EFORMAT, "perf script text without function names: its stack "
					      "lines have no symbol (run perf script with the sym field, "
					      "-F ...,ip,sym)")
				   : perr_set(e, PLUMB_EFORMAT, "perf script events without stack lines: the ip and "
					      "sym fields are missing (run perf script with -F ...,ip,sym)");
	else if (s.events && !s.samples)
		rc = perr_set(e, PLUMB_EFORMAT, "none of %llu perf script events had a stack that could be read",
			      (unsigned long long)s.events);
	else
		ps_finish(&s, p, opts);
	ps_release(&s);
	return rc;
}

enum plumb_err fmt_perf_script_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				    struct perr *e)
{
	return fmt_stream_read_buf(buf, len, "perf script text", fmt_perf_script_read_stream, opts, p, e);
}
