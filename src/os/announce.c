/* announce.c — see announce.h. The start time is what makes a lock trustworthy across pid reuse: both the
 * writer and the reader take it from procfs_start_time, so they cannot disagree on the field. */
#include "os/announce.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "os/atomic.h"
#include "os/fs.h"
#include "os/procfs.h"

bool announce_parse(const char *text, size_t len, struct announce *out)
{
	const char *s = text, *end = text + len;
	uint64_t v[2] = { 0, 0 };
	int got = 0;
	while (got < 2) {
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (s >= end || *s < '0' || *s > '9')
			break;
		uint64_t x = 0;
		while (s < end && *s >= '0' && *s <= '9') {
			if (x > (UINT64_MAX - 9) / 10)
				return false;
			x = x * 10 + (uint64_t)(*s++ - '0');
		}
		v[got++] = x;
	}
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
		s++;
	if (got == 0 || s != end || v[0] == 0 || v[0] > 0x7fffffff)
		return false;
	out->pid = (pid_t)v[0];
	out->start = v[1];
	return true;
}

int announce_format(char *buf, size_t n, const struct announce *a)
{
	int w = snprintf(buf, n, "%ld %llu\n", (long)a->pid, (unsigned long long)a->start);
	return w >= 0 && (size_t)w < n ? w : -1;
}

enum announce_state announce_read(const char *path, struct announce *out)
{
	char text[128];
	size_t n;
	struct perr e = PERR_INIT;
	memset(out, 0, sizeof *out);
	/* a lock is the user's own file in the user's own directory: never a link, a FIFO or another user's */
	if (fs_read_trusted_buf(AT_FDCWD, path, geteuid(), text, sizeof text, &n, &e) != PLUMB_OK || n == 0 ||
	    !announce_parse(text, n, out))
		return ANNOUNCE_NONE;
	if (kill(out->pid, 0) != 0 && errno == ESRCH)
		return ANNOUNCE_STALE;
	if (out->start != 0 && procfs_start_time(out->pid) != out->start)
		return ANNOUNCE_STALE;
	return ANNOUNCE_LIVE;
}

static enum plumb_err announce_write_in(int dirfd, const char *file, const char *path, pid_t pid, struct perr *e)
{
	struct announce a = { pid, procfs_start_time(pid) };
	char text[64];
	int len = announce_format(text, sizeof text, &a);
	struct atomic_file af;
	enum plumb_err rc = file ? atomic_open_at(&af, dirfd, file, path, false, e) : atomic_open(&af, path, e);
	if (rc)
		return rc;
	if (fwrite(text, 1, (size_t)len, af.fp) != (size_t)len) {
		int err = errno;
		atomic_abort(&af);
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", path, strerror(err));
	}
	return atomic_commit_nosync(&af, e); /* once at start-up; no fsync stall for the host program */
}

enum plumb_err announce_write(const char *path, pid_t pid, struct perr *e)
{
	return announce_write_in(AT_FDCWD, NULL, path, pid, e);
}

enum plumb_err announce_write_at(int dirfd, const char *file, const char *path, pid_t pid, struct perr *e)
{
	return announce_write_in(dirfd, file, path, pid, e);
}
