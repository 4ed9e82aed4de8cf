/* fs.h — file-system steps more than one module needs: `mkdir -p`. Library code: errors come back as a
 * struct perr with the errno text, nothing is printed. */
#ifndef PLUMB_BASE_FS_H
#define PLUMB_BASE_FS_H

#include <sys/types.h>

#include "base/err.h"

/* Creates dir and every missing parent with `mode` (plumb's stores use 0700); existing directories are left
 * as they are. PLUMB_EOUTPUT naming the part that failed (with errno's text) when a part cannot be created or
 * the path exists but is not a directory; PLUMB_EINVAL for an empty path or one of PATH_MAX bytes or more.
 * Allocates nothing (the lib/ recorder calls it). */
enum plumb_err fs_mkdirs(const char *dir, mode_t mode, struct perr *e);

#endif
