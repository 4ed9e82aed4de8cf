/* bench.c — `plumb bench`: run suites into evidence artifacts, report them, compare them with baselines,
 * keep baselines, check coverage against the catalog, show owners, and check the machine (docs/design.md §8).
 * Each sub-command parses its own options; exit codes follow docs/design.md §3.2. */
#include "cmd/cmd.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/err.h"
#include "base/grow.h"
#include "base/home.h"
#include "base/gate.h"
#include "base/opt.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "base/store.h"
#include "base/str.h"
#include "bench/artifact.h"
#include "bench/baseline.h"
#include "bench/compare.h"
#include "bench/config.h"
#include "bench/evidence.h"
#include "bench/machine.h"
#include "bench/runner.h"
#include "bench/stats.h"

/* ---- shared helpers ---- */

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

/* Paths and command lines in messages (a suite or catalog FILE:LINE, an artifact, an output) are printed through
 * the redactor: cmd_shown_text, cmd_report_redacted. */

/* Loads the catalog for an artifact (bench_catalog_for); says so when the artifact's own is gone. Returns an exit
 * code (0 on success); *have says whether one was loaded. */
static int load_catalog(const char *opt_path, const struct bench_evidence *ev, struct bench_catalog *cat, bool *have)
{
	struct perr e = PERR_INIT;
	enum bench_catalog_source src;
	*have = false;
	if (bench_catalog_for(opt_path, ev, cat, &src, &e) != PLUMB_OK)
		return e.code == PLUMB_ENOMEM ? plumb_fail(EXIT_FAILED, "out of memory") : cmd_report_redacted(&e);
	if (src == BENCH_CATALOG_GONE) /* the stored path is redacted already */
		plumb_warn("bench: the artifact's catalog %s is gone; no owners or SLOs (pass --catalog FILE)",
			   ev->catalog_path);
	*have = src == BENCH_CATALOG_GIVEN || src == BENCH_CATALOG_SUITES;
	return EXIT_DONE;
}

#define NO_HOME "cannot find the plumb home (set PLUMB_HOME or HOME)"

/* An artifact given as a path, or as a saved baseline's name. Exit code on failure (3 missing, 5 malformed). */
static int load_artifact(const char *arg, bool may_be_baseline, struct bench_evidence *ev, char **resolved)
{
	struct perr e = PERR_INIT;
	char *path = NULL;
	switch (bench_artifact_locate(arg, may_be_baseline, &path)) {
	case BENCH_BASELINE_OK:
		break;
	case BENCH_BASELINE_BAD_NAME: {
		char *a = cmd_shown_text(arg);
		int rc = plumb_fail(EXIT_USAGE, "bench: '%s' is neither a file nor a baseline name", a);
		free(a);
		return rc;
	}
	case BENCH_BASELINE_NO_HOME:
		return plumb_fail(EXIT_FAILED, "bench: " NO_HOME);
	case BENCH_BASELINE_MISSING: {
		char *shown = cmd_shown_text(path);
		int rc = plumb_fail(EXIT_MISSING, "bench: no baseline named '%s' (looked for %s; see `plumb bench baseline list`)",
				    arg, shown);
		free(shown);
		free(path);
		return rc;
	}
	default:
		return plumb_fail(EXIT_FAILED, "out of memory");
	}
	if (bench_evidence_read(path, ev, &e) != PLUMB_OK) {
		free(path);
		if (e.code != PLUMB_ENOENT)
			return cmd_report_redacted(&e);
		char *msg = cmd_shown_text(e.msg);
		int rc = plumb_fail(EXIT_MISSING, "bench: %s (run `plumb bench run SUITE --out FILE` first)", msg);
		free(msg);
		return rc;
	}
	if (resolved)
		*resolved = path;
	else
		free(path);
	return EXIT_DONE;
}

/* ---- report ---- */

struct slo_check {
	const char *stat;
	double limit, value;
	bool pass;
};

static size_t slo_checks(const struct bench_metric_def *d, const struct bench_summary *s, struct slo_check out[3])
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
		out[n++] = (struct slo_check){ all[i].stat, all[i].limit, all[i].value, pass };
	}
	return n;
}

static void slo_text(struct sbuf *sb, const struct bench_metric_def *d, const struct slo_check *c, size_t n)
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

static void print_header(FILE *out, const struct bench_evidence *ev, const char *path, bool markdown)
{
	char commit[16] = "no git";
	if (ev->git_commit)
		snprintf(commit, sizeof commit, "%.12s", ev->git_commit);
	fprintf(out, "%s%s: suite %s, %s, commit %s%s, trust %s, %ld repeats + %ld warm-up\n", markdown ? "**" : "", path,
		ev->suite ? ev->suite : "?", ev->created ? ev->created : "?", commit,
		ev->git_dirty == 1 ? " (dirty)" : "", ev->trust ? ev->trust : "?", ev->repeats, ev->warmup);
	if (markdown)
		fputs("**\n\n", out);
	for (size_t i = 0; i < ev->ncases; i++) {
		const struct bench_case_result *c = &ev->cases[i];
		if (c->status && strcmp(c->status, "ok") != 0)
			fprintf(out, "%scase %s %s\n", markdown ? "- " : "  ", c->name, c->status);
		if (c->trust && strcmp(c->trust, BENCH_TRUST_HARNESS) == 0)
			fprintf(out, "%scase %s is harness-only: %s is an unoptimized build\n", markdown ? "- " : "  ", c->name,
				c->binary ? c->binary : "its program");
	}
}

