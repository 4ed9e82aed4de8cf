/* atomic.c — where an output goes (resolve), temp + fsync + rename for files, direct writes for everything else.
 * Invariant: plumb never renames over, truncates by rename, or chmods anything but a regular file it is replacing,
 * and every temp file it creates is in the cleanup table (os/cleanup.h) from before it exists until it is
 * renamed or removed. */
#include "os/atomic.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "os/cleanup.h"

#define TEMP_MARK ".plumb-tmp."
#define TEMP_BASE_MAX 200 /* bytes of the output's name kept in its temp's name: the whole stays under NAME_MAX */
#define LINK_HOPS_MAX 40  /* as the kernel's MAXSYMLINKS */

enum target_kind {
	KIND_REPLACE, /* a regular file, or none yet: temp + rename */
	KIND_DIRECT,  /* a device, FIFO or socket: open and write */
	KIND_PROC,    /* a /proc magic link (/dev/stdout → /proc/self/fd/1): only the kernel can follow it */
};

static void atomic_free(struct atomic_file *af)
{
	cleanup_forget(af->slot);
	if (af->dirfd >= 0)
		close(af->dirfd);
	free(af->path);
	free(af->tmp_path);
	free(af->target);
	*af = (struct atomic_file)ATOMIC_FILE_INIT;
}

static enum plumb_err fail(struct perr *e, const char *path, int err)
{
	return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", path, strerror(err ? err : EIO));
}

/* The directory part of `path` ("." for a bare name); malloc'd, NULL when out of memory. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static bool on_procfs(const char *path)
{
	char *dir = dir_of(path);
	struct statfs fs;
	bool proc = dir && statfs(dir, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
	free(dir);
	return proc;
}

/* The content of symlink `path`, resolved against the link's directory; malloc'd, NULL with errno set. */
static char *follow_link(const char *path, off_t size_hint)
{
	size_t cap = size_hint > 0 ? (size_t)size_hint + 1 : 256;
	for (;;) {
		char *buf = malloc(cap);
		if (!buf)
			return NULL;
		ssize_t n = readlink(path, buf, cap);
		if (n < 0) {
			free(buf);
			return NULL;
		}
		if ((size_t)n < cap) {
			buf[n] = '\0';
			if (buf[0] == '/')
				return buf;
			char *dir = dir_of(path), *joined = NULL;
			if (dir && asprintf(&joined, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, buf) < 0)
				joined = NULL;
			free(dir);
			free(buf);
			if (!joined)
				errno = ENOMEM;
			return joined;
		}
		free(buf);
		if (cap > PATH_MAX * 4) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		cap *= 2;
	}
}

/* Whether a write may follow the symlink at `path` (lstat'ed into *link): only one this user made, or the
 * owner of the directory it is in — the kernel's protected_symlinks rule, applied in every directory, since
 * plumb follows the last link itself and the kernel's check never sees it. Else root writing to
 * /tmp/out.folded would replace whatever another user's link there names. */
static bool link_trusted(const char *path, const struct stat *link)
{
	if (link->st_uid == geteuid())
		return true;
	char *dir = dir_of(path);
	struct stat ds;
	bool ok = dir && stat(dir, &ds) == 0 && ds.st_uid == link->st_uid;
	free(dir);
	return ok;
}

/* Follows `path` through symlinks to the file a write must reach; *target is malloc'd. A missing file (or a
 * dangling link's missing target) is KIND_REPLACE: it is created. */
