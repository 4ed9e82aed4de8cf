/* bench_common.c — what the `plumb bench` sub-commands share: an artifact given by path or by baseline name,
 * its catalog, and a report of it, each turning a failure into its message and exit code (docs/design.md §3.2). */
#include "cmd/cmd.h"

#include <stdlib.h>

#include "bench/artifact.h"
#include "bench/baseline.h"
#include "cmd/bench_cmd.h"
#include "ui/report.h"

/* Paths and command lines in messages (a suite or catalog FILE:LINE, an artifact, an output) go through the
 * redactor: cmd_shown_text, cmd_fail_shown, cmd_report_redacted. */

/* Loads the catalog for an artifact (bench_catalog_for); says so when the artifact's own is gone. Returns an exit
 * code (0 on success); *have says whether one was loaded. */
int bench_cmd_load_catalog(const char *opt_path, const struct bench_evidence *ev, struct bench_catalog *cat, bool *have)
{
	struct perr e = PERR_INIT;
	enum bench_catalog_source src;
	*have = false;
	if (bench_catalog_for(opt_path, ev, cat, &src, &e) != PLUMB_OK)
		return cmd_report_redacted(&e);
	if (src == BENCH_CATALOG_GONE) /* the stored path is redacted already */
		perr_warn("bench: the artifact's catalog %s is gone; no owners or SLOs (pass --catalog FILE)",
			   ev->catalog_path);
	*have = src == BENCH_CATALOG_GIVEN || src == BENCH_CATALOG_SUITES;
	return EXIT_DONE;
}

/* An artifact given as a path, or as a saved baseline's name. Exit code on failure (3 missing, 5 malformed). */
int bench_cmd_load_artifact(const char *arg, bool may_be_baseline, struct bench_evidence *ev, char **resolved)
{
	struct perr e = PERR_INIT;
	char *path = NULL;
	switch (bench_artifact_locate(arg, may_be_baseline, &path)) {
	case BENCH_BASELINE_OK:
		break;
	case BENCH_BASELINE_BAD_NAME:
		return cmd_fail_shown(EXIT_USAGE, "bench: '%s' is neither a file nor a baseline name", arg);
	case BENCH_BASELINE_NO_HOME:
		return perr_fail(EXIT_FAILED, "bench: " BENCH_CMD_NO_HOME);
	case BENCH_BASELINE_MISSING: {
		char *shown = cmd_shown_text(path);
		int rc = perr_fail(EXIT_MISSING, "bench: no baseline named '%s' (looked for %s; see `plumb bench baseline list`)",
				    arg, shown);
		free(shown);
		free(path);
		return rc;
	}
	default:
		return perr_fail(EXIT_FAILED, "out of memory");
	}
	if (bench_artifact_read(path, ev, &e) != PLUMB_OK) {
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

int bench_cmd_report_artifact(const struct bench_evidence *ev, const char *shown, const struct bench_catalog *cat,
			   enum bench_style style)
{
	struct perr e = PERR_INIT;
	return bench_report_write(stdout, ev, shown, cat, style, &e) == PLUMB_OK ? EXIT_DONE : cmd_report_redacted(&e);
}

/* Loads an artifact (load_artifact) and its catalog (load_catalog) and reports it, named `shown`. */
int bench_cmd_report_file(const char *arg, bool may_be_baseline, const char *catalog, const char *shown,
		       enum bench_style style)
{
	struct bench_evidence ev;
	int rc = bench_cmd_load_artifact(arg, may_be_baseline, &ev, NULL);
	if (rc != EXIT_DONE)
		return rc;
	struct bench_catalog cat;
	bool have;
	rc = bench_cmd_load_catalog(catalog, &ev, &cat, &have);
	if (rc == EXIT_DONE)
		rc = bench_cmd_report_artifact(&ev, shown, have ? &cat : NULL, style);
	if (have)
		bench_catalog_release(&cat);
	bench_evidence_release(&ev);
	return rc;
}