static int report_artifact(const struct bench_evidence *ev, const char *shown, const struct bench_catalog *cat,
			   bool json, bool markdown)
{
	size_t nm;
	const char **metrics = bench_evidence_metrics(ev, &nm);
	if (!metrics)
		return plumb_fail(EXIT_FAILED, "out of memory");
	struct bench_summary *sum = calloc(nm + 1, sizeof *sum);
	if (!sum) {
		free(metrics);
		return plumb_fail(EXIT_FAILED, "out of memory");
	}
	for (size_t i = 0; i < nm; i++) {
		size_t n;
		double *v = bench_evidence_values(ev, metrics[i], &n);
		bool ok = bench_summarize(v, n, &sum[i]);
		free(v);
		if (!ok) {
			free(sum);
			free(metrics);
			return plumb_fail(EXIT_FAILED, "out of memory");
		}
	}
	if (json) {
		json_t *root = json_pack("{s:s, s:s?, s:s?, s:s?}", "schema", "plumb.bench.report.v1", "suite", ev->suite,
					 "created", ev->created, "trust", ev->trust);
		json_t *arr = json_array();
		for (size_t i = 0; i < nm; i++) {
			const struct bench_sample *f = bench_evidence_first(ev, metrics[i]);
			const struct bench_metric_def *d = bench_catalog_find(cat, metrics[i]);
			const struct bench_case_result *c = bench_evidence_case_of(ev, metrics[i]);
			json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:s?, s:b}", "name",
					      metrics[i], "kind", f->kind, "unit", f->unit, "count", (json_int_t)sum[i].n, "min",
					      sum[i].min, "p50", sum[i].p50, "p95", sum[i].p95, "max", sum[i].max, "mean",
					      sum[i].mean, "cv", sum[i].cv, "trust", c ? c->trust : NULL, "core",
					      bench_metric_is_core(cat, metrics[i]));
			struct slo_check sc[3];
			size_t ns = slo_checks(d, &sum[i], sc);
			json_t *slos = json_array();
			for (size_t k = 0; k < ns; k++)
				json_array_append_new(slos, json_pack("{s:s, s:f, s:f, s:b}", "stat", sc[k].stat, "limit",
								      sc[k].limit, "value", sc[k].value, "pass", sc[k].pass));
			json_object_set_new(o, "slo", slos);
			if (d)
				json_object_set_new(o, "owner",
						    json_pack("{s:s?, s:s?, s:s?}", "phase", d->phase, "owner", d->owner, "hint",
							      d->hint));
			json_array_append_new(arr, o);
		}
		json_object_set_new(root, "metrics", arr);
		char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
		json_decref(root);
		if (!text) {
			free(sum);
			free(metrics);
			return plumb_fail(EXIT_FAILED, "out of memory");
		}
		puts(text);
		free(text);
	} else {
		print_header(stdout, ev, shown, markdown);
		size_t w = strlen("metric");
		for (size_t i = 0; i < nm; i++)
			if (strlen(metrics[i]) > w)
				w = strlen(metrics[i]);
		if (markdown)
			printf("| metric | n | min | p50 | p95 | max | mean | CV | unit | SLO |\n"
			       "|---|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
		else
			printf("%-*s %5s %11s %11s %11s %11s %11s %6s  %-6s %s\n", (int)w, "metric", "n", "min", "p50", "p95",
			       "max", "mean", "cv%", "unit", "slo");
		for (size_t i = 0; i < nm; i++) {
			const struct bench_sample *f = bench_evidence_first(ev, metrics[i]);
			const struct bench_metric_def *d = bench_catalog_find(cat, metrics[i]);
			struct slo_check sc[3];
			size_t ns = slo_checks(d, &sum[i], sc);
			struct sbuf slo = SBUF_INIT;
			slo_text(&slo, d, sc, ns);
			char a[32], b[32], c[32], e[32], g[32];
			if (markdown)
				printf("| %s | %zu | %s | %s | %s | %s | %s | %.1f%% | %s | %s |\n", metrics[i], sum[i].n,
				       fmt_num(a, 32, sum[i].min), fmt_num(b, 32, sum[i].p50), fmt_num(c, 32, sum[i].p95),
				       fmt_num(e, 32, sum[i].max), fmt_num(g, 32, sum[i].mean), sum[i].cv * 100, f->unit,
				       slo.buf);
			else
				printf("%-*s %5zu %11s %11s %11s %11s %11s %6.1f  %-6s %s\n", (int)w, metrics[i], sum[i].n,
				       fmt_num(a, 32, sum[i].min), fmt_num(b, 32, sum[i].p50), fmt_num(c, 32, sum[i].p95),
				       fmt_num(e, 32, sum[i].max), fmt_num(g, 32, sum[i].mean), sum[i].cv * 100, f->unit,
				       slo.buf);
			sbuf_release(&slo);
		}
		if (nm == 0)
			printf("(no samples)\n");
	}
	free(sum);
	free(metrics);
	return EXIT_DONE;
}

static int sub_report(int argc, char **argv)
{
	bool json = false, markdown = false;
	const char *catalog = NULL;
	const struct opt opts[] = {
		{ "json", 0, OPT_FLAG, &json, NULL, "machine-readable output on stdout", NULL },
		{ "markdown", 0, OPT_FLAG, &markdown, NULL, "a Markdown table", NULL },
		{ "catalog", 0, OPT_STRING, &catalog, "FILE", "catalog for SLOs (default: the suite's)", NULL },
		{ 0 },
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench report ARTIFACT [--json|--markdown] [--catalog FILE]",
			       "Per metric: count, min, p50, p95, max, mean, CV and unit, with SLO pass/fail from the catalog.",
			       argc, argv, &res, &rc))
		return rc;
	if (res.npos != 1 || (json && markdown)) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench report: give one ARTIFACT (and at most one of --json, --markdown)");
	}
	struct bench_evidence ev;
	rc = load_artifact(res.pos[0], true, &ev, NULL);
	if (rc == EXIT_DONE) {
		struct bench_catalog cat;
		bool have;
		rc = load_catalog(catalog, &ev, &cat, &have);
		if (rc == EXIT_DONE) {
			char *shown = redact_dup(res.pos[0]);
			rc = report_artifact(&ev, shown ? shown : res.pos[0], have ? &cat : NULL, json, markdown);
			free(shown);
		}
		if (have)
			bench_catalog_release(&cat);
		bench_evidence_release(&ev);
	}
	opt_result_release(&res);
	return rc;
}

/* ---- run ---- */

static void progress(void *ctx, const char *case_name, size_t ci, size_t nc, long run, long nruns, bool warmup)
{
	(void)ctx;
	fprintf(stderr, "\r\033[K[%zu/%zu] %s: %s %ld/%ld", ci + 1, nc, case_name, warmup ? "warm-up" : "run", run + 1,
		nruns);
	fflush(stderr);
}

static char *default_out(const char *suite_name)
{
	struct sbuf sb = SBUF_INIT;
	sbuf_addf(&sb, "%s.evidence.json", suite_name);
	return sbuf_detach(&sb, NULL);
}

static void warn_silent_libplumb(void *ctx, const struct bench_case *c)
{
	(void)ctx;
	plumb_warn("bench run: case %s links libplumb but ran without PLUMB_DEBUG, so its plumb_sample() calls wrote "
		   "nothing; add `env = PLUMB_DEBUG=1` to the case",
		   c->name);
}