static enum plumb_err resolve(const char *path, char **target, enum target_kind *kind, struct perr *e)
{
	if (!path[0])
		return fail(e, "''", ENOENT);
	char *cur = strdup(path);
	if (!cur)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (int hops = 0;; hops++) {
		struct stat st;
		int err = 0;
		if (lstat(cur, &st) != 0) {
			if (errno != ENOENT) {
				err = errno;
			} else {
				*kind = KIND_REPLACE;
				break;
			}
		} else if (S_ISREG(st.st_mode)) {
			*kind = KIND_REPLACE;
			break;
		} else if (S_ISDIR(st.st_mode)) {
			free(cur);
			return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: it is a directory", path);
		} else if (!S_ISLNK(st.st_mode)) {
			*kind = KIND_DIRECT;
			break;
		} else if (on_procfs(cur)) {
			*kind = KIND_PROC;
			break;
		} else if (hops >= LINK_HOPS_MAX) {
			err = ELOOP;
		} else if (!link_trusted(cur, &st)) {
			perr_set(e, PLUMB_EOUTPUT,
				 "cannot write %s: %s is a symbolic link of another user (uid %u), which plumb does not follow",
				 path, strcmp(cur, path) == 0 ? "it" : cur, (unsigned)st.st_uid);
			free(cur);
			return PLUMB_EOUTPUT;
		} else {
			char *next = follow_link(cur, st.st_size);
			if (!next) {
				err = errno;
			} else {
				free(cur);
				cur = next;
				continue;
			}
		}
		free(cur);
		return fail(e, path, err);
	}
	*target = cur;
	return PLUMB_OK;
}

bool atomic_is_temp_name(const char *name, pid_t *pid)
{
	size_t n = strlen(name), mark = strlen(TEMP_MARK);
	if (n < 1 + 1 + mark + 1 + 1 + 6 || name[0] != '.')
		return false;
	const char *rnd = name + n - 6;
	for (int i = 0; i < 6; i++)
		if (!isascii((unsigned char)rnd[i]) || !isalnum((unsigned char)rnd[i]))
			return false;
	const char *dot = rnd - 1, *digits = dot;
	if (*dot != '.')
		return false;
	while (digits > name && isdigit((unsigned char)digits[-1]))
		digits--;
	if (digits == dot || dot - digits > 10 || (size_t)(digits - name) < 2 + mark ||
	    memcmp(digits - mark, TEMP_MARK, mark) != 0)
		return false;
	long long v = 0;
	for (const char *p = digits; p < dot; p++)
		v = v * 10 + (*p - '0');
	if (v <= 0 || v > INT_MAX)
		return false;
	*pid = (pid_t)v;
	return true;
}

/* Removes, from `dir`, temp files that a plumb process killed without a chance to clean (SIGKILL, a power cut)
 * left: only entries named as plumb's temps, regular, owned by this user, whose writer's pid is gone and whose
 * lock nobody holds. Best effort: nothing here fails the write. */
static void sweep_stale_fd(int dfd)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	uid_t me = geteuid();
	pid_t self = getpid();
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		pid_t pid;
		if (!atomic_is_temp_name(de->d_name, &pid) || pid == self ||
		    (de->d_type != DT_REG && de->d_type != DT_UNKNOWN))
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue; /* its writer may still be at work */
		int fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat st, now;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == me && st.st_nlink == 1 &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 && fstatat(dfd, de->d_name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
		    now.st_dev == st.st_dev && now.st_ino == st.st_ino)
			unlinkat(dfd, de->d_name, 0);
		close(fd);
	}
	closedir(d);
}

static void sweep_stale(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		sweep_stale_fd(dfd);
}

/* sweep_stale in the directory open on dirfd (through its own descriptor: the caller's is left open). */
static void sweep_stale_at(int dirfd)
{
	int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		sweep_stale_fd(dfd);
}

static void random_suffix(char out[7])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned counter;
	unsigned char r[6];
	if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)++counter * 0x9e3779b97f4a7c15ULL;
		for (int i = 0; i < 6; i++, x >>= 8)
			r[i] = (unsigned char)x;
	}
	for (int i = 0; i < 6; i++)
		out[i] = set[r[i] % (sizeof set - 1)];
	out[6] = '\0';
}

/* Creates af->tmp_path in `dir`, named after `base`; opens af->fp on it. The name is in the cleanup table
 * before the file exists, so no signal finds a temp file the table does not know. */
