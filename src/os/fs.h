/* fs.h — file-system steps more than one module needs: `mkdir -p`, finding a command on PATH, and the trust
 * rules for files and directories someone else could have written (docs/design.md §3.5): the one place plumb
 * opens such a file or uses such a directory. Library code: errors come back as a struct perr with the errno
 * text, nothing is printed. */
#ifndef PLUMB_OS_FS_H
#define PLUMB_OS_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
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

/* ---- untrusted files: perf maps, the files of $PLUMB_HOME, stage and sample files, a target's files ----
 *
 * The rule (perf's for its maps, ssh's for ~/.ssh): open without following a final symbolic link that plumb
 * did not ask for, never block on a FIFO or a device, accept only a regular file owned by the expected user or
 * by root and not writable by others, and read it up to a stated cap. Every reader of such a file goes through
 * fs_open_trusted or fs_read_trusted: this is the API other modules call. */

/* Opens `path` (relative to dirfd; AT_FDCWD for an ordinary path) for reading under the rule above. `owner` is
 * the user the file must belong to (root is always accepted). Returns the descriptor (O_CLOEXEC, blocking
 * reads) with *st filled when st is not NULL, or -1 with e set: PLUMB_ENOENT when nothing is there,
 * PLUMB_EPERM when the file breaks the rule (a symbolic link, a FIFO, a device, a directory, another user's,
 * writable by others: e says which, naming `path`), PLUMB_EIO for any other failure to open. Allocates nothing
 * (libplumb reads its lock files with it). */
int fs_open_trusted(int dirfd, const char *path, uid_t owner, struct stat *st, struct perr *e);

/* fs_open_trusted for a file of another process's view: `path` resolved inside the root rootfd (a descriptor of
 * /proc/PID/root opened with O_PATH), so neither its symbolic links nor ".." lead out of it (openat2
 * RESOLVE_IN_ROOT; where the kernel lacks it, relative to rootfd). The same rule, codes and messages. */
int fs_open_trusted_in_root(int rootfd, const char *path, uid_t owner, struct stat *st, struct perr *e);

/* The whole of the open file fd (named path in messages) into *data as fs_read_trusted reads it: malloc'd,
 * NUL-terminated, at most max bytes (more is PLUMB_EFORMAT, nothing kept). */
enum plumb_err fs_read_fd_capped(int fd, const char *path, size_t max, char **data, size_t *len, struct perr *e);

/* fs_open_trusted, then the whole file into *data (malloc'd, NUL-terminated, *len bytes before the NUL; the
 * caller frees it). A file of more than `max` bytes is PLUMB_EFORMAT ("larger than the cap of N bytes") and
 * nothing is kept; PLUMB_ENOMEM, PLUMB_EIO on a failed read. The codes of fs_open_trusted otherwise. */
enum plumb_err fs_read_trusted(int dirfd, const char *path, uid_t owner, size_t max, char **data, size_t *len,
			       struct perr *e);

/* The same into a caller buffer of cap bytes (cap - 1 at most, NUL-terminated), allocating nothing: a larger
 * file is PLUMB_EFORMAT. */
enum plumb_err fs_read_trusted_buf(int dirfd, const char *path, uid_t owner, char *buf, size_t cap, size_t *len,
				   struct perr *e);

/* ---- directories plumb keeps its own files in ($PLUMB_HOME and everything under it) ---- */

/* Whether the directory open on fd may hold plumb's files: owned by this user (geteuid) or root and not
 * writable by group or others. PLUMB_EPERM with one line naming `path`, what is wrong and what to do. */
enum plumb_err fs_check_private_dir(int fd, const char *path, struct perr *e);

/* Opens `name` (one path component) in dirfd as such a directory: a symbolic link there is refused, never
 * followed; with `create` a missing one is made (mode 0700). `path` names it in messages. Returns the directory's
 * descriptor (O_RDONLY | O_DIRECTORY | O_CLOEXEC), or -1 with e set: PLUMB_ENOENT (missing, !create), PLUMB_EPERM
 * (fs_check_private_dir, a link, not a directory), PLUMB_EOUTPUT (cannot be created), PLUMB_EIO. */
int fs_open_private_dir(int dirfd, const char *name, const char *path, bool create, struct perr *e);

#endif
