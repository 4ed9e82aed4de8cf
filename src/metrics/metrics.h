/* metrics.h — the plumb.metrics.v1 artifact (docs/metrics.md): its writer (a bounded ring of samples of one
 * process tree, rewritten whole through temp + rename at every sample) and its reader (validates the whole
 * document; anything it does not understand is PLUMB_EFORMAT). Artifacts live in the store (os/store.h,
 * STORE_METRICS: $PLUMB_HOME/metrics/NAME.json). The writer is compiled into libplumb.so as well; the reader
 * (jansson) only into plumb. */
#ifndef PLUMB_METRICS_METRICS_H
#define PLUMB_METRICS_METRICS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "metrics/proc.h"

#define METRICS_SCHEMA "plumb.metrics.v1"
#define METRICS_DEFAULT_KEEP 120
#define METRICS_DEFAULT_EVERY 5.0
#define METRICS_KEEP_MAX 10000
#define METRICS_EVERY_MIN 0.005
#define METRICS_EVERY_MAX 3600.0
#define METRICS_NAME_MAX 128 /* the name field a reader accepts; names written are os/store.h's (<= 100) */

/* ---- the writer ---- */

/* The worst moment in terms of one figure: the sample and the process that contributed most to it. */
struct metrics_peak {
	bool set;
	int64_t t_ms;             /* sample time, Unix ms */
	double total_cpu_pct;     /* the sample's total CPU % */
	uint64_t total_rss_bytes; /* the sample's total resident set */
	int pid;                  /* the top process of that sample for this figure */
	char name[MPROC_NAME_MAX];
	double cpu_pct;           /* that process's CPU % and resident set */
	uint64_t rss_bytes;
};

struct metrics_ring_entry {
	char *json;                          /* the sample as one JSON object (owned) */
	size_t len;
	struct metrics_peak cpu, mem;        /* this sample as a CPU and a memory candidate */
};

/* A recording in progress. Owns its strings and ring; metrics_recorder_release frees them. */
struct metrics_recorder {
	char *path;               /* the artifact (as messages name it) */
	int dirfd;                /* owned; >= 0 when the artifact is written as `file` in this directory */
	char *file;
	char *name;
	char *root_name;          /* comm of the root when the recording began */
	char *root_command;       /* redacted command line of the root, or NULL */
	int root_pid;
	double every_s;
	size_t keep;
	int64_t started_ms;
	int64_t updated_ms;
	uint64_t samples_taken;
	struct metrics_ring_entry *ring;  /* keep entries; the oldest at head when full */
	size_t head, count;
	struct metrics_peak rec_cpu, rec_mem;  /* worst since the recording began (may be older than the window) */
	struct mproc_tracker tracker;
	bool tracking;
	int64_t scan_ms;          /* how long the scan of the sample being added took (0 when not scanned) */
};

/* Prepares a recorder of the tree of root_pid into path (the directory must exist). */
enum plumb_err metrics_recorder_init(struct metrics_recorder *r, const char *path, const char *name, int root_pid,
				     double every_s, size_t keep, struct perr *e);
/* Writes the artifact as the entry `file` of the directory open on dirfd (dup'ed) from now on, never by its
 * path again: the directory checked once (the plumb home, docs/design.md §3.5) is the one every rewrite goes
 * to. PLUMB_ENOMEM / PLUMB_EOUTPUT when the descriptor cannot be kept. */
enum plumb_err metrics_recorder_anchor(struct metrics_recorder *r, int dirfd, const char *file, struct perr *e);
/* Samples the tree from /proc and adds the sample to the ring. *nprocs is the number of processes seen (0 when
 * the root has gone; then nothing is added). */
enum plumb_err metrics_recorder_sample(struct metrics_recorder *r, size_t *nprocs, struct perr *e);
/* Adds one sample taken at t_ms (Unix ms) to the ring, evicting the oldest beyond keep. For tests and for
 * metrics_recorder_sample. */
enum plumb_err metrics_recorder_add(struct metrics_recorder *r, int64_t t_ms, const struct mproc *procs, size_t n,
				    struct perr *e);
/* Rewrites the artifact whole (temp + rename, 0600). `state` is "recording" or "ended". */
enum plumb_err metrics_recorder_write(struct metrics_recorder *r, const char *state, struct perr *e);
void metrics_recorder_release(struct metrics_recorder *r);

/* Unix time now in ms. */
int64_t metrics_now_ms(void);

/* ---- the reader ---- */

struct metrics_proc {
	int pid;
	int ppid;
	char name[MPROC_NAME_MAX];
	bool main;
	double cpu_pct;
	double wakeups_per_s;
	uint64_t rss_bytes;
	uint64_t peak_rss_bytes;
	uint64_t private_bytes;   /* MPROC_UNKNOWN when the recorder could not read it */
	uint32_t threads;
};

struct metrics_totals {
	uint32_t processes;
	double cpu_pct;
	double wakeups_per_s;
	uint64_t rss_bytes;
	uint64_t private_bytes;
	uint32_t threads;
};

struct metrics_sample {
	int64_t t_ms;             /* when the scan of /proc began */
	int64_t scan_ms;          /* how long it took: each process was seen alive in [t_ms, t_ms + scan_ms] */
	struct metrics_totals totals;
	struct metrics_proc *procs;  /* owned by the doc */
	size_t nprocs;
};

