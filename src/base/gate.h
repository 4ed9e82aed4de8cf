/* gate.h — the debug switch (docs/design.md §3.1): sampling and recording happen only when PLUMB_DEBUG is true. */
#ifndef PLUMB_BASE_GATE_H
#define PLUMB_BASE_GATE_H

#include <stdbool.h>

/* True when `value` reads as enabled: set, non-empty, and not 0/false/no/off (any case, surrounding
 * blanks ignored). NULL reads as disabled. */
bool gate_value_enabled(const char *value);

/* gate_value_enabled(getenv("PLUMB_DEBUG")). */
bool gate_enabled(void);

/* The one-line message a refusing command prints. */
#define GATE_HOWTO "profiling is off: set the debug switch first with `export PLUMB_DEBUG=1`"

#endif
