/* bench.c — `plumb bench`: run suites into evidence artifacts, report them, compare them with baselines,
 * keep baselines, check coverage against the catalog, show owners, and check the machine (docs/design.md §8).
 * The work is bench/'s; this file holds each sub-command's options, its messages and its exit codes
 * (docs/design.md §3.2). */
#include "cmd/cmd.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/err.h"
#include "base/grow.h"
#include "base/opt.h"
#include "base/progress.h"
#include "base/sbuf.h"
#include "base/store.h"
#include "bench/artifact.h"
#include "bench/baseline.h"
#include "bench/compare.h"
#include "bench/config.h"
#include "bench/coverage.h"
#include "bench/evidence.h"
#include "bench/machine.h"
#include "bench/report.h"
#include "bench/runner.h"

/* ---- shared helpers ---- */

/* Paths and command lines in messages (a suite or catalog FILE:LINE, an artifact, an output) go through the
 * redactor: cmd_shown_text, cmd_fail_shown, cmd_report_redacted. */

/* Loads the catalog for an artifact (bench_catalog_for); says so when the artifact's own is gone. Returns an exit
 * code (0 on success); *have says whether one was loaded. */
static int load_catalog(const char *opt_path, const struct bench_evidence *ev, struct bench_catalog *cat, bool *have)
{
	struct perr e = PERR_INIT;
	enum bench_catalog_source src;
	*have = false;
	if (bench_catalog_for(opt_path, ev, cat, &src, &e) != PLUMB_OK)
		return cmd_report_redacted(&e);
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
	case BENCH_BASELINE_BAD_NAME:
		return cmd_fail_shown(EXIT_USAGE, "bench: '%s' is neither a file nor a baseline name", arg);
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
		return cmd_fail_shown(EXIT_MISSING, "bench: %s (run `plumb bench run SUITE --out FILE` first)", e.msg);
	}
	if (resolved)
		*resolved = path;
	else
		free(path);
	return EXIT_DONE;
}

/* ---- report ---- */

static int report_artifact(const struct bench_evidence *ev, const char *shown, const struct bench_catalog *cat,
			   enum bench_style style)
{
	struct perr e = PERR_INIT;
	return bench_report_write(stdout, ev, shown, cat, style, &e) == PLUMB_OK ? EXIT_DONE : cmd_report_redacted(&e);
}

/* Loads an artifact (load_artifact) and its catalog (load_catalog) and reports it, named `shown`. */
static int report_file(const char *arg, bool may_be_baseline, const char *catalog, const char *shown,
		       enum bench_style style)
{
	struct bench_evidence ev;
	int rc = load_artifact(arg, may_be_baseline, &ev, NULL);
	if (rc != EXIT_DONE)
		return rc;
	struct bench_catalog cat;
	bool have;
	rc = load_catalog(catalog, &ev, &cat, &have);
	if (rc == EXIT_DONE)
		rc = report_artifact(&ev, shown, have ? &cat : NULL, style);
	if (have)
		bench_catalog_release(&cat);
	bench_evidence_release(&ev);
	return rc;
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
	char *shown = cmd_shown_text(res.pos[0]);
	rc = report_file(res.pos[0], true, catalog, shown,
			 json ? BENCH_STYLE_JSON : markdown ? BENCH_STYLE_MARKDOWN : BENCH_STYLE_TEXT);
	free(shown);
	opt_result_release(&res);
	return rc;
}

/* ---- run ---- */

/* The progress line of `bench run` (base/progress.h): "bench run [2/3] parse: 4/10 runs". */
struct run_progress {
	struct progress *line;
	size_t case_index;
	bool warmup, labelled;
};

static void progress(void *ctx, const char *case_name, size_t ci, size_t nc, long run, long nruns, bool warmup)
{
	struct run_progress *rp = ctx;
	if (!rp->labelled || rp->case_index != ci || rp->warmup != warmup) {
		char label[160];
		snprintf(label, sizeof label, "bench run [%zu/%zu] %s", ci + 1, nc, case_name);
		progress_label(rp->line, label);
		rp->case_index = ci;
		rp->warmup = warmup;
		rp->labelled = true;
	}
	progress_count(rp->line, (uint64_t)run + 1, (uint64_t)nruns, warmup ? "warm-up runs" : "runs");
}

