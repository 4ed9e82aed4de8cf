/* baseline.c — `plumb baseline list|show|rm|save`: the profile baselines `record --save-baseline` keeps and
 * `diff` compares with, kept in the store of named things (os/store.h, analyze/baseline.h), with the same verbs
 * as `plumb bench baseline` has for bench evidence. A name that is taken is replaced only with --force, and every
 * save says where it went (docs/design.md §5.7, §3.2). */
#include "cmd/cmd.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "analyze/analyze.h"
#include "analyze/baseline.h"
#include "base/err.h"
#include "base/opt.h"
#include "base/sbuf.h"
#include "os/store.h"
#include "profile/label.h"
#include "format/hot_json.h"
#include "ui/report.h"

static const struct store_kind *const K = &STORE_PROFILE_BASELINES;

/* One line of `baseline list`: name, when it was saved, its samples and the profile it summarizes. */
static void list_one(const char *name)
{
	char path[PATH_MAX], when[32] = "?";
	struct perr e = PERR_INIT;
	struct stat st;
	if (store_path(K, name, path, sizeof path, &e) == PLUMB_OK && stat(path, &st) == 0) {
		struct tm tm;
		strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime_r(&st.st_mtime, &tm));
	}
	char *data = NULL;
	size_t len = 0;
	struct hot_summary *s = NULL;
	if (store_load(K, name, &data, &len, &e) || fmt_hot_json_read(data, len, &s, &e)) {
		char *why = cmd_shown_text(e.msg);
		printf("%-24s %-16s unreadable: %s\n", name, when, why);
		free(why);
	} else {
		char *src = cmd_shown_text(s->source ? s->source : "?");
		printf("%-24s %-16s %10llu %-8s %s (%s%s)\n", name, when, (unsigned long long)s->all.total,
		       s->weight_unit ? s->weight_unit : "samples", src, hot_group_name(s->group_by),
		       s->nstages ? ", by stage" : "");
		free(src);
	}
	hot_summary_free(s);
	free(data);
}

static int baseline_list(int argc, char **argv)
{
	const struct opt opts[] = { OPT_END() };
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb baseline list", "Lists the saved profile baselines.", argc, argv, &res, &rc))
		return rc;
	int npos = res.npos;
	opt_result_release(&res);
	if (npos)
		return perr_fail(EXIT_USAGE, "baseline list: takes no arguments");
	char **names = NULL;
	size_t n = 0;
	struct perr e = PERR_INIT;
	if (store_list(K, &names, &n, &e))
		return cmd_report_redacted(&e);
	if (!n)
		puts("no profile baselines yet (plumb record --save-baseline NAME, or plumb baseline save PROFILE --name NAME)");
	else
		printf("%-24s %-16s %10s %-8s %s\n", "name", "saved", "total", "unit", "profile (grouped by)");
	for (size_t i = 0; i < n; i++)
		list_one(names[i]);
	store_list_free(names, n);
	return EXIT_DONE;
}

/* The name a verb works on: one valid NAME, else exit 2 (*rc). */
static const char *one_name(const struct opt_result *res, const char *verb, int *rc)
{
	struct perr e = PERR_INIT;
	if (res->npos != 1) {
		*rc = perr_fail(EXIT_USAGE, "baseline %s: give one baseline NAME", verb);
		return NULL;
	}
	if (store_check_name(K, res->pos[0], &e)) {
		*rc = cmd_report_redacted(&e);
		return NULL;
	}
	return res->pos[0];
}

static int baseline_show(int argc, char **argv)
{
	bool json = false;
	long top = 20;
	bool top_seen = false;
	const struct opt opts[] = {
		OPT_BOOL("json", 0, &json, "print the saved plumb.hot.v1 document"),
		OPT_LONG_SEEN("top", 'n', &top, "N", "rows per table (default 20)", &top_seen),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb baseline show NAME [--json] [--top N]",
			       "Shows a saved profile baseline as plumb hot shows a profile.", argc, argv, &res, &rc))
		return rc;
	const char *name = one_name(&res, "show", &rc);
	char path[PATH_MAX];
	struct perr e = PERR_INIT;
	if (name && store_path(K, name, path, sizeof path, &e))
		rc = cmd_report_redacted(&e), name = NULL;
	if (name && !store_exists(K, name))
		rc = perr_fail(EXIT_MISSING, "baseline show: no profile baseline named '%s' (see plumb baseline list)", name),
		name = NULL;
	if (name && json) {
		char *data = NULL;
		size_t len = 0;
		struct hot_summary *s = NULL;
		rc = store_load(K, name, &data, &len, &e) || fmt_hot_json_read(data, len, &s, &e)
			     ? cmd_report_redacted(&e)
			     : (fwrite(data, 1, len, stdout), EXIT_DONE);
		hot_summary_free(s);
		free(data);
	} else if (name) {
		char topv[32];
		snprintf(topv, sizeof topv, "%ld", top);
		char *hot_argv[] = { "hot", path, "--top", topv, NULL };
		rc = cmd_hot(4, hot_argv); /* a saved summary is read as plumb hot reads one */
	}
	opt_result_release(&res);
	return rc;
}

