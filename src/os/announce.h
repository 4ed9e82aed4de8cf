/* announce.h — the target-announcement file, $PLUMB_HOME/targets/NAME.lock (STORE_TARGETS): one line
 * "PID STARTTIME\n", STARTTIME being field 22 of /proc/PID/stat (0 when it could not be read). libplumb's
 * plumb_announce() writes it; `plumb record --target` reads it. A file whose process is gone, or whose pid now
 * belongs to a process with another start time, is stale: never trusted, replaced by the next announcer.
 * libplumb calls this from the program it is linked into: the reader allocates nothing, the writer only the
 * temporary file's handle. */
#ifndef PLUMB_OS_ANNOUNCE_H
#define PLUMB_OS_ANNOUNCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"

struct announce {
	pid_t pid;
	uint64_t start;  /* start time in clock ticks after boot; 0 unknown (then the pid alone decides) */
};

/* Parses "PID[ STARTTIME]" (trailing blanks and newline allowed). False when it is not that. */
bool announce_parse(const char *text, size_t len, struct announce *out);
/* The file's text for pid into buf; its length, or -1 when it does not fit. */
int announce_format(char *buf, size_t n, const struct announce *a);

enum announce_state {
	ANNOUNCE_NONE = 0, /* no such file, or not an announcement */
	ANNOUNCE_STALE,    /* its process is gone, or the pid was reused by another process */
	ANNOUNCE_LIVE,     /* the process that wrote it is running */
};
/* Reads the announcement at path into *out (filled for STALE and LIVE) and says whether its process lives. A
 * file that breaks the trust rule of os/fs.h (a link, not regular, another user's, over 127 bytes) is NONE. */
enum announce_state announce_read(const char *path, struct announce *out);
/* Writes path whole (temp + rename, 0600) naming pid with its current start time. PLUMB_EOUTPUT on failure. */
enum plumb_err announce_write(const char *path, pid_t pid, struct perr *e);
/* The same as the entry `file` of the directory open on dirfd (path names it in messages): nothing is looked up
 * again by path between the check of plumb's home and the write (docs/design.md §3.5). */
enum plumb_err announce_write_at(int dirfd, const char *file, const char *path, pid_t pid, struct perr *e);

#endif
