/* coverage.h — artifacts against the catalog's required sets (docs/design.md §8.4): every metric a set requires
 * must be present with enough samples and not harness-only. A required pattern ("*.wall_ms") requires each
 * metric it matches that has no exact entry of its own, and at least one. The result is a table the command
 * prints (text or plumb.bench.coverage.v1) and whose problem count its --strict gate reads. */
#ifndef PLUMB_BENCH_COVERAGE_H
#define PLUMB_BENCH_COVERAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/err.h"
#include "bench/config.h"
#include "bench/evidence.h"
#include "bench/report.h"

struct bench_coverage_row {
	const char *name;        /* the metric (points into the catalog or an artifact) */
	char *required_by;       /* its sets, "smoke,full" (owned) */
	size_t count;            /* samples of it in the artifact that has the most */
	const char *trust;       /* that artifact's trust for it (BENCH_TRUST_*), NULL when it is missing */
	char status[96];         /* "ok", "missing", "harness-only (unoptimized build)", "too few samples (N < M)" */
	bool ok;
};

struct bench_coverage {
	struct bench_coverage_row *rows; /* in catalog order */
	size_t n, cap;
	size_t problems;                 /* rows that are not ok */
};

/* Checks nev artifacts against cat. The rows point into cat and the artifacts, which must outlive them.
 * PLUMB_ENOMEM on failure (cov is then empty). */
enum plumb_err bench_coverage_check(const struct bench_catalog *cat, const struct bench_evidence *evs, size_t nev,
				    struct bench_coverage *cov, struct perr *e);
void bench_coverage_release(struct bench_coverage *cov);

/* The table (text, with a closing count) or the plumb.bench.coverage.v1 document (JSON); strict is recorded in
 * the document. */
enum plumb_err bench_coverage_write(FILE *out, const struct bench_coverage *cov, bool strict, enum bench_style style,
				    struct perr *e);

#endif
