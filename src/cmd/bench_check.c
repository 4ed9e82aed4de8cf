/* bench_check.c — `plumb bench coverage`, `owners` (also named `phase-owners`) and `doctor`: the checks of
 * artifacts against the catalog, the ownership table, and the machine (docs/design.md §8.4, §8.5). */
#include "cmd/cmd.h"

#include <unistd.h>

#include "base/grow.h"
#include "base/opt.h"
#include "bench/coverage.h"
#include "bench/machine.h"
#include "cmd/bench_cmd.h"
#include "ui/report.h"

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
		return perr_fail(EXIT_FAILED, "out of memory");
	while (loaded < artifacts->n && rc == EXIT_DONE)
		if ((rc = bench_cmd_load_artifact(artifacts->v[loaded], false, &evs[loaded], NULL)) == EXIT_DONE)
			loaded++;
	for (int i = 0; i < artifacts->n && !have && rc == EXIT_DONE; i++)
		rc = bench_cmd_load_catalog(catalog, &evs[i], &cat, &have);
	if (rc == EXIT_DONE && !have)
		rc = perr_fail(EXIT_MISSING, "bench coverage: no catalog (give --catalog FILE or set catalog = in the suite)");
	struct bench_coverage cov = { 0 };
	struct perr e = PERR_INIT;
	if (rc == EXIT_DONE && (bench_coverage_check(&cat, evs, (size_t)loaded, &cov, &e) != PLUMB_OK ||
				bench_coverage_write(stdout, &cov, strict, json ? BENCH_STYLE_JSON : BENCH_STYLE_TEXT, &e) !=
					PLUMB_OK))
		rc = cmd_report_redacted(&e);
	if (rc == EXIT_DONE && cov.n == 0) {
		char *cp = cmd_shown_text(cat.path);
		perr_warn("bench coverage: the catalog %s has no metric with required = SETS", cp);
		free(cp);
	}
	if (rc == EXIT_DONE && strict && cov.problems)
		rc = perr_fail(EXIT_FAILED, "bench coverage: %zu required metric%s missing or too weakly evidenced",
				cov.problems, cov.problems == 1 ? " is" : "s are");
	bench_coverage_release(&cov);
	if (have)
		bench_catalog_release(&cat);
	for (int i = 0; i < loaded; i++)
		bench_evidence_release(&evs[i]);
	free(evs);
	return rc;
}

int bench_cmd_coverage(int argc, char **argv)
{
	bool strict = false, json = false;
	struct opt_list artifacts = { 0 };
	const char *catalog = NULL;
	const struct opt opts[] = {
		OPT_BOOL("strict", 0, &strict, "exit 1 when a required metric is missing or its trust is too weak"),
		OPT_LIST("artifact", 'a', &artifacts, "A", "an artifact to check (repeatable)"),
		OPT_STRING("catalog", 0, &catalog, "FILE", "the catalog (default: the first artifact's suite's)"),
		OPT_BOOL("json", 0, &json, "machine-readable output on stdout"),
		OPT_END(),
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
			 : perr_fail(EXIT_USAGE, "bench coverage: give at least one --artifact A");
	opt_list_release(&artifacts);
	opt_result_release(&res);
	return rc;
}

/* ---- owners ---- */

int bench_cmd_owners(int argc, char **argv)
{
	const char *catalog = NULL;
	bool json = false;
	const struct opt opts[] = {
		OPT_STRING("catalog", 0, &catalog, "FILE", "the catalog (plumb.catalog.v1 INI; default ./catalog.ini)"),
		OPT_BOOL("json", 0, &json, "the catalog as plumb.catalog.v1 JSON on stdout"),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench owners [--catalog FILE] [--json]",
			       "Prints each metric's phase, owning source file or seam, and next-action hint.", argc, argv, &res,
			       &rc))
		return rc;
	if (res.npos == 1 && !catalog)
		catalog = res.pos[0];
	else if (res.npos) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "bench owners: give one catalog (--catalog FILE)");
	}
	if (!catalog) { /* like a suite's own `catalog = catalog.ini` */
		if (access("catalog.ini", F_OK) != 0) {
			opt_result_release(&res);
			return perr_fail(EXIT_MISSING, "bench owners: no catalog.ini here; give --catalog FILE");
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
	perr_warn("bench doctor: cannot tell which program case %s runs (set binary = PATH)", c->name);
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
	return ok ? EXIT_DONE : perr_fail(EXIT_FAILED, "out of memory");
}

/* Runs the checks on the programs given and prints one line each; exit 1 when one failed. */
static int doctor_report(unsigned long long min_free, const char *const *programs, size_t np)
{
	struct bench_doctor *d = calloc(1, sizeof *d);
	if (!d)
		return perr_fail(EXIT_FAILED, "out of memory");
	bench_doctor_run(d, NULL, min_free, programs, np);
	size_t fails, warns;
	bench_doctor_write(stdout, d, np, &fails, &warns);
	free(d);
	if (fails)
		return perr_fail(EXIT_FAILED, "bench doctor: %zu check%s failed, %zu warning%s", fails, fails == 1 ? "" : "s",
				  warns, warns == 1 ? "" : "s");
	return EXIT_DONE;
}

int bench_cmd_doctor(int argc, char **argv)
{
	long min_free = 1L << 30;
	const char *suite_path = NULL;
	struct opt_list bins = { 0 };
	const struct opt opts[] = {
		OPT_LONG("min-free-bytes", 0, &min_free, "N", "free-disk floor in bytes (default 1 GiB)"),
		OPT_STRING("suite", 0, &suite_path, "SUITE", "check the programs this suite runs"),
		OPT_LIST("binary", 0, &bins, "PATH", "check that this program is an optimized build (repeatable)"),
		OPT_END(),
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
		return perr_fail(EXIT_USAGE, "bench doctor: takes no arguments (--min-free-bytes N >= 0)");
	}
	for (int i = 0; i < bins.n; i++) /* a program that is not there is not a warning: exit 3 (§3.2) */
		if (access(bins.v[i], F_OK) != 0) {
			rc = cmd_fail_shown(EXIT_MISSING, "bench doctor: --binary %s: no such file", bins.v[i]);
			opt_list_release(&bins);
			opt_result_release(&res);
			return rc;
		}
	char **from_suite = NULL;
	size_t nsuite = 0;
	const char **programs = NULL;
	rc = suite_path ? doctor_suite_programs(suite_path, &from_suite, &nsuite) : EXIT_DONE;
	if (rc == EXIT_DONE && !(programs = calloc((size_t)bins.n + nsuite + 1, sizeof *programs)))
		rc = perr_fail(EXIT_FAILED, "out of memory");
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
