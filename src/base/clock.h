/* clock.h — the one monotonic clock (CLOCK_MONOTONIC in nanoseconds) every layer reads, and its conversion to
 * a timespec for the calls that take one (ppoll, clock_nanosleep, pthread_cond_timedwait on a monotonic
 * condition). Async-signal-safe: the in-process sampler's signal handler reads it too. */
#ifndef PLUMB_BASE_CLOCK_H
#define PLUMB_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC now, in nanoseconds (0 if the clock cannot be read, which Linux never does). */
uint64_t mono_ns(void);

/* CLOCK_MONOTONIC now, in seconds. */
double mono_seconds(void);

/* ns as a timespec: an absolute CLOCK_MONOTONIC time when ns came from mono_ns(), or a duration. */
struct timespec ns_timespec(uint64_t ns);

#endif