static int sub_run(int argc, char **argv)
{
	const char *case_re = NULL, *duration = NULL, *out = NULL;
	long repeats = 0, warmup = -1;
	bool seen_repeats = false, seen_warmup = false;
	const struct opt opts[] = {
		{ "case", 0, OPT_STRING, &case_re, "RE", "run only cases whose name matches (extended regex)", NULL },
		{ "repeats", 'n', OPT_INT, &repeats, "N", "measured runs per case (default: suite, else 10)", &seen_repeats },
		{ "duration", 0, OPT_STRING, &duration, "D", "repeat policy: ceil(D / 20s) runs (not a timeout)", NULL },
		{ "warmup", 0, OPT_INT, &warmup, "N", "unmeasured runs first (default: suite, else 1)", &seen_warmup },
		{ "out", 'o', OPT_STRING, &out, "ARTIFACT", "where the evidence goes (default: SUITE.evidence.json)", NULL },
		{ 0 },
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench run SUITE [--case RE] [--repeats N | --duration D] [--warmup N] [--out ARTIFACT]",
			       "Runs each case of an INI suite, measures every run (wall, user, sys, peak RSS) and collects "
			       "the samples it writes to $PLUMB_SAMPLES; writes a plumb.evidence.v1 artifact.",
			       argc, argv, &res, &rc))
		return rc;
	if (res.npos != 1) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench run: give one SUITE file");
	}
	double duration_s = 0;
	if (duration && (!opt_parse_seconds(duration, &duration_s) || duration_s <= 0)) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench run: --duration wants a positive time like 60s or 10m, not '%s'", duration);
	}
	if (seen_repeats && duration) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench run: give --repeats or --duration, not both");
	}
	if (seen_repeats && (repeats < 1 || repeats > 1000000)) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench run: --repeats wants 1 to 1000000, not %ld", repeats);
	}
	if (seen_warmup && (warmup < 0 || warmup > 1000000)) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench run: --warmup wants 0 or more, not %ld", warmup);
	}
	struct bench_suite suite;
	struct perr e = PERR_INIT;
	if (bench_suite_load(res.pos[0], &suite, &e) != PLUMB_OK) {
		opt_result_release(&res);
		return cmd_report_redacted(&e);
	}
	struct bench_run_opts ro = { 0 };
	struct bench_policy_request rq = { seen_repeats ? repeats : 0, duration ? duration_s : 0,
					   seen_warmup ? warmup : -1 };
	bench_run_policy(&suite, &rq, &ro);
	ro.case_filter = case_re;
	if (isatty(STDERR_FILENO))
		ro.progress = progress;
	char *out_path = out ? strdup(out) : default_out(suite.name);
	if (!out_path) {
		bench_suite_release(&suite);
		opt_result_release(&res);
		return plumb_fail(EXIT_FAILED, "out of memory");
	}
	struct bench_catalog cat;
	bool have_cat = false;
	if (suite.catalog) { /* a broken catalog is found now, not after the runs */
		if (bench_catalog_load(suite.catalog, &cat, &e) != PLUMB_OK) {
			free(out_path);
			bench_suite_release(&suite);
			opt_result_release(&res);
			return cmd_report_redacted(&e);
		}
		have_cat = true;
	}
	if (strcmp(out_path, "-") != 0 && atomic_check_writable(out_path, &e) != PLUMB_OK) {
		rc = cmd_report_redacted(&e);
		goto done;
	}
	struct bench_evidence ev;
	bench_evidence_init(&ev);
	struct bench_run_outcome oc;
	enum plumb_err err = bench_run_suite(&suite, &ro, &ev, &oc, &e);
	if (ro.progress)
		fputs("\r\033[K", stderr);
	if (err != PLUMB_OK) {
		rc = cmd_report_redacted(&e);
		bench_evidence_release(&ev);
		goto done;
	}
	if (oc.interrupted) {
		rc = plumb_fail(EXIT_FAILED, "bench run: interrupted; nothing written");
		bench_evidence_release(&ev);
		goto done;
	}
	if (bench_evidence_write(&ev, out_path, &e) != PLUMB_OK) {
		rc = cmd_report_redacted(&e);
		bench_evidence_release(&ev);
		goto done;
	}
	if (strcmp(out_path, "-") != 0) {
		char *shown = redact_dup(out_path);
		report_artifact(&ev, shown ? shown : out_path, have_cat ? &cat : NULL, false, false);
		fprintf(stderr, "plumb: wrote %s (%zu samples from %zu case%s, trust %s)\n", shown ? shown : out_path,
			ev.nsamples, ev.ncases, ev.ncases == 1 ? "" : "s", ev.trust);
		free(shown);
	}
	for (size_t i = 0; i < ev.ncases; i++)
		if (ev.cases[i].trust && strcmp(ev.cases[i].trust, BENCH_TRUST_HARNESS) == 0)
			plumb_warn("bench run: case %s runs an unoptimized build (%s): harness-only evidence, never a baseline",
				   ev.cases[i].name, ev.cases[i].binary ? ev.cases[i].binary : "?");
	bench_find_silent_libplumb(&suite, &ev, warn_silent_libplumb, NULL);
	rc = EXIT_DONE;
	if (oc.timed_out)
		rc = plumb_fail(EXIT_TIMEOUT, "bench run: %s (recorded in the artifact; %zu case%s timed out)", oc.first_problem,
				oc.timed_out, oc.timed_out == 1 ? "" : "s");
	else if (oc.failed)
		rc = plumb_fail(EXIT_FAILED, "bench run: %s (recorded in the artifact)", oc.first_problem);
	bench_evidence_release(&ev);
done:
	if (have_cat)
		bench_catalog_release(&cat);
	free(out_path);
	bench_suite_release(&suite);
	opt_result_release(&res);
	return rc;
}

/* ---- compare ---- */

