/* bench_store.c — `plumb bench baseline save|list|show|rm`: named baselines of bench evidence in the store
 * (bench/baseline.h over os/store.h); the options, messages and exit codes (docs/design.md §3.2, §8.2). */
#include "cmd/cmd.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/opt.h"
#include "os/store.h"
#include "bench/baseline.h"
#include "bench/report.h"
#include "cmd/bench_cmd.h"
#include "ui/report.h"

static int baseline_save(int argc, char **argv)
{
	const char *name = NULL;
	bool force = false;
	const struct opt opts[] = {
		OPT_STRING("name", 0, &name, "NAME", "the baseline's name (letters, digits, '.', '_', '-')"),
		OPT_BOOL("force", 'f', &force, "replace a baseline of that name"),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench baseline save ARTIFACT --name NAME [--force]",
			       "Keeps an artifact as a named baseline under $PLUMB_HOME/baselines/evidence/.", argc, argv, &res,
			       &rc))
		return rc;
	if (res.npos != 1 || !name) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "bench baseline save: give ARTIFACT and --name NAME");
	}
	if (!store_name_valid(name)) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "bench baseline save: '%s' is not a baseline name (letters, digits, '.', '_', '-')",
				  name);
	}
	struct bench_evidence ev;
	rc = bench_cmd_load_artifact(res.pos[0], false, &ev, NULL);
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
		rc = perr_fail(EXIT_FAILED,
				"bench baseline save: %s is harness-only (case %s runs an unoptimized build); rebuild with -O2 "
				"and rerun: a debug build never counts as a baseline",
				art, which ? which : "?");
		free(art);
		break;
	}
	case BENCH_BASELINE_NO_HOME:
		rc = perr_fail(EXIT_FAILED, "bench baseline save: " BENCH_CMD_NO_HOME);
		break;
	case BENCH_BASELINE_EXISTS:
		rc = perr_fail(EXIT_USAGE, "bench baseline save: a baseline named '%s' exists (--force replaces it)", name);
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
	const struct opt opts[] = { OPT_END() };
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench baseline list", "Lists the saved baselines.", argc, argv, &res, &rc))
		return rc;
	int npos = res.npos;
	opt_result_release(&res);
	if (npos)
		return perr_fail(EXIT_USAGE, "bench baseline list: takes no arguments");
	struct bench_baseline_summary *list;
	size_t n;
	struct perr e = PERR_INIT;
	enum bench_baseline_status st = bench_baseline_list(&list, &n, &e);
	if (st == BENCH_BASELINE_NO_HOME)
		return perr_fail(EXIT_FAILED, "bench baseline list: " BENCH_CMD_NO_HOME);
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
		OPT_BOOL("json", 0, &json, "machine-readable output on stdout"),
		OPT_STRING("catalog", 0, &catalog, "FILE", "catalog for SLOs"),
		OPT_END(),
	};
	const struct opt rm_opts[] = { OPT_END() };
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
		return perr_fail(EXIT_USAGE, "bench baseline %s: give one baseline NAME", verb);
	}
	if (st == BENCH_BASELINE_NO_HOME) {
		opt_result_release(&res);
		return perr_fail(EXIT_FAILED, "bench baseline: " BENCH_CMD_NO_HOME);
	}
	rc = EXIT_DONE;
	struct perr e = PERR_INIT;
	if (st == BENCH_BASELINE_MISSING) {
		rc = perr_fail(EXIT_MISSING, "bench baseline %s: no baseline named '%s' (see `plumb bench baseline list`)",
				verb, res.pos[0]);
	} else if (rm) {
		if (bench_baseline_remove(res.pos[0], &e) != BENCH_BASELINE_OK)
			rc = perr_fail(EXIT_OUTPUT, "bench baseline rm: %s", e.msg);
		else
			printf("removed baseline %s\n", res.pos[0]);
	} else {
		rc = bench_cmd_report_file(path, false, catalog, res.pos[0], json ? BENCH_STYLE_JSON : BENCH_STYLE_TEXT);
	}
	opt_result_release(&res);
	return rc;
}

static int baseline_show(int argc, char **argv)
{
	return baseline_show_rm(argc, argv, false);
}

static int baseline_rm(int argc, char **argv)
{
	return baseline_show_rm(argc, argv, true);
}

const struct cmd_sub bench_cmd_baseline_subs[] = {
	{ "save", baseline_save, "keep an artifact as a named baseline" },
	{ "list", baseline_list, "the saved baselines" },
	{ "show", baseline_show, "report one of them" },
	{ "rm", baseline_rm, "remove one" },
	{ NULL, NULL, NULL },
};

int bench_cmd_baseline(int argc, char **argv)
{
	return cmd_dispatch_sub("bench baseline", bench_cmd_baseline_subs, argc, argv);
}
