/* keeper.h — a small process that outlives plumb to end what plumb launched (docs/design.md §5.2): plumb
 * cannot clean up after a SIGKILL (CI's `timeout -s KILL`, the OOM killer), so a keeper forked beside the
 * launched command holds one end of a socket pair whose other end only plumb has. When it reads end of file
 * without plumb having said "done" first, plumb is gone: the keeper stops every process below the commands it
 * was told of (found again and again until none is new), then kills them all.
 *
 * Between plumb's death and the keeper's sweep the tree is found by parent links; a process whose parent ended
 * while plumb lived (an orphan, now a child of init) is still found, because the keeper walks the tree every
 * KEEPER_SCAN_NS and remembers each process it saw (by pid and start time, so a pid reused since is spared).
 *
 * plumb's end is close-on-exec: a command plumb starts does not hold it, but a process plumb forks without exec does,
 * and the keeper then hears of plumb's death only when that process ends too.
 *
 * Ownership: the caller owns struct keeper; keeper_end() (or keeper_forget() in a forked child) releases it. */
#ifndef PLUMB_OS_KEEPER_H
#define PLUMB_OS_KEEPER_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/err.h"

struct keeper {
	pid_t pid; /* the keeper process, -1 when none */
	int fd;    /* plumb's end of the socket pair (close-on-exec), -1 when none */
};
#define KEEPER_INIT { -1, -1 }
#define KEEPER_SCAN_NS 50000000ULL /* how often the keeper walks the tree it watches */
#define KEEPER_MAX 4096            /* processes it remembers */

/* Starts the keeper. PLUMB_EIO (with the cause) when it cannot be started; the caller then relies on the launched
 * command's parent-death signal alone. */
enum plumb_err keeper_start(struct keeper *k, struct perr *e);
/* Tells the keeper to watch pid (a process plumb just started) and everything it will start. No-op when k is
 * NULL or not started. Async-signal-safe (one write). */
void keeper_watch(const struct keeper *k, pid_t pid);
/* True when k runs. */
bool keeper_running(const struct keeper *k);
/* plumb is done with what it launched (ended or reaped it): the keeper leaves without touching anything, and is
 * reaped. Safe to call twice and on a keeper that never started. */
void keeper_end(struct keeper *k);

#endif