static int sub_compare(int argc, char **argv)
{
	const char *rank_s = "bottlenecks", *catalog = NULL;
	double threshold = 5, alpha = 0.05;
	bool fail_on_regression = false, json = false;
	const struct opt opts[] = {
		{ "rank", 0, OPT_STRING, &rank_s, "HOW", "bottlenecks (time added), regressions or name", NULL },
		{ "threshold", 0, OPT_DOUBLE, &threshold, "PCT", "noise threshold on the median's change (default 5)", NULL },
		{ "alpha", 0, OPT_DOUBLE, &alpha, "P", "significance level of the U test (default 0.05)", NULL },
		{ "fail-on-regression", 0, OPT_FLAG, &fail_on_regression, NULL,
		  "exit 1 when a core metric regressed significantly (a CI gate)", NULL },
		{ "catalog", 0, OPT_STRING, &catalog, "FILE", "catalog for owners and tiers (default: the suite's)", NULL },
		{ "json", 0, OPT_FLAG, &json, NULL, "machine-readable output on stdout", NULL },
		{ 0 },
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts,
			       "plumb bench compare BASELINE CURRENT [--rank bottlenecks|regressions|name] [--threshold PCT] "
			       "[--fail-on-regression]",
			       "Compares two artifacts metric by metric (Mann-Whitney U test); BASELINE is a saved baseline's "
			       "name or a path.",
			       argc, argv, &res, &rc))
		return rc;
	enum bench_rank rank;
	if (strcmp(rank_s, "bottlenecks") == 0)
		rank = BENCH_RANK_BOTTLENECKS;
	else if (strcmp(rank_s, "regressions") == 0)
		rank = BENCH_RANK_REGRESSIONS;
	else if (strcmp(rank_s, "name") == 0)
		rank = BENCH_RANK_NAME;
	else {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench compare: --rank is bottlenecks, regressions or name, not '%s'", rank_s);
	}
	if (res.npos != 2 || threshold < 0 || !(alpha > 0 && alpha < 1)) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE,
				  "bench compare: give BASELINE and CURRENT (--threshold >= 0, 0 < --alpha < 1)");
	}
	struct bench_evidence base, cur;
	char *base_path = NULL;
	rc = load_artifact(res.pos[0], true, &base, &base_path);
	if (rc != EXIT_DONE) {
		opt_result_release(&res);
		return rc;
	}
	rc = load_artifact(res.pos[1], false, &cur, NULL);
	if (rc != EXIT_DONE) {
		bench_evidence_release(&base);
		free(base_path);
		opt_result_release(&res);
		return rc;
	}
	struct bench_catalog cat;
	bool have = false;
	rc = load_catalog(catalog, &cur, &cat, &have);
	if (rc == EXIT_DONE && !have && !catalog && cur.catalog_path == NULL)
		rc = load_catalog(NULL, &base, &cat, &have);
	struct bench_cmp cmp = { 0 };
	if (rc == EXIT_DONE && !bench_compare(&base, &cur, have ? &cat : NULL, threshold, alpha, rank, &cmp))
		rc = plumb_fail(EXIT_FAILED, "out of memory");
	if (rc != EXIT_DONE)
		goto done;
	if (strcmp(base.trust ? base.trust : "", BENCH_TRUST_HARNESS) == 0 ||
	    strcmp(cur.trust ? cur.trust : "", BENCH_TRUST_HARNESS) == 0)
		plumb_warn("bench compare: %s artifact is harness-only (an unoptimized build): treat the verdicts as a harness "
			   "check, not performance evidence",
			   strcmp(base.trust ? base.trust : "", BENCH_TRUST_HARNESS) == 0 ? "the baseline" : "the current");
	if (base.suite && cur.suite && strcmp(base.suite, cur.suite) != 0)
		plumb_warn("bench compare: the baseline ran suite '%s', the current one '%s'", base.suite, cur.suite);
	if ((base.cpu_model && cur.cpu_model && strcmp(base.cpu_model, cur.cpu_model) != 0) ||
	    (base.cores && cur.cores && base.cores != cur.cores))
		plumb_warn("bench compare: measured on different machines (%s, %ld CPUs vs %s, %ld CPUs): differences may be "
			   "the machine's",
			   base.cpu_model ? base.cpu_model : "?", base.cores, cur.cpu_model ? cur.cpu_model : "?", cur.cores);
	size_t regressions = 0;
	const struct bench_cmp_row *first_reg = NULL;
	for (size_t i = 0; i < cmp.n; i++)
		if (cmp.rows[i].core && strcmp(cmp.rows[i].verdict, BENCH_VERDICT_SLOWER) == 0) {
			regressions++;
			if (!first_reg)
				first_reg = &cmp.rows[i];
		}
	char *shown_base = redact_dup(res.pos[0]), *shown_cur = redact_dup(res.pos[1]);
	if (!shown_base || !shown_cur) {
		free(shown_base);
		free(shown_cur);
		rc = plumb_fail(EXIT_FAILED, "out of memory");
		goto done;
	}
	if (json) {
		json_t *root = json_pack("{s:s, s:s, s:s, s:f, s:f, s:s}", "schema", "plumb.bench.compare.v1", "baseline",
					 shown_base, "current", shown_cur, "threshold_pct", threshold, "alpha", alpha, "rank",
					 rank_s);
		json_t *rows = json_array();
		for (size_t i = 0; i < cmp.n; i++) {
			const struct bench_cmp_row *r = &cmp.rows[i];
			json_t *o = json_pack("{s:s, s:s, s:s, s:b, s:I, s:I}", "name", r->metric, "unit", r->unit, "verdict",
					      r->verdict, "core", r->core, "baseline_count", (json_int_t)r->base.n,
					      "current_count", (json_int_t)r->cur.n);
#define NUM(k, v) json_object_set_new(o, k, isfinite(v) ? json_real(v) : json_null())
			NUM("baseline_p50", r->base.p50);
			NUM("baseline_p95", r->base.p95);
			NUM("current_p50", r->cur.p50);
			NUM("current_p95", r->cur.p95);
			NUM("change_pct", r->change_pct);
			NUM("time_added_ms", r->time_added_ms);
			NUM("p", r->p);
			NUM("u", r->u);
#undef NUM
			json_object_set_new(o, "exact", json_boolean(r->exact));
			if (r->def)
				json_object_set_new(o, "owner",
						    json_pack("{s:s?, s:s?, s:s?}", "phase", r->def->phase, "owner", r->def->owner,
							      "hint", r->def->hint));
			json_array_append_new(rows, o);
		}
		json_object_set_new(root, "metrics", rows);
		json_object_set_new(root, "regressions", json_integer((json_int_t)regressions));
		char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
		json_decref(root);
		if (text)
			puts(text);
		free(text);
	} else {
		char *shown = redact_dup(base_path);
		char bc[16] = "no git", cc[16] = "no git";
		if (base.git_commit)
			snprintf(bc, sizeof bc, "%.12s", base.git_commit);
		if (cur.git_commit)
			snprintf(cc, sizeof cc, "%.12s", cur.git_commit);
		printf("baseline %s (%s, %s%s, trust %s)\ncurrent  %s (%s, %s%s, trust %s)\n", shown ? shown : "?",
		       base.created ? base.created : "?", bc, base.git_dirty == 1 ? " dirty" : "", base.trust ? base.trust : "?",
		       shown_cur, cur.created ? cur.created : "?", cc, cur.git_dirty == 1 ? " dirty" : "",
		       cur.trust ? cur.trust : "?");
		printf("ranked by %s; verdicts need p < %g and a median change beyond %g%%\n\n", rank_s, alpha, threshold);
		free(shown);
		size_t w = strlen("metric");
		for (size_t i = 0; i < cmp.n; i++)
			if (strlen(cmp.rows[i].metric) > w)
				w = strlen(cmp.rows[i].metric);
		printf("%-*s %10s %10s %10s %10s %8s %8s  %-12s %s\n", (int)w, "metric", "base p50", "cur p50", "base p95",
		       "cur p95", "change", "p", "verdict", "owner / next action");
		for (size_t i = 0; i < cmp.n; i++) {
			const struct bench_cmp_row *r = &cmp.rows[i];
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
			printf("%-*s %10s %10s %10s %10s %8s %8s  %-12s %s\n", (int)w, r->metric, fmt_num(a, 32, r->base.p50),
			       fmt_num(b, 32, r->cur.p50), fmt_num(c, 32, r->base.p95), fmt_num(d, 32, r->cur.p95), ch, p,
			       r->verdict, own.buf);
			sbuf_release(&own);
		}
	}
	free(shown_base);
	free(shown_cur);
	rc = EXIT_DONE;
	if (fail_on_regression && regressions) {
		char ch[32];
		snprintf(ch, sizeof ch, "%+.1f%%", first_reg->change_pct);
		rc = plumb_fail(EXIT_FAILED, "bench compare: %zu core metric%s regressed (first: %s %s, p = %.2g%s%s)",
				regressions, regressions == 1 ? "" : "s", first_reg->metric, ch, first_reg->p,
				first_reg->def && first_reg->def->owner ? "; owner " : "",
				first_reg->def && first_reg->def->owner ? first_reg->def->owner : "");
	}
