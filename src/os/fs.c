/* fs.c — see fs.h. mkdir -p walks the path once, creating each missing component; EEXIST is not an error
 * (another process may create a part at the same time), the final stat says whether a directory is there.
 * fs_which follows execvp's search, so that what plumb probes is what it then runs. The trust checks look
 * before they open (a device is never opened) and check again on the descriptor (what was swapped in between is
 * caught), so what is read is always the file that was checked. */
#include "os/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/readall.h"

enum plumb_err fs_mkdirs(const char *dir, mode_t mode, struct perr *e)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof path)
		return perr_set(e, PLUMB_EINVAL, "cannot create directory '%.200s': %s", dir,
				n ? "the path is too long" : "empty path");
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (path[i - 1] == '/') /* "a//b" or a trailing slash */
			continue;
		char saved = path[i];
		path[i] = '\0';
		if (mkdir(path, mode) != 0 && errno != EEXIST) {
			int err = errno;
			return perr_set(e, PLUMB_EOUTPUT, "cannot create directory %s: %s", path, strerror(err));
		}
		path[i] = saved;
	}
	struct stat st;
	if (stat(dir, &st) != 0)
		return perr_set(e, PLUMB_EOUTPUT, "cannot create directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return perr_set(e, PLUMB_EOUTPUT, "cannot create directory %s: not a directory", dir);
	return PLUMB_OK;
}

