/* bench.c — `plumb bench`: its dispatch, and running suites into evidence artifacts, reporting them and
 * comparing them with baselines (docs/design.md §8); the baseline store is bench_store.c, coverage, owners and
 * the doctor bench_check.c. The work is bench/'s; these files hold each sub-command's options, its messages and
 * its exit codes (docs/design.md §3.2). */
#include "cmd/cmd.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "os/atomic.h"
#include "base/opt.h"
#include "base/sbuf.h"
#include "bench/compare.h"
#include "bench/report.h"
#include "bench/runner.h"
#include "cmd/bench_cmd.h"
#include "ui/report.h"
#include "ui/progress.h"

/* ---- report ---- */

static int sub_report(int argc, char **argv)
{
	bool json = false, markdown = false;
	const char *catalog = NULL;
	const struct opt opts[] = {
		OPT_BOOL("json", 0, &json, "machine-readable output on stdout"),
		OPT_BOOL("markdown", 0, &markdown, "a Markdown table"),
		OPT_STRING("catalog", 0, &catalog, "FILE", "catalog for SLOs (default: the suite's)"),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench report ARTIFACT [--json|--markdown] [--catalog FILE]",
			       "Per metric: count, min, p50, p95, max, mean, CV and unit, with SLO pass/fail from the catalog.",
			       argc, argv, &res, &rc))
		return rc;
	if (res.npos != 1 || (json && markdown)) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "bench report: give one ARTIFACT (and at most one of --json, --markdown)");
	}
	char *shown = cmd_shown_text(res.pos[0]);
	rc = bench_cmd_report_file(res.pos[0], true, catalog, shown,
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
	perr_warn("bench run: case %s links libplumb but ran without PLUMB_DEBUG, so its plumb_sample() calls wrote "
		   "nothing; add `env = PLUMB_DEBUG=1` to the case",
		   c->name);
}

/* What `bench run` was asked, once its options are checked. */
struct run_request {
	const char *suite, *out, *case_re;
	struct bench_policy_request policy;
	const char *push;             /* --push URL, or NULL */
	const char *push_format;      /* --push-format, or NULL (gateway) */
	struct opt_list push_labels;  /* --push-label KEY=VALUE (owned; opt_list_release) */
};