done:
	bench_cmp_release(&cmp);
	if (have)
		bench_catalog_release(&cat);
	bench_evidence_release(&base);
	bench_evidence_release(&cur);
	free(base_path);
	opt_result_release(&res);
	return rc;
}

/* ---- baseline store ---- */

static int baseline_save(int argc, char **argv)
{
	const char *name = NULL;
	bool force = false;
	const struct opt opts[] = {
		{ "name", 0, OPT_STRING, &name, "NAME", "the baseline's name (letters, digits, '.', '_', '-')", NULL },
		{ "force", 'f', OPT_FLAG, &force, NULL, "replace a baseline of that name", NULL },
		{ 0 },
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench baseline save ARTIFACT --name NAME [--force]",
			       "Keeps an artifact as a named baseline under $PLUMB_HOME/baselines/evidence/.", argc, argv, &res,
			       &rc))
		return rc;
	if (res.npos != 1 || !name) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench baseline save: give ARTIFACT and --name NAME");
	}
	if (!store_name_valid(name)) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench baseline save: '%s' is not a baseline name (letters, digits, '.', '_', '-')",
				  name);
	}
	struct bench_evidence ev;
	rc = load_artifact(res.pos[0], false, &ev, NULL);
	if (rc != EXIT_DONE) {
		opt_result_release(&res);
		return rc;
	}
	char path[PATH_MAX];
	struct perr e = PERR_INIT;
	const char *which;
	switch (bench_baseline_save(&ev, name, force, path, sizeof path, &which, &e)) {
	case BENCH_BASELINE_OK: {
		char *shown = cmd_shown_text(path);
		printf("saved baseline %s (%zu samples, suite %s) to %s\n", name, ev.nsamples, ev.suite ? ev.suite : "?",
		       shown);
		free(shown);
		break;
	}
	case BENCH_BASELINE_HARNESS: {
		char *art = cmd_shown_text(res.pos[0]);
		rc = plumb_fail(EXIT_FAILED,
				"bench baseline save: %s is harness-only (case %s runs an unoptimized build); rebuild with -O2 "
				"and rerun: a debug build never counts as a baseline",
				art, which ? which : "?");
		free(art);
		break;
	}
	case BENCH_BASELINE_NO_HOME:
		rc = plumb_fail(EXIT_FAILED, "bench baseline save: " NO_HOME);
		break;
	case BENCH_BASELINE_EXISTS:
		rc = plumb_fail(EXIT_USAGE, "bench baseline save: a baseline named '%s' exists (--force replaces it)", name);
		break;
	default:
		rc = cmd_report_redacted(&e);
	}
	bench_evidence_release(&ev);
	opt_result_release(&res);
	return rc;
}

static int baseline_list(int argc, char **argv)
{
	const struct opt opts[] = { { 0 } };
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench baseline list", "Lists the saved baselines.", argc, argv, &res, &rc))
		return rc;
	opt_result_release(&res);
	struct bench_baseline_summary *list;
	size_t n;
	struct perr e = PERR_INIT;
	enum bench_baseline_status st = bench_baseline_list(&list, &n, &e);
	if (st == BENCH_BASELINE_NO_HOME)
		return plumb_fail(EXIT_FAILED, "bench baseline list: " NO_HOME);
	if (st != BENCH_BASELINE_OK)
		return cmd_report_redacted(&e);
	if (n == 0)
		printf("no baselines yet (plumb bench baseline save ARTIFACT --name NAME)\n");
	else
		printf("%-32s %-20s %-21s %-12s %-12s %s\n", "name", "suite", "created", "commit", "trust", "samples");
	for (size_t i = 0; i < n; i++) {
		const struct bench_baseline_summary *b = &list[i];
		if (b->unreadable) {
			char *why = cmd_shown_text(b->unreadable);
			printf("%-32s (unreadable: %s)\n", b->name, why);
			free(why);
			continue;
		}
		char commit[16] = "-";
		if (b->git_commit)
			snprintf(commit, sizeof commit, "%.12s", b->git_commit);
		printf("%-32s %-20s %-21s %-12s %-12s %zu\n", b->name, b->suite ? b->suite : "?", b->created ? b->created : "?",
		       commit, b->trust ? b->trust : "?", b->nsamples);
	}
	bench_baseline_list_free(list, n);
	return EXIT_DONE;
}

