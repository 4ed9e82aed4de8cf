/* readall.h — reading a file descriptor to its end into one buffer (files, pipes, /proc files that report a
 * size of 0), and the one rule for the files a user names as an input (docs/design.md §3.5): a stage file, a
 * symbol file, a metrics recording, a bench artifact, suite or catalog. */
#ifndef PLUMB_BASE_READALL_H
#define PLUMB_BASE_READALL_H

#include <stddef.h>
#include <sys/stat.h>

#include "base/err.h"

#define READ_INPUT_WAIT_MS 5000 /* a FIFO or pipe that gives nothing for this long is not read (as §6.6's) */

/* Reads fd to its end into a malloc'd buffer (*out, NUL-terminated, *len bytes before the NUL; the caller
 * frees it). cap is the first buffer size (the file's size + 1 when it is known); the buffer doubles when full,
 * up to max bytes (0: no bound). Retries reads interrupted by signals. Returns 0, or an errno: ENOMEM, EFBIG
 * when the data would pass max, or read's own. Does not close fd. */
int read_fd_whole(int fd, size_t cap, size_t max, char **out, size_t *len);

/* The input rule. Opens the file a user named as an input of kind `what` ("stage file"): looked at before it is
 * opened, so a device, a socket or a directory is refused unopened (PLUMB_EFORMAT: it exists and cannot be
 * used, exit 5); a regular file larger than max bytes is refused unread (PLUMB_EFORMAT); a FIFO or pipe is
 * accepted and read with a deadline (read_input_fd). A path that is not there is PLUMB_ENOENT (exit 3), one that
 * cannot be opened PLUMB_EIO. Every message names the path and `what`. Returns the descriptor in *fd (the caller
 * closes it) and what fstat says of it in *st when st is not NULL. */
enum plumb_err read_input_open(const char *path, const char *what, size_t max, int *fd, struct stat *st,
			       struct perr *e);
/* read_input_open for an input that must be a regular file (it is mapped, or replaced by rename): a FIFO or a
 * pipe is refused unread too (PLUMB_EFORMAT). */
enum plumb_err read_input_open_file(const char *path, const char *what, size_t max, int *fd, struct stat *st,
				    struct perr *e);
/* Reads the input open on fd (from read_input_open) whole into *data (malloc'd, NUL-terminated, *len bytes; the
 * caller frees it): more than max bytes is PLUMB_EFORMAT, nothing kept; a FIFO or pipe that gives no data for
 * READ_INPUT_WAIT_MS is PLUMB_EFORMAT ("gave no data in 5 s"); PLUMB_ENOMEM, PLUMB_EIO otherwise. */
enum plumb_err read_input_fd(int fd, const char *path, const char *what, size_t max, char **data, size_t *len,
			     struct perr *e);
/* Both: the whole input file path under the rule. */
enum plumb_err read_input(const char *path, const char *what, size_t max, char **data, size_t *len, struct perr *e);

#endif