static void warn_silent_libplumb(void *ctx, const struct bench_case *c)
{
	(void)ctx;
	plumb_warn("bench run: case %s links libplumb but ran without PLUMB_DEBUG, so its plumb_sample() calls wrote "
		   "nothing; add `env = PLUMB_DEBUG=1` to the case",
		   c->name);
}

/* What `bench run` was asked, once its options are checked. */
struct run_request {
	const char *suite, *out, *case_re;
	struct bench_policy_request policy;
};

/* The options of `bench run` into rq; false with *rc set when they end the command (--help, a mistake). */
static bool run_options(int argc, char **argv, struct run_request *rq, int *rc)
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
	if (!cmd_parse_options(opts, "plumb bench run SUITE [--case RE] [--repeats N | --duration D] [--warmup N] [--out ARTIFACT]",
			       "Runs each case of an INI suite, measures every run (wall, user, sys, peak RSS) and collects "
			       "the samples it writes to $PLUMB_SAMPLES; writes a plumb.evidence.v1 artifact.",
			       argc, argv, &res, rc))
		return false;
	double duration_s = 0;
	*rc = EXIT_DONE;
	if (res.npos != 1)
		*rc = plumb_fail(EXIT_USAGE, "bench run: give one SUITE file");
	else if (duration && (!opt_parse_seconds(duration, &duration_s) || duration_s <= 0))
		*rc = plumb_fail(EXIT_USAGE, "bench run: --duration wants a positive time like 60s or 10m, not '%s'", duration);
	else if (seen_repeats && duration)
		*rc = plumb_fail(EXIT_USAGE, "bench run: give --repeats or --duration, not both");
	else if (seen_repeats && (repeats < 1 || repeats > 1000000))
		*rc = plumb_fail(EXIT_USAGE, "bench run: --repeats wants 1 to 1000000, not %ld", repeats);
	else if (seen_warmup && (warmup < 0 || warmup > 1000000))
		*rc = plumb_fail(EXIT_USAGE, "bench run: --warmup wants 0 or more, not %ld", warmup);
	else
		*rq = (struct run_request){ res.pos[0], out, case_re,
					    { seen_repeats ? repeats : 0, duration_s, seen_warmup ? warmup : -1 } };
	opt_result_release(&res); /* rq points into argv, not into res */
	return *rc == EXIT_DONE;
}

/* After the runs: the artifact written, the report of it, the warnings on the evidence, and the exit code. */
static int run_finish(const struct bench_suite *suite, struct bench_evidence *ev, const struct bench_run_outcome *oc,
		      const char *out_path, const struct bench_catalog *cat)
{
	struct perr e = PERR_INIT;
	if (oc->interrupted)
		return plumb_fail(EXIT_FAILED, "bench run: interrupted; nothing written");
	if (bench_evidence_write(ev, out_path, &e) != PLUMB_OK)
		return cmd_report_redacted(&e);
	if (strcmp(out_path, "-") != 0) {
		char *shown = cmd_shown_text(out_path);
		report_artifact(ev, shown, cat, BENCH_STYLE_TEXT);
		fprintf(stderr, "plumb: wrote %s (%zu samples from %zu case%s, trust %s)\n", shown, ev->nsamples, ev->ncases,
			ev->ncases == 1 ? "" : "s", ev->trust);
		free(shown);
	}
	for (size_t i = 0; i < ev->ncases; i++)
		if (ev->cases[i].trust && strcmp(ev->cases[i].trust, BENCH_TRUST_HARNESS) == 0)
			plumb_warn("bench run: case %s runs an unoptimized build (%s): harness-only evidence, never a baseline",
				   ev->cases[i].name, ev->cases[i].binary ? ev->cases[i].binary : "?");
	bench_find_silent_libplumb(suite, ev, warn_silent_libplumb, NULL);
	if (oc->timed_out)
		return plumb_fail(EXIT_TIMEOUT, "bench run: %s (recorded in the artifact; %zu case%s timed out)",
				  oc->first_problem, oc->timed_out, oc->timed_out == 1 ? "" : "s");
	if (oc->failed)
		return plumb_fail(EXIT_FAILED, "bench run: %s (recorded in the artifact)", oc->first_problem);
	return EXIT_DONE;
}

