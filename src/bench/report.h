/* report.h — what plumb bench shows of its artifacts and catalog (docs/design.md §8.3, §8.4): the report of one
 * artifact (per metric count, min, p50, p95, max, mean, CV and unit, with the catalog's SLO checks) as text,
 * Markdown or plumb.bench.report.v1 JSON; the comparison table as text or plumb.bench.compare.v1; the catalog's
 * ownership table as text or plumb.catalog.v1 JSON. Each writer writes to the stream it is handed (the command's
 * stdout) and returns PLUMB_ENOMEM when it cannot build what it writes; it never writes to stderr nor chooses an
 * exit code. */
#ifndef PLUMB_BENCH_REPORT_H
#define PLUMB_BENCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/err.h"
#include "bench/baseline.h"
#include "bench/compare.h"
#include "bench/config.h"
#include "bench/evidence.h"
#include "bench/stats.h"

struct json_t;

enum bench_style { BENCH_STYLE_TEXT, BENCH_STYLE_MARKDOWN, BENCH_STYLE_JSON };

/* One SLO of a metric against its summary: the statistic (p50, p95, max), the catalog's limit, the value, and
 * whether it holds in the metric's better direction. */
struct bench_slo_check {
	const char *stat;
	double limit, value;
	bool pass;
};

/* The SLO checks of a metric (at most three, in the order p50, p95, max); none without an entry (d NULL) or
 * without samples. Returns how many were written to out. */
size_t bench_slo_checks(const struct bench_metric_def *d, const struct bench_summary *s, struct bench_slo_check out[3]);

/* The report of ev. shown names the artifact in the header (already redacted); cat may be NULL. */
enum plumb_err bench_report_write(FILE *out, const struct bench_evidence *ev, const char *shown,
				  const struct bench_catalog *cat, enum bench_style style, struct perr *e);

/* How the command asked for a comparison, as its output repeats it (every text already redacted). */
struct bench_compare_view {
	const char *baseline_arg, *current_arg; /* the two arguments as given */
	const char *baseline_file;              /* the file the baseline was read from */
	double threshold_pct, alpha;
	enum bench_rank rank;
};

/* The comparison table of cmp (made from base and cur), as text or JSON (style TEXT or JSON). */
enum plumb_err bench_compare_write(FILE *out, const struct bench_cmp *cmp, const struct bench_evidence *base,
				   const struct bench_evidence *cur, const struct bench_compare_view *v,
				   enum bench_style style, struct perr *e);

/* The catalog as owners see it: each metric's tier, phase, owner and next-action hint (text), or the whole
 * catalog as plumb.catalog.v1 JSON. */
enum plumb_err bench_owners_write(FILE *out, const struct bench_catalog *cat, enum bench_style style, struct perr *e);

/* The table of saved baselines (bench_baseline_list): name, suite, created, commit, trust and samples, or why one
 * could not be read (redacted here: the reason names a path). */
void bench_baselines_write(FILE *out, const struct bench_baseline_summary *list, size_t n);

/* Writes a jansson document (JSON_INDENT(1) and the flags given) and a newline, then frees it: the one way the
 * bench writers print JSON. PLUMB_ENOMEM when root is NULL or cannot be dumped (root is freed either way). */
enum plumb_err bench_json_write(FILE *out, struct json_t *root, size_t flags, struct perr *e);

#endif
