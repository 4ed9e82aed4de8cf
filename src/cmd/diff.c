/* diff.c — `plumb diff BEFORE AFTER`: what moved. Either side is a raw profile, a plumb.hot.v1 summary, or the
 * name of a saved profile baseline. Rows are the union of both tables, largest change in share first.
 * `--folded` hands over to the differential folded writer (diff_folded_main). */
#include "cmd/cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze.h"
#include "analyze/baseline.h"
#include "base/err.h"
#include "base/opt.h"
#include "base/redact.h"
#include "base/sbuf.h"

static const char usage[] =
	"plumb diff BEFORE AFTER [--table leaf|inclusive|grouped-leaf|grouped-inclusive] [--top N] [--json]\n"
	"plumb diff BEFORE AFTER --folded [--normalize] [--strip-hex]";

/* A path as given, or a saved baseline's path when no such file exists and the argument is a name. */
static enum plumb_err resolve_side(const char *arg, char **path, struct perr *e)
{
	struct stat st;
	*path = NULL;
	if (strcmp(arg, "-") == 0 || stat(arg, &st) == 0 || strchr(arg, '/') || !baseline_name_valid(arg)) {
		*path = strdup(arg);
		return *path ? PLUMB_OK : perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	enum plumb_err rc = baseline_profile_lookup(arg, path, e);
	if (rc == PLUMB_ENOENT) {
		char tmp[PERR_MSG_MAX];
		snprintf(tmp, sizeof tmp, "no file '%s', and %s", arg, e->msg);
		memcpy(e->msg, tmp, sizeof tmp);
	}
	return rc;
}

static void json_side(struct sbuf *sb, const char *key, const char *arg, const struct hot_summary *s,
		      uint64_t total)
{
	sbuf_addf(sb, "  \"%s\": {\"source\": ", key);
	struct sbuf red = SBUF_INIT;
	redact_append(&red, arg, strlen(arg));
	sbuf_add_json_str(sb, red.buf, red.len);
	sbuf_release(&red);
	sbuf_addstr(sb, ", \"format\": ");
	sbuf_add_json_str(sb, s->format ? s->format : "", s->format ? strlen(s->format) : 0);
	sbuf_addf(sb, ", \"total\": %llu},\n", (unsigned long long)total);
}

int cmd_diff(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--folded") == 0)
			return diff_folded_main(argc, argv);
	long top = 20, module_depth = 2;
	bool json = false, collapse = false, top_seen = false;
	const char *table = "leaf", *group_by = "function", *thread = NULL;
	const struct opt opts[] = {
		{ "table", 't', OPT_STRING, &table, "KIND", "leaf, inclusive, grouped-leaf or grouped-inclusive", NULL },
		{ "top", 'n', OPT_INT, &top, "N", "rows shown (default 20; --json keeps every row unless given)",
		  &top_seen },
		{ "json", 0, OPT_FLAG, &json, NULL, "write the diff as JSON (plumb.hot-diff.v1) to stdout", NULL },
		{ "folded", 0, OPT_FLAG, NULL, NULL, "differential folded output (for flame --diff)", NULL },
		{ "group-by", 'g', OPT_STRING, &group_by, "KEY", "grouping for raw profiles' grouped tables", NULL },
		{ "module-depth", 0, OPT_INT, &module_depth, "N", "module depth for raw profiles (default 2)", NULL },
		{ "collapse-generics", 0, OPT_FLAG, &collapse, NULL, "fold <...> in raw profiles' names", NULL },
		{ "thread", 0, OPT_STRING, &thread, "RE", "keep threads of raw profiles whose name matches", NULL },
		{ NULL, 0, OPT_END, NULL, NULL, NULL, NULL },
	};
	struct opt_result res;
	int code;
	if (!cmd_parse_options(opts, usage, "What moved between two profiles (or summaries, or baselines).", argc,
			       argv, &res, &code))
		return code;
	struct hot_summary *side[2] = { NULL, NULL };
	char *paths[2] = { NULL, NULL };
	struct hot_diff_row *rows = NULL;
	size_t nrows = 0;
	struct perr e = PERR_INIT;
	int rc = EXIT_DONE;
	enum hot_table_kind kind;
	struct hot_opts o = HOT_OPTS_INIT;
	if (res.npos != 2) {
		rc = plumb_fail(EXIT_USAGE, "diff: expected BEFORE and AFTER (see plumb diff --help)");
		goto out;
	}
	if (!hot_table_from_name(table, &kind)) {
		rc = plumb_fail(EXIT_USAGE, "diff: --table must be leaf, inclusive, grouped-leaf or grouped-inclusive");
		goto out;
	}
	if (!hot_group_from_name(group_by, &o.group_by) || top < 0 || module_depth < 1 || module_depth > 64) {
		rc = plumb_fail(EXIT_USAGE, "diff: bad --group-by, --top or --module-depth");
		goto out;
	}
	o.module_depth = (int)module_depth;
	o.collapse_generics = collapse;
	o.thread_re = thread;
	for (int i = 0; i < 2; i++) {
		if (resolve_side(res.pos[i], &paths[i], &e) ||
		    hot_summary_from_file(paths[i], NULL, &o, &side[i], &e)) {
			rc = perr_report(&e);
			goto out;
		}
	}
	const struct hot_table *t[2];
	for (int i = 0; i < 2; i++) {
		t[i] = hot_summary_table(side[i], NULL, kind);
		if (!t[i]) {
			rc = plumb_fail(EXIT_INPUT, "diff: %s has no %s table (summarize it with --group-by, or pass the "
						    "raw profile)", res.pos[i], hot_table_name(kind));
			goto out;
		}
	}
	if (side[0]->group_by != side[1]->group_by && (kind == HOT_GROUPED_LEAF || kind == HOT_GROUPED_INCLUSIVE))
		plumb_warn("diff: the two sides are grouped differently (%s and %s)", hot_group_name(side[0]->group_by),
			   hot_group_name(side[1]->group_by));
	uint64_t tot[2] = { side[0]->all.total, side[1]->all.total };
	if (hot_diff(t[0], tot[0], t[1], tot[1], &rows, &nrows, &e)) {
		rc = perr_report(&e);
		goto out;
	}
	const char *unit = side[1]->weight_unit ? side[1]->weight_unit : "samples";
	if (json) {
		size_t n = top_seen && (size_t)top < nrows ? (size_t)top : nrows;
		struct sbuf sb = SBUF_INIT;
		sbuf_addf(&sb, "{\n  \"schema\": \"plumb.hot-diff.v1\",\n  \"table\": \"%s\",\n", hot_table_name(kind));
		json_side(&sb, "before", res.pos[0], side[0], tot[0]);
		json_side(&sb, "after", res.pos[1], side[1], tot[1]);
		sbuf_addstr(&sb, "  \"rows\": [");
		for (size_t i = 0; i < n; i++) {
			const struct hot_diff_row *r = &rows[i];
			sbuf_addstr(&sb, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
			sbuf_add_json_str(&sb, r->name, strlen(r->name));
			sbuf_addf(&sb,
				  ", \"before\": {\"count\": %llu, \"share\": %.4f}, \"after\": {\"count\": %llu, "
				  "\"share\": %.4f}, \"delta_points\": %.4f, \"delta_count\": %lld}",
				  (unsigned long long)r->before, r->before_share, (unsigned long long)r->after, r->after_share,
				  r->delta_points, (long long)r->delta_count);
		}
		sbuf_addstr(&sb, n ? "\n  ]\n}\n" : "]\n}\n");
		if (sb.oom || fwrite(sb.buf, 1, sb.len, stdout) != sb.len)
			rc = plumb_fail(EXIT_OUTPUT, "diff: cannot write to stdout");
		sbuf_release(&sb);
		goto out;
	}
	size_t n = top && (size_t)top < nrows ? (size_t)top : nrows;
	char *shown[2] = { redact_dup(res.pos[0]), redact_dup(res.pos[1]) };
	printf("%s table: before %s (%llu %s), after %s (%llu %s)\n", hot_table_name(kind),
	       shown[0] ? shown[0] : "?", (unsigned long long)tot[0], unit, shown[1] ? shown[1] : "?",
	       (unsigned long long)tot[1], unit);
	free(shown[0]);
	free(shown[1]);
	if (n < nrows)
		printf("top %zu of %zu rows by change\n", n, nrows);
	int wc = 7;
	char buf[40];
	for (size_t i = 0; i < n; i++) {
		int l = snprintf(buf, sizeof buf, "%+lld", (long long)rows[i].delta_count);
		if (l > wc)
			wc = l;
	}
	printf("\n  change   before    after  %*s  %s\n", wc, "count", "name");
	for (size_t i = 0; i < n; i++) {
		const struct hot_diff_row *r = &rows[i];
		double d = fabs(r->delta_points) < 0.05 ? 0.0 : r->delta_points;
		printf("  %+6.1f  %6.1f%%  %6.1f%%  %+*lld  %s\n", d, r->before_share, r->after_share, wc,
		       (long long)r->delta_count, r->name);
	}
	if (!n)
		puts("  (no rows)");
out:
	free(rows);
	for (int i = 0; i < 2; i++) {
		hot_summary_free(side[i]);
		free(paths[i]);
	}
	opt_result_release(&res);
	return rc;
}
