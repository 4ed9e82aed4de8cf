/* pprof.h — what the pprof writer (format/pprof.c) and reader (format/pprof_read.c) agree on: the pseudo-mappings
 * that carry a frame's kind, and the sample types a profile's weight unit is written as. Internal to format/. */
#ifndef PLUMB_FORMAT_PPROF_H
#define PLUMB_FORMAT_PPROF_H

#include <stdint.h>

#include "profile/profile.h"

#define PPROF_KERNEL_MAPPING "[kernel.kallsyms]" /* the kernel's frames (perf's name for the kernel image) */
#define PPROF_JIT_MAPPING "[jit]"               /* JIT frames without a map file of their own */

/* The sample types of a profile: always samples/count, then (type, unit) when the weight is not a plain count
 * (type NULL otherwise); the second value is the weight × factor (the period, when counted samples are written
 * as time). */
struct pprof_types {
	const char *count_type, *count_unit;
	const char *type, *unit;
	uint64_t factor;
};
void pprof_types_of(const struct profile *p, struct pprof_types *t);

#endif
