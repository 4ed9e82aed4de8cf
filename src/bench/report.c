/* report.c — the tables and documents plumb bench prints: an artifact's report with its SLO checks, the
 * comparison table and the catalog's owners. A table row's figures share a unit and decimals (row_scale_of; a
 * limit or a lone figure goes through fmt_num), JSON through
 * jansson (JSON_REAL_PRECISION(15) where figures are measured), so every output of a figure reads the same. */
#include "bench/report.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/redact.h"
#include "base/sbuf.h"

/* A figure in a table: "-" for NAN, then fewer decimals the larger it is. */
static const char *fmt_num(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, "%s", v > 0 ? "inf" : "-inf");
	else if (fabs(v) >= 1e9)
		snprintf(buf, len, "%.4g", v);
	else if (fabs(v) >= 1e5)
		snprintf(buf, len, "%.0f", v);
	else if (fabs(v) >= 100 || v == floor(v))
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.3f", v);
	return buf;
}

/* How one row of a table shows its figures: bytes in the binary unit that suits the row's largest figure (KiB,
 * MiB, GiB: a peak RSS of 1585152 reads 1.51 MiB), and every figure of the row with the same decimals, as many as
 * its largest figure needs (12.14 and 161.10 would not line up as 12.135 and 161.1). */
struct row_scale {
	double div;
	int decimals;
	char unit[16];
};

static struct row_scale row_scale_of(const char *unit, const double *v, size_t n)
{
	struct row_scale s = { 1, 3, "" };
	snprintf(s.unit, sizeof s.unit, "%s", unit ? unit : "");
	double top = 0;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]) && fabs(v[i]) > top)
			top = fabs(v[i]);
	if (unit && strcmp(unit, "bytes") == 0) {
		static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
		size_t u = 0;
		while (u + 1 < sizeof units / sizeof units[0] && top / s.div >= 1024) {
			s.div *= 1024;
			u++;
		}
		snprintf(s.unit, sizeof s.unit, "%s", units[u]);
		if (u == 0) {
			s.decimals = 0;
			return s;
		}
	}
	top /= s.div;
	s.decimals = top >= 1000 || top == 0 ? 0 : top >= 100 ? 1 : top >= 10 ? 2 : 3;
	return s;
}

/* One figure of a row (row_scale_of): "-" for NAN. */
static const char *fmt_fig(char *buf, size_t len, double v, const struct row_scale *s)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, "%s", v > 0 ? "inf" : "-inf");
	else
		snprintf(buf, len, "%.*f", s->decimals, v / s->div);
	return buf;
}

enum plumb_err bench_json_write(FILE *out, json_t *root, size_t flags, struct perr *e)
{
	char *text = root ? json_dumps(root, JSON_INDENT(1) | flags) : NULL;
	json_decref(root);
	if (!text)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	fputs(text, out);
	fputc('\n', out);
	free(text);
	return PLUMB_OK;
}

/* The catalog entry's phase, owner and hint as a JSON object. */
static json_t *owner_json(const struct bench_metric_def *d)
{
	return json_pack("{s:s?, s:s?, s:s?}", "phase", d->phase, "owner", d->owner, "hint", d->hint);
}

/* ---- SLOs ---- */

size_t bench_slo_checks(const struct bench_metric_def *d, const struct bench_summary *s, struct bench_slo_check out[3])
{
	size_t n = 0;
	if (!d || s->n == 0)
		return 0;
	const struct {
		const char *stat;
		double limit, value;
	} all[] = { { "p50", d->slo_p50, s->p50 }, { "p95", d->slo_p95, s->p95 }, { "max", d->slo_max, s->max } };
	for (int i = 0; i < 3; i++) {
		if (isnan(all[i].limit))
			continue;
		bool pass = d->better == BENCH_HIGHER_IS_BETTER ? all[i].value >= all[i].limit : all[i].value <= all[i].limit;
		out[n++] = (struct bench_slo_check){ all[i].stat, all[i].limit, all[i].value, pass };
	}
	return n;
}