/* A parsed artifact. Owns everything; metrics_doc_release frees it. */
struct metrics_doc {
	char name[METRICS_NAME_MAX];
	int root_pid;
	char root_name[MPROC_NAME_MAX];
	char *root_command;       /* may be NULL */
	double every_s;
	uint64_t keep;
	int64_t started_ms;
	int64_t updated_ms;
	bool ended;
	uint64_t samples_taken;
	struct metrics_sample *samples;  /* oldest first */
	size_t nsamples;
	struct metrics_peak rec_cpu, rec_mem;  /* worst since the recording began, as stored */
};

/* Parses and validates a whole document. PLUMB_EFORMAT (with the reason) when it is not JSON, not a metrics
 * recording, of another schema version, or missing/mistyped fields; PLUMB_ENOMEM. On error doc is empty. */
enum plumb_err metrics_doc_parse(const char *buf, size_t len, struct metrics_doc *doc, struct perr *e);
/* Reads and parses a file. PLUMB_ENOENT when it does not exist, PLUMB_EIO when it cannot be read. When raw is
 * not NULL it receives the file's bytes (caller frees) and *raw_len their length. */
enum plumb_err metrics_doc_read_file(const char *path, struct metrics_doc *doc, char **raw, size_t *raw_len,
				     struct perr *e);
/* The same for recording NAME of the store ($PLUMB_HOME/metrics/NAME.json), read under the store's trust rule
 * (os/store.h store_load: never through a link, only the user's own file, within the cap). */
enum plumb_err metrics_doc_read_stored(const char *name, struct metrics_doc *doc, char **raw, size_t *raw_len,
				       struct perr *e);
void metrics_doc_release(struct metrics_doc *doc);

/* The newest recording of the store (STORE_METRICS), and what else the store holds. */
struct metrics_newest {
	bool found;
	struct metrics_doc doc;       /* the newest (when found): the greatest updated_ms, the first by name of equals */
	char *raw;                    /* its file's bytes (malloc'd) and their length */
	size_t raw_len;
	char path[PATH_MAX];          /* its file */
	char dir[PATH_MAX];           /* the store's folder */
	size_t nfiles;                /* recording files seen (one removed meanwhile does not count) */
	char (*others)[METRICS_NAME_MAX]; /* the name fields of the other readable recordings, by file name */
	size_t nothers, others_cap;
	size_t nbad;                  /* files that are not readable recordings */
	struct perr first_bad;        /* why the first of them is not */
};

/* Reads every recording of the store and keeps the newest in *n (metrics_newest_release frees it); skipped(ctx,
 * why) is called for each file that is not a readable recording. PLUMB_OK (n->found says whether one was read),
 * or the store's error: no plumb home, the folder cannot be listed, out of memory. */
enum plumb_err metrics_store_newest(struct metrics_newest *n, void (*skipped)(void *ctx, const struct perr *why),
				    void *ctx, struct perr *e);
void metrics_newest_release(struct metrics_newest *n);

/* ---- the window (window.c) ---- */

/* The worst sample of the window for CPU (highest total CPU %) and memory (highest total resident set). */
void metrics_doc_window_peaks(const struct metrics_doc *doc, struct metrics_peak *cpu, struct metrics_peak *mem);

/* One process across the window: the latest of its figures, the worst, and sums for the means. */
struct metrics_proc_window {
	int pid, ppid;
	char name[MPROC_NAME_MAX];    /* the latest (a child seen between fork and exec still had its parent's) */
	bool main;
	double cpu_sum, cpu_max;      /* CPU %: the sum over its samples (the mean is cpu_sum / samples) and the peak */
	double wake_sum;              /* wake-ups/s, summed likewise */
	uint64_t rss, peak_rss;       /* the latest resident set, and the largest of VmHWM and resident set seen */
	uint64_t private_bytes;       /* the latest; MPROC_UNKNOWN when unreadable */
	uint32_t threads;
	size_t samples;               /* samples it appears in */
	int64_t last_ms;              /* the last of them */
};

/* Every process of the window, by peak CPU, then peak resident set, then pid. *rows is malloc'd (the caller frees
 * it); PLUMB_ENOMEM. */
enum plumb_err metrics_doc_processes(const struct metrics_doc *doc, struct metrics_proc_window **rows, size_t *n,
				     struct perr *e);

/* ---- to Prometheus (prom.c) ---- */

#define METRICS_PUSH_JOB "plumb_metrics"
#define METRICS_PUSH_LABELS_MAX 16
struct prom_label;
struct sbuf;
/* The latest totals and the window's worst samples of doc as Prometheus' text format, appended to body, and its
 * grouping path (job plumb_metrics, the recording, the machine, the extra labels) to path; label values are
 * redacted (os/prom.h). PLUMB_EEMPTY for a recording without samples, PLUMB_ENOMEM. */
enum plumb_err metrics_doc_prom(const struct metrics_doc *doc, const char *machine, const struct prom_label *extra,
				size_t nextra, struct sbuf *body, struct sbuf *path, struct perr *e);
/* Whether name may be an extra label (legal, and not one of those metrics_doc_prom sets). */
bool metrics_push_label_allowed(const char *name);

#endif
