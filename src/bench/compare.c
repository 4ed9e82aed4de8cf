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

bool bench_metric_is_core_in(const struct bench_catalog *cat, const struct bench_evidence *base,
			     const struct bench_evidence *cur, const char *metric)
{
	const struct bench_metric_def *d = bench_catalog_find(cat, metric);
	if (d)
		return d->core;
	const char *dot = strchr(metric, '.');
	if (!dot)
		return false;
	const struct bench_evidence *sides[2] = { base, cur };
	for (int i = 0; i < 2; i++) {
		const struct bench_case_result *c = sides[i] ? bench_evidence_case_of(sides[i], metric) : NULL;
		if (c && c->core_metric)
			return strcmp(dot + 1, c->core_metric) == 0;
	}
	return strcmp(dot + 1, "wall_ms") == 0;
}

/* Whether contention moves a metric: everything measured in time passing (wall time, a program's own latency
 * samples), not CPU time, memory, nor the runner's unqueued time (the wall time less the waits). */
static bool contention_sensitive(const struct bench_sample *first)
{
	const char *dot = first ? strchr(first->name, '.') : NULL;
	if (dot && strcmp(dot + 1, "unqueued_ms") == 0)
		return false; /* the wall time with the waits for a CPU taken out */
	return !first || (strcmp(first->kind, "cpu") != 0 && strcmp(first->kind, "memory") != 0);
}

/* What one side's repeats of a case ran under: how many have contention figures, how many ran contended, the
 * mean share of the CPUs other processes used in those, and the median wait for a CPU (ms; NAN unless every
 * repeat knows it). */
struct side_contention {
	size_t with, contended;
	double other_pct, wait_ms;
};

static struct side_contention side_of(const struct bench_evidence *ev, const char *metric)
{
	struct side_contention sc = { 0, 0, 0, NAN };
	const struct bench_case_result *c = bench_evidence_case_of(ev, metric);
	if (!c)
		return sc;
	double *w = calloc(c->nruns + 1, sizeof *w);
	size_t nw = 0;
	for (size_t i = 0; i < c->nruns; i++) {
		const struct bench_run *r = &c->runs[i];
		if (!r->has_contention)
			continue;
		sc.with++;
		if (r->contended) {
			sc.contended++;
			sc.other_pct += isfinite(r->other_cpu_pct) ? r->other_cpu_pct : 0;
		}
		if (w && isfinite(r->wait_ms))
			w[nw++] = r->wait_ms;
	}
	if (sc.contended)
		sc.other_pct /= (double)sc.contended;
	if (w && nw && nw == sc.with)
		sc.wait_ms = bench_median_inplace(w, nw);
	free(w);
	return sc;
}

/* Whether contention makes a tested verdict of a wall-time metric untrustworthy, with the reason in r->why
 * (docs/bench.md "Contention"). When both sides know their repeats' wait for a CPU, the question is whether the
 * difference of the median waits explains the change: half of a slower or faster change, or, for `~`, a shift as
 * large as the noise floor (it could hide a change). Otherwise: more than BENCH_CONTENDED_SHARE_MAX of the
 * repeats of one side ran contended. */
static bool contention_explains(struct bench_cmp_row *r, const struct bench_evidence *base,
				const struct bench_evidence *cur)
{
	struct side_contention sb = side_of(base, r->metric), sc = side_of(cur, r->metric);
	if (!sb.with && !sc.with)
		return false; /* neither artifact recorded contention */
	bool cur_worse = (double)sc.contended / (double)(sc.with ? sc.with : 1) >=
			 (double)sb.contended / (double)(sb.with ? sb.with : 1);
	const struct side_contention *w = cur_worse ? &sc : &sb;
	const char *side = cur_worse ? "current" : "baseline";
	double to_ms = bench_unit_ms(r->unit);
	bool untrusted;
	char how[120] = "";
	if (isfinite(sb.wait_ms) && isfinite(sc.wait_ms) && isfinite(to_ms) && isfinite(r->time_added_ms)) {
		double dwait = sc.wait_ms - sb.wait_ms, change = r->time_added_ms;
		if (strcmp(r->verdict, BENCH_VERDICT_SAME) == 0)
			untrusted = fabs(dwait) >= r->noise_pct / 100 * fabs(r->base.p50) * to_ms;
		else
			untrusted = dwait * (change > 0 ? 1 : -1) >= 0.5 * fabs(change);
		snprintf(how, sizeof how, "; the current run's repeats waited for a CPU %+.1f ms (median) against the "
			 "baseline's, beside a change of %+.1f ms", dwait, change);
		if (untrusted && w->contended == 0) { /* the waits differ though neither side crossed the mark */
			snprintf(r->why, sizeof r->why, "%s", how + 2);
			return true;
		}
	} else {
		untrusted = (double)w->contended > BENCH_CONTENDED_SHARE_MAX * (double)w->with;
	}
	if (untrusted)
		snprintf(r->why, sizeof r->why, "%zu of %zu repeats of the %s run ran while other processes used %.0f%% of "
			 "the CPUs%s", w->contended, w->with, side, w->other_pct, how);
	return untrusted;
}

/* The median yardstick of an artifact's kept repeats (every case's), NAN when fewer than half of its repeats
 * recorded one (a run without contention figures has none, whatever its field holds). */
static double yardstick_median(const struct bench_evidence *ev)
{
	size_t n = 0, with = 0;
	for (size_t i = 0; i < ev->ncases; i++)
		n += ev->cases[i].nruns;
	double *v = calloc(n + 1, sizeof *v);
	if (!v)
		return NAN;
	for (size_t i = 0; i < ev->ncases; i++)
		for (size_t j = 0; j < ev->cases[i].nruns; j++)
			if (ev->cases[i].runs[j].has_contention && isfinite(ev->cases[i].runs[j].yardstick_ms) &&
			    ev->cases[i].runs[j].yardstick_ms > 0)
				v[with++] = ev->cases[i].runs[j].yardstick_ms;
	double m = with && 2 * with >= n ? bench_median_inplace(v, with) : NAN;
	free(v);
	return m;
}