/* Runs the suite into out_path, which was found writable. */
static int run_suite(const struct bench_suite *suite, const struct run_request *rq, const char *out_path,
		     const struct bench_catalog *cat)
{
	struct bench_run_opts ro = { 0 };
	bench_run_policy(suite, &rq->policy, &ro);
	ro.case_filter = rq->case_re;
	struct run_progress rp = { .line = progress_new("bench run", 0) };
	if (rp.line) {
		ro.progress = progress;
		ro.progress_ctx = &rp;
	}
	struct bench_evidence ev;
	struct bench_run_outcome oc;
	struct perr e = PERR_INIT;
	bench_evidence_init(&ev);
	enum plumb_err err = bench_run_suite(suite, &ro, &ev, &oc, &e);
	progress_end(rp.line);
	int rc = err != PLUMB_OK ? cmd_report_redacted(&e) : run_finish(suite, &ev, &oc, out_path, cat);
	bench_evidence_release(&ev);
	return rc;
}

static int sub_run(int argc, char **argv)
{
	struct run_request rq;
	int rc;
	if (!run_options(argc, argv, &rq, &rc))
		return rc;
	struct bench_suite suite;
	struct perr e = PERR_INIT;
	if (bench_suite_load(rq.suite, &suite, &e) != PLUMB_OK)
		return cmd_report_redacted(&e);
	struct sbuf out_path = SBUF_INIT;
	if (rq.out)
		sbuf_addstr(&out_path, rq.out);
	else
		sbuf_addf(&out_path, "%s.evidence.json", suite.name);
	struct bench_catalog cat;
	bool have_cat = false;
	if (out_path.oom) {
		rc = plumb_fail(EXIT_FAILED, "out of memory");
	} else if (suite.catalog && bench_catalog_load(suite.catalog, &cat, &e) != PLUMB_OK) {
		rc = cmd_report_redacted(&e); /* a broken catalog is found now, not after the runs */
	} else {
		have_cat = suite.catalog != NULL;
		if (strcmp(out_path.buf, "-") != 0 && atomic_check_writable(out_path.buf, &e) != PLUMB_OK)
			rc = cmd_report_redacted(&e);
		else
			rc = run_suite(&suite, &rq, out_path.buf, have_cat ? &cat : NULL);
	}
	if (have_cat)
		bench_catalog_release(&cat);
	sbuf_release(&out_path);
	bench_suite_release(&suite);
	return rc;
}

/* ---- compare ---- */

static void compare_caution(void *ctx, const char *msg)
{
	(void)ctx;
	plumb_warn("bench compare: %s", msg);
}

/* The gate of --fail-on-regression: exit 1 naming the first regressed core metric and its owner. */
static int regression_gate(const struct bench_cmp *cmp)
{
	const struct bench_cmp_row *r = cmp->first_regression;
	char ch[32];
	snprintf(ch, sizeof ch, "%+.1f%%", r->change_pct);
	return plumb_fail(EXIT_FAILED, "bench compare: %zu core metric%s regressed (first: %s %s, p = %.2g%s%s)",
			  cmp->regressions, cmp->regressions == 1 ? "" : "s", r->metric, ch, r->p,
			  r->def && r->def->owner ? "; owner " : "", r->def && r->def->owner ? r->def->owner : "");
}