static enum plumb_err make_temp(struct atomic_file *af, const char *dir, const char *base, struct perr *e)
{
	size_t blen = strnlen(base, TEMP_BASE_MAX), cap = (dir ? strlen(dir) : 0) + blen + 64;
	af->tmp_path = malloc(cap);
	if (!af->tmp_path)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	int fd = -1, err = EEXIST;
	for (int tries = 0; fd < 0 && err == EEXIST && tries < 100; tries++) {
		char rnd[7];
		random_suffix(rnd);
		if (af->dirfd >= 0) { /* a name in the directory; the signal handler reaches it through the descriptor */
			char proc[64 + TEMP_BASE_MAX + 64];
			snprintf(af->tmp_path, cap, ".%.*s" TEMP_MARK "%ld.%s", (int)blen, base, (long)getpid(), rnd);
			snprintf(proc, sizeof proc, "/proc/self/fd/%d/%s", af->dirfd, af->tmp_path);
			af->slot = cleanup_add(proc);
		} else {
			snprintf(af->tmp_path, cap, "%s/.%.*s" TEMP_MARK "%ld.%s", strcmp(dir, "/") == 0 ? "" : dir,
				 (int)blen, base, (long)getpid(), rnd);
			af->slot = cleanup_add(af->tmp_path);
		}
		fd = openat(af->dirfd >= 0 ? af->dirfd : AT_FDCWD, af->tmp_path,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0) {
			err = errno;
			cleanup_forget(af->slot);
			af->slot = -1;
		}
	}
	if (fd < 0)
		return fail(e, af->path, err);
	/* held until the file is closed: a later run's sweep leaves a temp alone while its writer lives */
	flock(fd, LOCK_EX | LOCK_NB);
	if (fchmod(fd, 0600) != 0 || !(af->fp = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		unlinkat(af->dirfd >= 0 ? af->dirfd : AT_FDCWD, af->tmp_path, 0);
		return fail(e, af->path, err);
	}
	setvbuf(af->fp, NULL, _IOFBF, 1 << 16);
	return PLUMB_OK;
}

/* A connection to the listening socket at `path`: the direct write for a socket. */
static int connect_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		int err = errno;
		close(fd);
		errno = err;
		fd = -1;
	}
	return fd;
}

/* /proc/self/fd/N (or /proc/PID/fd/N of this process) names one of our own descriptors: N, else -1. */
static int own_fd_number(const char *path)
{
	char self[64];
	snprintf(self, sizeof self, "/proc/%ld/fd/", (long)getpid());
	const char *rest = NULL;
	if (strncmp(path, "/proc/self/fd/", 14) == 0)
		rest = path + 14;
	else if (strncmp(path, "/proc/thread-self/fd/", 21) == 0)
		rest = path + 21;
	else if (strncmp(path, self, strlen(self)) == 0)
		rest = path + strlen(self);
	char *end;
	long n = rest && isdigit((unsigned char)*rest) ? strtol(rest, &end, 10) : -1;
	return n >= 0 && n <= INT_MAX && rest && *end == '\0' ? (int)n : -1;
}

/* Opens a FIFO for writing without blocking on a FIFO no one reads: O_NONBLOCK fails with ENXIO while there is
 * no reader, so the open is retried until ATOMIC_FIFO_WAIT_MS have passed (the wait a FIFO input is given,
 * docs/design.md §3.4); the descriptor then blocks again, as a written stream should. -1 with errno set. */
static int open_fifo(const char *path, int flags)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		int fd = open(path, flags | O_NONBLOCK);
		if (fd >= 0) {
			int fl = fcntl(fd, F_GETFL);
			if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
				int err = errno;
				close(fd);
				errno = err;
				return -1;
			}
			return fd;
		}
		if (errno != ENXIO)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long ms = (now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000L;
		if (ms >= ATOMIC_FIFO_WAIT_MS) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct timespec nap = { 0, 10000000 }; /* 10 ms */
		nanosleep(&nap, NULL);
	}
}

/* Opens a special file for writing, in place: no rename, no chmod, no O_CREAT. */
static enum plumb_err open_direct(struct atomic_file *af, enum target_kind kind, struct perr *e)
{
	int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (kind == KIND_PROC ? 0 : O_NOFOLLOW);
	struct stat ls;
	int fd = stat(af->target, &ls) == 0 && S_ISFIFO(ls.st_mode) ? open_fifo(af->target, flags)
									: open(af->target, flags);
	if (fd < 0 && errno == ETIMEDOUT)
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: a FIFO no one read for %d s", af->path,
				ATOMIC_FIFO_WAIT_MS / 1000);
	if (fd < 0 && errno == ENXIO && kind == KIND_PROC && own_fd_number(af->target) >= 0)
		fd = fcntl(own_fd_number(af->target), F_DUPFD_CLOEXEC, 3); /* a socket reopens only as itself */
	else if (fd < 0 && errno == ENXIO)
		fd = connect_socket(af->target);
	if (fd < 0)
		return fail(e, af->path, errno);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return fail(e, af->path, err);
	}
	if (S_ISREG(st.st_mode) && kind != KIND_PROC) {
		close(fd); /* it became a regular file since we looked: never write one in place */
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: it changed while being opened", af->path);
	}
	if (S_ISREG(st.st_mode) && ftruncate(fd, 0) != 0) { /* /dev/stdout on a file: as `>` would */
		int err = errno;
		close(fd);
		return fail(e, af->path, err);
	}
	if (!(af->fp = fdopen(fd, "w"))) {
		int err = errno;
		close(fd);
		return fail(e, af->path, err);
	}
	setvbuf(af->fp, NULL, _IOFBF, 1 << 16);
	return PLUMB_OK;
}

