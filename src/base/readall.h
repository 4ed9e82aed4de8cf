/* readall.h — reading a file descriptor to its end into one buffer (files, pipes, /proc files that report a
 * size of 0). */
#ifndef PLUMB_BASE_READALL_H
#define PLUMB_BASE_READALL_H

#include <stddef.h>

/* Reads fd to its end into a malloc'd buffer (*out, NUL-terminated, *len bytes before the NUL; the caller
 * frees it). cap is the first buffer size (the file's size + 1 when it is known); the buffer doubles when full,
 * up to max bytes (0: no bound). Retries reads interrupted by signals. Returns 0, or an errno: ENOMEM, EFBIG
 * when the data would pass max, or read's own. Does not close fd. */
int read_fd_whole(int fd, size_t cap, size_t max, char **out, size_t *len);

#endif
