/* runner.h — runs a suite's cases and fills a plumb.evidence.v1 artifact (docs/design.md §8.1): warm-up runs, then
 * measured runs interleaved across the cases, each a fresh `/bin/sh -c RUN` child whose wall time, user, sys and
 * total CPU time and peak RSS (CASE.wall_ms, CASE.user_ms, CASE.sys_ms, CASE.cpu_ms, CASE.max_rss_bytes) come from
 * wait4 on that child alone (its own peak, not the largest child so far), its wall time less its wait for a CPU
 * (CASE.unqueued_ms, when known), the machine's contention while it ran, plus the samples it wrote as JSON
 * lines to the file named by PLUMB_SAMPLES (a fresh scratch file per run, beside the artifact). */
#ifndef PLUMB_BENCH_RUNNER_H
#define PLUMB_BENCH_RUNNER_H

#include <stdbool.h>

#include "base/err.h"
#include "bench/config.h"
#include "bench/evidence.h"

#define BENCH_DEFAULT_REPEATS 10
#define BENCH_DEFAULT_WARMUP 1
#define BENCH_DURATION_PER_REPEAT_S 20.0
/* The caps on what a run writes to PLUMB_SAMPLES (docs/design.md §3.5): a longer line is skipped as not a
 * sample; past the file cap the rest is one bad line. */
#define BENCH_SAMPLE_LINE_MAX (64u << 10)
#define BENCH_SAMPLES_FILE_MAX ((size_t)256 << 20)

struct bench_run_opts {
	long repeats;            /* measured runs per case (> 0) */
	long warmup;             /* unmeasured runs first (>= 0) */
	double duration_s;       /* the --duration that chose repeats, or 0 */
	const char *policy_source;
	const char *case_filter; /* POSIX extended regex on case names, or NULL */
	enum bench_order order;  /* BENCH_ORDER_SHUFFLE or BENCH_ORDER_ROUND_ROBIN */
	long seed;               /* the shuffle's seed (>= 0) */
	long retries;            /* re-run passes over the contended repeats (>= 0) */
	const char *output;      /* the artifact's path ("-" or NULL: stdout): the runs' scratch files go beside it */
	/* progress callback (the command prints it on a terminal); may be NULL */
	void (*progress)(void *ctx, const char *case_name, size_t case_index, size_t ncases, long run, long nruns,
			 bool warmup);
	void *progress_ctx;
};

struct bench_run_outcome {
	size_t cases_run;
	size_t failed;           /* cases whose command exited non-zero or died */
	size_t timed_out;        /* cases that hit their timeout */
	bool interrupted;        /* SIGINT/SIGTERM arrived: the remaining runs were skipped */
	char first_problem[512]; /* one line on the first failure or timeout */
};

/* repeats = ceil(duration / 20 s), at least 1. */
long bench_repeats_for_duration(double duration_s);

/* What the command line asked of the repeat policy (each already checked by the command). */
struct bench_policy_request {
	long repeats;      /* --repeats, or 0 */
	double duration_s; /* --duration, or 0 */
	long warmup;       /* --warmup, or -1 */
	enum bench_order order; /* --order, or BENCH_ORDER_UNSET */
	long seed;         /* --seed, or -1 */
	long retries;      /* --retries, or -1 */
};

#define BENCH_DEFAULT_RETRIES 2

/* Fills o's repeats, duration_s, policy_source, warmup, order, seed and retries: the command line's, else the
 * suite's, else the defaults (BENCH_DEFAULT_REPEATS, BENCH_DEFAULT_WARMUP, shuffle with a seed from the clock,
 * BENCH_DEFAULT_RETRIES). */
void bench_run_policy(const struct bench_suite *s, const struct bench_policy_request *rq, struct bench_run_opts *o);

/* Runs the suite's cases (those matching the filter) into ev, which the caller initialized. Machine, git and
 * trust fields are filled too. Returns PLUMB_OK when the artifact is complete enough to write (even if cases
 * failed or timed out: the outcome says so), PLUMB_EINVAL for a bad filter or when no case matches. */
enum plumb_err bench_run_suite(const struct bench_suite *s, const struct bench_run_opts *o, struct bench_evidence *ev,
			       struct bench_run_outcome *out, struct perr *e);

/* Calls silent(ctx, case) for each case that ran fine without writing a sample of its own (beyond the runner's
 * five) although its program links libplumb and PLUMB_DEBUG was off for it: its plumb_sample() calls wrote nothing
 * (the runner leaves the switch to the user, docs/design.md §3.1). */
void bench_find_silent_libplumb(const struct bench_suite *s, const struct bench_evidence *ev,
				void (*silent)(void *ctx, const struct bench_case *c), void *ctx);

/* Parses one JSON-lines sample (a line of PLUMB_SAMPLES) and adds it to ev as CASE.NAME. False when the line
 * is not a sample object (name string, finite numeric value, optional kind/unit strings and tags object). */
bool bench_parse_sample_line(struct bench_evidence *ev, const char *case_name, long run, const char *line,
			     size_t len);

#endif
