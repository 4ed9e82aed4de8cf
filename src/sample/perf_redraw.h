/* perf_redraw.h — the redraw thread of the perf-based backends (perf_event, system): it wakes at every sample
 * and gives the event that took it its next random period (perf_periods_sampled, docs/design.md §5.2) before
 * the reader has unwound anything, or got a CPU on a loaded machine (the kernel repeats the old period
 * meanwhile). It asks for the lowest real-time priority when it may (it works a few microseconds per sample).
 * A ring's readiness goes to one poller, so the rings' wake-ups become its own: it passes them on through
 * wake_fd (an eventfd the reader polls) when a quarter of a ring waits; the reader's drains stop at what it has
 * seen (perf_ring.peeking).
 *
 * Samples must begin with PERF_SAMPLE_IDENTIFIER, IP, TID and TIME (perf_attr_cpu_clock's layout). The rings
 * and the periods are borrowed and must not change while it runs. */
#ifndef PLUMB_SAMPLE_PERF_REDRAW_H
#define PLUMB_SAMPLE_PERF_REDRAW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "sample/perf_ring.h"
#include "sample/perf_stack.h"

#define PERF_REDRAW_MAX_RINGS 64 /* rings one thread polls; with more CPUs the reader redraws alone */

struct perf_redraw {
	struct perf_ring *rings;       /* borrowed */
	size_t nrings;
	struct perf_periods *periods;  /* borrowed */
	pthread_t thread;
	bool running;
	atomic_bool quit;
	int wake_fd;                   /* the reader's wake-ups while running, else -1 */
};

void perf_redraw_init(struct perf_redraw *r);
/* Starts the thread (per-CPU events are redrawn too: periods->cpu_redraw); false when it could not, and then
 * nothing changed. */
bool perf_redraw_start(struct perf_redraw *r, struct perf_ring *rings, size_t nrings, struct perf_periods *pp);
/* Stops it (nothing when it is not running). */
void perf_redraw_stop(struct perf_redraw *r);

#endif