/* Compares the two loaded artifacts and prints the table; v->baseline_file is the baseline's path, unredacted. */
static int compare_loaded(const struct bench_evidence *base, const struct bench_evidence *cur, const char *catalog,
			  struct bench_compare_view *v, bool json, bool gate)
{
	struct bench_catalog cat;
	bool have = false;
	int rc = load_catalog(catalog, cur, &cat, &have);
	if (rc == EXIT_DONE && !have && !catalog && cur->catalog_path == NULL)
		rc = load_catalog(NULL, base, &cat, &have);
	if (rc != EXIT_DONE)
		return rc;
	struct bench_cmp cmp = { 0 };
	struct perr e = PERR_INIT;
	if (!bench_compare(base, cur, have ? &cat : NULL, v->threshold_pct, v->alpha, v->rank, &cmp)) {
		rc = plumb_fail(EXIT_FAILED, "out of memory");
	} else {
		bench_compare_cautions(base, cur, compare_caution, NULL);
		struct bench_compare_view shown_view = *v;
		const char **texts[3] = { &shown_view.baseline_arg, &shown_view.current_arg, &shown_view.baseline_file };
		char *shown[3];
		for (int i = 0; i < 3; i++)
			*texts[i] = shown[i] = cmd_shown_text(*texts[i]);
		if (bench_compare_write(stdout, &cmp, base, cur, &shown_view, json ? BENCH_STYLE_JSON : BENCH_STYLE_TEXT, &e))
			rc = cmd_report_redacted(&e);
		else if (gate && cmp.regressions)
			rc = regression_gate(&cmp);
		for (int i = 0; i < 3; i++)
			free(shown[i]);
	}
	bench_cmp_release(&cmp);
	if (have)
		bench_catalog_release(&cat);
	return rc;
}

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
	struct bench_compare_view v = { .threshold_pct = threshold, .alpha = alpha };
	if (!bench_rank_parse(rank_s, &v.rank)) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE, "bench compare: --rank is bottlenecks, regressions or name, not '%s'", rank_s);
	}
	if (res.npos != 2 || threshold < 0 || !(alpha > 0 && alpha < 1)) {
		opt_result_release(&res);
		return plumb_fail(EXIT_USAGE,
				  "bench compare: give BASELINE and CURRENT (--threshold >= 0, 0 < --alpha < 1)");
	}
	v.baseline_arg = res.pos[0];
	v.current_arg = res.pos[1];
	struct bench_evidence base, cur;
	char *base_path = NULL;
	rc = load_artifact(res.pos[0], true, &base, &base_path);
	if (rc == EXIT_DONE) {
		rc = load_artifact(res.pos[1], false, &cur, NULL);
		if (rc == EXIT_DONE) {
			v.baseline_file = base_path;
			rc = compare_loaded(&base, &cur, catalog, &v, json, fail_on_regression);
			bench_evidence_release(&cur);
		}
		bench_evidence_release(&base);
		free(base_path);
	}
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
	bench_baselines_write(stdout, list, n);
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
		rc = report_file(path, false, catalog, res.pos[0], json ? BENCH_STYLE_JSON : BENCH_STYLE_TEXT);
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
	if (strcmp(argv[1], "show") == 0 || strcmp(argv[1], "rm") == 0)
		return baseline_show_rm(argc - 1, argv + 1, strcmp(argv[1], "rm") == 0);
	return plumb_fail(EXIT_USAGE, "bench baseline: '%s' is not save, list, show or rm", argv[1]);
}

/* ---- coverage ---- */

/* Loads the artifacts and the catalog (--catalog, else the first artifact's that is still there), checks them
 * and prints the table. */