enum plumb_err atomic_open(struct atomic_file *af, const char *path, struct perr *e)
{
	*af = (struct atomic_file)ATOMIC_FILE_INIT;
	if (!(af->path = strdup(path)))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (strcmp(path, "-") == 0) {
		af->fp = stdout;
		return PLUMB_OK;
	}
	enum target_kind kind;
	enum plumb_err rc = resolve(path, &af->target, &kind, e);
	if (!rc && kind != KIND_REPLACE)
		rc = open_direct(af, kind, e);
	if (!rc && kind == KIND_REPLACE) {
		char *dir = dir_of(af->target);
		if (!dir) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		} else {
			sweep_stale(dir);
			rc = make_temp(af, dir, base_of(af->target), e);
		}
		free(dir);
	}
	if (rc)
		atomic_free(af);
	return rc;
}

/* Flushes (and with `sync`, fsyncs) the temporary file, then renames it over the target. */
/* Puts the temporary file in place only when nothing is there: rename without replacing where the file system
 * supports it, else a hard link (which fails on an existing name too). */
static int rename_noreplace(int dfd, const char *from, const char *to)
{
	if (renameat2(dfd, from, dfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (linkat(dfd, from, dfd, to, 0) != 0)
		return -1;
	unlinkat(dfd, from, 0);
	return 0;
}

/* Flushes (and with `sync`, fsyncs) the temporary file, then renames it over the target (or, with `excl`, to
 * the target only when it does not exist: PLUMB_EINVAL then). */
static enum plumb_err commit(struct atomic_file *af, bool sync, bool excl, struct perr *e)
{
	if (!af->fp)
		return perr_set(e, PLUMB_EOUTPUT, "output was not opened");
	if (af->fp == stdout) {
		int bad = fflush(af->fp) != 0 || ferror(af->fp);
		int err = errno;
		atomic_free(af);
		return bad ? perr_set(e, PLUMB_EOUTPUT, "cannot write to standard output: %s", strerror(err)) : PLUMB_OK;
	}
	bool replace = af->tmp_path != NULL;
	int bad = ferror(af->fp) || fflush(af->fp) != 0 || (sync && replace && fsync(fileno(af->fp)) != 0);
	int err = errno;
	if (fclose(af->fp) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	af->fp = NULL;
	int dfd = af->dirfd >= 0 ? af->dirfd : AT_FDCWD;
	excl = excl || af->excl;
	if (!bad && replace &&
	    (excl ? rename_noreplace(dfd, af->tmp_path, af->target) : renameat(dfd, af->tmp_path, dfd, af->target)) != 0) {
		bad = 1;
		err = errno;
	}
	if (bad && replace)
		unlinkat(dfd, af->tmp_path, 0);
	enum plumb_err code = PLUMB_OK;
	if (bad && excl && err == EEXIST)
		code = perr_set(e, PLUMB_EINVAL, "cannot write %s: %s", af->path, strerror(err));
	else if (bad)
		code = fail(e, af->path, err);
	atomic_free(af);
	return code;
}

enum plumb_err atomic_commit(struct atomic_file *af, struct perr *e)
{
	return commit(af, true, false, e);
}

enum plumb_err atomic_commit_nosync(struct atomic_file *af, struct perr *e)
{
	return commit(af, false, false, e);
}

void atomic_abort(struct atomic_file *af)
{
	if (af->fp && af->fp != stdout) {
		fclose(af->fp);
		if (af->tmp_path)
			unlinkat(af->dirfd >= 0 ? af->dirfd : AT_FDCWD, af->tmp_path, 0);
	}
	atomic_free(af); /* forgets the cleanup slot only now: a signal before the unlink still removes it */
}

static enum plumb_err write_file(const char *path, const void *data, size_t len, bool excl, struct perr *e)
{
	struct atomic_file af;
	enum plumb_err rc = atomic_open(&af, path, e);
	if (rc)
		return rc;
	if (len && fwrite(data, 1, len, af.fp) != len) {
		int err = errno;
		atomic_abort(&af);
		return fail(e, path, err);
	}
	return commit(&af, true, excl, e);
}

enum plumb_err atomic_open_at(struct atomic_file *af, int dirfd, const char *name, const char *shown, bool excl,
			      struct perr *e)
{
	*af = (struct atomic_file)ATOMIC_FILE_INIT;
	if (!(af->path = strdup(shown)) || !(af->target = strdup(name))) {
		atomic_free(af);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	if (!name[0] || strchr(name, '/')) {
		atomic_free(af);
		return fail(e, shown, EINVAL);
	}
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
		atomic_free(af);
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: it is %s, which plumb never writes through here", shown,
				S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
	}
	if ((af->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) < 0) {
		int err = errno;
		atomic_free(af);
		return fail(e, shown, err);
	}
	af->excl = excl;
	sweep_stale_at(af->dirfd);
	enum plumb_err rc = make_temp(af, NULL, name, e);
	if (rc)
		atomic_free(af);
	return rc;
}

enum plumb_err atomic_write_file_at(int dirfd, const char *name, const char *shown, const void *data, size_t len,
				    bool excl, struct perr *e)
{
	struct atomic_file af;
	enum plumb_err rc = atomic_open_at(&af, dirfd, name, shown, excl, e);
	if (rc)
		return rc;
	if (len && fwrite(data, 1, len, af.fp) != len) {
		int err = errno;
		atomic_abort(&af);
		return fail(e, shown, err);
	}
	return commit(&af, true, excl, e);
}

enum plumb_err atomic_write_file(const char *path, const void *data, size_t len, struct perr *e)
{
	return write_file(path, data, len, false, e);
}

enum plumb_err atomic_write_file_excl(const char *path, const void *data, size_t len, struct perr *e)
{
	return write_file(path, data, len, true, e);
}

enum plumb_err atomic_check_writable(const char *path, struct perr *e)
{
	if (strcmp(path, "-") == 0)
		return PLUMB_OK;
	char *target = NULL;
	enum target_kind kind;
	enum plumb_err rc = resolve(path, &target, &kind, e);
	if (!rc && kind != KIND_REPLACE) {
		struct stat st;
		/* a socket is checked when connected; a FIFO is not opened here (that would end a reader's input) */
		if (stat(target, &st) != 0 || (!S_ISSOCK(st.st_mode) && access(target, W_OK) != 0))
			rc = fail(e, path, errno);
	}
	free(target);
	if (rc || kind != KIND_REPLACE)
		return rc;
	struct atomic_file af;
	rc = atomic_open(&af, path, e);
	if (!rc)
		atomic_abort(&af);
	return rc;
}

enum plumb_err atomic_scratch_open(struct atomic_file *af, const char *output, struct perr *e)
{
	*af = (struct atomic_file)ATOMIC_FILE_INIT;
	if (!(af->path = strdup(output)))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	enum target_kind kind = KIND_DIRECT;
	enum plumb_err rc = strcmp(output, "-") == 0 ? PLUMB_OK : resolve(output, &af->target, &kind, e);
	char *dir = NULL;
	if (!rc && kind == KIND_REPLACE) {
		dir = dir_of(af->target);
	} else if (!rc) {
		const char *tmpdir = getenv("TMPDIR");
		dir = strdup(tmpdir && tmpdir[0] == '/' ? tmpdir : "/tmp");
	}
	if (!rc && !dir)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (!rc) {
		sweep_stale(dir);
		rc = make_temp(af, dir, kind == KIND_REPLACE ? base_of(af->target) : "plumb-scratch", e);
	}
	free(dir);
	if (rc)
		atomic_free(af);
	return rc;
}
