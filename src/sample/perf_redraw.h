/* perf_redraw.h — the redraw threads of the perf-based backends (perf_event, system): one per CPU's ring, kept on
 * that CPU, woken at every sample taken there, which gives the event that took it its next random period
 * (perf_periods_sampled, docs/design.md §5.2) before the reader has unwound anything, or got a CPU on a loaded
 * machine (the kernel repeats the old period meanwhile). On the sample's own CPU the sampled task is not running
 * while the thread works, so the event's read and its new period are local: from another CPU each is an
 * interrupt of the target's CPU (with the wake-up, three per sample; a CPU-bound target lost 6% of its time to
 * them at 1 kHz under a virtual machine). They ask for the lowest real-time priority when they may (a few
 * microseconds per sample). A ring's readiness goes to one poller, so the rings' wake-ups become theirs: they
 * pass them on through wake_fd (an eventfd the reader polls) when a quarter of a ring waits; the reader's drains
 * stop at what has been seen (perf_ring.peeking).
 *
 * Samples must begin with PERF_SAMPLE_IDENTIFIER, IP, TID and TIME (perf_attr_cpu_clock's layout). rings[i] is
 * CPU i's. The rings and the periods are borrowed and must not change while they run. */
#ifndef PLUMB_SAMPLE_PERF_REDRAW_H
#define PLUMB_SAMPLE_PERF_REDRAW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "sample/perf_ring.h"
#include "sample/perf_stack.h"

#define PERF_REDRAW_MAX_RINGS 64 /* CPUs with a thread of their own; with more the reader redraws alone */

struct perf_redraw;
struct perf_redraw_cpu {             /* one CPU's thread */
	struct perf_redraw *r;
	size_t ring;
	pthread_t thread;
	bool running;
};

struct perf_redraw {
	struct perf_ring *rings;       /* borrowed */
	size_t nrings;
	struct perf_periods *periods;  /* borrowed; its draws and counters under `lock` */
	pthread_mutex_t lock;
	struct perf_redraw_cpu cpus[PERF_REDRAW_MAX_RINGS];
	bool running;
	atomic_bool quit;
	int wake_fd;                   /* the reader's wake-ups while running, else -1 */
};

void perf_redraw_init(struct perf_redraw *r);
/* Starts the threads (per-CPU events are redrawn too: periods->cpu_redraw); false when none could start, and
 * then nothing changed. */
bool perf_redraw_start(struct perf_redraw *r, struct perf_ring *rings, size_t nrings, struct perf_periods *pp);
/* Stops them (nothing when they are not running). */
void perf_redraw_stop(struct perf_redraw *r);

#endif
