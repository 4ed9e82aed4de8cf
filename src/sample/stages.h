/* stages.h — the stage file of `plumb record --stages` (docs/design.md §9.2): the ranges a target emitted through
 * plumb.h (JSON lines with CLOCK_MONOTONIC nanoseconds in PLUMB_STAGES) become a plumb.stages.v1 document
 * with times in milliseconds from profile_start, led by a coarse "command" stage covering the whole run. */
#ifndef PLUMB_SAMPLE_STAGES_H
#define PLUMB_SAMPLE_STAGES_H

#include <stdint.h>

#include "base/err.h"

/* The caps on the stage lines a program writes (docs/design.md §3.5, §9.2): a longer line is skipped, the file
 * is read up to STAGES_FILE_MAX bytes, and no more than STAGES_MAX stages are kept. */
#define STAGES_LINE_MAX (64u << 10)
#define STAGES_FILE_MAX ((size_t)256 << 20)
#define STAGES_MAX 1000000

/* Reads lines_path (a missing file means the program emitted no stage; malformed lines are skipped) within the
 * caps, and writes out_path atomically. lines_path is opened under the trust rule (os/fs.h: not through a
 * link, a regular file of this user). origin_ns/end_ns: CLOCK_MONOTONIC of profile_start and of the end of
 * sampling. Stages are sorted by start; a stage that began before the origin is clipped to 0, one that ended
 * before it is dropped. PLUMB_EOUTPUT when out_path cannot be written, PLUMB_EIO when lines_path cannot be read
 * or breaks the trust rule. */
enum plumb_err stages_write(const char *lines_path, uint64_t origin_ns, uint64_t end_ns, const char *out_path,
			    struct perr *e);

#endif
