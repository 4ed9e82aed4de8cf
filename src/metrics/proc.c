/* proc.c — the /proc side of `plumb metrics`: one scan of /proc/[pid]/stat finds the tree (pid -> ppid), then
 * stat, task/[tid]/status and smaps_rollup of each member give its figures. Everything is read through
 * os/procfs.h, which allocates nothing, so a sample allocates nothing once the arrays have grown. */
#include "metrics/proc.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/clock.h"
#include "os/procfs.h"

/* CLOCK_BOOTTIME in seconds: start times in /proc count from boot. */
static double boot_seconds(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The fields of a stat line a sample keeps; false when pid is gone, malformed, or a zombie. */
static bool read_stat(int pid, struct mproc *p)
{
	struct procfs_stat st;
	if (!procfs_stat_read(pid, 0, &st) || st.state == 'Z' || st.state == 'X')
		return false;
	p->pid = st.pid;
	p->ppid = st.ppid;
	snprintf(p->name, sizeof p->name, "%s", st.comm);
	p->cpu_ticks = st.utime + st.stime;
	p->read_mono = mono_seconds();
	p->threads = (uint32_t)st.num_threads;
	p->start_ticks = st.starttime;
	return true;
}

enum plumb_err mproc_tracker_init(struct mproc_tracker *t, int root_pid, struct perr *e)
{
	memset(t, 0, sizeof *t);
	t->root = root_pid;
	t->clk_tck = sysconf(_SC_CLK_TCK);
	if (t->clk_tck <= 0)
		t->clk_tck = 100;
	t->page_size = sysconf(_SC_PAGESIZE);
	if (t->page_size <= 0)
		t->page_size = 4096;
	t->cap = 16;
	t->cur = calloc(t->cap, sizeof *t->cur);
	t->prev = calloc(t->cap, sizeof *t->prev);
	t->queue = calloc(t->cap, sizeof *t->queue);
	if (!t->cur || !t->prev || !t->queue) {
		mproc_tracker_release(t);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	return PLUMB_OK;
}

void mproc_tracker_release(struct mproc_tracker *t)
{
	free(t->cur);
	free(t->prev);
	free(t->queue);
	free(t->links);
	memset(t, 0, sizeof *t);
}

static bool grow_tree(struct mproc_tracker *t, size_t need)
{
	if (need <= t->cap)
		return true;
	size_t cap = grow_cap(need, t->cap);
	if (!REALLOC_ARRAY(t->cur, cap) || !REALLOC_ARRAY(t->prev, cap) || !REALLOC_ARRAY(t->queue, cap))
		return false;
	t->cap = cap;
	return true;
}

static int cmp_link_ppid(const void *a, const void *b)
{
	const struct mproc_link *x = a, *y = b;
	if (x->ppid != y->ppid)
		return x->ppid < y->ppid ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static int cmp_mproc_pid(const void *a, const void *b)
{
	const struct mproc *x = a, *y = b;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Every live, non-zombie process of the machine with its parent, into t->links. Sets *root_alive. */
static enum plumb_err scan_links(struct mproc_tracker *t, bool *root_alive, struct perr *e)
{
	*root_alive = false;
	t->nlinks = 0;
	struct procfs_dir d;
	if (!procfs_pids_open(&d))
		return perr_set(e, PLUMB_EIO, "cannot read /proc: %s", strerror(errno));
	for (pid_t pid; (pid = procfs_dir_next(&d)) > 0;) {
		struct procfs_stat st;
		if (!procfs_stat_read(pid, 0, &st) || st.state == 'Z' || st.state == 'X')
			continue; /* gone meanwhile, or a zombie */
		if (pid == t->root) {
			*root_alive = true;
			continue; /* the root is the start of the walk, not anyone's child here */
		}
		if (!ALLOC_GROW(t->links, t->nlinks + 1, t->caplinks)) {
			procfs_dir_close(&d);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
		t->links[t->nlinks++] = (struct mproc_link){ pid, st.ppid };
	}
	procfs_dir_close(&d);
	qsort(t->links, t->nlinks, sizeof *t->links, cmp_link_ppid);
	return PLUMB_OK;
}

/* Voluntary context switches of every live thread, and the memory lines of the leader's status. */
static void read_threads(struct mproc *p)
{
	struct procfs_dir d;
	p->vcsw = 0;
	if (!procfs_tasks_open(&d, p->pid))
		return;
	for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
		struct procfs_status st;
		if (!procfs_status_read(p->pid, tid, &st))
			continue;
		p->vcsw += st.voluntary_ctxt_switches;
		if (tid == p->pid) {
			if (st.vm_rss_bytes != PROCFS_UNKNOWN)
				p->rss_bytes = st.vm_rss_bytes;
			if (st.vm_hwm_bytes != PROCFS_UNKNOWN)
				p->peak_rss_bytes = st.vm_hwm_bytes;
		}
	}
	procfs_dir_close(&d);
}

static void read_private(struct mproc *p)
{
	char buf[4096];
	ssize_t len = procfs_read(p->pid, 0, "smaps_rollup", buf, sizeof buf);
	uint64_t clean, dirty;
	if (len > 0 && procfs_field_u64(buf, (size_t)len, "Private_Clean:", &clean) &&
	    procfs_field_u64(buf, (size_t)len, "Private_Dirty:", &dirty))
		p->private_bytes = (clean + dirty) * 1024;
	else
		p->private_bytes = MPROC_UNKNOWN;
}

/* Reads one member of the tree; false when it has gone since the scan. */
static bool read_process(int pid, struct mproc *p)
{
	memset(p, 0, sizeof *p);
	if (!read_stat(pid, p))
		return false;
	read_threads(p);
	read_private(p);
	return true;
}

/* The first of n elements (each `size` bytes, sorted by the int at offset `off`) whose int is >= key; n if none. */
static size_t lower_bound(const void *base, size_t n, size_t size, size_t off, int key)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int v;
		memcpy(&v, (const char *)base + mid * size + off, sizeof v);
		if (v < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct mproc *find_prev(const struct mproc_tracker *t, int pid)
{
	size_t i = lower_bound(t->prev, t->nprev, sizeof *t->prev, offsetof(struct mproc, pid), pid);
	return i < t->nprev && t->prev[i].pid == pid ? &t->prev[i] : NULL;
}

enum plumb_err mproc_sample(struct mproc_tracker *t, struct perr *e)
{
	/* this sample's predecessor becomes prev */
	struct mproc *swap = t->prev;
	t->prev = t->cur;
	t->nprev = t->ncur;
	t->cur = swap;
	t->ncur = 0;
	t->truncated = false;

	bool root_alive;
	enum plumb_err rc = scan_links(t, &root_alive, e);
	if (rc)
		return rc;
	double now_mono = mono_seconds();
	double now_boot = boot_seconds();
	if (!root_alive) {
		t->prev_mono = now_mono;
		return PLUMB_OK;
	}

	/* breadth-first from the root over links sorted by ppid */
	size_t nq = 0;
	t->queue[nq++] = t->root;
	for (size_t i = 0; i < nq; i++) {
		int parent = t->queue[i];
		size_t lo = lower_bound(t->links, t->nlinks, sizeof *t->links, offsetof(struct mproc_link, ppid), parent);
		for (; lo < t->nlinks && t->links[lo].ppid == parent; lo++) {
			if (nq >= MPROC_TREE_MAX) {
				t->truncated = true;
				break;
			}
			if (nq == t->cap && !grow_tree(t, nq + 1))
				return perr_set(e, PLUMB_ENOMEM, "out of memory");
			t->queue[nq++] = t->links[lo].pid;
		}
	}

	for (size_t i = 0; i < nq; i++) {
		struct mproc *p = &t->cur[t->ncur];
		if (!read_process(t->queue[i], p))
			continue;
		p->main = p->pid == t->root;
		t->ncur++;
	}
	qsort(t->cur, t->ncur, sizeof *t->cur, cmp_mproc_pid);

	double dt = t->prev_mono > 0 ? now_mono - t->prev_mono : 0;
	double tck = (double)t->clk_tck;
	for (size_t i = 0; i < t->ncur; i++) {
		struct mproc *p = &t->cur[i];
		const struct mproc *q = find_prev(t, p->pid);
		double span;
		uint64_t dcpu, dvcsw;
		if (q && q->start_ticks == p->start_ticks && dt > 0) {
			/* between its own two reads, not the sweeps' clock readings: a sweep walks all of /proc and then
			 * the members before this one, and on a loaded machine how long that takes varies from sweep to
			 * sweep (beside two CI runs a burner's recorded CPU averaged 1.6x its own measure) */
			span = p->read_mono > q->read_mono ? p->read_mono - q->read_mono : dt;
			dcpu = p->cpu_ticks > q->cpu_ticks ? p->cpu_ticks - q->cpu_ticks : 0;
			dvcsw = p->vcsw > q->vcsw ? p->vcsw - q->vcsw : 0; /* exited threads take their counts along */
		} else { /* new here: over its life so far */
			span = now_boot - (double)p->start_ticks / tck;
			dcpu = p->cpu_ticks;
			dvcsw = p->vcsw;
		}
		if (span < 1.0 / tck)
			span = 1.0 / tck;
		p->cpu_pct = 100.0 * ((double)dcpu / tck) / span;
		p->wakeups_per_s = (double)dvcsw / span;
	}
	t->prev_mono = now_mono;
	return PLUMB_OK;
}