/* "p50 <= 10.0: pass, max <= 20.0: FAIL", or "-" without SLOs. */
static void slo_text(struct sbuf *sb, const struct bench_metric_def *d, const struct bench_slo_check *c, size_t n)
{
	if (n == 0) {
		sbuf_addstr(sb, "-");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char lim[32];
		sbuf_addf(sb, "%s%s %s %s: %s", i ? ", " : "", c[i].stat, d->better == BENCH_HIGHER_IS_BETTER ? ">=" : "<=",
			  fmt_num(lim, sizeof lim, c[i].limit), c[i].pass ? "pass" : "FAIL");
	}
}

/* ---- the report of one artifact ---- */

/* Every metric of an artifact with its summary. */
struct report_rows {
	const char **metrics;
	struct bench_summary *sum;
	size_t n;
};

static void rows_release(struct report_rows *r)
{
	free(r->sum);
	free(r->metrics);
}

static bool rows_build(const struct bench_evidence *ev, struct report_rows *r)
{
	r->sum = NULL;
	r->metrics = bench_evidence_metrics(ev, &r->n);
	if (!r->metrics || !(r->sum = calloc(r->n + 1, sizeof *r->sum)))
		goto oom;
	for (size_t i = 0; i < r->n; i++) {
		size_t n;
		double *v = bench_evidence_values(ev, r->metrics[i], &n);
		bool ok = bench_summarize(v, n, &r->sum[i]);
		free(v);
		if (!ok)
			goto oom;
	}
	return true;
oom:
	rows_release(r);
	return false;
}

static json_t *report_json(const struct bench_evidence *ev, const struct bench_catalog *cat,
			   const struct report_rows *r)
{
	json_t *root = json_pack("{s:s, s:s?, s:s?, s:s?}", "schema", "plumb.bench.report.v1", "suite", ev->suite,
				 "created", ev->created, "trust", ev->trust);
	json_t *arr = json_array();
	for (size_t i = 0; i < r->n; i++) {
		const char *m = r->metrics[i];
		const struct bench_summary *s = &r->sum[i];
		const struct bench_sample *f = bench_evidence_first(ev, m);
		const struct bench_metric_def *d = bench_catalog_find(cat, m);
		const struct bench_case_result *c = bench_evidence_case_of(ev, m);
		json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:s?, s:b}", "name", m, "kind",
				      f->kind, "unit", f->unit, "count", (json_int_t)s->n, "min", s->min, "p50", s->p50, "p95",
				      s->p95, "max", s->max, "mean", s->mean, "cv", s->cv, "trust", c ? c->trust : NULL,
				      "core", bench_metric_is_core_in(cat, ev, NULL, m));
		struct bench_slo_check sc[3];
		size_t ns = bench_slo_checks(d, s, sc);
		json_t *slos = json_array();
		for (size_t k = 0; k < ns; k++)
			json_array_append_new(slos, json_pack("{s:s, s:f, s:f, s:b}", "stat", sc[k].stat, "limit", sc[k].limit,
							      "value", sc[k].value, "pass", sc[k].pass));
		json_object_set_new(o, "slo", slos);
		if (d)
			json_object_set_new(o, "owner", owner_json(d));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "metrics", arr);
	json_t *cases = json_array();
	for (size_t i = 0; i < ev->ncases; i++) {
		const struct bench_case_result *c = &ev->cases[i];
		size_t with, n = bench_case_contended(c, &with);
		json_t *o = json_pack("{s:s, s:s?, s:s?, s:s?, s:I, s:I}", "name", c->name, "status", c->status,
				      "core_metric", c->core_metric, "core_source", c->core_source, "repeats",
				      (json_int_t)c->nruns, "reruns", (json_int_t)c->reruns);
		json_object_set_new(o, "cpu_wall_ratio", isfinite(c->cpu_wall_ratio) ? json_real(c->cpu_wall_ratio) : json_null());
		json_object_set_new(o, "contended_runs", with ? json_integer((json_int_t)n) : json_null());
		json_array_append_new(cases, o);
	}
	json_object_set_new(root, "cases", cases);
	return root;
}