static int coverage_of(const struct opt_list *artifacts, const char *catalog, bool strict, bool json)
{
	struct bench_evidence *evs = calloc((size_t)artifacts->n, sizeof *evs);
	int loaded = 0, rc = EXIT_DONE;
	struct bench_catalog cat;
	bool have = false;
	if (!evs)
		return plumb_fail(EXIT_FAILED, "out of memory");
	while (loaded < artifacts->n && rc == EXIT_DONE)
		if ((rc = load_artifact(artifacts->v[loaded], false, &evs[loaded], NULL)) == EXIT_DONE)
			loaded++;
	for (int i = 0; i < artifacts->n && !have && rc == EXIT_DONE; i++)
		rc = load_catalog(catalog, &evs[i], &cat, &have);
	if (rc == EXIT_DONE && !have)
		rc = plumb_fail(EXIT_MISSING, "bench coverage: no catalog (give --catalog FILE or set catalog = in the suite)");
	struct bench_coverage cov = { 0 };
	struct perr e = PERR_INIT;
	if (rc == EXIT_DONE && (bench_coverage_check(&cat, evs, (size_t)loaded, &cov, &e) != PLUMB_OK ||
				bench_coverage_write(stdout, &cov, strict, json ? BENCH_STYLE_JSON : BENCH_STYLE_TEXT, &e) !=
					PLUMB_OK))
		rc = cmd_report_redacted(&e);
	if (rc == EXIT_DONE && cov.n == 0) {
		char *cp = cmd_shown_text(cat.path);
		plumb_warn("bench coverage: the catalog %s has no metric with required = SETS", cp);
		free(cp);
	}
	if (rc == EXIT_DONE && strict && cov.problems)
		rc = plumb_fail(EXIT_FAILED, "bench coverage: %zu required metric%s missing or too weakly evidenced",
				cov.problems, cov.problems == 1 ? " is" : "s are");
	bench_coverage_release(&cov);
	if (have)
		bench_catalog_release(&cat);
	for (int i = 0; i < loaded; i++)
		bench_evidence_release(&evs[i]);
	free(evs);
	return rc;
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
	if (res.npos && REALLOC_ARRAY(artifacts.v, (size_t)artifacts.n + (size_t)res.npos))
		for (int i = 0; i < res.npos; i++)
			artifacts.v[artifacts.n++] = res.pos[i];
	rc = artifacts.n ? coverage_of(&artifacts, catalog, strict, json)
			 : plumb_fail(EXIT_USAGE, "bench coverage: give at least one --artifact A");
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
	enum plumb_err err = bench_owners_write(stdout, &cat, json ? BENCH_STYLE_JSON : BENCH_STYLE_TEXT, &e);
	rc = err ? cmd_report_redacted(&e) : EXIT_DONE;
	bench_catalog_release(&cat);
	opt_result_release(&res);
	return rc;
}

/* ---- doctor ---- */

static void doctor_unknown(void *ctx, const struct bench_case *c)
{
	(void)ctx;
	plumb_warn("bench doctor: cannot tell which program case %s runs (set binary = PATH)", c->name);
}

/* The programs a suite runs (bench_suite_programs), warning about each case whose program cannot be told. */
static int doctor_suite_programs(const char *suite_path, char ***programs, size_t *n)
{
	struct bench_suite suite;
	struct perr e = PERR_INIT;
	if (bench_suite_load(suite_path, &suite, &e) != PLUMB_OK)
		return cmd_report_redacted(&e);
	bool ok = bench_suite_programs(&suite, programs, n, doctor_unknown, NULL);
	bench_suite_release(&suite);
	return ok ? EXIT_DONE : plumb_fail(EXIT_FAILED, "out of memory");
}

/* Runs the checks on the programs given and prints one line each; exit 1 when one failed. */
static int doctor_report(unsigned long long min_free, const char *const *programs, size_t np)
{
	struct bench_doctor *d = calloc(1, sizeof *d);
	if (!d)
		return plumb_fail(EXIT_FAILED, "out of memory");
	bench_doctor_run(d, NULL, min_free, programs, np);
	size_t fails, warns;
	bench_doctor_write(stdout, d, np, &fails, &warns);
	free(d);
	if (fails)
		return plumb_fail(EXIT_FAILED, "bench doctor: %zu check%s failed, %zu warning%s", fails, fails == 1 ? "" : "s",
				  warns, warns == 1 ? "" : "s");
	return EXIT_DONE;
}

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
	char **from_suite = NULL;
	size_t nsuite = 0;
	const char **programs = NULL;
	rc = suite_path ? doctor_suite_programs(suite_path, &from_suite, &nsuite) : EXIT_DONE;
	if (rc == EXIT_DONE && !(programs = calloc((size_t)bins.n + nsuite + 1, sizeof *programs)))
		rc = plumb_fail(EXIT_FAILED, "out of memory");
	if (rc == EXIT_DONE) {
		size_t np = 0;
		for (int i = 0; i < bins.n; i++)
			programs[np++] = bins.v[i];
		for (size_t i = 0; i < nsuite; i++)
			programs[np++] = from_suite[i];
		rc = doctor_report((unsigned long long)min_free, programs, np);
	}
	free(programs);
	bench_programs_free(from_suite, nsuite);
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
