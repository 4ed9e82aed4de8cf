/* compare.c — the comparison table behind `plumb bench compare`. A verdict other than `~` needs a p-value
 * below alpha AND a median change beyond the threshold; with samples so few that no p-value could fall below
 * alpha (2 / C(n1+n2, n1) > alpha) the verdict is inconclusive rather than a false `~`. Ranking puts
 * significant regressions first, core metrics before drill-downs, then orders by time added (bottlenecks)
 * or by the change in the metric's worse direction (regressions). */
#include "bench/compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double bench_unit_ms(const char *unit)
{
	if (!unit)
		return NAN;
	if (strcmp(unit, "ms") == 0)
		return 1;
	if (strcmp(unit, "s") == 0)
		return 1e3;
	if (strcmp(unit, "us") == 0 || strcmp(unit, "µs") == 0)
		return 1e-3;
	if (strcmp(unit, "ns") == 0)
		return 1e-6;
	return NAN;
}

static const char *const rank_names[] = { [BENCH_RANK_BOTTLENECKS] = "bottlenecks",
					   [BENCH_RANK_REGRESSIONS] = "regressions",
					   [BENCH_RANK_NAME] = "name" };

bool bench_rank_parse(const char *name, enum bench_rank *rank)
{
	for (size_t i = 0; i < sizeof rank_names / sizeof rank_names[0]; i++)
		if (strcmp(name, rank_names[i]) == 0) {
			*rank = (enum bench_rank)i;
			return true;
		}
	return false;
}

const char *bench_rank_name(enum bench_rank rank)
{
	return rank_names[rank];
}

static int verdict_order(const char *v)
{
	if (strcmp(v, BENCH_VERDICT_SLOWER) == 0)
		return 0;
	if (strcmp(v, BENCH_VERDICT_NEW) == 0 || strcmp(v, BENCH_VERDICT_GONE) == 0)
		return 3;
	if (strcmp(v, BENCH_VERDICT_FASTER) == 0)
		return 2;
	return 1;
}

/* NAN sorts after every number */
static int cmp_desc(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	return (a < b) - (a > b);
}

/* Rows in the order of a ranking (ctx: the enum bench_rank). */
static int cmp_rows(const void *pa, const void *pb, void *ctx)
{
	enum bench_rank rank = *(const enum bench_rank *)ctx;
	const struct bench_cmp_row *a = pa, *b = pb;
	if (rank == BENCH_RANK_NAME)
		return strcmp(a->metric, b->metric);
	int va = verdict_order(a->verdict), vb = verdict_order(b->verdict);
	if (va != vb)
		return va - vb;
	if (a->core != b->core) /* the headline metrics before their drill-downs */
		return a->core ? -1 : 1;
	int c;
	if (rank == BENCH_RANK_BOTTLENECKS && (c = cmp_desc(a->time_added_ms, b->time_added_ms)) != 0)
		return c;
	/* regressions: the worst change in the metric's own direction first */
	double wa = a->change_pct * (a->def && a->def->better == BENCH_HIGHER_IS_BETTER ? -1 : 1);
	double wb = b->change_pct * (b->def && b->def->better == BENCH_HIGHER_IS_BETTER ? -1 : 1);
	if ((c = cmp_desc(wa, wb)) != 0)
		return c;
	return strcmp(a->metric, b->metric);
}