static int baseline_show_rm(int argc, char **argv, bool rm)
{
	const char *catalog = NULL;
	bool json = false;
	const struct opt show_opts[] = {
		{ "json", 0, OPT_FLAG, &json, NULL, "machine-readable output on stdout", NULL },
		{ "catalog", 0, OPT_STRING, &catalog, "FILE", "catalog for SLOs", NULL },
		{ 0 },
	};
	const struct opt rm_opts[] = { { 0 } };
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(rm ? rm_opts : show_opts, rm ? "plumb bench baseline rm NAME" : "plumb bench baseline show NAME",
			       rm ? "Removes a saved baseline." : "Reports a saved baseline.", argc, argv, &res, &rc))
		return rc;
	const char *verb = rm ? "rm" : "show";
	char path[PATH_MAX];
	enum bench_baseline_status st =
		res.npos == 1 ? bench_baseline_path(res.pos[0], path, sizeof path) : BENCH_BASELINE_BAD_NAME;
	if (st == BENCH_BASELINE_BAD_NAME) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench baseline %s: give one baseline NAME", verb);
	}
	if (st == BENCH_BASELINE_NO_HOME) {
		opt_result_release(&res);
		return plumb_fail(EXIT_FAILED, "bench baseline: " NO_HOME);
	}
	rc = EXIT_DONE;
	struct perr e = PERR_INIT;
	if (st == BENCH_BASELINE_MISSING) {
		rc = plumb_fail(EXIT_MISSING, "bench baseline %s: no baseline named '%s' (see `plumb bench baseline list`)",
				verb, res.pos[0]);
	} else if (rm) {
		if (bench_baseline_remove(res.pos[0], &e) != BENCH_BASELINE_OK)
			rc = plumb_fail(EXIT_OUTPUT, "bench baseline rm: %s", e.msg);
		else
			printf("removed baseline %s\n", res.pos[0]);
	} else {
		struct bench_evidence ev;
		rc = load_artifact(path, false, &ev, NULL);
		if (rc == EXIT_DONE) {
			struct bench_catalog cat;
			bool have;
			rc = load_catalog(catalog, &ev, &cat, &have);
			if (rc == EXIT_DONE)
				rc = report_artifact(&ev, res.pos[0], have ? &cat : NULL, json, false);
			if (have)
				bench_catalog_release(&cat);
			bench_evidence_release(&ev);
		}
	}
	opt_result_release(&res);
	return rc;
}

static int sub_baseline(int argc, char **argv)
{
	const char *usage = "usage: plumb bench baseline save ARTIFACT --name NAME | list | show NAME | rm NAME\n";
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_DONE;
	}
	if (strcmp(argv[1], "save") == 0)
		return baseline_save(argc - 1, argv + 1);
	if (strcmp(argv[1], "list") == 0)
		return baseline_list(argc - 1, argv + 1);
	if (strcmp(argv[1], "show") == 0)
		return baseline_show_rm(argc - 1, argv + 1, false);
	if (strcmp(argv[1], "rm") == 0)
		return baseline_show_rm(argc - 1, argv + 1, true);
	return plumb_fail(EXIT_USAGE, "bench baseline: '%s' is not save, list, show or rm", argv[1]);
}

/* ---- coverage ---- */

/* One required metric: the artifact with the most samples of it counts. Prints (or appends to rows) its row. */
static void coverage_row(const struct bench_catalog *cat, const struct bench_evidence *evs, int nev, const char *name,
			 const char *sets, json_t *rows, size_t *required, size_t *problems)
{
	size_t best_n = 0;
	const char *trust = NULL;
	for (int a = 0; a < nev; a++) {
		size_t n;
		double *v = bench_evidence_values(&evs[a], name, &n);
		free(v);
		if (n > best_n) {
			const struct bench_case_result *c = bench_evidence_case_of(&evs[a], name);
			best_n = n;
			trust = c && c->trust ? c->trust : BENCH_TRUST_UNKNOWN;
		}
	}
	long floor_n = bench_metric_min_samples(cat, name);
	char status[96];
	if (best_n == 0)
		snprintf(status, sizeof status, "missing");
	else if (strcmp(trust, BENCH_TRUST_HARNESS) == 0)
		snprintf(status, sizeof status, "harness-only (unoptimized build)");
	else if ((long)best_n < floor_n)
		snprintf(status, sizeof status, "too few samples (%zu < %ld)", best_n, floor_n);
	else
		snprintf(status, sizeof status, "ok");
	bool ok = strcmp(status, "ok") == 0;
	(*required)++;
	*problems += !ok;
	if (rows)
		json_array_append_new(rows, json_pack("{s:s, s:s, s:I, s:s?, s:s, s:b}", "name", name, "required_by", sets,
						      "count", (json_int_t)best_n, "trust", trust, "status", status, "ok", ok));
	else
		printf("%-40s %-20s %6zu  %-12s %s\n", name, sets, best_n, trust ? trust : "-", status);
}

