/* writer.c — the recording side of plumb.metrics.v1: a ring of at most `keep` samples, each serialized once
 * when taken, and the whole document rewritten through temp + rename after every sample (a reader never sees
 * half a file; the file never grows past its bound). Numbers are formatted with integer arithmetic only, so a
 * host program's LC_NUMERIC cannot turn "12.5" into "12,5" when this runs inside libplumb. */
#include "metrics/metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "os/atomic.h"
#include "os/procfs.h"
#include "base/redact.h"
#include "base/sbuf.h"

int64_t metrics_now_ms(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A non-negative figure with two decimals, locale-free. */
static void add_fixed2(struct sbuf *sb, double v)
{
	if (!(v >= 0)) /* negative or NaN */
		v = 0;
	if (v > 1e15)
		v = 1e15;
	unsigned long long hundredths = (unsigned long long)(v * 100.0 + 0.5);
	sbuf_addf(sb, "%llu.%02llu", hundredths / 100, hundredths % 100);
}

static void add_u64_or_null(struct sbuf *sb, uint64_t v)
{
	if (v == MPROC_UNKNOWN)
		sbuf_addstr(sb, "null");
	else
		sbuf_addf(sb, "%llu", (unsigned long long)v);
}

/* Any bytes as a JSON string: invalid UTF-8 becomes '?', so the document always parses. */
static void add_json_text(struct sbuf *sb, const char *s)
{
	sbuf_add_json_text(sb, s, strlen(s));
}

/* A process name as it goes into the artifact: redacted (docs/design.md §3.6; a name is any bytes a program set with
 * prctl or exec'd under), cut to fit dst. A cut "[REDACTED]" still shows nothing. */
static void redact_name(char *dst, size_t cap, const char *src)
{
	struct sbuf sb = SBUF_INIT;
	redact_append(&sb, src, strlen(src));
	snprintf(dst, cap, "%s", sb.oom ? "?" : sb.buf);
	sbuf_release(&sb);
}

/* The longest command line kept in the artifact, after redaction; longer ones are cut and end in "...". */
#define ROOT_COMMAND_MAX 4096

/* The whole of /proc/PID/cmdline with its NULs turned into blanks (malloc'd), or NULL. Read whole, not into a
 * fixed buffer: a secret cut in half at a buffer's end no longer has the shape the redactor knows. */
static char *read_cmdline(int pid)
{
	char *buf;
	size_t len;
	if (procfs_cmdline(pid, &buf, &len) != 0)
		return NULL;
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	return buf;
}

/* Name of pid from /proc/pid/stat and its command line, both redacted here, where they are captured: the
 * recorder keeps only the redacted forms, so neither the artifact nor a message can show the raw ones. */
static void read_root(int pid, char *name, size_t cap, char **command)
{
	*command = NULL;
	snprintf(name, cap, "?");
	struct procfs_stat st;
	if (procfs_stat_read(pid, 0, &st))
		redact_name(name, cap, st.comm);
	char *raw = read_cmdline(pid);
	if (!raw)
		return;
	char *red = redact_dup(raw);
	free(raw);
	if (red && strlen(red) > ROOT_COMMAND_MAX) { /* cut after redaction, so the cut cannot split a secret */
		size_t n = ROOT_COMMAND_MAX;
		while (n > 0 && ((unsigned char)red[n] & 0xc0) == 0x80)
			n--; /* not inside a UTF-8 sequence */
		memcpy(red + n, "...", 4);
	}
	*command = red;
}

enum plumb_err metrics_recorder_init(struct metrics_recorder *r, const char *path, const char *name, int root_pid,
				     double every_s, size_t keep, struct perr *e)
{
	memset(r, 0, sizeof *r);
	r->dirfd = -1;
	if (keep == 0 || keep > METRICS_KEEP_MAX)
		return perr_set(e, PLUMB_EINVAL, "--keep must be between 1 and %d", METRICS_KEEP_MAX);
	r->path = strdup(path);
	r->name = strdup(name);
	r->ring = calloc(keep, sizeof *r->ring);
	char root_name[MPROC_NAME_MAX];
	read_root(root_pid, root_name, sizeof root_name, &r->root_command);
	r->root_name = strdup(root_name);
	if (!r->path || !r->name || !r->ring || !r->root_name) {
		metrics_recorder_release(r);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	r->root_pid = root_pid;
	r->every_s = every_s;
	r->keep = keep;
	r->started_ms = metrics_now_ms();
	r->updated_ms = r->started_ms;
	enum plumb_err rc = mproc_tracker_init(&r->tracker, root_pid, e);
	if (rc) {
		metrics_recorder_release(r);
		return rc;
	}
	r->tracking = true;
	return PLUMB_OK;
}

enum plumb_err metrics_recorder_anchor(struct metrics_recorder *r, int dirfd, const char *file, struct perr *e)
{
	char *copy = strdup(file);
	int fd = copy ? fcntl(dirfd, F_DUPFD_CLOEXEC, 3) : -1;
	if (fd < 0) {
		int err = copy ? errno : ENOMEM;
		free(copy);
		return perr_set(e, err == ENOMEM ? PLUMB_ENOMEM : PLUMB_EOUTPUT, "cannot write %s: %s", r->path, strerror(err));
	}
	free(r->file);
	if (r->dirfd >= 0)
		close(r->dirfd);
	r->file = copy;
	r->dirfd = fd;
	return PLUMB_OK;
}

void metrics_recorder_release(struct metrics_recorder *r)
{
	if (r->ring)
		for (size_t i = 0; i < r->keep; i++)
			free(r->ring[i].json);
	free(r->ring);
	free(r->path);
	free(r->file);
	if (r->dirfd >= 0)
		close(r->dirfd);
	r->dirfd = -1;
	free(r->name);
	free(r->root_name);
	free(r->root_command);
	if (r->tracking)
		mproc_tracker_release(&r->tracker);
	memset(r, 0, sizeof *r);
}

/* One process of a sample. Its name is redacted here, when the sample is serialized (once: the ring keeps the
 * text); /proc is read without allocating (proc.c), so this is the first place that can. */
static void add_proc(struct sbuf *sb, const struct mproc *p)
{
	char name[2 * MPROC_NAME_MAX];
	redact_name(name, sizeof name, p->name);
	sbuf_addf(sb, "{\"pid\":%d,\"ppid\":%d,\"name\":", p->pid, p->ppid);
	add_json_text(sb, name);
	sbuf_addf(sb, ",\"role\":\"%s\",\"cpu_pct\":", p->main ? "main" : "child");
	add_fixed2(sb, p->cpu_pct);
	sbuf_addstr(sb, ",\"wakeups_per_s\":");
	add_fixed2(sb, p->wakeups_per_s);
	sbuf_addf(sb, ",\"rss_bytes\":%llu,\"peak_rss_bytes\":%llu,\"private_bytes\":",
		  (unsigned long long)p->rss_bytes, (unsigned long long)p->peak_rss_bytes);
	add_u64_or_null(sb, p->private_bytes);
	sbuf_addf(sb, ",\"threads\":%u}", p->threads);
}

static void add_peak(struct sbuf *sb, const struct metrics_peak *k)
{
	if (!k->set) {
		sbuf_addstr(sb, "null");
		return;
	}
	sbuf_addf(sb, "{\"t_ms\":%lld,\"total_cpu_pct\":", (long long)k->t_ms);
	add_fixed2(sb, k->total_cpu_pct);
	sbuf_addf(sb, ",\"total_rss_bytes\":%llu,\"pid\":%d,\"name\":", (unsigned long long)k->total_rss_bytes,
		  k->pid);
	add_json_text(sb, k->name);
	sbuf_addstr(sb, ",\"cpu_pct\":");
	add_fixed2(sb, k->cpu_pct);
	sbuf_addf(sb, ",\"rss_bytes\":%llu}", (unsigned long long)k->rss_bytes);
}

/* The stored figures are the rounded ones, so peaks compare exactly what a reader sees. */
static double round2(double v)
{
	if (!(v >= 0))
		return 0;
	return (double)(unsigned long long)(v * 100.0 + 0.5) / 100.0;
}

enum plumb_err metrics_recorder_add(struct metrics_recorder *r, int64_t t_ms, const struct mproc *procs, size_t n,
				    struct perr *e)
{
	struct sbuf sb = SBUF_INIT;
	double cpu = 0, wake = 0;
	uint64_t rss = 0, priv = 0, threads = 0;
	const struct mproc *top_cpu = NULL, *top_mem = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct mproc *p = &procs[i];
		cpu += round2(p->cpu_pct);
		wake += round2(p->wakeups_per_s);
		rss += p->rss_bytes;
		if (p->private_bytes != MPROC_UNKNOWN)
			priv += p->private_bytes;
		threads += p->threads;
		if (!top_cpu || round2(p->cpu_pct) > round2(top_cpu->cpu_pct))
			top_cpu = p;
		if (!top_mem || p->rss_bytes > top_mem->rss_bytes)
			top_mem = p;
	}
	sbuf_addf(&sb, "{\"t_ms\":%lld,\"scan_ms\":%lld,\"totals\":{\"processes\":%zu,\"cpu_pct\":", (long long)t_ms,
		  (long long)r->scan_ms, n);
	add_fixed2(&sb, cpu);
	sbuf_addstr(&sb, ",\"wakeups_per_s\":");
	add_fixed2(&sb, wake);
	sbuf_addf(&sb, ",\"rss_bytes\":%llu,\"private_bytes\":%llu,\"threads\":%llu},\"processes\":[",
		  (unsigned long long)rss, (unsigned long long)priv, (unsigned long long)threads);
	for (size_t i = 0; i < n; i++) {
		if (i)
			sbuf_addch(&sb, ',');
		add_proc(&sb, &procs[i]);
	}
	sbuf_addstr(&sb, "]}");

	struct metrics_ring_entry ent = { 0 };
	ent.json = sbuf_detach(&sb, &ent.len);
	if (!ent.json)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	struct metrics_peak base = { .set = true, .t_ms = t_ms, .total_cpu_pct = round2(cpu), .total_rss_bytes = rss };
	ent.cpu = base;
	ent.mem = base;
	if (top_cpu) {
		ent.cpu.pid = top_cpu->pid;
		redact_name(ent.cpu.name, sizeof ent.cpu.name, top_cpu->name); /* peaks keep the redacted name */
		ent.cpu.cpu_pct = round2(top_cpu->cpu_pct);
		ent.cpu.rss_bytes = top_cpu->rss_bytes;
		ent.mem.pid = top_mem->pid;
		redact_name(ent.mem.name, sizeof ent.mem.name, top_mem->name);
		ent.mem.cpu_pct = round2(top_mem->cpu_pct);
		ent.mem.rss_bytes = top_mem->rss_bytes;
	}
	if (!r->rec_cpu.set || ent.cpu.total_cpu_pct > r->rec_cpu.total_cpu_pct)
		r->rec_cpu = ent.cpu;
	if (!r->rec_mem.set || ent.mem.total_rss_bytes > r->rec_mem.total_rss_bytes)
		r->rec_mem = ent.mem;

	size_t slot = (r->head + r->count) % r->keep;
	if (r->count == r->keep) { /* full: the oldest goes */
		free(r->ring[r->head].json);
		slot = r->head;
		r->head = (r->head + 1) % r->keep;
	} else {
		r->count++;
	}
	r->ring[slot] = ent;
	r->samples_taken++;
	r->updated_ms = t_ms;
	return PLUMB_OK;
}

enum plumb_err metrics_recorder_sample(struct metrics_recorder *r, size_t *nprocs, struct perr *e)
{
	*nprocs = 0;
	int64_t t_ms = metrics_now_ms(); /* when the scan began: every process in it was alive then or just after */
	enum plumb_err rc = mproc_sample(&r->tracker, e);
	if (rc)
		return rc;
	*nprocs = r->tracker.ncur;
	if (r->tracker.ncur == 0)
		return PLUMB_OK;
	r->scan_ms = metrics_now_ms() - t_ms;
	if (r->scan_ms < 0) /* the wall clock was set back */
		r->scan_ms = 0;
	rc = metrics_recorder_add(r, t_ms, r->tracker.cur, r->tracker.ncur, e);
	r->scan_ms = 0;
	return rc;
}

enum plumb_err metrics_recorder_write(struct metrics_recorder *r, const char *state, struct perr *e)
{
	/* the worst sample of the window */
	struct metrics_peak win_cpu = { 0 }, win_mem = { 0 };
	for (size_t i = 0; i < r->count; i++) {
		const struct metrics_ring_entry *ent = &r->ring[(r->head + i) % r->keep];
		if (!win_cpu.set || ent->cpu.total_cpu_pct > win_cpu.total_cpu_pct)
			win_cpu = ent->cpu;
		if (!win_mem.set || ent->mem.total_rss_bytes > win_mem.total_rss_bytes)
			win_mem = ent->mem;
	}
	struct sbuf head = SBUF_INIT;
	sbuf_addstr(&head, "{\"schema\":\"" METRICS_SCHEMA "\",\"name\":");
	add_json_text(&head, r->name);
	sbuf_addf(&head, ",\"state\":\"%s\",\"root\":{\"pid\":%d,\"name\":", state, r->root_pid);
	add_json_text(&head, r->root_name);
	sbuf_addstr(&head, ",\"command\":");
	if (r->root_command)
		add_json_text(&head, r->root_command);
	else
		sbuf_addstr(&head, "null");
	sbuf_addstr(&head, "},\"every_s\":");
	long long every_ms = (long long)(r->every_s * 1000.0 + 0.5);
	sbuf_addf(&head, "%lld.%03lld", every_ms / 1000, every_ms % 1000);
	sbuf_addf(&head, ",\"keep\":%zu,\"started_ms\":%lld,\"updated_ms\":%lld,\"samples_taken\":%llu", r->keep,
		  (long long)r->started_ms, (long long)r->updated_ms, (unsigned long long)r->samples_taken);
	sbuf_addstr(&head, ",\"peak\":{\"cpu\":");
	add_peak(&head, &win_cpu);
	sbuf_addstr(&head, ",\"memory\":");
	add_peak(&head, &win_mem);
	sbuf_addstr(&head, "},\"peak_recording\":{\"cpu\":");
	add_peak(&head, &r->rec_cpu);
	sbuf_addstr(&head, ",\"memory\":");
	add_peak(&head, &r->rec_mem);
	sbuf_addstr(&head, "},\"samples\":[\n");

	struct atomic_file af;
	enum plumb_err rc = sbuf_done(&head, e);
	if (!rc)
		rc = r->dirfd >= 0 ? atomic_open_at(&af, r->dirfd, r->file, r->path, false, e) : atomic_open(&af, r->path, e);
	if (rc) {
		sbuf_release(&head);
		return rc;
	}
	bool ok = fwrite(head.buf, 1, head.len, af.fp) == head.len;
	sbuf_release(&head);
	for (size_t i = 0; ok && i < r->count; i++) {
		const struct metrics_ring_entry *ent = &r->ring[(r->head + i) % r->keep];
		if (i)
			ok = fputs(",\n", af.fp) >= 0;
		ok = ok && fwrite(ent->json, 1, ent->len, af.fp) == ent->len;
	}
	ok = ok && fputs("\n]}\n", af.fp) >= 0;
	if (!ok) {
		int err = errno;
		atomic_abort(&af);
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", r->path, strerror(err));
	}
	return atomic_commit_nosync(&af, e); /* on time beats durable: see atomic.h */
}
