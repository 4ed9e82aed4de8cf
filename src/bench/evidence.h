/* evidence.h — the plumb.evidence.v1 artifact: every raw sample of a bench run, the machine, the git state,
 * the repeat policy and trust labels (docs/design.md §8.2). The runner fills one; report/compare/coverage read one.
 * The struct owns every string and array in it; bench_evidence_release() frees them. */
#ifndef PLUMB_BENCH_EVIDENCE_H
#define PLUMB_BENCH_EVIDENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "os/atomic.h"

#define BENCH_EVIDENCE_SCHEMA "plumb.evidence.v1"
/* The caps on an artifact read (docs/design.md §3.5): a file (mapped, not copied) and a stream (read into
 * memory: a pipe). A device is refused unread. */
#define BENCH_EVIDENCE_MAX ((size_t)1 << 30)
#define BENCH_EVIDENCE_STREAM_MAX ((size_t)256 << 20)

struct bench_metric_index;

/* Trust of a case's numbers: what the program under test was built as. */
#define BENCH_TRUST_OPTIMIZED "optimized"       /* its DWARF producer says -O1 or more */
#define BENCH_TRUST_HARNESS "harness-only"      /* -O0 or no -O: proves the harness runs, never a baseline */
#define BENCH_TRUST_UNKNOWN "unknown"           /* no DWARF producer flags to read (a script, stripped, clang) */

struct bench_sample {
	char *name;    /* CASE.METRIC */
	char *kind;    /* latency, cpu, memory, ... */
	char *unit;    /* ms, bytes, ... */
	double value;
	long run;      /* measured run index (0-based) */
	char *tags;    /* compact JSON object text, or NULL */
};

struct bench_run {
	long index;
	int exit_code;       /* -1 when killed by a signal */
	int signal;          /* 0 when it exited */
	bool timed_out;
	long bad_sample_lines; /* lines of PLUMB_SAMPLES that were not sample objects */
	/* the machine while the kept attempt ran (docs/bench.md "Contention"); all NAN in artifacts made before the
	 * runner recorded it (has_contention false) */
	bool has_contention;
	double other_cpu_pct; /* CPU time of other processes (/proc/stat busy time minus the run's own), % of all CPUs */
	double steal_pct;     /* steal time, % of all CPUs' time */
	double idle_pct;      /* idle time, % of all CPUs' time */
	double wait_pct;      /* the run's main process waited on a runqueue, % of its wall time; NAN when unknown */
	double wait_ms;       /* the same in milliseconds */
	double load;          /* runnable tasks on the machine when it ended (/proc/stat procs_running) */
	double yardstick_ms;  /* CPU time of the launcher's fixed loop just before it (the machine's speed); NAN
			       * when unknown (artifacts from before the yardstick) */
	bool contended;       /* the repeat ran under contention (BENCH_CONTENDED_*) */
	long attempts;        /* 1, plus the re-runs of this repeat the contention caused */
};

/* A repeat is contended when its main process waited for a CPU this share of its wall time, or the hypervisor
 * stole this share of the CPUs, or (its wait unknown) the CPUs were this close to saturated by others. */
#define BENCH_CONTENDED_WAIT_PCT 10.0
#define BENCH_CONTENDED_STEAL_PCT 10.0
#define BENCH_CONTENDED_IDLE_PCT 5.0
#define BENCH_CONTENDED_OTHER_PCT 20.0

struct bench_case_result {
	char *name;
	char *command;       /* redacted */
	char *cwd;           /* redacted */
	char **env;          /* redacted KEY=VALUE */
	size_t nenv;
	double timeout_s;
	char *binary;        /* the program under test as resolved, or NULL */
	char *producer;      /* one DWARF producer string of it, or NULL */
	char *trust;         /* BENCH_TRUST_* */
	char *status;        /* "ok", "failed", "timed-out" */
	char *prepare;       /* the prepare command (redacted), or NULL */
	char *core_metric;   /* "cpu_ms", "unqueued_ms" or "wall_ms": the case's core metric, or NULL (an older
			      * artifact: wall_ms) */
	char *core_source;   /* why: "suite", or "cpu/wall ratio" */
	double cpu_wall_ratio; /* median cpu_ms / median (wall_ms - runqueue wait); NAN when unknown */
	long reruns;         /* attempts re-run because of contention */
	struct bench_run *runs;
	size_t nruns;
};