/* One line on a case's core metric and the contention its repeats ran under. */
static bool case_contention_line(FILE *out, const struct bench_case_result *c, bool markdown)
{
	size_t with, n = bench_case_contended(c, &with);
	if (!c->core_metric && !with)
		return false;
	fprintf(out, "%scase %s: core %s", markdown ? "- " : "  ", c->name, c->core_metric ? c->core_metric : "wall_ms");
	if (c->core_source && strcmp(c->core_source, "suite") == 0)
		fputs(" (the suite's choice)", out);
	else if (isfinite(c->cpu_wall_ratio))
		fprintf(out, " (cpu/wall ratio %.2f)", c->cpu_wall_ratio);
	if (with) {
		double other = 0, wait = 0, steal = 0;
		size_t nw = 0;
		for (size_t i = 0; i < c->nruns; i++) {
			const struct bench_run *r = &c->runs[i];
			if (!r->has_contention)
				continue;
			other += isfinite(r->other_cpu_pct) ? r->other_cpu_pct : 0;
			steal += isfinite(r->steal_pct) ? r->steal_pct : 0;
			if (isfinite(r->wait_pct)) {
				wait += r->wait_pct;
				nw++;
			}
		}
		fprintf(out, "; %zu of %zu repeats contended, %ld re-run%s; other processes used %.0f%% of the CPUs", n, with,
			c->reruns, c->reruns == 1 ? "" : "s", other / (double)with);
		if (nw)
			fprintf(out, ", it waited for a CPU %.0f%% of its time", wait / (double)nw);
		if (steal > 0)
			fprintf(out, ", steal %.0f%%", steal / (double)with);
		fputs(" (mean per repeat)", out);
	}
	fputc('\n', out);
	return true;
}

/* The header line, and a line for each case that did not run fine or is harness-only. */
static void report_header(FILE *out, const struct bench_evidence *ev, const char *shown, bool markdown)
{
	char commit[16] = "no git";
	if (ev->git_commit)
		snprintf(commit, sizeof commit, "%.12s", ev->git_commit);
	/* the header is one line, so Markdown's bold closes on it: **TEXT** */
	fprintf(out, "%s%s: suite %s, %s, commit %s%s, trust %s, %ld repeat%s + %ld warm-up", markdown ? "**" : "", shown,
		ev->suite ? ev->suite : "?", ev->created ? ev->created : "?", commit, ev->git_dirty == 1 ? " (dirty)" : "",
		ev->trust ? ev->trust : "?", ev->repeats, ev->repeats == 1 ? "" : "s", ev->warmup);
	if (ev->order) {
		fprintf(out, ", %s", ev->order);
		if (ev->seed >= 0)
			fprintf(out, " (seed %ld)", ev->seed);
		fprintf(out, ", up to %ld re-run%s of a contended repeat", ev->retries, ev->retries == 1 ? "" : "s");
	}
	fputs(markdown ? "**\n\n" : "\n", out);
	bool listed = false;
	for (size_t i = 0; i < ev->ncases; i++) {
		const struct bench_case_result *c = &ev->cases[i];
		if (c->status && strcmp(c->status, "ok") != 0) {
			fprintf(out, "%scase %s %s\n", markdown ? "- " : "  ", c->name, c->status);
			listed = true;
		}
		if (c->trust && strcmp(c->trust, BENCH_TRUST_HARNESS) == 0) {
			fprintf(out, "%scase %s is harness-only: %s is an unoptimized build\n", markdown ? "- " : "  ", c->name,
				c->binary ? c->binary : "its program");
			listed = true;
		}
		listed |= case_contention_line(out, c, markdown);
	}
	if (markdown && listed)
		fputc('\n', out); /* the list ends before the table starts */
}