/* The options of `bench run` into rq; false with *rc set when they end the command (--help, a mistake). */
static bool run_options(int argc, char **argv, struct run_request *rq, int *rc)
{
	const char *case_re = NULL, *duration = NULL, *out = NULL, *order = NULL, *push = NULL, *push_format = NULL;
	struct opt_list push_labels = { 0 };
	long repeats = 0, warmup = -1, seed = -1, retries = -1;
	bool seen_repeats = false, seen_warmup = false, seen_seed = false, seen_retries = false;
	const struct opt opts[] = {
		OPT_STRING("case", 0, &case_re, "RE", "run only cases whose name matches (extended regex)"),
		OPT_LONG_SEEN("repeats", 'n', &repeats, "N", "measured runs per case (default: suite, else 10)",
			      &seen_repeats),
		OPT_STRING("duration", 0, &duration, "D", "repeat policy: ceil(D / 20s) runs (not a timeout)"),
		OPT_LONG_SEEN("warmup", 0, &warmup, "N", "unmeasured runs first (default: suite, else 1)",
			      &seen_warmup),
		OPT_STRING("order", 0, &order, "HOW",
			   "interleave the cases' repeats: shuffle (default) or round-robin"),
		OPT_LONG_SEEN("seed", 0, &seed, "N",
			      "the shuffle's seed (default: from the clock; the artifact keeps it)", &seen_seed),
		OPT_LONG_SEEN("retries", 0, &retries, "N",
			      "re-run a contended repeat up to N times (default: suite, else 2)", &seen_retries),
		OPT_STRING("out", 'o', &out, "ARTIFACT", "where the evidence goes (default: SUITE.evidence.json)"),
		OPT_STRING("push", 0, &push, "URL",
			   "then push the figures to this Prometheus Pushgateway, or remote-write receiver "
			   "(as `bench push`)"),
		OPT_LIST("push-label", 0, &push_labels, "KEY=VALUE", "with --push: one more label (repeatable)"),
		OPT_STRING("push-format", 0, &push_format, "HOW", "with --push: gateway (default) or remote-write"),
		OPT_END(),
	};
	struct opt_result res;
	if (!cmd_parse_options(opts, "plumb bench run SUITE [--case RE] [--repeats N | --duration D] [--warmup N] [--order HOW] "
				     "[--seed N] [--retries N] [--out ARTIFACT] "
			       "[--push URL [--push-label KEY=VALUE ...] [--push-format gateway|remote-write]]",
			       "Runs each case of an INI suite, measures every run (wall, user, sys, peak RSS) and collects "
			       "the samples it writes to $PLUMB_SAMPLES; writes a plumb.evidence.v1 artifact.",
			       argc, argv, &res, rc)) {
		opt_list_release(&push_labels);
		return false;
	}
	double duration_s = 0;
	*rc = EXIT_DONE;
	if (res.npos != 1)
		*rc = perr_fail(EXIT_USAGE, "bench run: give one SUITE file");
	else if (duration && (!opt_parse_seconds(duration, &duration_s) || duration_s <= 0))
		*rc = perr_fail(EXIT_USAGE, "bench run: --duration wants a positive time like 60s or 10m, not '%s'", duration);
	else if (seen_repeats && duration)
		*rc = perr_fail(EXIT_USAGE, "bench run: give --repeats or --duration, not both");
	else if (seen_repeats && (repeats < 1 || repeats > 1000000))
		*rc = perr_fail(EXIT_USAGE, "bench run: --repeats wants 1 to 1000000, not %ld", repeats);
	else if (seen_warmup && (warmup < 0 || warmup > 1000000))
		*rc = perr_fail(EXIT_USAGE, "bench run: --warmup wants 0 or more, not %ld", warmup);
	else if (order && !bench_order_parse(order, &rq->policy.order))
		*rc = perr_fail(EXIT_USAGE, "bench run: --order is shuffle or round-robin, not '%s'", order);
	else if (seen_seed && (seed < 0 || seed > 999999999))
		*rc = perr_fail(EXIT_USAGE, "bench run: --seed wants 0 to 999999999, not %ld", seed);
	else if (seen_retries && (retries < 0 || retries > 10))
		*rc = perr_fail(EXIT_USAGE, "bench run: --retries wants 0 to 10, not %ld", retries);
	else if ((push_labels.n || push_format) && !push)
		*rc = perr_fail(EXIT_USAGE, "bench run: --push-label and --push-format go with --push");
	else if (!push || (*rc = bench_cmd_push_ready("bench run", push, push_format)) == EXIT_DONE)
		*rq = (struct run_request){ res.pos[0], out, case_re,
					    { seen_repeats ? repeats : 0, duration_s, seen_warmup ? warmup : -1,
					      rq->policy.order, seen_seed ? seed : -1, seen_retries ? retries : -1 },
					    push, push_format, push_labels };
	if (*rc != EXIT_DONE)
		opt_list_release(&push_labels);
	opt_result_release(&res); /* rq points into argv, not into res */
	return *rc == EXIT_DONE;
}

/* After the runs: the artifact written, the report of it, the warnings on the evidence, and the exit code. */
static int run_finish(const struct bench_suite *suite, struct bench_evidence *ev, const struct bench_run_outcome *oc,
		      const char *out_path, const struct bench_catalog *cat)
{
	struct perr e = PERR_INIT;
	if (oc->interrupted)
		return perr_fail(EXIT_FAILED, "bench run: interrupted; nothing written");
	if (bench_evidence_write(ev, out_path, &e) != PLUMB_OK)
		return cmd_report_redacted(&e);
	if (strcmp(out_path, "-") != 0) {
		char *shown = cmd_shown_text(out_path);
		bench_cmd_report_artifact(ev, shown, cat, BENCH_STYLE_TEXT);
		perr_say("plumb: wrote %s (%zu samples from %zu case%s, trust %s)", shown, ev->nsamples, ev->ncases,
			ev->ncases == 1 ? "" : "s", ev->trust);
		free(shown);
	}
	for (size_t i = 0; i < ev->ncases; i++)
		if (ev->cases[i].trust && strcmp(ev->cases[i].trust, BENCH_TRUST_HARNESS) == 0)
			perr_warn("bench run: case %s runs an unoptimized build (%s): harness-only evidence, never a baseline",
				   ev->cases[i].name, ev->cases[i].binary ? ev->cases[i].binary : "?");
	bench_find_silent_libplumb(suite, ev, warn_silent_libplumb, NULL);
	if (oc->timed_out)
		return perr_fail(EXIT_TIMEOUT, "bench run: %s (recorded in the artifact; %zu case%s timed out)",
				  oc->first_problem, oc->timed_out, oc->timed_out == 1 ? "" : "s");
	if (oc->failed)
		return perr_fail(EXIT_FAILED, "bench run: %s (recorded in the artifact)", oc->first_problem);
	return EXIT_DONE;
}

