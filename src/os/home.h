/* home.h — where plumb keeps what it records (metrics, baselines, announced targets, rescued profiles, the
 * symbol cache): $PLUMB_HOME, else ${XDG_STATE_HOME:-$HOME/.local/state}/plumb. The one definition; the library
 * and the tool both use it. home_open is the one way into it: the home and every directory under it that
 * plumb uses must belong to the user (or root) and be writable by nobody else (docs/design.md §3.5). */
#ifndef PLUMB_OS_HOME_H
#define PLUMB_OS_HOME_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* Writes the directory into buf. False when neither PLUMB_HOME, XDG_STATE_HOME nor HOME is set, or when the
 * path does not fit in n bytes. */
bool home_dir(char *buf, size_t n);

/* The same with the reason: PLUMB_ENOENT when no variable names a home, PLUMB_EINVAL when it does not fit. */
enum plumb_err home_path(char *buf, size_t n, struct perr *e);

/* Opens $PLUMB_HOME/sub ("" for the home itself, else relative parts such as "baselines/profiles") and writes
 * its path into path (cap bytes, filled whenever the home is known, even on failure). The home (followed as
 * the user named it) and each part under it must pass fs_check_private_dir; a part under the home that is a
 * symbolic link is refused, never followed. With `create`, what is missing is made (mode 0700; the home with
 * its parents). Returns the directory's descriptor in *dfd (O_DIRECTORY | O_CLOEXEC; the caller closes it).
 * PLUMB_ENOENT when no variable names a home or (without create) a part is missing, PLUMB_EINVAL when the path
 * does not fit, PLUMB_EPERM when a part breaks the rule (one line: which, why, what to do), PLUMB_EOUTPUT when
 * one cannot be created, PLUMB_EIO otherwise. Allocates nothing (libplumb's recorder calls it). */
enum plumb_err home_open(const char *sub, bool create, char *path, size_t cap, int *dfd, struct perr *e);

#endif
