/* atomic.h — files written whole: a temporary file in the target's directory, mode 0600, renamed into
 * place on commit (docs/design.md §3.4). A reader never sees half a file; an abort leaves the old file untouched.
 * The path "-" means standard output (no rename, no mode change). */
#ifndef PLUMB_BASE_ATOMIC_H
#define PLUMB_BASE_ATOMIC_H

#include <stdio.h>
#include <stddef.h>

#include "base/err.h"

struct atomic_file {
	FILE *fp;        /* write through this */
	char *path;      /* owned */
	char *tmp_path;  /* owned; NULL for stdout */
};
#define ATOMIC_FILE_INIT { NULL, NULL, NULL }

/* Opens a temporary file beside `path`. On failure fills e (PLUMB_EOUTPUT, with the errno text). */
enum plumb_err atomic_open(struct atomic_file *af, const char *path, struct perr *e);
/* Flushes, fsyncs and renames the temporary file over `path`; frees the handle's storage either way.
 * On failure the temporary file is removed and the old file is left as it was. */
enum plumb_err atomic_commit(struct atomic_file *af, struct perr *e);
/* Removes the temporary file; safe on a handle that was never opened. */
void atomic_abort(struct atomic_file *af);

/* The whole cycle for data already in memory. */
enum plumb_err atomic_write_file(const char *path, const void *data, size_t len, struct perr *e);
/* The same, never replacing: when `path` exists the old file stays and the result is PLUMB_EINVAL (errno's text
 * "File exists" in e); other failures are PLUMB_EOUTPUT. The check and the rename are one step (renameat2
 * RENAME_NOREPLACE, or a hard link where the file system lacks it). */
enum plumb_err atomic_write_file_excl(const char *path, const void *data, size_t len, struct perr *e);

/* Checks early (before a long recording) that `path`'s directory accepts a new file; PLUMB_EOUTPUT if not. */
enum plumb_err atomic_check_writable(const char *path, struct perr *e);

/* atomic_commit without the fsync: the rename still replaces the file whole (a reader sees the old or the new
 * version, never half of one), but after a power loss the new version may be empty. For files rewritten on an
 * interval (metrics recordings), where an fsync stalled behind other processes' writeback would delay the next
 * sample by up to a second. */
enum plumb_err atomic_commit_nosync(struct atomic_file *af, struct perr *e);

#endif
