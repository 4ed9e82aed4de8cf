/* atomic.h — the one writer of output files (docs/design.md §3.4). A regular file (or a new one) is written whole to a
 * temporary file beside it, mode 0600, and renamed into place on commit: a reader never sees half a file, an
 * abort or a signal leaves the old file untouched and no temp behind. A symlink is followed (through chains;
 * a dangling link creates its target) and its target is replaced, so the link stays a link. A path that is
 * not a regular file — a character device, a FIFO, a socket, /dev/stdout — is opened and written directly,
 * never renamed over, chmod-ed or chown-ed. The path "-" means standard output. */
#ifndef PLUMB_OS_ATOMIC_H
#define PLUMB_OS_ATOMIC_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"

struct atomic_file {
	FILE *fp;        /* write through this */
	char *path;      /* owned: the path as the caller gave it (for messages) */
	char *tmp_path;  /* owned; NULL when written directly (stdout, a device, a FIFO, a socket) */
	char *target;    /* owned; the file tmp_path is renamed over (path, or where its symlinks lead) */
	int slot;        /* tmp_path's entry in the signal-cleanup table (os/cleanup.h), -1 if none */
	int dirfd;       /* owned; >= 0 when opened with atomic_open_at: tmp_path and target are names in it */
	bool excl;       /* commit only when nothing is at the target (PLUMB_EINVAL "File exists" then) */
};
#define ATOMIC_FILE_INIT { NULL, NULL, NULL, NULL, -1, -1, false }

/* Opens `path` for writing as above. Before creating a temp file it removes the stale temps of dead plumb
 * processes in that directory (see atomic_is_temp_name). On failure fills e (PLUMB_EOUTPUT, with the errno
 * text) and leaves *af empty. */
enum plumb_err atomic_open(struct atomic_file *af, const char *path, struct perr *e);
/* How long atomic_open waits for a reader of a FIFO output before it gives up (PLUMB_EOUTPUT). */
#define ATOMIC_FIFO_WAIT_MS 5000
/* atomic_open for the entry `name` (one path component) of the directory open on dirfd: the temp file is
 * created, renamed and removed relative to that descriptor (openat/renameat/unlinkat), so nothing is looked up
 * again by a path that someone could redirect between the check of the directory and the write (the plumb
 * home, docs/design.md §3.5). `shown` names the file in messages. What is at `name` already must be a regular
 * file: a symbolic link or a special file there is refused (PLUMB_EOUTPUT), never written through. With
 * `excl` the commit never replaces an existing file (PLUMB_EINVAL). dirfd stays the caller's (it is dup'ed). */
enum plumb_err atomic_open_at(struct atomic_file *af, int dirfd, const char *name, const char *shown, bool excl,
			      struct perr *e);
/* The whole cycle of atomic_open_at for data in memory. */
enum plumb_err atomic_write_file_at(int dirfd, const char *name, const char *shown, const void *data, size_t len,
				    bool excl, struct perr *e);

/* Flushes, fsyncs and renames the temporary file over the target (a direct output is flushed and closed);
 * frees the handle's storage either way. On failure the temporary file is removed and the old file is left
 * as it was. */
enum plumb_err atomic_commit(struct atomic_file *af, struct perr *e);
/* Removes the temporary file (a direct output is just closed); safe on a handle that was never opened. */
void atomic_abort(struct atomic_file *af);

/* The whole cycle for data already in memory. */
enum plumb_err atomic_write_file(const char *path, const void *data, size_t len, struct perr *e);
/* The same, never replacing: when `path` exists the old file stays and the result is PLUMB_EINVAL (errno's text
 * "File exists" in e); other failures are PLUMB_EOUTPUT. The check and the rename are one step (renameat2
 * RENAME_NOREPLACE, or a hard link where the file system lacks it). */
enum plumb_err atomic_write_file_excl(const char *path, const void *data, size_t len, struct perr *e);

/* Checks early (before a long recording) that `path` can be written: its directory accepts a new file, or
 * the special file it names is writable. Opens no FIFO (that would block, and end a reader's input). */
enum plumb_err atomic_check_writable(const char *path, struct perr *e);

/* atomic_commit without the fsync: the rename still replaces the file whole (a reader sees the old or the new
 * version, never half of one), but after a power loss the new version may be empty. For files rewritten on an
 * interval (metrics recordings), where an fsync stalled behind other processes' writeback would delay the next
 * sample by up to a second. */
enum plumb_err atomic_commit_nosync(struct atomic_file *af, struct perr *e);

/* A private scratch file for data gathered during a run that becomes `output` at the end (record's stage
 * lines): created empty, 0600, named and registered like a temp file of atomic_open — beside output's target,
 * or in $TMPDIR (else /tmp) when output is written directly. af->tmp_path is its path, af->fp is open on it;
 * atomic_abort() removes it. */
enum plumb_err atomic_scratch_open(struct atomic_file *af, const char *output, struct perr *e);

/* Whether a directory entry is a plumb temp file: ".NAME.plumb-tmp.PID.XXXXXX"; stores the writer's PID. Such
 * a file is removed by a later run only when it is a regular file owned by the same user, its PID is gone and
 * no process holds its lock. */
bool atomic_is_temp_name(const char *name, pid_t *pid);

#endif
