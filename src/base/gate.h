/* gate.h — the debug switch (docs/design.md §3.1): sampling and recording happen only when PLUMB_DEBUG is true.
 * Only the documented on-values turn it on; anything else is off. Nothing here prints: plumb's dispatcher says
 * when a value was not understood (libplumb, inside someone else's program, stays silent). */
#ifndef PLUMB_BASE_GATE_H
#define PLUMB_BASE_GATE_H

#include <stdbool.h>

enum gate_reading {
	GATE_OFF,      /* unset, empty, 0/false/no/off */
	GATE_ON,       /* 1/true/yes/on */
	GATE_UNKNOWN,  /* anything else: off, and worth a note */
};

/* How `value` reads: 1, true, yes, on (any case, surrounding blanks ignored) are on; NULL, empty, 0, false,
 * no, off are off; anything else ("disabled", "junk", "-1", "00", "2") is GATE_UNKNOWN, which is off. */
enum gate_reading gate_value_read(const char *value);

/* gate_value_read(value) == GATE_ON. */
bool gate_value_enabled(const char *value);

/* gate_value_enabled(getenv("PLUMB_DEBUG")). */
bool gate_enabled(void);

/* The one-line message a refusing command prints. */
#define GATE_HOWTO "profiling is off: set the debug switch first with `export PLUMB_DEBUG=1`"

#endif