static void report_table(FILE *out, const struct bench_evidence *ev, const char *shown, const struct bench_catalog *cat,
			 const struct report_rows *r, bool markdown)
{
	report_header(out, ev, shown, markdown);
	size_t w = strlen("metric");
	for (size_t i = 0; i < r->n; i++)
		if (strlen(r->metrics[i]) > w)
			w = strlen(r->metrics[i]);
	if (markdown)
		fputs("| metric | n | min | p50 | p95 | max | mean | CV | unit | SLO |\n"
		      "|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
		      out);
	else
		fprintf(out, "%-*s %5s %11s %11s %11s %11s %11s %6s  %-6s %s\n", (int)w, "metric", "n", "min", "p50", "p95",
			"max", "mean", "cv%", "unit", "slo");
	for (size_t i = 0; i < r->n; i++) {
		const struct bench_summary *s = &r->sum[i];
		const struct bench_sample *f = bench_evidence_first(ev, r->metrics[i]);
		const struct bench_metric_def *d = bench_catalog_find(cat, r->metrics[i]);
		struct bench_slo_check sc[3];
		struct sbuf slo = SBUF_INIT;
		slo_text(&slo, d, sc, bench_slo_checks(d, s, sc));
		char a[32], b[32], c[32], e[32], g[32];
		const double figs[] = { s->min, s->p50, s->p95, s->max, s->mean };
		struct row_scale rs = row_scale_of(f->unit, figs, sizeof figs / sizeof figs[0]);
		fmt_fig(a, 32, s->min, &rs);
		fmt_fig(b, 32, s->p50, &rs);
		fmt_fig(c, 32, s->p95, &rs);
		fmt_fig(e, 32, s->max, &rs);
		fmt_fig(g, 32, s->mean, &rs);
		if (markdown)
			fprintf(out, "| %s | %zu | %s | %s | %s | %s | %s | %.1f%% | %s | %s |\n", r->metrics[i], s->n, a, b, c,
				e, g, s->cv * 100, rs.unit, slo.buf);
		else
			fprintf(out, "%-*s %5zu %11s %11s %11s %11s %11s %6.1f  %-6s %s\n", (int)w, r->metrics[i], s->n, a, b,
				c, e, g, s->cv * 100, rs.unit, slo.buf);
		sbuf_release(&slo);
	}
	if (r->n == 0)
		fputs("(no samples)\n", out);
}

enum plumb_err bench_report_write(FILE *out, const struct bench_evidence *ev, const char *shown,
				  const struct bench_catalog *cat, enum bench_style style, struct perr *e)
{
	struct report_rows r;
	if (!rows_build(ev, &r))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	enum plumb_err rc = PLUMB_OK;
	if (style == BENCH_STYLE_JSON)
		rc = bench_json_write(out, report_json(ev, cat, &r), JSON_REAL_PRECISION(15), e);
	else
		report_table(out, ev, shown, cat, &r, style == BENCH_STYLE_MARKDOWN);
	rows_release(&r);
	return rc;
}

/* ---- the comparison table ---- */

