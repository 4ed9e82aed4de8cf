/* progress.h — how code below the faces says how far its work is (docs/design.md §3.7). A face that draws a
 * progress line (ui/progress.h) passes a `struct progress *` down; NULL means nobody is watching. A reader or
 * writer only reports, with the three calls below: it never creates, draws or ends a display, and does no I/O for it. */
#ifndef PLUMB_BASE_PROGRESS_H
#define PLUMB_BASE_PROGRESS_H

#include <stdint.h>

/* A watcher of one piece of work: the face that made it fills the hooks. */
struct progress {
	void (*bytes)(struct progress *p, uint64_t done, uint64_t total);
	void (*count)(struct progress *p, uint64_t done, uint64_t total, const char *unit);
	void (*record)(struct progress *p, double elapsed_s, uint64_t samples, double rate_hz);
};

/* `done` bytes of `total` (0 when the size is not known, e.g. a pipe). Cheap when no redraw is due; NULL is
 * fine. */
static inline void progress_bytes(struct progress *p, uint64_t done, uint64_t total)
{
	if (p && p->bytes)
		p->bytes(p, done, total);
}

/* A loop of steps: `done` of `total` (0 when unknown) `unit`s: "bench run fib: 3/10 runs". */
static inline void progress_count(struct progress *p, uint64_t done, uint64_t total, const char *unit)
{
	if (p && p->count)
		p->count(p, done, total, unit);
}

/* record: time since sampling began, samples so far and the effective rate (samples per second per sampled
 * thread, as the summary line counts it): "recording: 12.3s, 4,321 samples, 351/s effective". */
static inline void progress_record(struct progress *p, double elapsed_s, uint64_t samples, double rate_hz)
{
	if (p && p->record)
		p->record(p, elapsed_s, samples, rate_hz);
}

#endif
