/* readall.c — see readall.h. The input rule looks before it opens and checks again on the descriptor, so what is
 * read is what was checked; a stream is never waited on for longer than READ_INPUT_WAIT_MS at a time. */
#include "base/readall.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"

int read_fd_whole(int fd, size_t cap, size_t max, char **out, size_t *len)
{
	size_t n = 0;
	if (cap < 2)
		cap = 2;
	if (max && cap > max)
		cap = max;
	char *buf = malloc(cap);
	if (!buf)
		return ENOMEM;
	for (;;) {
		if (n + 1 >= cap) {
			if (max && cap >= max) {
				free(buf);
				return EFBIG;
			}
			size_t nc = grow_cap(cap + 1, cap);
			if (max && nc > max)
				nc = max;
			if (!REALLOC_ARRAY(buf, nc)) {
				free(buf);
				return ENOMEM;
			}
			cap = nc;
		}
		ssize_t r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* ---------------------------------------------------------------- the input rule */

static const char *not_a_file(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (!S_ISREG(mode) && !S_ISFIFO(mode))
		return "not a regular file";
	return NULL;
}

static enum plumb_err check_input(const struct stat *sb, const char *path, const char *what, size_t max,
				  struct perr *e)
{
	const char *kind = not_a_file(sb->st_mode);
	if (kind)
		return perr_set(e, PLUMB_EFORMAT, "the %s %s is %s, not a file plumb reads", what, path, kind);
	if (S_ISREG(sb->st_mode) && (uint64_t)sb->st_size > max)
		return perr_set(e, PLUMB_EFORMAT, "the %s %s is larger than the cap of %zu bytes for a %s (%lld bytes)", what,
				path, max, what, (long long)sb->st_size);
	return PLUMB_OK;
}

enum plumb_err read_input_open(const char *path, const char *what, size_t max, int *fd, struct stat *st,
			       struct perr *e)
{
	*fd = -1;
	struct stat before, after;
	/* looked at first: a device is never opened (opening one can have effects of its own) */
	if (stat(path, &before) != 0) {
		int err = errno;
		return perr_set(e, err == ENOENT || err == ENOTDIR ? PLUMB_ENOENT : PLUMB_EIO, "cannot read the %s %s: %s",
				what, path, strerror(err));
	}
	enum plumb_err rc = check_input(&before, path, what, max, e);
	if (rc)
		return rc;
	/* without blocking: a FIFO with no writer must not hang the open, nor what was swapped in since the look */
	int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (f < 0) {
		int err = errno;
		return perr_set(e, err == ENOENT || err == ENOTDIR ? PLUMB_ENOENT : PLUMB_EIO, "cannot read the %s %s: %s",
				what, path, strerror(err));
	}
	if (fstat(f, &after) != 0) {
		int err = errno;
		close(f);
		return perr_set(e, PLUMB_EIO, "cannot read the %s %s: %s", what, path, strerror(err));
	}
	if ((rc = check_input(&after, path, what, max, e)) != PLUMB_OK) {
		close(f);
		return rc;
	}
	int fl = fcntl(f, F_GETFL);
	if (S_ISREG(after.st_mode) && (fl < 0 || fcntl(f, F_SETFL, fl & ~O_NONBLOCK) != 0)) {
		int err = errno;
		close(f);
		return perr_set(e, PLUMB_EIO, "cannot read the %s %s: %s", what, path, strerror(err));
	}
	*fd = f;
	if (st)
		*st = after;
	return PLUMB_OK;
}

enum plumb_err read_input_open_file(const char *path, const char *what, size_t max, int *fd, struct stat *st,
				    struct perr *e)
{
	struct stat sb;
	enum plumb_err rc = read_input_open(path, what, max, fd, &sb, e);
	if (rc)
		return rc;
	if (!S_ISREG(sb.st_mode)) { /* read_input_open lets only regular files and FIFOs through */
		close(*fd);
		*fd = -1;
		return perr_set(e, PLUMB_EFORMAT, "the %s %s is a FIFO, not a regular file", what, path);
	}
	if (st)
		*st = sb;
	return PLUMB_OK;
}

static enum plumb_err too_big(const char *path, const char *what, size_t max, struct perr *e)
{
	return perr_set(e, PLUMB_EFORMAT, "the %s %s is larger than the cap of %zu bytes for a %s", what, path, max, what);
}

/* A FIFO or pipe: non-blocking reads, each wait for data at most READ_INPUT_WAIT_MS. */
static enum plumb_err read_stream(int fd, const char *path, const char *what, size_t max, char **data, size_t *len,
				  struct perr *e)
{
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap + 1);
	if (!buf)
		return perr_set(e, PLUMB_ENOMEM, "out of memory reading the %s %s", what, path);
	enum plumb_err rc = PLUMB_OK;
	for (;;) {
		if (n == cap) {
			size_t nc = grow_cap(cap + 1, cap), limit = max < SIZE_MAX ? max + 1 : SIZE_MAX - 1;
			if (nc > limit)
				nc = limit;
			if (nc <= cap || !REALLOC_ARRAY(buf, nc + 1)) {
				rc = nc <= cap ? too_big(path, what, max, e)
					       : perr_set(e, PLUMB_ENOMEM, "out of memory reading the %s %s", what, path);
				break;
			}
			cap = nc;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) {
			struct pollfd pfd = { fd, POLLIN, 0 };
			int p = poll(&pfd, 1, READ_INPUT_WAIT_MS);
			if (p == 0) {
				rc = perr_set(e, PLUMB_EFORMAT, "the %s %s gave no data in %d s (a FIFO or pipe nobody writes?)",
					      what, path, READ_INPUT_WAIT_MS / 1000);
				break;
			}
			if (p < 0 && errno != EINTR) {
				rc = perr_set(e, PLUMB_EIO, "cannot read the %s %s: %s", what, path, strerror(errno));
				break;
			}
			continue;
		}
		if (r < 0) {
			rc = perr_set(e, PLUMB_EIO, "cannot read the %s %s: %s", what, path, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			rc = too_big(path, what, max, e);
			break;
		}
	}
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return PLUMB_OK;
}

enum plumb_err read_input_fd(int fd, const char *path, const char *what, size_t max, char **data, size_t *len,
			     struct perr *e)
{
	*data = NULL;
	*len = 0;
	struct stat st;
	if (fstat(fd, &st) != 0)
		return perr_set(e, PLUMB_EIO, "cannot read the %s %s: %s", what, path, strerror(errno));
	if (!S_ISREG(st.st_mode)) {
		/* a FIFO that never had a writer reads as empty at once: wait for one as for data */
		struct pollfd pfd = { fd, POLLIN, 0 };
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && !(fl & O_NONBLOCK))
			fcntl(fd, F_SETFL, fl | O_NONBLOCK);
		if (S_ISFIFO(st.st_mode) && poll(&pfd, 1, READ_INPUT_WAIT_MS) == 0)
			return perr_set(e, PLUMB_EFORMAT, "the %s %s gave no data in %d s (a FIFO or pipe nobody writes?)",
					what, path, READ_INPUT_WAIT_MS / 1000);
		return read_stream(fd, path, what, max, data, len, e);
	}
	if ((uint64_t)st.st_size > max)
		return too_big(path, what, max, e);
	/* max + 1 data bytes fit (read_fd_whole keeps one for the NUL): one more than the cap tells "too large" */
	int err = read_fd_whole(fd, (size_t)st.st_size + 2, max < SIZE_MAX - 2 ? max + 2 : 0, data, len);
	if (!err && *len > max) {
		free(*data);
		*data = NULL;
		*len = 0;
		err = EFBIG;
	}
	if (err == EFBIG)
		return too_big(path, what, max, e);
	if (err)
		return perr_set(e, err == ENOMEM ? PLUMB_ENOMEM : PLUMB_EIO, "cannot read the %s %s: %s", what, path,
				strerror(err));
	return PLUMB_OK;
}

enum plumb_err read_input(const char *path, const char *what, size_t max, char **data, size_t *len, struct perr *e)
{
	int fd;
	*data = NULL;
	*len = 0;
	enum plumb_err rc = read_input_open(path, what, max, &fd, NULL, e);
	if (rc)
		return rc;
	rc = read_input_fd(fd, path, what, max, data, len, e);
	close(fd);
	return rc;
}