bool bench_compare(const struct bench_evidence *base, const struct bench_evidence *cur, const struct bench_catalog *cat,
		   double threshold_pct, double alpha, enum bench_rank rank, struct bench_cmp *out)
{
	memset(out, 0, sizeof *out);
	size_t nb, nc;
	const char **mb = bench_evidence_metrics(base, &nb);
	const char **mc = bench_evidence_metrics(cur, &nc);
	if (!mb || !mc) {
		free(mb);
		free(mc);
		return false;
	}
	out->rows = calloc(nb + nc + 1, sizeof *out->rows);
	if (!out->rows) {
		free(mb);
		free(mc);
		return false;
	}
	bool ok = true;
	/* current metrics first (in their order), then those only the baseline has */
	for (size_t pass = 0; pass < 2 && ok; pass++) {
		const char **list = pass == 0 ? mc : mb;
		size_t n = pass == 0 ? nc : nb;
		for (size_t i = 0; i < n && ok; i++) {
			const char *m = list[i];
			if (pass == 1 && bench_evidence_first(cur, m))
				continue; /* already compared in the first pass */
			struct bench_cmp_row *r = &out->rows[out->n++];
			r->metric = m;
			r->def = bench_catalog_find(cat, m);
			r->core = bench_metric_is_core(cat, m);
			const struct bench_sample *first = bench_evidence_first(cur, m);
			if (!first)
				first = bench_evidence_first(base, m);
			r->unit = first ? first->unit : "";
			size_t kb, kc;
			double *vb = bench_evidence_values(base, m, &kb);
			double *vc = bench_evidence_values(cur, m, &kc);
			r->p = r->u = r->change_pct = r->time_added_ms = NAN;
			if (!bench_summarize(vb, kb, &r->base) || !bench_summarize(vc, kc, &r->cur) ||
			    ((kb && !vb) || (kc && !vc)))
				ok = false;
			if (ok && kb && kc) {
				if (r->base.p50 != 0)
					r->change_pct = (r->cur.p50 - r->base.p50) / fabs(r->base.p50) * 100;
				else
					r->change_pct = r->cur.p50 == 0 ? 0 : r->cur.p50 > 0 ? INFINITY : -INFINITY;
				r->time_added_ms = (r->cur.p50 - r->base.p50) * bench_unit_ms(r->unit);
				struct bench_utest t;
				if (!bench_mann_whitney(vb, kb, vc, kc, &t)) {
					ok = false;
				} else {
					r->p = t.p;
					r->u = t.u;
					r->exact = t.exact;
				}
				bool higher_better = r->def && r->def->better == BENCH_HIGHER_IS_BETTER;
				bool worse = higher_better ? r->change_pct < 0 : r->change_pct > 0;
				if (bench_utest_min_p(kb, kc) > alpha)
					r->verdict = BENCH_VERDICT_INCONCLUSIVE;
				else if (r->p < alpha && fabs(r->change_pct) >= threshold_pct)
					r->verdict = worse ? BENCH_VERDICT_SLOWER : BENCH_VERDICT_FASTER;
				else
					r->verdict = BENCH_VERDICT_SAME;
			} else if (ok) {
				r->verdict = kc ? BENCH_VERDICT_NEW : BENCH_VERDICT_GONE;
			}
			free(vb);
			free(vc);
		}
	}
	free(mb);
	free(mc);
	if (!ok) {
		bench_cmp_release(out);
		return false;
	}
	qsort_r(out->rows, out->n, sizeof *out->rows, cmp_rows, &rank);
	for (size_t i = 0; i < out->n; i++)
		if (out->rows[i].core && strcmp(out->rows[i].verdict, BENCH_VERDICT_SLOWER) == 0) {
			if (!out->regressions++)
				out->first_regression = &out->rows[i];
		}
	return true;
}

void bench_cmp_release(struct bench_cmp *c)
{
	free(c->rows);
	memset(c, 0, sizeof *c);
}

static bool is_harness(const struct bench_evidence *ev)
{
	return ev->trust && strcmp(ev->trust, BENCH_TRUST_HARNESS) == 0;
}

/* warn(ctx, the formatted message); a message that cannot be formatted (out of memory) is dropped. */
static void cautionf(void (*warn)(void *ctx, const char *msg), void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cautionf(void (*warn)(void *ctx, const char *msg), void *ctx, const char *fmt, ...)
{
	char *msg;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	warn(ctx, msg);
	free(msg);
}

void bench_compare_cautions(const struct bench_evidence *base, const struct bench_evidence *cur,
			    void (*warn)(void *ctx, const char *msg), void *ctx)
{
	if (is_harness(base) || is_harness(cur))
		cautionf(warn, ctx,
			 "%s artifact is harness-only (an unoptimized build): treat the verdicts as a harness check, not "
			 "performance evidence",
			 is_harness(base) ? "the baseline" : "the current");
	if (base->suite && cur->suite && strcmp(base->suite, cur->suite) != 0)
		cautionf(warn, ctx, "the baseline ran suite '%s', the current one '%s'", base->suite, cur->suite);
	if ((base->cpu_model && cur->cpu_model && strcmp(base->cpu_model, cur->cpu_model) != 0) ||
	    (base->cores && cur->cores && base->cores != cur->cores))
		cautionf(warn, ctx,
			 "measured on different machines (%s, %ld CPUs vs %s, %ld CPUs): differences may be the machine's",
			 base->cpu_model ? base->cpu_model : "?", base->cores, cur->cpu_model ? cur->cpu_model : "?",
			 cur->cores);
}