/* A seed for the bootstrap from the metric's name (FNV-1a): the same comparison reads the same every time. */
static unsigned long long name_seed(const char *s)
{
	unsigned long long h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The statistics and verdict of a metric both sides have: the change of the median, its bootstrap interval, the
 * U test, the noise floor, and what contention does to the verdict. False when out of memory. */
static bool judge(struct bench_cmp_row *r, const struct bench_evidence *base, const struct bench_evidence *cur,
		  const double *vb, size_t kb, const double *vc, size_t kc, double threshold_pct, double alpha)
{
	if (r->base.p50 != 0)
		r->change_pct = (r->cur.p50 - r->base.p50) / fabs(r->base.p50) * 100;
	else
		r->change_pct = r->cur.p50 == 0 ? 0 : r->cur.p50 > 0 ? INFINITY : -INFINITY;
	r->time_added_ms = (r->cur.p50 - r->base.p50) * bench_unit_ms(r->unit);
	struct bench_utest t;
	if (!bench_mann_whitney(vb, kb, vc, kc, &t))
		return false;
	r->p = t.p;
	r->u = t.u;
	r->exact = t.exact;
	size_t rounds = BENCH_BOOTSTRAP_ROUNDS;
	if ((kb + kc) * rounds > 4000000)
		rounds = 4000000 / (kb + kc) < 200 ? 200 : 4000000 / (kb + kc);
	double sd;
	if (!bench_bootstrap_median_change(vb, kb, vc, kc, 0.95, rounds, name_seed(r->metric), &r->ci_lo, &r->ci_hi) ||
	    !bench_robust_sd(vb, kb, &sd))
		return false;
	if (r->base.p50 == 0)
		r->ci_lo = r->ci_hi = NAN; /* a change from a median of 0 has no percentage to bound */
	r->noise_pct = threshold_pct;
	if (r->base.p50 != 0 && sd / fabs(r->base.p50) * 100 > r->noise_pct)
		r->noise_pct = sd / fabs(r->base.p50) * 100;
	bool higher_better = r->def && r->def->better == BENCH_HIGHER_IS_BETTER;
	bool worse = higher_better ? r->change_pct < 0 : r->change_pct > 0;
	/* the interval must leave 0 on the side of the change: one shifted block of repeats moves the median little
	 * and widens the interval, where it would move a mean */
	bool clear = r->change_pct > 0 ? r->ci_lo > 0 : r->change_pct < 0 ? r->ci_hi < 0 : false;
	if (isnan(r->ci_lo))
		clear = true; /* a side too small to resample: the U test and the floor decide */
	if (bench_utest_min_p(kb, kc) > alpha)
		r->verdict = BENCH_VERDICT_INCONCLUSIVE;
	else if (r->p < alpha && fabs(r->change_pct) >= r->noise_pct && clear)
		r->verdict = worse ? BENCH_VERDICT_SLOWER : BENCH_VERDICT_FASTER;
	else
		r->verdict = BENCH_VERDICT_SAME;
	const struct bench_sample *first = bench_evidence_first(cur, r->metric);
	if (strcmp(r->verdict, BENCH_VERDICT_INCONCLUSIVE) != 0 && contention_sensitive(first) &&
	    contention_explains(r, base, cur))
		r->verdict = BENCH_VERDICT_INCONCLUSIVE;
	else if (strcmp(r->verdict, BENCH_VERDICT_INCONCLUSIVE) == 0 && !r->why[0])
		snprintf(r->why, sizeof r->why, "%zu vs %zu samples: no p-value could fall below %g", kb, kc, alpha);
	return true;
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
	out->yardstick_base_ms = yardstick_median(base);
	out->yardstick_cur_ms = yardstick_median(cur);
	out->speed_scale = isfinite(out->yardstick_base_ms) && isfinite(out->yardstick_cur_ms)
				   ? out->yardstick_base_ms / out->yardstick_cur_ms
				   : 1.0;
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
			r->core = bench_metric_is_core_in(cat, base, cur, m);
			const struct bench_sample *first = bench_evidence_first(cur, m);
			if (!first)
				first = bench_evidence_first(base, m);
			r->unit = first ? first->unit : "";
			size_t kb, kc;
			double *vb = bench_evidence_values(base, m, &kb);
			double *vc = bench_evidence_values(cur, m, &kc);
			/* CPU time at the baseline's machine speed: the drift every CPU-bound case shares on a shared
			 * machine is the machine's, not the code's */
			if (vc && kc && first && strcmp(first->kind, "cpu") == 0 && out->speed_scale != 1.0) {
				for (size_t k = 0; k < kc; k++)
					vc[k] *= out->speed_scale;
				r->scaled = true;
			}
			r->p = r->u = r->change_pct = r->time_added_ms = r->ci_lo = r->ci_hi = r->noise_pct = NAN;
			if (!bench_summarize(vb, kb, &r->base) || !bench_summarize(vc, kc, &r->cur) ||
			    ((kb && !vb) || (kc && !vc)))
				ok = false;
			if (ok && kb && kc) {
				ok = judge(r, base, cur, vb, kb, vc, kc, threshold_pct, alpha);
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
		} else if (out->rows[i].core && strcmp(out->rows[i].verdict, BENCH_VERDICT_INCONCLUSIVE) == 0) {
			out->inconclusive_core++;
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
