/* proc.h — samples a process tree from /proc: the root and every live descendant, rediscovered at each sample
 * (children come and go). Rates (CPU %, wake-ups/s) are deltas against the previous sample of the same process
 * (pid + start time); a process seen for the first time is measured over its life so far.
 * Compiled into both the plumb binary and libplumb.so: no stdio, no per-sample allocation once the tracker's
 * arrays have grown to the machine's process count. */
#ifndef PLUMB_METRICS_PROC_H
#define PLUMB_METRICS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define MPROC_NAME_MAX 64         /* comm is at most 15 bytes for user tasks, 64 for kernel workers */
#define MPROC_UNKNOWN UINT64_MAX  /* a figure that could not be read (another user's smaps_rollup, ...) */
#define MPROC_TREE_MAX 4096       /* processes kept per sample; a larger tree is cut (breadth first) */

/* One process of the tree at one sample. */
struct mproc {
	int pid;
	int ppid;
	bool main;                      /* the root of the tree */
	char name[MPROC_NAME_MAX];      /* comm, as the kernel reports it (may be any bytes) */
	double cpu_pct;                 /* user + system time over the interval, 100 = one CPU */
	double wakeups_per_s;           /* voluntary context switches of all threads per second */
	uint64_t rss_bytes;             /* VmRSS */
	uint64_t peak_rss_bytes;        /* VmHWM */
	uint64_t private_bytes;         /* smaps_rollup Private_Clean + Private_Dirty, or MPROC_UNKNOWN */
	uint32_t threads;
	/* raw counters, for the next sample's deltas */
	uint64_t start_ticks;           /* start time in clock ticks after boot: pid + this is the identity */
	uint64_t cpu_ticks;             /* utime + stime */
	uint64_t vcsw;                  /* sum of voluntary_ctxt_switches over live threads */
	double read_mono;               /* when cpu_ticks was read (CLOCK_MONOTONIC seconds): its interval's ends */
};

/* pid -> ppid of every process on the machine, as seen by the last scan (internal, reused across scans). */
struct mproc_link {
	int pid;
	int ppid;
};

/* Follows one tree across samples. Owns its arrays; MPROC_TRACKER_INIT is not needed: use mproc_tracker_init. */
struct mproc_tracker {
	int root;
	struct mproc *cur, *prev;       /* this sample's and the previous sample's processes (sorted by pid) */
	size_t ncur, nprev, cap;
	struct mproc_link *links;
	size_t nlinks, caplinks;
	int *queue;                     /* breadth-first walk of the tree (cap entries) */
	double prev_mono;               /* CLOCK_MONOTONIC seconds of the previous sample */
	bool truncated;                 /* the last sample held more than MPROC_TREE_MAX processes */
	long clk_tck;
	long page_size;
};

/* Prepares a tracker for the tree rooted at root_pid. PLUMB_ENOMEM on failure. */
enum plumb_err mproc_tracker_init(struct mproc_tracker *t, int root_pid, struct perr *e);
/* Frees the tracker's arrays; safe on a zeroed tracker. */
void mproc_tracker_release(struct mproc_tracker *t);

/* Takes one sample of the tree into t->cur[0..t->ncur) (sorted by pid; the root has main set). t->ncur is 0 when the root has exited (or is a zombie). Returns PLUMB_OK, or PLUMB_EIO when /proc
 * cannot be read, PLUMB_ENOMEM. */
enum plumb_err mproc_sample(struct mproc_tracker *t, struct perr *e);


#endif
