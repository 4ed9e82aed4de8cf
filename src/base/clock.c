/* clock.c — see clock.h. clock_gettime is async-signal-safe, so these are too. */
#include "base/clock.h"

uint64_t mono_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double mono_seconds(void)
{
	return (double)mono_ns() / 1e9;
}

struct timespec ns_timespec(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) };
	return ts;
}
