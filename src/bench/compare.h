/* compare.h — a baseline artifact against a current one, metric by metric (docs/design.md §8.3): p50/p95 of each,
 * change of the median, a two-sided Mann–Whitney U test, and a verdict that needs both significance and a
 * change beyond the noise threshold. Rows are ranked by time added, by regression, or by name. */
#ifndef PLUMB_BENCH_COMPARE_H
#define PLUMB_BENCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/config.h"
#include "bench/evidence.h"
#include "bench/stats.h"

#define BENCH_VERDICT_SLOWER "slower"             /* significantly worse in the metric's direction */
#define BENCH_VERDICT_FASTER "faster"             /* significantly better */
#define BENCH_VERDICT_SAME "~"                    /* no significant change beyond the threshold */
#define BENCH_VERDICT_INCONCLUSIVE "inconclusive" /* too few samples for the test to show anything */
#define BENCH_VERDICT_NEW "new"                   /* only in the current artifact */
#define BENCH_VERDICT_GONE "gone"                 /* only in the baseline */

struct bench_cmp_row {
	const char *metric;       /* points into one of the artifacts */
	const char *unit;
	struct bench_summary base, cur; /* n == 0 on the side that lacks the metric */
	double change_pct;        /* (cur p50 - base p50) / base p50 * 100; NAN when undefined */
	double time_added_ms;     /* cur p50 - base p50 in ms for time units (ns, us, ms, s); NAN otherwise */
	double p;                 /* two-sided U-test p-value; NAN when not tested */
	double u;
	bool exact;
	double ci_lo, ci_hi;      /* the bootstrap 95% interval of change_pct; NAN when not computed */
	double noise_pct;         /* the noise floor the change had to pass: max(threshold, the baseline's robust
				   * spread in % of its median) */
	const char *verdict;      /* BENCH_VERDICT_* */
	char why[200];            /* for an inconclusive verdict: the reason ("4 of 8 repeats of the current run ran
				   * while ..."); "" otherwise */
	bool core;                /* counts for --fail-on-regression */
	bool scaled;              /* a CPU-time metric whose current values were scaled to the baseline's machine
				   * speed (bench_cmp.speed_scale) */
	const struct bench_metric_def *def; /* catalog entry or NULL */
};

/* A case's contended repeats make its wall-time metrics (every metric but those of kind cpu and memory)
 * untrustworthy when they are more than this share of its repeats on either side. */
#define BENCH_CONTENDED_SHARE_MAX 0.25
/* Resamples of the bootstrap interval (fewer for very large samples: at most ~4e6 values drawn per metric). */
#define BENCH_BOOTSTRAP_ROUNDS 2000

/* Whether a metric is core: the catalog's tier when it lists the metric; else the core metric the artifact
 * recorded for its case (the baseline's, else the current's: cpu_ms, unqueued_ms or wall_ms, from the runs'
 * CPU/wall ratio or the suite); else, for an artifact that recorded none, CASE.wall_ms. cat, base and cur may be
 * NULL. */
bool bench_metric_is_core_in(const struct bench_catalog *cat, const struct bench_evidence *base,
			     const struct bench_evidence *cur, const char *metric);

enum bench_rank { BENCH_RANK_BOTTLENECKS, BENCH_RANK_REGRESSIONS, BENCH_RANK_NAME };

/* "bottlenecks", "regressions" or "name" into *rank; false for anything else. */
bool bench_rank_parse(const char *name, enum bench_rank *rank);
/* The name of a ranking (what bench_rank_parse reads). */
const char *bench_rank_name(enum bench_rank rank);

struct bench_cmp {
	struct bench_cmp_row *rows;
	size_t n;
	size_t regressions;                         /* core metrics whose verdict is slower: the gate's count */
	size_t inconclusive_core;                   /* core metrics whose verdict contention made inconclusive */
	const struct bench_cmp_row *first_regression; /* the first of them in rank order, or NULL */
	/* the machine's speed on each side: the median of the repeats' yardstick (a fixed loop the launcher timed
	 * before each repeat, docs/bench.md "The yardstick"), NAN when a side did not record it; when both did,
	 * the current run's CPU-time metrics (kind cpu) are multiplied by speed_scale = base / cur before they are
	 * compared (1 otherwise) */
	double yardstick_base_ms, yardstick_cur_ms, speed_scale;
};

/* Compares every metric of either artifact. Ranked: significant regressions first, then `~`/inconclusive, then
 * improvements, then metrics on one side only; within each, core before drilldown, then by time added
 * (bottlenecks) or by the worst change (regressions); or all by name. threshold_pct: the noise threshold on the median's change;
 * alpha: the significance level. cat may be NULL. Returns false when out of memory. The rows point into the
 * artifacts and the catalog, which must outlive them. */
bool bench_compare(const struct bench_evidence *base, const struct bench_evidence *cur, const struct bench_catalog *cat,
		   double threshold_pct, double alpha, enum bench_rank rank, struct bench_cmp *out);
void bench_cmp_release(struct bench_cmp *c);

/* Calls warn(ctx, message) for each reason to read a comparison with care: an artifact is harness-only, the two
 * ran different suites, or were measured on different machines (CPU model or count). */
void bench_compare_cautions(const struct bench_evidence *base, const struct bench_evidence *cur,
			    void (*warn)(void *ctx, const char *msg), void *ctx);

/* Milliseconds per one of `unit` for time units; NAN for others. */
double bench_unit_ms(const char *unit);

#endif