static int sub_coverage(int argc, char **argv)
{
	bool strict = false, json = false;
	struct opt_list artifacts = { 0 };
	const char *catalog = NULL;
	const struct opt opts[] = {
		{ "strict", 0, OPT_FLAG, &strict, NULL, "exit 1 when a required metric is missing or its trust is too weak", NULL },
		{ "artifact", 'a', OPT_LIST, &artifacts, "A", "an artifact to check (repeatable)", NULL },
		{ "catalog", 0, OPT_STRING, &catalog, "FILE", "the catalog (default: the first artifact's suite's)", NULL },
		{ "json", 0, OPT_FLAG, &json, NULL, "machine-readable output on stdout", NULL },
		{ 0 },
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench coverage [--strict] --artifact A [--artifact B ...] [--catalog FILE]",
			       "Checks artifacts against the catalog's required metric sets: present, enough samples, not "
			       "harness-only.",
			       argc, argv, &res, &rc)) {
		opt_list_release(&artifacts);
		return rc;
	}
	/* positionals are accepted as artifacts too */
	for (int i = 0; i < res.npos; i++) {
		if (!REALLOC_ARRAY(artifacts.v, (size_t)artifacts.n + 1))
			break;
		artifacts.v[artifacts.n++] = res.pos[i];
	}
	if (artifacts.n == 0) {
		opt_result_release(&res);
		opt_list_release(&artifacts);
		return plumb_fail(EXIT_USAGE, "bench coverage: give at least one --artifact A");
	}
	struct bench_evidence *evs = calloc((size_t)artifacts.n, sizeof *evs);
	int loaded = 0;
	struct bench_catalog cat;
	bool have = false;
	if (!evs) {
		rc = plumb_fail(EXIT_FAILED, "out of memory");
		goto done;
	}
	for (; loaded < artifacts.n; loaded++) {
		rc = load_artifact(artifacts.v[loaded], false, &evs[loaded], NULL);
		if (rc != EXIT_DONE)
			goto done;
	}
	for (int i = 0; i < artifacts.n && !have && rc == EXIT_DONE; i++)
		rc = load_catalog(catalog, &evs[i], &cat, &have);
	if (rc != EXIT_DONE)
		goto done;
	if (!have) {
		rc = plumb_fail(EXIT_MISSING, "bench coverage: no catalog (give --catalog FILE or set catalog = in the suite)");
		goto done;
	}
	size_t required = 0, problems = 0;
	json_t *rows = json ? json_array() : NULL;
	if (!json)
		printf("%-40s %-20s %6s  %-12s %s\n", "metric", "required by", "n", "trust", "status");
	for (size_t i = 0; i < cat.n; i++) {
		const struct bench_metric_def *m = &cat.metrics[i];
		if (m->nrequired == 0)
			continue;
		struct sbuf sets = SBUF_INIT;
		for (size_t k = 0; k < m->nrequired; k++)
			sbuf_addf(&sets, "%s%s", k ? "," : "", m->required[k]);
		if (!strpbrk(m->name, "*?[")) {
			coverage_row(&cat, evs, artifacts.n, m->name, sets.buf, rows, &required, &problems);
		} else {
			/* a pattern requires every metric it matches (that has no exact entry of its own), and at least one */
			size_t matched = 0;
			for (int a = 0; a < artifacts.n; a++) {
				size_t nm;
				const char **names = bench_evidence_metrics(&evs[a], &nm);
				for (size_t k = 0; names && k < nm; k++) {
					if (bench_catalog_find(&cat, names[k]) != m)
						continue;
					bool seen = false; /* in an earlier artifact */
					for (int b = 0; b < a && !seen; b++)
						seen = bench_evidence_first(&evs[b], names[k]) != NULL;
					if (seen)
						continue;
					matched++;
					coverage_row(&cat, evs, artifacts.n, names[k], sets.buf, rows, &required, &problems);
				}
				free(names);
			}
			if (!matched)
				coverage_row(&cat, evs, artifacts.n, m->name, sets.buf, rows, &required, &problems);
		}
		sbuf_release(&sets);
	}
	if (json) {
		json_t *root = json_pack("{s:s, s:b, s:I, s:I, s:o}", "schema", "plumb.bench.coverage.v1", "strict", strict,
					 "required", (json_int_t)required, "problems", (json_int_t)problems, "metrics", rows);
		char *text = root ? json_dumps(root, JSON_INDENT(1)) : NULL;
		json_decref(root);
		if (text)
			puts(text);
		free(text);
	} else {
		printf("\n%zu required metric%s, %zu with a problem\n", required, required == 1 ? "" : "s", problems);
	}
	rc = EXIT_DONE;
	if (required == 0) {
		char *cp = cmd_shown_text(cat.path);
		plumb_warn("bench coverage: the catalog %s has no metric with required = SETS", cp);
		free(cp);
	}
	if (strict && problems)
		rc = plumb_fail(EXIT_FAILED, "bench coverage: %zu required metric%s missing or too weakly evidenced", problems,
				problems == 1 ? " is" : "s are");
done:
	if (have)
		bench_catalog_release(&cat);
	for (int i = 0; i < loaded; i++)
		bench_evidence_release(&evs[i]);
	free(evs);
	opt_list_release(&artifacts);
	opt_result_release(&res);
	return rc;
}

/* ---- owners ---- */

static int sub_owners(int argc, char **argv)
{
	const char *catalog = NULL;
	bool json = false;
	const struct opt opts[] = {
		{ "catalog", 0, OPT_STRING, &catalog, "FILE", "the catalog (plumb.catalog.v1 INI; default ./catalog.ini)", NULL },
		{ "json", 0, OPT_FLAG, &json, NULL, "the catalog as plumb.catalog.v1 JSON on stdout", NULL },
		{ 0 },
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench owners [--catalog FILE] [--json]",
			       "Prints each metric's phase, owning source file or seam, and next-action hint.", argc, argv, &res,
			       &rc))
		return rc;
	if (res.npos == 1 && !catalog)
		catalog = res.pos[0];
	if (res.npos > 1) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench owners: give one catalog (--catalog FILE)");
	}
	if (!catalog) { /* like a suite's own `catalog = catalog.ini` */
		if (access("catalog.ini", F_OK) != 0) {
			opt_result_release(&res);
			return plumb_fail(EXIT_MISSING, "bench owners: no catalog.ini here; give --catalog FILE");
		}
		catalog = "catalog.ini";
	}
	struct bench_catalog cat;
	struct perr e = PERR_INIT;
	if (bench_catalog_load(catalog, &cat, &e) != PLUMB_OK) {
		opt_result_release(&res);
		return cmd_report_redacted(&e);
	}
	if (json) {
		json_t *arr = json_array();
		for (size_t i = 0; i < cat.n; i++) {
			const struct bench_metric_def *m = &cat.metrics[i];
			json_t *req = json_array();
			for (size_t k = 0; k < m->nrequired; k++)
				json_array_append_new(req, json_string(m->required[k]));
			json_t *o = json_pack("{s:s, s:s?, s:s?, s:s, s:s, s:o, s:s?, s:s?, s:s?}", "name", m->name, "kind",
					      m->kind, "unit", m->unit, "better",
					      m->better == BENCH_HIGHER_IS_BETTER ? "higher" : "lower", "tier",
					      m->core ? "core" : "drilldown", "required", req, "phase", m->phase, "owner",
					      m->owner, "hint", m->hint);
			json_t *slo = json_object();
			if (!isnan(m->slo_p50))
				json_object_set_new(slo, "p50", json_real(m->slo_p50));
			if (!isnan(m->slo_p95))
				json_object_set_new(slo, "p95", json_real(m->slo_p95));
			if (!isnan(m->slo_max))
				json_object_set_new(slo, "max", json_real(m->slo_max));
			json_object_set_new(o, "slo", slo);
			if (m->min_samples)
				json_object_set_new(o, "min_samples", json_integer(m->min_samples));
			json_array_append_new(arr, o);
		}
		json_t *root = json_pack("{s:s, s:I, s:o}", "schema", BENCH_CATALOG_SCHEMA, "min_samples",
					 (json_int_t)cat.min_samples, "metrics", arr);
		char *text = root ? json_dumps(root, JSON_INDENT(1)) : NULL;
		json_decref(root);
		if (text)
			puts(text);
		free(text);
	} else {
		size_t w = strlen("metric"), wp = strlen("phase"), wo = strlen("owner");
		for (size_t i = 0; i < cat.n; i++) {
			const struct bench_metric_def *m = &cat.metrics[i];
			if (strlen(m->name) > w)
				w = strlen(m->name);
			if (m->phase && strlen(m->phase) > wp)
				wp = strlen(m->phase);
			if (m->owner && strlen(m->owner) > wo)
				wo = strlen(m->owner);
		}
		printf("%-*s %-9s %-*s %-*s %s\n", (int)w, "metric", "tier", (int)wp, "phase", (int)wo, "owner",
		       "next action");
		for (size_t i = 0; i < cat.n; i++) {
			const struct bench_metric_def *m = &cat.metrics[i];
			printf("%-*s %-9s %-*s %-*s %s\n", (int)w, m->name, m->core ? "core" : "drilldown", (int)wp,
			       m->phase ? m->phase : "-", (int)wo, m->owner ? m->owner : "-", m->hint ? m->hint : "-");
		}
	}
	bench_catalog_release(&cat);
	opt_result_release(&res);
	return EXIT_DONE;
}