/* A case is CPU-bound, its core metric cpu_ms, when its CPU time is at least this share of the time it was not
 * waiting for a CPU; else wall-bound (it sleeps, waits for I/O or a child), its core metric wall_ms. */
#define BENCH_CPU_BOUND_RATIO 0.5

/* How many of a case's kept repeats ran contended (runs with contention figures only); *with gets how many
 * have them. */
size_t bench_case_contended(const struct bench_case_result *c, size_t *with);

struct bench_evidence {
	char *suite;
	char *suite_path;    /* redacted */
	char *catalog_path;  /* absolute, or NULL */
	char *created;       /* UTC, ISO 8601 */
	/* machine */
	char *cpu_model, *kernel, *governor; /* governor NULL when the machine has no cpufreq */
	char *hostname;      /* redacted; NULL in artifacts written before it was kept (the push's machine label) */
	long cores;
	double load[3];
	/* git */
	char *git_commit;    /* NULL when not in a git checkout */
	int git_dirty;       /* 1, 0, or -1 when unknown */
	/* policy */
	long repeats, warmup;
	double duration_s;   /* 0 unless --duration/duration chose the repeats */
	char *policy_source; /* "--repeats", "--duration", "suite repeats", "suite duration", "default" */
	char *case_filter;   /* --case RE, or NULL */
	char *order;         /* "shuffle" or "round-robin" (NULL in older artifacts: each case's repeats in a row) */
	long seed;           /* the shuffle's seed, -1 when none */
	long retries;        /* re-runs allowed per contended repeat, -1 when unknown */
	/* trust */
	char *trust;         /* the weakest case's label */
	struct bench_case_result *cases;
	size_t ncases;
	struct bench_sample *samples;
	size_t nsamples, samples_cap;
	struct bench_metric_index *index; /* built on demand by the lookups below; dropped when a sample is added */
};

void bench_evidence_init(struct bench_evidence *ev);
void bench_evidence_release(struct bench_evidence *ev);

/* Appends a sample (strings copied; tags may be NULL). Returns false when out of memory. */
bool bench_evidence_add_sample(struct bench_evidence *ev, const char *name, const char *kind, const char *unit,
			       double value, long run, const char *tags);

/* A sample's tags redacted (docs/design.md §3.6): every key and string redacted as text, and the whole value of a
 * key that names a credential ("token", "api_key") replaced by "[REDACTED]". *text is the redacted object as
 * compact JSON with sorted keys (malloc'd, the caller frees; NULL for an empty object). tags (a jansson object)
 * is only read. Returns false when out of memory. */
struct json_t;
bool bench_tags_redacted(struct json_t *tags, char **text);

/* The case a metric belongs to: the case whose name is the metric's prefix before the first '.'; NULL if none. */
const struct bench_case_result *bench_evidence_case_of(const struct bench_evidence *ev, const char *metric);

/* The lookups below share an index by metric name (a hash map), so a report over N samples of M metrics costs
 * O(N), not O(N * M). They return NULL (with *n == 0) when out of memory, as when there is nothing. */

/* Distinct metric names in first-seen order (array of pointers into the samples; free() the array only). */
const char **bench_evidence_metrics(const struct bench_evidence *ev, size_t *n);
/* All values of one metric (malloc'd; caller frees). *n is 0 (and NULL returned) when none. */
double *bench_evidence_values(const struct bench_evidence *ev, const char *metric, size_t *n);
/* The first sample of a metric (for its kind and unit), or NULL. */
const struct bench_sample *bench_evidence_first(const struct bench_evidence *ev, const char *metric);

/* Writes the artifact through the atomic writer ("-" is stdout). PLUMB_EOUTPUT when it cannot. */
enum plumb_err bench_evidence_write(const struct bench_evidence *ev, const char *path, struct perr *e);
/* The same into an opened atomic file (os/atomic.h), which it commits, or aborts on failure. */
enum plumb_err bench_evidence_write_to(const struct bench_evidence *ev, struct atomic_file *out, struct perr *e);
/* Reads and checks an artifact: PLUMB_ENOENT when missing, PLUMB_EFORMAT (naming the field) when malformed or
 * of another schema version. */
enum plumb_err bench_evidence_read(const char *path, struct bench_evidence *ev, struct perr *e);
/* The same from text in memory (`what` names it in messages). */
enum plumb_err bench_evidence_parse(const char *text, size_t len, const char *what, struct bench_evidence *ev,
				    struct perr *e);

#endif
