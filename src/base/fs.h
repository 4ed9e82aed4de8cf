/* fs.h — file-system steps more than one module needs: `mkdir -p`, and finding a command on PATH. Library
 * code: errors come back as a struct perr with the errno text, nothing is printed. */
#ifndef PLUMB_BASE_FS_H
#define PLUMB_BASE_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"

/* Creates dir and every missing parent with `mode` (plumb's stores use 0700); existing directories are left
 * as they are. PLUMB_EOUTPUT naming the part that failed (with errno's text) when a part cannot be created or
 * the path exists but is not a directory; PLUMB_EINVAL for an empty path or one of PATH_MAX bytes or more.
 * Allocates nothing (the lib/ recorder calls it). */
enum plumb_err fs_mkdirs(const char *dir, mode_t mode, struct perr *e);

/* Finds command `name` as execvp would and writes its path into out (n bytes): a name holding a '/' is itself
 * (when executable), any other is looked up in each directory of $PATH (/usr/local/bin:/usr/bin:/bin when PATH
 * is unset or empty; an empty entry is the current directory) as an executable regular file. False when there
 * is none (or the path does not fit). */
bool fs_which(const char *name, char *out, size_t n);

#endif