static json_t *compare_json(const struct bench_cmp *cmp, const struct bench_compare_view *v)
{
	json_t *root = json_pack("{s:s, s:s, s:s, s:f, s:f, s:s}", "schema", "plumb.bench.compare.v1", "baseline",
				 v->baseline_arg, "current", v->current_arg, "threshold_pct", v->threshold_pct, "alpha",
				 v->alpha, "rank", bench_rank_name(v->rank));
	json_t *rows = json_array();
	for (size_t i = 0; i < cmp->n; i++) {
		const struct bench_cmp_row *r = &cmp->rows[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I}", "name", r->metric, "unit", r->unit, "verdict",
				      r->verdict, "core", r->core, "baseline_count", (json_int_t)r->base.n, "current_count",
				      (json_int_t)r->cur.n);
		const struct {
			const char *key;
			double v;
		} nums[] = { { "baseline_p50", r->base.p50 }, { "baseline_p95", r->base.p95 },
			     { "current_p50", r->cur.p50 },   { "current_p95", r->cur.p95 },
			     { "change_pct", r->change_pct }, { "time_added_ms", r->time_added_ms },
			     { "p", r->p },                   { "u", r->u },
			     { "ci_low_pct", r->ci_lo },      { "ci_high_pct", r->ci_hi },
			     { "noise_floor_pct", r->noise_pct } };
		for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++)
			json_object_set_new(o, nums[k].key, isfinite(nums[k].v) ? json_real(nums[k].v) : json_null());
		json_object_set_new(o, "exact", json_boolean(r->exact));
		json_object_set_new(o, "speed_scaled", json_boolean(r->scaled));
		json_object_set_new(o, "why", r->why[0] ? json_string(r->why) : json_null());
		if (r->def)
			json_object_set_new(o, "owner", owner_json(r->def));
		json_array_append_new(rows, o);
	}
	json_object_set_new(root, "metrics", rows);
	json_object_set_new(root, "regressions", json_integer((json_int_t)cmp->regressions));
	json_object_set_new(root, "inconclusive_core", json_integer((json_int_t)cmp->inconclusive_core));
	json_object_set_new(root, "yardstick",
			    isfinite(cmp->yardstick_base_ms) && isfinite(cmp->yardstick_cur_ms)
				    ? json_pack("{s:f, s:f, s:f}", "baseline_ms", cmp->yardstick_base_ms, "current_ms",
						cmp->yardstick_cur_ms, "speed_scale", cmp->speed_scale)
				    : json_null());
	return root;
}

/* "baseline FILE (created, commit[ dirty], trust T)" and the same for the current artifact. */
static void compare_header(FILE *out, const struct bench_evidence *base, const struct bench_evidence *cur,
			   const struct bench_compare_view *v)
{
	const struct bench_evidence *side[2] = { base, cur };
	const char *label[2] = { "baseline", "current " }, *name[2] = { v->baseline_file, v->current_arg };
	for (int i = 0; i < 2; i++) {
		char commit[16] = "no git";
		if (side[i]->git_commit)
			snprintf(commit, sizeof commit, "%.12s", side[i]->git_commit);
		fprintf(out, "%s %s (%s, %s%s, trust %s)\n", label[i], name[i], side[i]->created ? side[i]->created : "?",
			commit, side[i]->git_dirty == 1 ? " dirty" : "", side[i]->trust ? side[i]->trust : "?");
	}
	fprintf(out,
		"ranked by %s; a verdict needs p < %g, a median change beyond the noise floor (%g%% or the baseline's own "
		"spread) and its 95%% interval clear of 0\n\n",
		bench_rank_name(v->rank), v->alpha, v->threshold_pct);
}

