/* proc.c — the /proc side of `plumb metrics`: one scan of /proc/[pid]/stat finds the tree (pid -> ppid), then
 * stat, task/[tid]/status and smaps_rollup of each member give its figures. Files are read with open/read into
 * stack buffers and directories with getdents64, so a sample allocates nothing once the arrays have grown. */
#include "metrics/proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"

static double clock_seconds(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads up to cap-1 bytes of a (small, /proc) file and NUL-terminates them; returns the length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	while (len + 1 < cap) {
		ssize_t n = read(fd, buf + len, cap - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

static bool parse_u64(const char **s, const char *end, uint64_t *v)
{
	const char *p = *s;
	while (p < end && *p == ' ')
		p++;
	if (p >= end || *p < '0' || *p > '9')
		return false;
	uint64_t x = 0;
	while (p < end && *p >= '0' && *p <= '9')
		x = x * 10 + (uint64_t)(*p++ - '0');
	*v = x;
	*s = p;
	return true;
}

static bool parse_i64(const char **s, const char *end, int64_t *v)
{
	const char *p = *s;
	while (p < end && *p == ' ')
		p++;
	bool neg = p < end && *p == '-';
	if (neg)
		p++;
	uint64_t u;
	if (!parse_u64(&p, end, &u))
		return false;
	*v = neg ? -(int64_t)u : (int64_t)u;
	*s = p;
	return true;
}

bool mproc_parse_stat(const char *text, size_t len, struct mproc *p, char *state)
{
	const char *end = text + len;
	const char *open_paren = memchr(text, '(', len);
	const char *close_paren = NULL;
	for (const char *q = end; q > text; q--)
		if (q[-1] == ')') {
			close_paren = q - 1;
			break;
		}
	if (!open_paren || !close_paren || close_paren < open_paren)
		return false;
	const char *s = text;
	int64_t pid;
	if (!parse_i64(&s, open_paren, &pid) || pid <= 0 || pid > 0x7fffffff)
		return false;
	size_t n = (size_t)(close_paren - open_paren - 1);
	if (n >= MPROC_NAME_MAX)
		n = MPROC_NAME_MAX - 1;
	memcpy(p->name, open_paren + 1, n);
	p->name[n] = '\0';
	p->pid = (int)pid;
	s = close_paren + 1;
	while (s < end && *s == ' ')
		s++;
	if (s >= end)
		return false;
	*state = *s++;
	/* fields 4.. after the state; we need 4 ppid, 14 utime, 15 stime, 20 num_threads, 22 starttime */
	int64_t f[23] = { 0 };
	for (int i = 4; i <= 22; i++)
		if (!parse_i64(&s, end, &f[i]))
			return false;
	p->ppid = (int)f[4];
	p->cpu_ticks = (uint64_t)(f[14] < 0 ? 0 : f[14]) + (uint64_t)(f[15] < 0 ? 0 : f[15]);
	p->threads = f[20] < 0 ? 0 : (uint32_t)f[20];
	p->start_ticks = (uint64_t)(f[22] < 0 ? 0 : f[22]);
	return true;
}

bool mproc_parse_field(const char *text, size_t len, const char *key, uint64_t *value)
{
	size_t klen = strlen(key);
	const char *end = text + len;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *lend = nl ? nl : end;
		if ((size_t)(lend - line) > klen && memcmp(line, key, klen) == 0) {
			const char *s = line + klen;
			while (s < lend && (*s == ' ' || *s == '\t'))
				s++;
			return parse_u64(&s, lend, value);
		}
		line = nl ? nl + 1 : end;
	}
	return false;
}

bool mproc_alive(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	ssize_t n = read_small(path, buf, sizeof buf);
	struct mproc p;
	char state;
	if (n <= 0 || !mproc_parse_stat(buf, (size_t)n, &p, &state))
		return false;
	return state != 'Z' && state != 'X';
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

static int pid_of_name(const char *s)
{
	long v = 0;
	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 0x7fffffff / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return (int)v;
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
	int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return perr_set(e, PLUMB_EIO, "cannot read /proc: %s", strerror(errno));
	char dents[8192] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = getdents64(fd, dents, sizeof dents);
		if (n < 0) {
			int err = errno;
			close(fd);
			return perr_set(e, PLUMB_EIO, "cannot list /proc: %s", strerror(err));
		}
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(dents + off);
			off += d->d_reclen;
			int pid = pid_of_name(d->d_name);
			if (pid <= 0)
				continue;
			char path[64], buf[1024];
			snprintf(path, sizeof path, "/proc/%d/stat", pid);
			ssize_t len = read_small(path, buf, sizeof buf);
			struct mproc p;
			char state;
			if (len <= 0 || !mproc_parse_stat(buf, (size_t)len, &p, &state))
				continue; /* gone meanwhile */
			if (state == 'Z' || state == 'X')
				continue;
			if (pid == t->root) {
				*root_alive = true;
				continue; /* the root is the start of the walk, not anyone's child here */
			}
			if (!ALLOC_GROW(t->links, t->nlinks + 1, t->caplinks)) {
				close(fd);
				return perr_set(e, PLUMB_ENOMEM, "out of memory");
			}
			t->links[t->nlinks++] = (struct mproc_link){ pid, p.ppid };
		}
	}
	close(fd);
	qsort(t->links, t->nlinks, sizeof *t->links, cmp_link_ppid);
	return PLUMB_OK;
}

/* Voluntary context switches of every live thread, and the memory lines of the leader's status. */
static void read_threads(struct mproc *p)
{
	char path[96], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/task", p->pid);
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	p->vcsw = 0;
	if (fd < 0)
		return;
	char dents[4096] __attribute__((aligned(8)));
	for (;;) {
		ssize_t n = getdents64(fd, dents, sizeof dents);
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(dents + off);
			off += d->d_reclen;
			int tid = pid_of_name(d->d_name);
			if (tid <= 0)
				continue;
			snprintf(path, sizeof path, "/proc/%d/task/%d/status", p->pid, tid);
			ssize_t len = read_small(path, buf, sizeof buf);
			if (len <= 0)
				continue;
			uint64_t v;
			if (mproc_parse_field(buf, (size_t)len, "voluntary_ctxt_switches:", &v))
				p->vcsw += v;
			if (tid == p->pid) {
				if (mproc_parse_field(buf, (size_t)len, "VmRSS:", &v))
					p->rss_bytes = v * 1024;
				if (mproc_parse_field(buf, (size_t)len, "VmHWM:", &v))
					p->peak_rss_bytes = v * 1024;
			}
		}
	}
	close(fd);
}