/* ---- doctor ---- */

static int sub_doctor(int argc, char **argv)
{
	long min_free = 1L << 30;
	const char *suite_path = NULL;
	struct opt_list bins = { 0 };
	const struct opt opts[] = {
		{ "min-free-bytes", 0, OPT_INT, &min_free, "N", "free-disk floor in bytes (default 1 GiB)", NULL },
		{ "suite", 0, OPT_STRING, &suite_path, "SUITE", "check the programs this suite runs", NULL },
		{ "binary", 0, OPT_LIST, &bins, "PATH", "check that this program is an optimized build (repeatable)", NULL },
		{ 0 },
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench doctor [--min-free-bytes N] [--suite SUITE] [--binary PATH ...]",
			       "Reads (never changes) the machine: free disk, load and competing busy processes, CPU governor, "
			       "perf_event_paranoid and ptrace ability, and whether the program under test is optimized.",
			       argc, argv, &res, &rc)) {
		opt_list_release(&bins);
		return rc;
	}
	if (res.npos || min_free < 0) {
		opt_list_release(&bins);
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench doctor: takes no arguments (--min-free-bytes N >= 0)");
	}
	const char **programs = calloc((size_t)bins.n + 64, sizeof *programs);
	char **owned = calloc(64, sizeof *owned);
	size_t np = 0, nowned = 0;
	struct bench_suite suite = { 0 };
	bool have_suite = false;
	if (!programs || !owned) {
		rc = plumb_fail(EXIT_FAILED, "out of memory");
		goto done;
	}
	for (int i = 0; i < bins.n; i++)
		programs[np++] = bins.v[i];
	if (suite_path) {
		struct perr e = PERR_INIT;
		if (bench_suite_load(suite_path, &suite, &e) != PLUMB_OK) {
			rc = cmd_report_redacted(&e);
			goto done;
		}
		have_suite = true;
		for (size_t i = 0; i < suite.ncases && nowned < 64; i++) {
			char *p = suite.cases[i].binary ? strdup(suite.cases[i].binary)
							: bench_command_program(suite.cases[i].run, suite.cases[i].cwd);
			if (!p) {
				plumb_warn("bench doctor: cannot tell which program case %s runs (set binary = PATH)",
					   suite.cases[i].name);
				continue;
			}
			bool dup = false;
			for (size_t k = 0; k < nowned && !dup; k++)
				dup = strcmp(owned[k], p) == 0;
			if (dup) {
				free(p);
				continue;
			}
			owned[nowned++] = p;
			programs[np++] = p;
		}
	}
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		snprintf(cwd, sizeof cwd, ".");
	struct bench_doctor *d = calloc(1, sizeof *d);
	if (!d) {
		rc = plumb_fail(EXIT_FAILED, "out of memory");
		goto done;
	}
	bench_doctor_run(d, cwd, (unsigned long long)min_free, programs, np);
	size_t fails = 0, warns = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct bench_doctor_item *it = &d->items[i];
		char *shown = redact_dup(it->detail);
		printf("%-5s %-11s %s\n", it->level == BENCH_DOCTOR_OK ? "ok" : it->level == BENCH_DOCTOR_WARN ? "warn" : "FAIL",
		       it->name, shown ? shown : it->detail);
		free(shown);
		fails += it->level == BENCH_DOCTOR_FAIL;
		warns += it->level == BENCH_DOCTOR_WARN;
	}
	if (np == 0)
		printf("%-5s %-11s %s\n", "-", "build", "no program under test given (--suite SUITE or --binary PATH)");
	free(d);
	rc = fails ? plumb_fail(EXIT_FAILED, "bench doctor: %zu check%s failed, %zu warning%s", fails, fails == 1 ? "" : "s",
				warns, warns == 1 ? "" : "s")
		   : EXIT_DONE;
done:
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	free(programs);
	if (have_suite)
		bench_suite_release(&suite);
	opt_list_release(&bins);
	opt_result_release(&res);
	return rc;
}

/* ---- dispatch ---- */

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} subs[] = {
	{ "run", sub_run, "run a suite into an evidence artifact" },
	{ "report", sub_report, "per-metric statistics and SLOs of an artifact" },
	{ "compare", sub_compare, "baseline vs current: U test, verdicts, ranked, owners" },
	{ "baseline", sub_baseline, "save, list, show or rm named baselines" },
	{ "coverage", sub_coverage, "check artifacts against the catalog's required sets" },
	{ "owners", sub_owners, "each metric's phase, owner and next-action hint" },
	{ "doctor", sub_doctor, "is this machine ready to measure? (reads only)" },
};

static void bench_usage(FILE *out)
{
	fputs("usage: plumb bench SUBCOMMAND [OPTIONS]\n\nsubcommands:\n", out);
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
		fprintf(out, "  %-10s %s\n", subs[i].name, subs[i].summary);
	fputs("\n`plumb bench SUBCOMMAND --help` shows its options.\n", out);
}

int cmd_bench(int argc, char **argv)
{
	if (argc < 2) {
		bench_usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		bench_usage(stdout);
		return EXIT_DONE;
	}
	for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
		if (strcmp(subs[i].name, argv[1]) == 0)
			return subs[i].fn(argc - 1, argv + 1);
	return plumb_fail(EXIT_USAGE, "bench: '%s' is not a bench subcommand (see plumb bench --help)", argv[1]);
}
