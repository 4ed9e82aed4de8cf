/* coverage.c — the required-set check behind `plumb bench coverage`. For each required metric the artifact
 * holding the most samples of it speaks for it. */
#include "bench/coverage.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/sbuf.h"

/* Adds the row of one required metric. False when out of memory. */
static bool add_row(struct bench_coverage *cov, const struct bench_catalog *cat, const struct bench_evidence *evs,
		    size_t nev, const char *name, const char *sets)
{
	if (!ALLOC_GROW(cov->rows, cov->n + 1, cov->cap))
		return false;
	struct bench_coverage_row *r = &cov->rows[cov->n];
	memset(r, 0, sizeof *r);
	r->name = name;
	if (!(r->required_by = strdup(sets)))
		return false;
	cov->n++;
	for (size_t a = 0; a < nev; a++) {
		size_t n;
		free(bench_evidence_values(&evs[a], name, &n));
		if (n > r->count) {
			const struct bench_case_result *c = bench_evidence_case_of(&evs[a], name);
			r->count = n;
			r->trust = c && c->trust ? c->trust : BENCH_TRUST_UNKNOWN;
		}
	}
	long floor_n = bench_metric_min_samples(cat, name);
	if (r->count == 0)
		snprintf(r->status, sizeof r->status, "missing");
	else if (strcmp(r->trust, BENCH_TRUST_HARNESS) == 0)
		snprintf(r->status, sizeof r->status, "harness-only (unoptimized build)");
	else if ((long)r->count < floor_n)
		snprintf(r->status, sizeof r->status, "too few samples (%zu < %ld)", r->count, floor_n);
	else
		snprintf(r->status, sizeof r->status, "ok");
	r->ok = strcmp(r->status, "ok") == 0;
	cov->problems += !r->ok;
	return true;
}

/* The rows of a required pattern: each metric of the artifacts it is the entry of (once, in the first artifact
 * that has it), or the pattern itself as missing when it matches none. */
static bool add_pattern(struct bench_coverage *cov, const struct bench_catalog *cat, const struct bench_evidence *evs,
			size_t nev, const struct bench_metric_def *m, const char *sets)
{
	size_t matched = 0;
	bool ok = true;
	for (size_t a = 0; a < nev && ok; a++) {
		size_t nm;
		const char **names = bench_evidence_metrics(&evs[a], &nm);
		for (size_t k = 0; names && k < nm && ok; k++) {
			if (bench_catalog_find(cat, names[k]) != m)
				continue;
			bool seen = false; /* in an earlier artifact */
			for (size_t b = 0; b < a && !seen; b++)
				seen = bench_evidence_first(&evs[b], names[k]) != NULL;
			if (seen)
				continue;
			matched++;
			ok = add_row(cov, cat, evs, nev, names[k], sets);
		}
		free(names);
	}
	return ok && (matched || add_row(cov, cat, evs, nev, m->name, sets));
}

enum plumb_err bench_coverage_check(const struct bench_catalog *cat, const struct bench_evidence *evs, size_t nev,
				    struct bench_coverage *cov, struct perr *e)
{
	memset(cov, 0, sizeof *cov);
	bool ok = true;
	for (size_t i = 0; i < cat->n && ok; i++) {
		const struct bench_metric_def *m = &cat->metrics[i];
		if (m->nrequired == 0)
			continue;
		struct sbuf sets = SBUF_INIT;
		for (size_t k = 0; k < m->nrequired; k++)
			sbuf_addf(&sets, "%s%s", k ? "," : "", m->required[k]);
		ok = !sets.oom && (strpbrk(m->name, "*?[") ? add_pattern(cov, cat, evs, nev, m, sets.buf)
							   : add_row(cov, cat, evs, nev, m->name, sets.buf));
		sbuf_release(&sets);
	}
	if (!ok) {
		bench_coverage_release(cov);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	return PLUMB_OK;
}

void bench_coverage_release(struct bench_coverage *cov)
{
	for (size_t i = 0; i < cov->n; i++)
		free(cov->rows[i].required_by);
	free(cov->rows);
	memset(cov, 0, sizeof *cov);
}

enum plumb_err bench_coverage_write(FILE *out, const struct bench_coverage *cov, bool strict, enum bench_style style,
				    struct perr *e)
{
	if (style == BENCH_STYLE_JSON) {
		json_t *rows = json_array();
		for (size_t i = 0; i < cov->n; i++) {
			const struct bench_coverage_row *r = &cov->rows[i];
			json_array_append_new(rows, json_pack("{s:s, s:s, s:I, s:s?, s:s, s:b}", "name", r->name, "required_by",
							      r->required_by, "count", (json_int_t)r->count, "trust",
							      r->trust, "status", r->status, "ok", r->ok));
		}
		json_t *root = json_pack("{s:s, s:b, s:I, s:I, s:o}", "schema", "plumb.bench.coverage.v1", "strict", strict,
					 "required", (json_int_t)cov->n, "problems", (json_int_t)cov->problems, "metrics",
					 rows);
		return bench_json_write(out, root, 0, e);
	}
	fprintf(out, "%-40s %-20s %6s  %-12s %s\n", "metric", "required by", "n", "trust", "status");
	for (size_t i = 0; i < cov->n; i++) {
		const struct bench_coverage_row *r = &cov->rows[i];
		fprintf(out, "%-40s %-20s %6zu  %-12s %s\n", r->name, r->required_by, r->count, r->trust ? r->trust : "-",
			r->status);
	}
	fprintf(out, "\n%zu required metric%s, %zu with a problem\n", cov->n, cov->n == 1 ? "" : "s", cov->problems);
	return PLUMB_OK;
}
