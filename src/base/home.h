/* home.h — where plumb keeps what it records (metrics, baselines, announced targets): $PLUMB_HOME, else
 * ${XDG_STATE_HOME:-$HOME/.local/state}/plumb. The one definition; the library and the tool both use it. */
#ifndef PLUMB_BASE_HOME_H
#define PLUMB_BASE_HOME_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* Writes the directory into buf. False when neither PLUMB_HOME, XDG_STATE_HOME nor HOME is set, or when the
 * path does not fit in n bytes. */
bool plumb_home_dir(char *buf, size_t n);

/* The same with the reason: PLUMB_ENOENT when no variable names a home, PLUMB_EINVAL when it does not fit. */
enum plumb_err plumb_home(char *buf, size_t n, struct perr *e);

#endif