static void compare_row(FILE *out, const struct bench_cmp_row *r, int w)
{
	char a[32], b[32], c[32], d[32], ch[32], p[32];
	if (isfinite(r->change_pct))
		snprintf(ch, sizeof ch, "%+.1f%%", r->change_pct);
	else if (isinf(r->change_pct)) /* from a median of zero */
		snprintf(ch, sizeof ch, "%s", r->change_pct > 0 ? "+inf" : "-inf");
	else
		snprintf(ch, sizeof ch, "-");
	if (isnan(r->p))
		snprintf(p, sizeof p, "-");
	else
		snprintf(p, sizeof p, r->p < 0.0001 ? "%.1e" : "%.4f", r->p);
	struct sbuf own = SBUF_INIT;
	if (r->def && (r->def->owner || r->def->phase || r->def->hint)) {
		if (r->def->owner)
			sbuf_addstr(&own, r->def->owner);
		if (r->def->phase)
			sbuf_addf(&own, "%s(%s)", own.len ? " " : "", r->def->phase);
		if (r->def->hint)
			sbuf_addf(&own, "%s%s", own.len ? ": " : "", r->def->hint);
	} else {
		sbuf_addstr(&own, "-");
	}
	const double figs[] = { r->base.p50, r->cur.p50, r->base.p95, r->cur.p95 };
	struct row_scale rs = row_scale_of(r->unit, figs, sizeof figs / sizeof figs[0]);
	char metric[256];
	snprintf(metric, sizeof metric, "%s%s%s%s", r->metric, rs.div > 1 ? " (" : "", rs.div > 1 ? rs.unit : "",
		 rs.div > 1 ? ")" : "");
	char ci[48], fl[16];
	if (isfinite(r->ci_lo) && isfinite(r->ci_hi))
		snprintf(ci, sizeof ci, "[%+.1f, %+.1f]", r->ci_lo, r->ci_hi);
	else
		snprintf(ci, sizeof ci, "-");
	if (isfinite(r->noise_pct))
		snprintf(fl, sizeof fl, "%.1f%%", r->noise_pct);
	else
		snprintf(fl, sizeof fl, "-");
	fprintf(out, "%-*s %10s %10s %10s %10s %8s %16s %6s %8s  %-12s %s\n", w, metric, fmt_fig(a, 32, r->base.p50, &rs),
		fmt_fig(b, 32, r->cur.p50, &rs), fmt_fig(c, 32, r->base.p95, &rs), fmt_fig(d, 32, r->cur.p95, &rs), ch, ci,
		fl, p, r->verdict, own.buf);
	sbuf_release(&own);
}

enum plumb_err bench_compare_write(FILE *out, const struct bench_cmp *cmp, const struct bench_evidence *base,
				   const struct bench_evidence *cur, const struct bench_compare_view *v,
				   enum bench_style style, struct perr *e)
{
	if (style == BENCH_STYLE_JSON)
		return bench_json_write(out, compare_json(cmp, v), JSON_REAL_PRECISION(15), e);
	compare_header(out, base, cur, v);
	if (isfinite(cmp->yardstick_base_ms) && isfinite(cmp->yardstick_cur_ms))
		fprintf(out,
			"machine speed (the yardstick, a fixed loop timed before each repeat): baseline %.3f ms, current "
			"%.3f ms (%+.1f%%); CPU-time metrics of the current run are shown and judged at the baseline's "
			"speed (x%.3f)\n\n",
			cmp->yardstick_base_ms, cmp->yardstick_cur_ms,
			(cmp->yardstick_cur_ms / cmp->yardstick_base_ms - 1) * 100, cmp->speed_scale);
	size_t w = strlen("metric");
	for (size_t i = 0; i < cmp->n; i++)
		if (strlen(cmp->rows[i].metric) + 6 > w) /* room for " (MiB)" */
			w = strlen(cmp->rows[i].metric) + 6;
	fprintf(out, "%-*s %10s %10s %10s %10s %8s %16s %6s %8s  %-12s %s\n", (int)w, "metric", "base p50", "cur p50",
		"base p95", "cur p95", "change", "95% CI", "floor", "p", "verdict", "owner / next action");
	for (size_t i = 0; i < cmp->n; i++)
		compare_row(out, &cmp->rows[i], (int)w);
	/* why each core metric, then each other one, is inconclusive */
	bool said = false;
	for (int core = 1; core >= 0; core--)
		for (size_t i = 0; i < cmp->n; i++) {
			const struct bench_cmp_row *r = &cmp->rows[i];
			if (r->core != (bool)core || strcmp(r->verdict, BENCH_VERDICT_INCONCLUSIVE) != 0 || !r->why[0])
				continue;
			fprintf(out, "%s%s inconclusive: %s\n", said ? "" : "\n", r->metric, r->why);
			said = true;
		}
	return PLUMB_OK;
}

/* ---- baselines ---- */

