/* procfs.c — see procfs.h. Files are read with open/read into caller or iterator buffers (no stdio, no malloc
 * but for the two whole-file readers); numbers are parsed by hand, so a field can never run past the text. */
#include "os/procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "base/readall.h"

/* ---- numbers ---- */

static bool parse_u64(const char **s, const char *end, uint64_t *v)
{
	const char *p = *s;
	while (p < end && (*p == ' ' || *p == '\t'))
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

/* A signed decimal field; negative values (tty_nr, tpgid, nice) come back as 0 in *v, which plumb never
 * reads for a negative field. */
static bool parse_field(const char **s, const char *end, uint64_t *v)
{
	const char *p = *s;
	while (p < end && *p == ' ')
		p++;
	bool neg = p < end && *p == '-';
	if (neg)
		p++;
	if (!parse_u64(&p, end, v))
		return false;
	if (neg)
		*v = 0;
	*s = p;
	return true;
}

static bool parse_hex(const char **s, const char *end, uint64_t *v)
{
	const char *p = *s;
	uint64_t x = 0;
	int digits = 0;
	for (; p < end && digits < 17; p++, digits++) {
		char c = *p;
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		x = x << 4 | d;
	}
	if (digits == 0 || digits > 16)
		return false;
	*v = x;
	*s = p;
	return true;
}

/* ---- plain files ---- */

bool procfs_path(char *buf, size_t n, pid_t pid, pid_t tid, const char *name)
{
	char who[32];
	if (pid <= 0)
		snprintf(who, sizeof who, "self");
	else
		snprintf(who, sizeof who, "%d", (int)pid);
	int w;
	if (tid > 0)
		w = snprintf(buf, n, "/proc/%s/task/%d%s%s", who, (int)tid, name && *name ? "/" : "", name ? name : "");
	else
		w = snprintf(buf, n, "/proc/%s%s%s", who, name && *name ? "/" : "", name ? name : "");
	return w >= 0 && (size_t)w < n;
}

int procfs_open(pid_t pid, pid_t tid, const char *name)
{
	char path[128];
	if (!procfs_path(path, sizeof path, pid, tid, name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}

static ssize_t read_fd(int fd, char *buf, size_t cap)
{
	size_t len = 0;
	while (len + 1 < cap) {
		ssize_t r = read(fd, buf + len, cap - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

ssize_t procfs_read_path(const char *path, char *buf, size_t cap)
{
	if (cap == 0) {
		errno = EINVAL;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read_fd(fd, buf, cap);
	int err = errno;
	close(fd);
	errno = err;
	return n;
}

ssize_t procfs_read(pid_t pid, pid_t tid, const char *name, char *buf, size_t cap)
{
	char path[128];
	if (!procfs_path(path, sizeof path, pid, tid, name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return procfs_read_path(path, buf, cap);
}

ssize_t procfs_pread(int fd, char *buf, size_t cap)
{
	if (fd < 0 || cap == 0) {
		errno = EBADF;
		return -1;
	}
	ssize_t n;
	do
		n = pread(fd, buf, cap - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

bool procfs_sysctl(const char *name, long *value)
{
	char path[256], buf[64];
	int w = snprintf(path, sizeof path, "/proc/sys/%s", name);
	if (w < 0 || (size_t)w >= sizeof path || procfs_read_path(path, buf, sizeof buf) <= 0)
		return false;
	const char *s = buf, *end = buf + strlen(buf);
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	bool neg = s < end && *s == '-';
	uint64_t v;
	if (neg)
		s++;
	if (!parse_u64(&s, end, &v) || v > (uint64_t)INT64_MAX)
		return false;
	*value = neg ? -(long)v : (long)v;
	return true;
}

/* ---- stat ---- */

bool procfs_stat_parse(const char *text, size_t len, struct procfs_stat *out)
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
	memset(out, 0, sizeof *out);
	const char *s = text;
	uint64_t pid;
	if (!parse_u64(&s, open_paren, &pid) || pid == 0 || pid > 0x7fffffff)
		return false;
	out->pid = (pid_t)pid;
	size_t n = (size_t)(close_paren - open_paren - 1);
	if (n >= sizeof out->comm)
		n = sizeof out->comm - 1;
	memcpy(out->comm, open_paren + 1, n);
	out->comm[n] = '\0';
	s = close_paren + 1;
	while (s < end && *s == ' ')
		s++;
	if (s >= end)
		return false;
	out->state = *s++;
	uint64_t f[40] = { 0 };
	int i = 4;
	for (; i <= 39; i++)
		if (!parse_field(&s, end, &f[i])) {
			if (i <= 22)
				return false;
			break; /* an old or restricted line: the code and stack fields stay 0 */
		}
	out->ppid = (pid_t)f[4];
	out->pgrp = (pid_t)f[5];
	out->session = (pid_t)f[6];
	out->utime = f[14];
	out->stime = f[15];
	out->num_threads = f[20];
	out->starttime = f[22];
	out->startcode = f[26];
	out->endcode = f[27];
	out->startstack = f[28];
	out->processor = i > 39 && f[39] < 4096 ? (int)f[39] : -1; /* i: the first field the line lacked */
	return true;
}

bool procfs_stat_read(pid_t pid, pid_t tid, struct procfs_stat *out)
{
	char buf[PROCFS_STAT_MAX];
	ssize_t n = procfs_read(pid, tid, "stat", buf, sizeof buf);
	return n > 0 && procfs_stat_parse(buf, (size_t)n, out);
}

uint64_t procfs_start_time(pid_t pid)
{
	struct procfs_stat st;
	return procfs_stat_read(pid, 0, &st) ? st.starttime : 0;
}

bool procfs_alive(pid_t pid)
{
	struct procfs_stat st;
	return pid > 0 && procfs_stat_read(pid, 0, &st) && st.state != 'Z' && st.state != 'X';
}

int procfs_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0); /* a pidfd is always close-on-exec */
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

/* ---- lines ---- */

static bool lines_open(struct procfs_lines *l, const char *path)
{
	l->len = l->off = 0;
	l->eof = false;
	l->fd = open(path, O_RDONLY | O_CLOEXEC);
	return l->fd >= 0;
}

static void lines_close(struct procfs_lines *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
}

static void lines_fill(struct procfs_lines *l)
{
	if (l->off > 0) {
		memmove(l->buf, l->buf + l->off, l->len - l->off);
		l->len -= l->off;
		l->off = 0;
	}
	for (;;) {
		ssize_t r = read(l->fd, l->buf + l->len, sizeof l->buf - 1 - l->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			l->eof = true;
		else
			l->len += (size_t)r;
		return;
	}
}

/* The next line, NUL-terminated in place (its newline replaced); false at the end. A line that does not fit the
 * buffer is skipped whole. */
static bool lines_next(struct procfs_lines *l, char **line, size_t *n)
{
	bool skipping = false;
	for (;;) {
		char *start = l->buf + l->off;
		char *nl = memchr(start, '\n', l->len - l->off);
		if (nl) {
			l->off = (size_t)(nl + 1 - l->buf);
			if (skipping) {
				skipping = false;
				continue;
			}
			*nl = '\0';
			*line = start;
			*n = (size_t)(nl - start);
			return true;
		}
		if (l->eof) {
			if (l->off < l->len && !skipping) {
				*n = l->len - l->off;
				*line = start;
				start[*n] = '\0'; /* len < sizeof buf: fill leaves a byte free */
				l->off = l->len;
				return true;
			}
			return false;
		}
		if (l->off == 0 && l->len == sizeof l->buf - 1) { /* no newline in a full buffer: drop the line */
			skipping = true;
			l->len = 0;
		}
		lines_fill(l);
	}
}

/* ---- status ---- */

static void status_line(const char *line, size_t len, struct procfs_status *out, bool *named)
{
	const char *end = line + len;
	const char *colon = memchr(line, ':', len);
	if (!colon)
		return;
	size_t klen = (size_t)(colon - line);
	const char *s = colon + 1;
	uint64_t v;
#define KEY(k) (klen == sizeof k - 1 && memcmp(line, k, klen) == 0)
	if (KEY("Name")) {
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		size_t n = (size_t)(end - s);
		if (n >= sizeof out->name)
			n = sizeof out->name - 1;
		memcpy(out->name, s, n);
		out->name[n] = '\0';
		*named = true;
	} else if (KEY("PPid") && parse_u64(&s, end, &v)) {
		out->ppid = (pid_t)v;
	} else if (KEY("TracerPid") && parse_u64(&s, end, &v)) {
		out->tracer_pid = (pid_t)v;
	} else if (KEY("Uid") && parse_u64(&s, end, &v)) {
		out->uid_real = (uid_t)v;
		if (parse_u64(&s, end, &v))
			out->uid_effective = (uid_t)v;
	} else if (KEY("Threads") && parse_u64(&s, end, &v)) {
		out->threads = v;
	} else if (KEY("VmRSS") && parse_u64(&s, end, &v)) {
		out->vm_rss_bytes = v * 1024;
	} else if (KEY("VmHWM") && parse_u64(&s, end, &v)) {
		out->vm_hwm_bytes = v * 1024;
	} else if (KEY("voluntary_ctxt_switches") && parse_u64(&s, end, &v)) {
		out->voluntary_ctxt_switches = v;
	} else if (KEY("CapEff")) {
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (parse_hex(&s, end, &v))
			out->cap_effective = v;
	} else if (KEY("NSpid")) {
		out->nnspid = 0;
		while (out->nnspid < PROCFS_NSPID_MAX && parse_u64(&s, end, &v))
			out->nspid[out->nnspid++] = (pid_t)v;
	}
#undef KEY
}

static void status_init(struct procfs_status *out)
{
	memset(out, 0, sizeof *out);
	out->vm_rss_bytes = out->vm_hwm_bytes = PROCFS_UNKNOWN;
}

bool procfs_status_parse(const char *text, size_t len, struct procfs_status *out)
{
	status_init(out);
	bool named = false;
	const char *end = text + len;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *lend = nl ? nl : end;
		status_line(line, (size_t)(lend - line), out, &named);
		line = nl ? nl + 1 : end;
	}
	return named;
}

bool procfs_status_read(pid_t pid, pid_t tid, struct procfs_status *out)
{
	char path[128];
	struct procfs_lines l;
	status_init(out);
	if (!procfs_path(path, sizeof path, pid, tid, "status") || !lines_open(&l, path))
		return false;
	bool named = false;
	char *line;
	size_t n;
	for (unsigned i = 0; i < PROCFS_STATUS_MAX_LINES && lines_next(&l, &line, &n); i++)
		status_line(line, n, out, &named);
	lines_close(&l);
	return named;
}

pid_t procfs_ns_pid(pid_t pid)
{
	struct procfs_status st;
	if (!procfs_status_read(pid, 0, &st))
		return 0;
	return st.nnspid ? st.nspid[st.nnspid - 1] : pid;
}

bool procfs_field_u64(const char *text, size_t len, const char *key, uint64_t *value)
{
	size_t klen = strlen(key);
	const char *end = text + len;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *lend = nl ? nl : end;
		if ((size_t)(lend - line) > klen && memcmp(line, key, klen) == 0) {
			const char *s = line + klen;
			return parse_u64(&s, lend, value);
		}
		line = nl ? nl + 1 : end;
	}
	return false;
}

/* ---- small files ---- */

bool procfs_comm(pid_t pid, pid_t tid, char *buf, size_t n)
{
	if (n == 0)
		return false;
	ssize_t r = procfs_read(pid, tid, "comm", buf, n);
	if (r < 0) {
		buf[0] = '\0';
		return false;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

bool procfs_schedstat_parse(const char *text, uint64_t *run_ns)
{
	const char *end = text + strlen(text);
	return parse_u64(&text, end, run_ns);
}

uint64_t procfs_runtime_ns(pid_t pid, pid_t tid)
{
	struct procfs_sched ss;
	return procfs_sched_read(pid, tid, &ss) ? ss.run_ns : 0;
}

bool procfs_sched_read(pid_t pid, pid_t tid, struct procfs_sched *out)
{
	char buf[128];
	ssize_t n = procfs_read(pid, tid, "schedstat", buf, sizeof buf);
	const char *s = buf, *end = buf + (n > 0 ? n : 0);
	return n > 0 && parse_u64(&s, end, &out->run_ns) && parse_u64(&s, end, &out->wait_ns) &&
	       parse_u64(&s, end, &out->slices);
}

ssize_t procfs_exe(pid_t pid, char *buf, size_t n)
{
	char path[64];
	if (n == 0 || !procfs_path(path, sizeof path, pid, 0, "exe")) {
		errno = EINVAL;
		return -1;
	}
	ssize_t len = readlink(path, buf, n);
	if (len < 0)
		return -1;
	if ((size_t)len >= n) {
		errno = ENAMETOOLONG;
		return -1;
	}
	buf[len] = '\0';
	return len;
}

int procfs_cmdline(pid_t pid, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	int fd = procfs_open(pid, 0, "cmdline");
	if (fd < 0)
		return errno;
	char *buf;
	size_t n;
	int err = read_fd_whole(fd, 4096, PROCFS_CMDLINE_MAX, &buf, &n);
	close(fd);
	if (err)
		return err;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	if (n == 0) {
		free(buf);
		return ENODATA;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* ---- directories ---- */

static bool dir_open(struct procfs_dir *d, const char *path)
{
	d->len = d->off = 0;
	d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return d->fd >= 0;
}

bool procfs_pids_open(struct procfs_dir *d)
{
	return dir_open(d, "/proc");
}

bool procfs_tasks_open(struct procfs_dir *d, pid_t pid)
{
	char path[64];
	if (!procfs_path(path, sizeof path, pid, 0, "task")) {
		d->fd = -1;
		errno = EINVAL;
		return false;
	}
	return dir_open(d, path);
}

static pid_t pid_of_name(const char *s)
{
	long v = 0;
	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 0x7fffffff / 10)
			return 0;
		v = v * 10 + (*s - '0');
	}
	return (pid_t)v;
}

pid_t procfs_dir_next(struct procfs_dir *d)
{
	if (d->fd < 0)
		return 0;
	for (;;) {
		while (d->off < d->len) {
			struct dirent64 *de = (struct dirent64 *)(d->buf + d->off);
			d->off += de->d_reclen;
			pid_t pid = pid_of_name(de->d_name);
			if (pid > 0)
				return pid;
		}
		ssize_t n = getdents64(d->fd, d->buf, sizeof d->buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		d->len = n;
		d->off = 0;
	}
}

void procfs_dir_close(struct procfs_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

/* ---- maps ---- */

bool procfs_maps_parse_line(const char *line, size_t len, struct procfs_map *out)
{
	const char *s = line, *end = line + len;
	uint64_t v;
	memset(out, 0, sizeof *out);
	if (!parse_hex(&s, end, &out->start) || s >= end || *s++ != '-' || !parse_hex(&s, end, &out->end) ||
	    s >= end || *s++ != ' ')
		return false;
	if (end - s < 5 || s[4] != ' ')
		return false;
	memcpy(out->perms, s, 4);
	out->perms[4] = '\0';
	s += 5;
	if (!parse_hex(&s, end, &out->offset) || s >= end || *s++ != ' ')
		return false;
	if (!parse_hex(&s, end, &v) || s >= end || *s++ != ':')
		return false;
	out->dev_major = (unsigned)v;
	if (!parse_hex(&s, end, &v))
		return false;
	out->dev_minor = (unsigned)v;
	if (!parse_u64(&s, end, &out->inode))
		return false;
	while (s < end && *s == ' ')
		s++;
	out->path = s;
	out->path_len = (size_t)(end - s);
	return out->end >= out->start;
}

bool procfs_maps_open(struct procfs_maps *m, pid_t pid)
{
	char path[64];
	m->nlines = 0;
	m->lines.fd = -1;
	if (!procfs_path(path, sizeof path, pid, 0, "maps")) {
		errno = EINVAL;
		return false;
	}
	return lines_open(&m->lines, path);
}

bool procfs_maps_next(struct procfs_maps *m, struct procfs_map *out)
{
	char *line;
	size_t n;
	while (m->nlines < PROCFS_MAPS_MAX_LINES && lines_next(&m->lines, &line, &n)) {
		m->nlines++;
		if (procfs_maps_parse_line(line, n, out))
			return true;
	}
	return false;
}

void procfs_maps_close(struct procfs_maps *m)
{
	lines_close(&m->lines);
}

/* ---- a process's own view ---- */

bool procfs_root_path(pid_t pid, const char *path, char *buf, size_t n)
{
	char root[64];
	if (!procfs_path(root, sizeof root, pid, 0, "root"))
		return false;
	int w = snprintf(buf, n, "%s%s%s", root, path[0] == '/' ? "" : "/", path);
	return w >= 0 && (size_t)w < n;
}

/* Opens without blocking on a FIFO, then puts the descriptor back in blocking mode. */
static int open_root_raw(pid_t pid, const char *path)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
#ifdef SYS_openat2
	char root[64];
	if (!procfs_path(root, sizeof root, pid, 0, "root")) {
		errno = EINVAL;
		return -1;
	}
	int dfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	struct open_how how = { .flags = (uint64_t)flags, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, dfd, path, &how, sizeof how);
	int err = errno;
	close(dfd);
	if (fd >= 0 || (err != ENOSYS && err != EPERM)) { /* EPERM: a seccomp filter that does not know openat2 */
		errno = err;
		return fd;
	}
#endif
	char full[4096 + 64];
	if (!procfs_root_path(pid, path, full, sizeof full)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return open(full, flags);
}

int procfs_open_root(pid_t pid, const char *path)
{
	int fd = open_root_raw(pid, path);
	if (fd < 0)
		return -1;
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

int procfs_read_root(pid_t pid, const char *path, size_t max, char **out, size_t *len)
{
	*out = NULL;
	*len = 0;
	int fd = procfs_open_root(pid, path);
	if (fd < 0)
		return errno;
	struct stat st;
	int err = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : (uint64_t)st.st_size > max ? EFBIG : 0;
	if (err) {
		close(fd);
		return err;
	}
	/* the size is a hint (a file may grow meanwhile): the read stops past max either way */
	err = read_fd_whole(fd, (size_t)st.st_size + 1, max + 1, out, len);
	close(fd);
	return err;
}

bool procfs_map_file_path(pid_t pid, uint64_t start, uint64_t end, char *buf, size_t n)
{
	char name[64];
	snprintf(name, sizeof name, "map_files/%llx-%llx", (unsigned long long)start, (unsigned long long)end);
	return procfs_path(buf, n, pid, 0, name);
}

int procfs_open_map_file(pid_t pid, uint64_t start, uint64_t end)
{
	char path[128];
	if (!procfs_map_file_path(pid, start, end, path, sizeof path)) {
		errno = EINVAL;
		return -1;
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}