static int baseline_rm(int argc, char **argv)
{
	const struct opt opts[] = { OPT_END() };
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb baseline rm NAME", "Removes a saved profile baseline.", argc, argv, &res, &rc))
		return rc;
	const char *name = one_name(&res, "rm", &rc);
	char path[PATH_MAX];
	struct perr e = PERR_INIT;
	if (name && (store_path(K, name, path, sizeof path, &e) || store_remove(K, name, &e))) {
		rc = e.code == PLUMB_ENOENT
			     ? perr_fail(EXIT_MISSING, "baseline rm: no profile baseline named '%s' (see plumb baseline list)",
					  name)
			     : cmd_report_redacted(&e);
	} else if (name) {
		char *shown = cmd_shown_text(path);
		printf("removed profile baseline %s (%s)\n", name, shown);
		free(shown);
		rc = EXIT_DONE;
	}
	opt_result_release(&res);
	return rc;
}

/* Summarizes PROFILE with the summary options (and --stages) and keeps it as NAME. */
static int save_summary(const char *profile, const char *name, bool force, struct cmd_summary *sum,
			const char *stages)
{
	struct hot_opts o = HOT_OPTS_INIT;
	o.label_flags = LABEL_SHORT_NAMES; /* the names hot shows */
	int rc = cmd_summary_apply(sum, "baseline save", &o);
	if (rc)
		return rc;
	struct hot_load_opts lo = { .stages_path = stages };
	struct hot_summary *s = NULL;
	struct perr e = PERR_INIT;
	if (hot_summary_from_file(profile, &lo, &o, &s, &e))
		return cmd_report_redacted(&e);
	struct sbuf json = SBUF_INIT;
	fmt_hot_json_write(&json, s, sum->top_seen ? (size_t)sum->top : 0);
	hot_summary_free(s);
	char path[PATH_MAX];
	if (json.oom)
		rc = perr_fail(EXIT_FAILED, "baseline save: out of memory");
	else if (baseline_profile_save(name, json.buf, json.len, force, path, sizeof path, &e))
		rc = cmd_report_redacted(&e);
	else {
		char *shown = cmd_shown_text(path);
		printf("saved profile baseline %s to %s\n", name, shown);
		free(shown);
	}
	sbuf_release(&json);
	return rc;
}

static int baseline_save(int argc, char **argv)
{
	const char *name = NULL, *stages = NULL;
	bool force = false;
	struct cmd_summary sum = CMD_SUMMARY_INIT;
	const struct opt opts[] = {
		OPT_STRING("name", 0, &name, "NAME", "the baseline's name (letters, digits, '.', '_', '-')"),
		OPT_BOOL("force", 'f', &force, "replace a baseline of that name"),
		CMD_SUMMARY_OPTS(sum),
		OPT_STRING("stages", 0, &stages, "FILE", "one table per stage (plumb.stages.v1)"),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb baseline save PROFILE --name NAME [--force] [summary options]",
			       "Keeps the hot summary of a profile (as plumb hot --json makes it) as profile baseline NAME "
			       "under $PLUMB_HOME/baselines/profiles/.",
			       argc, argv, &res, &rc)) {
		cmd_summary_release(&sum);
		return rc;
	}
	struct perr e = PERR_INIT;
	if (res.npos != 1 || !name)
		rc = perr_fail(EXIT_USAGE, "baseline save: give PROFILE and --name NAME");
	else if (store_check_name(K, name, &e))
		rc = cmd_report_redacted(&e);
	else if (!force && store_exists(K, name))
		rc = perr_fail(EXIT_USAGE, "baseline save: a profile baseline named '%s' exists (--force replaces it)", name);
	else
		rc = save_summary(res.pos[0], name, force, &sum, stages);
	cmd_summary_release(&sum);
	opt_result_release(&res);
	return rc;
}

const struct cmd_sub cmd_baseline_subs[] = {
	{ "list", baseline_list, "the saved profile baselines" },
	{ "show", baseline_show, "one of them, as plumb hot shows a profile" },
	{ "rm", baseline_rm, "remove one" },
	{ "save", baseline_save, "keep the hot summary of a profile as a baseline" },
	{ NULL, NULL, NULL },
};

int cmd_baseline(int argc, char **argv)
{
	return cmd_dispatch_sub("baseline", cmd_baseline_subs, argc, argv);
}