void bench_baselines_write(FILE *out, const struct bench_baseline_summary *list, size_t n)
{
	if (n == 0)
		fputs("no baselines yet (plumb bench baseline save ARTIFACT --name NAME)\n", out);
	else
		fprintf(out, "%-32s %-20s %-21s %-12s %-12s %s\n", "name", "suite", "created", "commit", "trust", "samples");
	for (size_t i = 0; i < n; i++) {
		const struct bench_baseline_summary *b = &list[i];
		if (b->unreadable) {
			char *why = redact_dup(b->unreadable);
			fprintf(out, "%-32s (unreadable: %s)\n", b->name, why ? why : "?");
			free(why);
			continue;
		}
		char commit[16] = "-";
		if (b->git_commit)
			snprintf(commit, sizeof commit, "%.12s", b->git_commit);
		fprintf(out, "%-32s %-20s %-21s %-12s %-12s %zu\n", b->name, b->suite ? b->suite : "?",
			b->created ? b->created : "?", commit, b->trust ? b->trust : "?", b->nsamples);
	}
}

/* ---- owners ---- */

static json_t *owners_json(const struct bench_catalog *cat)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < cat->n; i++) {
		const struct bench_metric_def *m = &cat->metrics[i];
		json_t *req = json_array();
		for (size_t k = 0; k < m->nrequired; k++)
			json_array_append_new(req, json_string(m->required[k]));
		json_t *o = json_pack("{s:s, s:s?, s:s?, s:s, s:s, s:o, s:s?, s:s?, s:s?}", "name", m->name, "kind", m->kind,
				      "unit", m->unit, "better", m->better == BENCH_HIGHER_IS_BETTER ? "higher" : "lower",
				      "tier", m->core ? "core" : "drilldown", "required", req, "phase", m->phase, "owner",
				      m->owner, "hint", m->hint);
		json_t *slo = json_object();
		const struct {
			const char *key;
			double v;
		} slos[] = { { "p50", m->slo_p50 }, { "p95", m->slo_p95 }, { "max", m->slo_max } };
		for (size_t k = 0; k < 3; k++)
			if (!isnan(slos[k].v))
				json_object_set_new(slo, slos[k].key, json_real(slos[k].v));
		json_object_set_new(o, "slo", slo);
		if (m->min_samples)
			json_object_set_new(o, "min_samples", json_integer(m->min_samples));
		json_array_append_new(arr, o);
	}
	return json_pack("{s:s, s:I, s:o}", "schema", BENCH_CATALOG_SCHEMA, "min_samples", (json_int_t)cat->min_samples,
			 "metrics", arr);
}

static void owners_table(FILE *out, const struct bench_catalog *cat)
{
	size_t w = strlen("metric"), wp = strlen("phase"), wo = strlen("owner");
	for (size_t i = 0; i < cat->n; i++) {
		const struct bench_metric_def *m = &cat->metrics[i];
		if (strlen(m->name) > w)
			w = strlen(m->name);
		if (m->phase && strlen(m->phase) > wp)
			wp = strlen(m->phase);
		if (m->owner && strlen(m->owner) > wo)
			wo = strlen(m->owner);
	}
	fprintf(out, "%-*s %-9s %-*s %-*s %s\n", (int)w, "metric", "tier", (int)wp, "phase", (int)wo, "owner",
		"next action");
	for (size_t i = 0; i < cat->n; i++) {
		const struct bench_metric_def *m = &cat->metrics[i];
		fprintf(out, "%-*s %-9s %-*s %-*s %s\n", (int)w, m->name, m->core ? "core" : "drilldown", (int)wp,
			m->phase ? m->phase : "-", (int)wo, m->owner ? m->owner : "-", m->hint ? m->hint : "-");
	}
}

enum plumb_err bench_owners_write(FILE *out, const struct bench_catalog *cat, enum bench_style style, struct perr *e)
{
	if (style == BENCH_STYLE_JSON)
		return bench_json_write(out, owners_json(cat), 0, e);
	owners_table(out, cat);
	return PLUMB_OK;
}
