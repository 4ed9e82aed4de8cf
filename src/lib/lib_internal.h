/* lib_internal.h — functions shared between libplumb's own files (the files of src/lib); not part of include/plumb.h.
 * Everything here has hidden visibility in libplumb.so. */
#ifndef PLUMB_LIB_INTERNAL_H
#define PLUMB_LIB_INTERNAL_H

/* The metrics recorder (docs/design.md §7), started by plumb_init(name). When PLUMB_DEBUG is on, starts one thread
 * that records the calling process and its descendants into $PLUMB_HOME/metrics/NAME.json every 5 s
 * (PLUMB_METRICS_EVERY seconds when set, PLUMB_METRICS_KEEP samples instead of 120). NAME is sanitized into a file
 * name; NULL or empty uses the program's name. Returns 0 (PLUMB_OK) when recording (or already recording),
 * PLUMB_EGATE when the switch is off — then nothing at all was done — or another enum plumb_err when the recorder
 * could not start (nothing left running). Thread-safe. */
int lib_metrics_start(const char *name);
/* Stops the recorder: wakes and joins its thread, which writes the artifact a last time with state "ended".
 * A no-op when not recording, and in a forked child of the recording process. lib_metrics_start registers it
 * with atexit() too, so a program that just returns from main still leaves an "ended" recording. */
void lib_metrics_stop(void);

#include <stdbool.h>

/* True when the process started with PLUMB_DEBUG on (read once, when the library was loaded; plumb.c). */
bool lib_switch_on(void);

#endif