static bool is_exec_file(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

bool fs_which(const char *name, char *out, size_t n)
{
	if (!name || !*name)
		return false;
	if (strchr(name, '/'))
		return (size_t)snprintf(out, n, "%s", name) < n && access(out, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (;;) {
		size_t len = strcspn(path, ":");
		int w = snprintf(out, n, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", name);
		if (w > 0 && (size_t)w < n && is_exec_file(out))
			return true;
		if (!path[len])
			return false;
		path += len + 1;
	}
}

/* ---------------------------------------------------------------- untrusted files */

static const char *kind_of(mode_t mode)
{
	if (S_ISLNK(mode))
		return "a symbolic link, which plumb does not follow here";
	if (S_ISDIR(mode))
		return "a directory, not a regular file";
	if (S_ISFIFO(mode))
		return "a FIFO, not a regular file";
	if (S_ISSOCK(mode))
		return "a socket, not a regular file";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device, not a regular file";
	return "not a regular file";
}

/* The rule on what fstat says of a file plumb is about to read. */
static enum plumb_err check_file(const struct stat *st, const char *path, uid_t owner, struct perr *e)
{
	if (!S_ISREG(st->st_mode))
		return perr_set(e, PLUMB_EPERM, "%s is %s", path, kind_of(st->st_mode));
	if (st->st_uid != owner && st->st_uid != 0)
		return perr_set(e, PLUMB_EPERM, "%s belongs to uid %u, not to uid %u or root: plumb does not trust it", path,
				(unsigned)st->st_uid, (unsigned)owner);
	if (st->st_mode & S_IWOTH)
		return perr_set(e, PLUMB_EPERM, "%s is writable by every user (mode %04o): plumb does not trust it", path,
				(unsigned)(st->st_mode & 07777));
	return PLUMB_OK;
}

int fs_open_trusted(int dirfd, const char *path, uid_t owner, struct stat *st, struct perr *e)
{
	struct stat before, after;
	/* looked at first, so a device or a FIFO is never even opened (an open can have effects of its own) */
	if (fstatat(dirfd, path, &before, AT_SYMLINK_NOFOLLOW) != 0) {
		int err = errno;
		perr_set(e, err == ENOENT ? PLUMB_ENOENT : PLUMB_EIO, "cannot read %s: %s", path, strerror(err));
		return -1;
	}
	if (check_file(&before, path, owner, e))
		return -1;
	/* O_NOFOLLOW and O_NONBLOCK: what was swapped in since the look cannot make the open follow or block */
	int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		if (err == ELOOP)
			perr_set(e, PLUMB_EPERM, "%s is %s", path, kind_of(S_IFLNK));
		else
			perr_set(e, err == ENOENT ? PLUMB_ENOENT : PLUMB_EIO, "cannot read %s: %s", path, strerror(err));
		return -1;
	}
	if (fstat(fd, &after) != 0) {
		int err = errno;
		close(fd);
		perr_set(e, PLUMB_EIO, "cannot read %s: %s", path, strerror(err));
		return -1;
	}
	int flags = fcntl(fd, F_GETFL);
	if (check_file(&after, path, owner, e) || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		if (e->code == PLUMB_OK)
			perr_set(e, PLUMB_EIO, "cannot read %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (st)
		*st = after;
	return fd;
}

/* Opens path with O_PATH (no effect even on a device or a FIFO) without following a final link, inside
 * rootfd's root. */
static int open_path_in_root(int rootfd, const char *path)
{
	int flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
	struct open_how how = { .flags = (uint64_t)flags, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof how);
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd;
	while (path[0] == '/') /* no openat2: relative to the root, where an absolute link inside may escape it */
		path++;
	return openat(rootfd, path, flags);
}

int fs_open_trusted_in_root(int rootfd, const char *path, uid_t owner, struct stat *st, struct perr *e)
{
	struct stat sb;
	int pfd = open_path_in_root(rootfd, path);
	if (pfd < 0) {
		int err = errno;
		perr_set(e, err == ENOENT || err == ENOTDIR ? PLUMB_ENOENT : PLUMB_EIO, "cannot read %s: %s", path,
			 strerror(err));
		return -1;
	}
	if (fstat(pfd, &sb) != 0) {
		perr_set(e, PLUMB_EIO, "cannot read %s: %s", path, strerror(errno));
		close(pfd);
		return -1;
	}
	if (check_file(&sb, path, owner, e)) {
		close(pfd);
		return -1;
	}
	/* the file checked, opened for reading through its O_PATH descriptor: nothing swapped in between */
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", pfd);
	int fd = open(self, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	int err = errno;
	close(pfd);
	if (fd < 0) {
		perr_set(e, PLUMB_EIO, "cannot read %s: %s", path, strerror(err));
		return -1;
	}
	if (st)
		*st = sb;
	return fd;
}

static enum plumb_err too_large(const char *path, size_t max, struct perr *e)
{
	return perr_set(e, PLUMB_EFORMAT, "%s is larger than the cap of %zu bytes for this file", path, max);
}

enum plumb_err fs_read_fd_capped(int fd, const char *path, size_t max, char **data, size_t *len, struct perr *e)
{
	*data = NULL;
	*len = 0;
	struct stat st;
	if (fstat(fd, &st) != 0)
		return perr_set(e, PLUMB_EIO, "cannot read %s: %s", path, strerror(errno));
	if ((uint64_t)st.st_size > max)
		return too_large(path, max, e);
	/* max + 1 data bytes fit (read_fd_whole keeps one for the NUL): one more than the cap tells "too large" */
	int err = read_fd_whole(fd, (size_t)st.st_size + 2, max < SIZE_MAX - 2 ? max + 2 : 0, data, len);
	if (!err && *len > max) {
		free(*data);
		*data = NULL;
		*len = 0;
		err = EFBIG;
	}
	if (err == EFBIG)
		return too_large(path, max, e);
	if (err)
		return perr_set(e, err == ENOMEM ? PLUMB_ENOMEM : PLUMB_EIO, "cannot read %s: %s", path, strerror(err));
	return PLUMB_OK;
}

enum plumb_err fs_read_trusted(int dirfd, const char *path, uid_t owner, size_t max, char **data, size_t *len,
			       struct perr *e)
{
	*data = NULL;
	*len = 0;
	int fd = fs_open_trusted(dirfd, path, owner, NULL, e);
	if (fd < 0)
		return e->code;
	enum plumb_err rc = fs_read_fd_capped(fd, path, max, data, len, e);
	close(fd);
	return rc;
}

enum plumb_err fs_read_trusted_buf(int dirfd, const char *path, uid_t owner, char *buf, size_t cap, size_t *len,
				   struct perr *e)
{
	*len = 0;
	if (cap)
		buf[0] = '\0';
	int fd = fs_open_trusted(dirfd, path, owner, NULL, e);
	if (fd < 0)
		return e->code;
	size_t n = 0;
	enum plumb_err rc = PLUMB_OK;
	for (;;) {
		char extra;
		ssize_t r = n + 1 < cap ? read(fd, buf + n, cap - 1 - n) : read(fd, &extra, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = perr_set(e, PLUMB_EIO, "cannot read %s: %s", path, strerror(errno));
			break;
		}
		if (r == 0)
			break;
		if (n + 1 >= cap) {
			rc = too_large(path, cap ? cap - 1 : 0, e);
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (rc) {
		n = 0;
	}
	if (cap)
		buf[n] = '\0';
	*len = n;
	return rc;
}

/* ---------------------------------------------------------------- plumb's own directories */

enum plumb_err fs_check_private_dir(int fd, const char *path, struct perr *e)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return perr_set(e, PLUMB_EIO, "cannot use %s: %s", path, strerror(errno));
	uid_t me = geteuid();
	if (!S_ISDIR(st.st_mode))
		return perr_set(e, PLUMB_EPERM, "cannot use %s: it is not a directory", path);
	if (st.st_uid != me && st.st_uid != 0)
		return perr_set(e, PLUMB_EPERM,
				"refusing to use %s: it belongs to uid %u, not to you (uid %u); chown it to yourself or "
				"set PLUMB_HOME to a directory of your own",
				path, (unsigned)st.st_uid, (unsigned)me);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return perr_set(e, PLUMB_EPERM,
				"refusing to use %s: it is writable by %s (mode %04o); `chmod go-w` it, or set PLUMB_HOME "
				"to a directory of your own",
				path, st.st_mode & S_IWOTH ? "every user" : "its group", (unsigned)(st.st_mode & 07777));
	return PLUMB_OK;
}

int fs_open_private_dir(int dirfd, const char *name, const char *path, bool create, struct perr *e)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && create) {
		if (mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST) {
			perr_set(e, PLUMB_EOUTPUT, "cannot create directory %s: %s", path, strerror(errno));
			return -1;
		}
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		int err = errno;
		struct stat st;
		if ((err == ELOOP || err == ENOTDIR) && fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			perr_set(e, PLUMB_EPERM, "refusing to use %s: it is %s; remove it (plumb makes its own) or set PLUMB_HOME elsewhere", path,
				 S_ISLNK(st.st_mode) ? "a symbolic link, which plumb does not follow inside its home"
						     : "not a directory");
		else
			perr_set(e, err == ENOENT ? PLUMB_ENOENT : PLUMB_EIO, "cannot use %s: %s", path, strerror(err));
		return -1;
	}
	if (fs_check_private_dir(fd, path, e)) {
		close(fd);
		return -1;
	}
	return fd;
}