/* --push after the artifact was written: the run's own failure (1, 4) stays the exit code, else the push's. */
static int bench_cmd_run_push(const struct bench_evidence *ev, const struct run_request *rq, const char *out_path,
			      int rc)
{
	char *shown = cmd_shown_text(strcmp(out_path, "-") == 0 ? "the artifact (on stdout)" : out_path);
	int pushed = bench_cmd_push_evidence(ev, rq->push, rq->push_format, &rq->push_labels, NULL, "bench run", shown);
	free(shown);
	return rc != EXIT_DONE ? rc : pushed;
}

/* Runs the suite into out_path, which was found writable. */
static int run_suite(const struct bench_suite *suite, const struct run_request *rq, const char *out_path,
		     const struct bench_catalog *cat)
{
	struct bench_run_opts ro = { 0 };
	bench_run_policy(suite, &rq->policy, &ro);
	ro.case_filter = rq->case_re;
	ro.output = out_path;
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
	if (err == PLUMB_OK && rq->push && !oc.interrupted && (rc == EXIT_DONE || rc == EXIT_FAILED || rc == EXIT_TIMEOUT))
		rc = bench_cmd_run_push(&ev, rq, out_path, rc);
	bench_evidence_release(&ev);
	return rc;
}

static int sub_run(int argc, char **argv)
{
	struct run_request rq = { 0 };
	int rc;
	if (!run_options(argc, argv, &rq, &rc))
		return rc;
	struct bench_suite suite;
	struct perr e = PERR_INIT;
	if (bench_suite_load(rq.suite, &suite, &e) != PLUMB_OK) {
		opt_list_release(&rq.push_labels);
		return cmd_report_redacted(&e);
	}
	struct sbuf out_path = SBUF_INIT;
	if (rq.out)
		sbuf_addstr(&out_path, rq.out);
	else
		sbuf_addf(&out_path, "%s.evidence.json", suite.name);
	struct bench_catalog cat;
	bool have_cat = false;
	if (out_path.oom) {
		rc = perr_fail(EXIT_FAILED, "out of memory");
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
	opt_list_release(&rq.push_labels);
	return rc;
}

/* ---- compare ---- */

static void compare_caution(void *ctx, const char *msg)
{
	(void)ctx;
	perr_warn("bench compare: %s", msg);
}

/* The gate of --fail-on-regression: exit 1 naming the first regressed core metric and its owner. */
static int regression_gate(const struct bench_cmp *cmp)
{
	const struct bench_cmp_row *r = cmp->first_regression;
	char ch[32];
	snprintf(ch, sizeof ch, "%+.1f%%", r->change_pct);
	return perr_fail(EXIT_FAILED, "bench compare: %zu core metric%s regressed (first: %s %s, p = %.2g%s%s)",
			  cmp->regressions, cmp->regressions == 1 ? "" : "s", r->metric, ch, r->p,
			  r->def && r->def->owner ? "; owner " : "", r->def && r->def->owner ? r->def->owner : "");
}

/* What --fail-on-regression holds the comparison to: no core metric slower, and none of the baseline's core
 * metrics gone from the current run unless it matches an --allow-missing expression. */
struct compare_gate {
	bool on;
	regex_t *allow; /* compiled --allow-missing expressions */
	int nallow;
};

/* The gate for a core metric of the baseline that the current run lacks (docs/design.md §8.3): exit 1 naming the
 * first one, or 0 when every missing one is allowed. */
static int missing_gate(const struct bench_cmp *cmp, const struct compare_gate *g)
{
	size_t n = 0;
	const char *first = NULL;
	for (size_t i = 0; i < cmp->n; i++) {
		const struct bench_cmp_row *r = &cmp->rows[i];
		if (!r->core || strcmp(r->verdict, BENCH_VERDICT_GONE) != 0)
			continue;
		bool allowed = false;
		for (int k = 0; k < g->nallow && !allowed; k++)
			allowed = regexec(&g->allow[k], r->metric, 0, NULL, 0) == 0;
		if (!allowed && !n++)
			first = r->metric;
	}
	if (!n)
		return EXIT_DONE;
	return perr_fail(EXIT_FAILED, "bench compare: %zu core metric%s of the baseline %s missing from the current run "
				       "(first: %s); --allow-missing RE accepts a metric that may be missing",
			  n, n == 1 ? "" : "s", n == 1 ? "is" : "are", first);
}

/* A core metric whose verdict contention made untrustworthy is said on stderr too: the gate passes it (it is not
 * shown slower), and the reader should know the gate could not look (docs/bench.md "Contention"). */
static void warn_inconclusive(const struct bench_cmp *cmp)
{
	for (size_t i = 0; i < cmp->n; i++) {
		const struct bench_cmp_row *r = &cmp->rows[i];
		if (r->core && strcmp(r->verdict, BENCH_VERDICT_INCONCLUSIVE) == 0 && r->why[0])
			perr_warn("bench compare: %s inconclusive: %s", r->metric, r->why);
	}
}

/* Compares the two loaded artifacts and prints the table; v->baseline_file is the baseline's path, unredacted. */
static int compare_loaded(const struct bench_evidence *base, const struct bench_evidence *cur, const char *catalog,
			  struct bench_compare_view *v, bool json, const struct compare_gate *gate)
{
	struct bench_catalog cat;
	bool have = false;
	int rc = bench_cmd_load_catalog(catalog, cur, &cat, &have);
	if (rc == EXIT_DONE && !have && !catalog && cur->catalog_path == NULL)
		rc = bench_cmd_load_catalog(NULL, base, &cat, &have);
	if (rc != EXIT_DONE)
		return rc;
	struct bench_cmp cmp = { 0 };
	struct perr e = PERR_INIT;
	if (!bench_compare(base, cur, have ? &cat : NULL, v->threshold_pct, v->alpha, v->rank, &cmp)) {
		rc = perr_fail(EXIT_FAILED, "out of memory");
	} else {
		bench_compare_cautions(base, cur, compare_caution, NULL);
		struct bench_compare_view shown_view = *v;
		const char **texts[3] = { &shown_view.baseline_arg, &shown_view.current_arg, &shown_view.baseline_file };
		char *shown[3];
		for (int i = 0; i < 3; i++)
			*texts[i] = shown[i] = cmd_shown_text(*texts[i]);
		if (bench_compare_write(stdout, &cmp, base, cur, &shown_view, json ? BENCH_STYLE_JSON : BENCH_STYLE_TEXT, &e)) {
			rc = cmd_report_redacted(&e);
		} else {
			warn_inconclusive(&cmp);
			if (gate->on && cmp.regressions)
				rc = regression_gate(&cmp);
			else if (gate->on)
				rc = missing_gate(&cmp, gate);
		}
		for (int i = 0; i < 3; i++)
			free(shown[i]);
	}
	bench_cmp_release(&cmp);
	if (have)
		bench_catalog_release(&cat);
	return rc;
}

/* --allow-missing's expressions into g (each an extended regex); false with the message printed on a bad one. */
static bool compile_allow(const struct opt_list *allow, struct compare_gate *g, int *rc)
{
	g->allow = allow->n ? calloc((size_t)allow->n, sizeof *g->allow) : NULL;
	if (allow->n && !g->allow)
		return *rc = perr_fail(EXIT_FAILED, "out of memory"), false;
	for (; g->nallow < allow->n; g->nallow++)
		if (regcomp(&g->allow[g->nallow], allow->v[g->nallow], REG_EXTENDED | REG_NOSUB) != 0)
			return *rc = perr_fail(EXIT_USAGE, "bench compare: --allow-missing '%s' is not a regular expression",
						allow->v[g->nallow]), false;
	return true;
}

static void gate_release(struct compare_gate *g)
{
	for (int i = 0; i < g->nallow; i++)
		regfree(&g->allow[i]);
	free(g->allow);
}

/* Loads BASELINE (a path or a saved baseline's name) and CURRENT, and compares them. */
static int compare_args(const struct opt_result *res, const char *catalog, struct bench_compare_view *v, bool json,
			const struct compare_gate *gate)
{
	v->baseline_arg = res->pos[0];
	v->current_arg = res->pos[1];
	struct bench_evidence base, cur;
	char *base_path = NULL;
	int rc = bench_cmd_load_artifact(res->pos[0], true, &base, &base_path);
	if (rc != EXIT_DONE)
		return rc;
	rc = bench_cmd_load_artifact(res->pos[1], false, &cur, NULL);
	if (rc == EXIT_DONE) {
		v->baseline_file = base_path;
		rc = compare_loaded(&base, &cur, catalog, v, json, gate);
		bench_evidence_release(&cur);
	}
	bench_evidence_release(&base);
	free(base_path);
	return rc;
}

static int sub_compare(int argc, char **argv)
{
	const char *rank_s = "bottlenecks", *catalog = NULL;
	double threshold = 10, alpha = 0.05;
	bool json = false;
	struct opt_list allow_missing = { 0 };
	struct compare_gate gate = { 0 };
	const struct opt opts[] = {
		OPT_STRING("rank", 0, &rank_s, "HOW", "bottlenecks (time added), regressions or name"),
		OPT_DOUBLE("threshold", 0, &threshold, "PCT", "the least median change a verdict needs (default 10)"),
		OPT_DOUBLE("alpha", 0, &alpha, "P", "significance level of the U test (default 0.05)"),
		OPT_BOOL("fail-on-regression", 0, &gate.on,
			 "exit 1 when a core metric regressed significantly or is missing from CURRENT (a CI gate)"),
		OPT_LIST("allow-missing", 0, &allow_missing, "RE",
			 "with --fail-on-regression: a core metric matching RE may be missing "
			 "from CURRENT (repeatable)"),
		OPT_STRING("catalog", 0, &catalog, "FILE", "catalog for owners and tiers (default: the suite's)"),
		OPT_BOOL("json", 0, &json, "machine-readable output on stdout"),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts,
			       "plumb bench compare BASELINE CURRENT [--rank bottlenecks|regressions|name] [--threshold PCT] "
			       "[--fail-on-regression [--allow-missing RE]]",
			       "Compares two artifacts metric by metric (Mann-Whitney U test); BASELINE is a saved baseline's "
			       "name or a path.",
			       argc, argv, &res, &rc)) {
		opt_list_release(&allow_missing);
		return rc;
	}
	struct bench_compare_view v = { .threshold_pct = threshold, .alpha = alpha };
	if (!bench_rank_parse(rank_s, &v.rank))
		rc = perr_fail(EXIT_USAGE, "bench compare: --rank is bottlenecks, regressions or name, not '%s'", rank_s);
	else if (res.npos != 2 || threshold < 0 || !(alpha > 0 && alpha < 1))
		rc = perr_fail(EXIT_USAGE, "bench compare: give BASELINE and CURRENT (--threshold >= 0, 0 < --alpha < 1)");
	else if (allow_missing.n && !gate.on)
		rc = perr_fail(EXIT_USAGE, "bench compare: --allow-missing goes with --fail-on-regression");
	else if (compile_allow(&allow_missing, &gate, &rc))
		rc = compare_args(&res, catalog, &v, json, &gate);
	gate_release(&gate);
	opt_list_release(&allow_missing);
	opt_result_release(&res);
	return rc;
}

/* ---- dispatch ---- */

const struct cmd_sub cmd_bench_subs[] = {
	{ "run", sub_run, "run a suite into an evidence artifact" },
	{ "report", sub_report, "per-metric statistics and SLOs of an artifact" },
	{ "compare", sub_compare, "baseline vs current: U test, verdicts, ranked, owners" },
	{ "push", bench_cmd_push, "push artifacts' figures to a Prometheus Pushgateway" },
	{ "baseline", bench_cmd_baseline, "save, list, show or rm named baselines" },
	{ "coverage", bench_cmd_coverage, "check artifacts against the catalog's required sets" },
	{ "owners", bench_cmd_owners, "each metric's phase, owner and next-action hint" },
	{ "phase-owners", bench_cmd_owners, "the same as owners (the name the seeds use)" },
	{ "doctor", bench_cmd_doctor, "is this machine ready to measure? (reads only)" },
	{ NULL, NULL, NULL },
};

int cmd_bench(int argc, char **argv)
{
	return cmd_dispatch_sub("bench", cmd_bench_subs, argc, argv);
}
