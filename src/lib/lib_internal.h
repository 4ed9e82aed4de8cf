/* lib_internal.h — what the pieces of libplumb.so share; nothing here is exported from the library. */
#ifndef PLUMB_LIB_INTERNAL_H
#define PLUMB_LIB_INTERNAL_H

#include <stdbool.h>

/* The metrics recorder of this process and its children (src/lib/metrics_recorder.c, DESIGN §5): started by
 * plumb_init() when the debug switch is on; returns 0 on success, -1 with errno set. */
int lib_metrics_start(const char *name);
void lib_metrics_stop(void);

/* True when the process started with PLUMB_DEBUG on (read once, when the library was loaded). */
bool lib_switch_on(void);

#endif