static void read_private(struct mproc *p)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/smaps_rollup", p->pid);
	ssize_t len = read_small(path, buf, sizeof buf);
	uint64_t clean, dirty;
	if (len > 0 && mproc_parse_field(buf, (size_t)len, "Private_Clean:", &clean) &&
	    mproc_parse_field(buf, (size_t)len, "Private_Dirty:", &dirty))
		p->private_bytes = (clean + dirty) * 1024;
	else
		p->private_bytes = MPROC_UNKNOWN;
}

/* Reads one member of the tree; false when it has gone since the scan. */
static bool read_process(int pid, struct mproc *p)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	ssize_t len = read_small(path, buf, sizeof buf);
	char state;
	memset(p, 0, sizeof *p);
	if (len <= 0 || !mproc_parse_stat(buf, (size_t)len, p, &state) || state == 'Z' || state == 'X')
		return false;
	read_threads(p);
	read_private(p);
	return true;
}

static const struct mproc *find_prev(const struct mproc_tracker *t, int pid)
{
	size_t lo = 0, hi = t->nprev;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->prev[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nprev && t->prev[lo].pid == pid ? &t->prev[lo] : NULL;
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
	double now_mono = clock_seconds(CLOCK_MONOTONIC);
	double now_boot = clock_seconds(CLOCK_BOOTTIME);
	if (!root_alive) {
		t->prev_mono = now_mono;
		return PLUMB_OK;
	}

	/* breadth-first from the root over links sorted by ppid */
	size_t nq = 0;
	t->queue[nq++] = t->root;
	for (size_t i = 0; i < nq; i++) {
		int parent = t->queue[i];
		size_t lo = 0, hi = t->nlinks;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (t->links[mid].ppid < parent)
				lo = mid + 1;
			else
				hi = mid;
		}
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
			span = dt;
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
