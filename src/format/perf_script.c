/* perf_script.c — reads `perf script` text (stackcollapse-perf semantics: format/perf_script_parse.c and
 * format/perf_script_frames.c) into the one profile model. A big text is split at a blank line near its middle
 * and read by two threads into two profiles, the second merged into the first in order; the second part waits
 * for the first part's first event type, which filters both. */
#include "format/perf_script.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *ps_thread(void *arg)
{
	struct ps *s = arg;
	ps_run(s, s->part, s->part_end);
	return NULL;
}

/* Adds everything src holds to dst (frames, stacks, threads, samples). src comes from the later part of the
 * same text, so appending keeps first-seen order and time order. Strings hold no NUL (checked by the caller). */
static bool merge_into(struct profile *dst, const struct profile *src)
{
	size_t nf = profile_nframes(src), ns = profile_nstacks(src), nt = profile_nthreads(src);
	uint32_t *fmap = malloc((nf ? nf : 1) * sizeof *fmap), *smap = malloc(ns * sizeof *smap);
	uint32_t *tmap = malloc((nt ? nt : 1) * sizeof *tmap);
	bool ok = fmap && smap && tmap;
	for (size_t f = 0; ok && f < nf; f++) {
		struct frame fr = *profile_frame_get(src, (uint32_t)f);
		fr.func = profile_intern_cstr(dst, profile_str(src, fr.func));
		fr.file = profile_intern_cstr(dst, profile_str(src, fr.file));
		fr.module = profile_intern_cstr(dst, profile_str(src, fr.module));
		ok = fr.func != PROFILE_NOMEM && fr.file != PROFILE_NOMEM && fr.module != PROFILE_NOMEM &&
		     (fmap[f] = profile_frame(dst, &fr)) != PROFILE_NOMEM;
	}
	if (ok)
		smap[0] = PROFILE_ROOT;
	for (size_t i = 1; ok && i < ns; i++)
		ok = (smap[i] = profile_stack(dst, smap[profile_stack_parent(src, (uint32_t)i)],
					      fmap[profile_stack_frame(src, (uint32_t)i)])) != PROFILE_NOMEM;
	for (size_t t = 0; ok && t < nt; t++) {
		const struct profile_thread *th = profile_thread_get(src, (uint32_t)t);
		ok = (tmap[t] = profile_thread(dst, th->pid, th->tid, profile_str(src, th->name))) != PROFILE_NOMEM;
	}
	size_t n;
	if (ok && profile_has_timeline(src)) {
		const struct profile_sample *tl = profile_timeline(src, &n);
		for (size_t i = 0; ok && i < n; i++)
			ok = profile_add_sample(dst, smap[tl[i].stack], tmap[tl[i].thread], tl[i].time_ns, tl[i].weight);
	} else if (ok) {
		const struct profile_count *c = profile_counts(src, &n);
		for (size_t i = 0; ok && i < n; i++)
			ok = profile_add_sample(dst, smap[c[i].stack], tmap[c[i].thread], 0, c[i].weight);
	}
	free(fmap);
	free(smap);
	free(tmap);
	return ok;
}

/* Where a big text splits in two for two threads: just after a blank line near the middle (every parser
 * state resets there). 0 when the text is small, holds NUL bytes, or has no such point. */
static size_t split_point(const char *buf, size_t len)
{
	if (len < ((size_t)16 << 20) || memchr(buf, '\0', len))
		return 0;
	const char *mid = buf + len / 2;
	const char *bl = memmem(mid, (size_t)(buf + len - mid), "\n\n", 2);
	return bl ? (size_t)(bl + 2 - buf) : 0;
}

/* Takes in what the second part's reader s2 learnt (after merge_into took its profile): its failure, filtered
 * events, and whatever s had not seen yet (first time, event type, first warnings). */
static void ps_absorb(struct ps *s, const struct ps *s2)
{
	s->oom |= s2->oom;
	s->filtered += s2->filtered;
	if (!s->have_time && s2->have_time) {
		s->have_time = true;
		s->first_time = s2->first_time;
	}
	if (!s->have_event && s2->have_event) {
		s->have_event = true;
		s->event = s2->event;
		s->event_len = s2->event_len;
	}
	if (!s->warned_event && s2->warned_event) {
		s->warned_event = true;
		memcpy(s->msg_event, s2->msg_event, WARN_MAX);
	}
	if (!s->warned_stack && s2->warned_stack) {
		s->warned_stack = true;
		memcpy(s->msg_stack, s2->msg_stack, WARN_MAX);
	}
}

/* The warnings kept while reading, then the profile's metadata: backend, clock origin, the event type kept. */
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
	char ev[128];
	snprintf(ev, sizeof ev, "%.*s", (int)(s->event_len > 100 ? 100 : s->event_len), s->event);
	m->mode = profile_intern_cstr(p, ev);
	if (s->filtered && opts->warn) {
		char msg[256];
		snprintf(msg, sizeof msg,
			 "kept only events of the first type seen (%s); skipped %llu events of other types", ev,
			 (unsigned long long)s->filtered);
		opts->warn(opts->warn_ctx, msg);
	}
}

enum plumb_err fmt_perf_script_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				    struct perr *e)
{
	struct ps s, s2;
	struct profile *p2 = NULL;
	struct ev_share share = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, NULL, 0 };
	ps_init(&s, p, opts, e);
	ps_init(&s2, NULL, opts, e);
	size_t split = split_point(buf, len);
	pthread_t worker;
	bool threaded = false;
	if (split && (p2 = profile_new())) {
		profile_keep_timeline(p2, profile_has_timeline(p));
		s2.p = p2;
		s2.share = &share;
		s2.part = buf + split;
		s2.part_end = buf + len;
		s.share = &share;
		s.publisher = true;
		threaded = pthread_create(&worker, NULL, ps_thread, &s2) == 0;
		if (!threaded) {
			s.share = NULL;
			profile_free(p2);
			p2 = NULL;
		}
	}
	ps_run(&s, buf, buf + (threaded ? split : len));
	if (threaded) {
		pthread_join(worker, NULL);
		if (!s.oom && !s2.oom && !merge_into(p, p2))
			s.oom = true;
		ps_absorb(&s, &s2);
	}
	enum plumb_err rc = PLUMB_OK;
	if (s.oom)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory reading perf script text");
	else
		ps_finish(&s, p, opts);
	ps_release(&s);
	ps_release(&s2);
	profile_free(p2);
	return rc;
}
