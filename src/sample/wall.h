/* wall.h — off-CPU accounting for `--mode wall` (docs/design.md §5.2: every thread at every tick, running or not).
 * On-CPU ticks come from the cpu-clock samples as in --mode cpu; this module adds the ticks a thread spends
 * off the CPU: the stack captured when it switched out (a context-switch sample) gets a sample at each point of
 * the thread's own Poisson process of the interval's mean (rand.h), until the thread switches back in. Switch events arrive from per-CPU rings out of time order (a thread
 * leaves on one CPU and comes back on another), so they are buffered and paired in time order up to a
 * horizon before which every ring has been read.
 *
 * Ownership: wall_new() / wall_free(); the profile is borrowed and receives the samples. */
#ifndef PLUMB_SAMPLE_WALL_H
#define PLUMB_SAMPLE_WALL_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/profile.h"

struct wall;

struct wall *wall_new(struct profile *p, uint64_t interval_ns);
void wall_free(struct wall *w);

/* A thread left the CPU at `time` with `stack` (a profile stack node); thread is its profile thread id.
 * Return false only when out of memory. */
bool wall_switch_out(struct wall *w, uint32_t tid, uint32_t thread, uint32_t stack, uint64_t time);
/* A thread came back onto a CPU at `time`. */
bool wall_switch_in(struct wall *w, uint32_t tid, uint64_t time);
/* A thread exited at `time`: it is no longer waiting. */
bool wall_exit(struct wall *w, uint32_t tid, uint64_t time);
/* Pairs every buffered event earlier than horizon, in time order, adding off-CPU samples to the profile.
 * Returns the number of ticks added. */
uint64_t wall_flush(struct wall *w, uint64_t horizon);
/* For the live views: counts every thread still off the CPU up to `upto` now (it stays waiting, and the rest of
 * its wait is counted later), so that a thread blocked for the whole session shows before sampling ends. Call it
 * after wall_flush(w, upto). Returns the number of ticks added. */
uint64_t wall_settle(struct wall *w, uint64_t upto);
/* The end of sampling: flushes everything, then counts threads still off the CPU until end_ns. */
uint64_t wall_finish(struct wall *w, uint64_t end_ns);

#endif
