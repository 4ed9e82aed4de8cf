/* diff.c — `plumb diff BEFORE AFTER`: what moved. Either side is a raw profile, a plumb.hot.v1 summary, or the
 * name of a saved profile baseline. Rows are the union of both tables, largest change in share first, each
 * marked when its change is beyond sampling noise (analyze's hot_diff_test, docs/diff.md).
 * `--folded` writes differential folded stacks instead (analyze/diff_folded.h); this file owns the options, the
 * messages and the output file of both. */
#include "cmd/cmd.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze.h"
#include "analyze/baseline.h"
#include "analyze/diff_folded.h"
#include "os/atomic.h"
#include "base/err.h"
#include "base/opt.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "base/shown.h"
#include "os/store.h"
#include "format/format.h"
#include "format/hot_json.h"
#include "profile/label.h"
#include "ui/report.h"

static const char usage[] =
	"plumb diff BEFORE AFTER [--table leaf|inclusive|grouped-leaf|grouped-inclusive] [--top N] [--json]\n"
	"                        [--significant] [--alpha A]\n"
	"plumb diff BEFORE AFTER --folded [--normalize] [--strip-hex]";

/* ---- --folded ------------------------------------------------------------------------------------------ */

/* Loads both inputs, then writes their differential folded lines to `output` through the atomic writer. */
static enum plumb_err diff_folded_write(const struct diff_folded_opts *dopt, const char *const *paths,
					const char *output, struct perr *e)
{
	struct fmt_source in[2];
	enum plumb_err rc = fmt_source_open(&in[0], paths[0], e);
	if (rc)
		return rc;
	if ((rc = fmt_source_open(&in[1], paths[1], e))) {
		fmt_source_close(&in[0]);
		return rc;
	}
	const struct diff_folded_input side[2] = { { paths[0], in[0].st }, { paths[1], in[1].st } };
	struct atomic_file af = ATOMIC_FILE_INIT;
	rc = atomic_open(&af, output, e);
	if (!rc && (rc = diff_folded_from_readers(dopt, &side[0], &side[1], af.fp, e)))
		atomic_abort(&af);
	else if (!rc && (fflush(af.fp) != 0 || ferror(af.fp))) { /* the flush fails again and says why (ENOSPC) */
		int err = errno;
		atomic_abort(&af);
		rc = fmt_write_failed(output, err, e);
	} else if (!rc) {
		rc = atomic_commit(&af, e);
	}
	fmt_source_close(&in[0]);
	fmt_source_close(&in[1]);
	return rc;
}

/* `plumb diff A B --folded [--normalize] [--strip-hex] [-o OUT]`: --folded is accepted and ignored here. */
static int diff_folded(int argc, char **argv)
{
	bool folded = false;
	struct diff_folded_opts dopt = DIFF_FOLDED_OPTS_INIT;
	const char *output = "-";
	const struct opt opts[] = {
		OPT_BOOL("folded", 0, &folded, "write the differential folded format"),
		OPT_BOOL("normalize", 0, &dopt.normalize, "scale BEFORE's counts to AFTER's total"),
		OPT_BOOL("strip-hex", 0, &dopt.strip_hex, "replace hex addresses (0x45ef2173) with 0x..."),
		OPT_STRING("output", 'o', &output, "PATH", "where to write (default: stdout)"),
		OPT_END(),
	};
	struct opt_result res;
	int code;
	if (!cmd_parse_options(opts, "plumb diff BEFORE AFTER --folded [--normalize] [--strip-hex] [-o OUT]",
			       "Write differential folded stacks (\"stack BEFORE AFTER\"), the input of a "
			       "differential flame graph.", argc, argv, &res, &code))
		return code;
	if (res.npos != 2) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "diff --folded: give two folded profiles, BEFORE and AFTER");
	}
	dopt.warn = cmd_warn_to_stderr;
	struct perr e = PERR_INIT;
	enum plumb_err rc = diff_folded_write(&dopt, res.pos, output, &e);
	opt_result_release(&res);
	return rc ? perr_report(&e) : EXIT_DONE;
}

/* ---- tables -------------------------------------------------------------------------------------------- */

/* What `plumb diff` works on: its options, both sides, and the rows of the diff. */
struct diff_cmd {
	long top;
	double alpha;                  /* family-wise error rate of the significance marks */
	bool json, top_seen, significant_only;
	bool tested;                   /* both sides count samples: rows carry p-values */
	char untested[160];            /* why not, for the reader */
	enum hot_table_kind kind;
	const char *args[2];           /* BEFORE and AFTER as given */
	const char *sample_index;      /* --weight: the sample type of allocation profiles */
	char *paths[2];                /* as resolved (a baseline's file) */
	struct hot_summary *side[2];
	const struct hot_table *table[2];
	uint64_t total[2];
	struct hot_diff_row *rows;
	size_t nrows;                  /* rows shown (only the significant ones with --significant) */
	size_t compared;               /* rows compared: the size of the Holm correction */
};

/* A path as given, or a saved baseline's path when no such file exists and the argument is a name. */
static enum plumb_err resolve_side(const char *arg, char **path, bool *baseline, struct perr *e)
{
	*baseline = false;
	struct stat st;
	*path = NULL;
	if (strcmp(arg, "-") == 0 || stat(arg, &st) == 0 || strchr(arg, '/') || !store_name_valid(arg)) {
		*path = strdup(arg);
		return *path ? PLUMB_OK : perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	enum plumb_err rc = baseline_profile_lookup(arg, path, e);
	*baseline = rc == PLUMB_OK;
	if (rc == PLUMB_ENOENT) {
		char tmp[PERR_MSG_MAX];
		snprintf(tmp, sizeof tmp, "no file '%s', and %s", arg, e->msg);
		memcpy(e->msg, tmp, sizeof tmp);
	}
	return rc;
}

/* The number of samples behind a side's total, for the significance test: the total itself when weights are
 * sample counts. False (with the reason in d->untested) when the side's weights are something else. */
static bool side_samples(struct diff_cmd *d, int i, uint64_t *samples)
{
	const char *unit = d->side[i]->weight_unit ? d->side[i]->weight_unit : "samples";
	if (strcmp(unit, "samples") == 0) {
		*samples = d->total[i];
		return true;
	}
	/* weights in another unit over a known number of samples: each count is count * samples / total
	 * (docs/diff.md, Units) */
	if (d->side[i]->all.samples) {
		*samples = d->side[i]->all.samples;
		return true;
	}
	snprintf(d->untested, sizeof d->untested, "%s's weights are %s, not sample counts, and their number of samples "
		 "is not known", i ? "AFTER" : "BEFORE", unit);
	return false;
}

/* Marks the rows whose change is beyond sampling noise, when both sides count samples. Returns an exit code. */
static int diff_test(struct diff_cmd *d)
{
	uint64_t samples[2];
	if (!side_samples(d, 0, &samples[0]) || !side_samples(d, 1, &samples[1]))
		return d->significant_only ? perr_fail(EXIT_INPUT, "diff: --significant needs sample counts: %s",
							d->untested)
					   : EXIT_DONE;
	struct perr e = PERR_INIT;
	if (hot_diff_test(d->rows, d->nrows, d->total, samples, d->alpha, &e))
		return perr_report(&e);
	d->tested = true;
	if (!d->significant_only)
		return EXIT_DONE;
	size_t kept = 0;
	for (size_t i = 0; i < d->nrows; i++)
		if (d->rows[i].significant)
			d->rows[kept++] = d->rows[i];
	d->nrows = kept;
	return EXIT_DONE;
}

/* Two sides weighed in different units are compared as samples: the side whose weights are not sample counts has
 * its counts turned into samples (count * samples / total) when its number of samples is known; else they cannot
 * be compared (exit 5). Returns an exit code (EXIT_DONE to go on). */
static int diff_units(struct diff_cmd *d)
{
	const char *unit[2];
	for (int i = 0; i < 2; i++)
		unit[i] = d->side[i]->weight_unit ? d->side[i]->weight_unit : "samples";
	if (strcmp(unit[0], unit[1]) == 0)
		return EXIT_DONE;
	if (strcmp(unit[0], "samples") != 0 && strcmp(unit[1], "samples") != 0)
		return perr_fail(EXIT_INPUT, "diff: BEFORE is weighed in %s and AFTER in %s, which cannot be compared",
				 unit[0], unit[1]);
	for (int i = 0; i < 2; i++) {
		if (strcmp(unit[i], "samples") == 0)
			continue;
		uint64_t n = d->side[i]->all.samples, total = d->total[i];
		if (!n)
			return perr_fail(EXIT_INPUT, "diff: %s is weighed in %s and %s in %s, with no number of samples "
					 "to compare them by", i ? "AFTER" : "BEFORE", unit[i], i ? "BEFORE" : "AFTER",
					 unit[1 - i]);
		struct hot_table *t = (struct hot_table *)d->table[i];
		for (size_t r = 0; r < t->n; r++)
			t->rows[r].count = total ? (uint64_t)llround((double)t->rows[r].count * (double)n / (double)total) : 0;
		d->total[i] = n;
		perr_warn("diff: %s is weighed in %s, %s in %s: compared as numbers of samples (%llu for %s)",
			  i ? "AFTER" : "BEFORE", unit[i], i ? "BEFORE" : "AFTER", unit[1 - i], (unsigned long long)n,
			  i ? "AFTER" : "BEFORE");
		free(d->side[i]->weight_unit);
		d->side[i]->weight_unit = strdup("samples");
		if (!d->side[i]->weight_unit)
			return perr_fail(EXIT_INPUT, "diff: out of memory");
	}
	return EXIT_DONE;
}

/* Reads both sides into summaries, picks their tables and diffs them. Returns an exit code. */
static int diff_load(struct diff_cmd *d, const struct hot_opts *o)
{
	struct perr e = PERR_INIT;
	struct hot_load_opts lo = { NULL, NULL, 0, d->sample_index }; /* --weight */
	for (int i = 0; i < 2; i++) {
		bool baseline;
		if (resolve_side(d->args[i], &d->paths[i], &baseline, &e))
			return perr_report(&e);
		if (baseline) { /* read by descriptor under the home's trust rule, never by its path again (§3.5) */
			char *text = NULL;
			size_t len = 0;
			enum plumb_err rc = store_load(&STORE_PROFILE_BASELINES, d->args[i], &text, &len, &e);
			if (!rc)
				rc = fmt_hot_json_read(text, len, &d->side[i], &e);
			free(text);
			if (rc)
				return perr_report(&e);
		} else if (hot_summary_from_file(d->paths[i], d->sample_index ? &lo : NULL, o, &d->side[i], &e)) {
			return perr_report(&e);
		}
	}
	for (int i = 0; i < 2; i++) {
		d->table[i] = hot_summary_table(d->side[i], NULL, d->kind);
		if (!d->table[i])
			return perr_fail(EXIT_INPUT, "diff: %s has no %s table (summarize it with --group-by, or pass the "
						      "raw profile)", d->args[i], hot_table_name(d->kind));
		d->total[i] = d->side[i]->all.total;
	}
	if (d->side[0]->group_by != d->side[1]->group_by &&
	    (d->kind == HOT_GROUPED_LEAF || d->kind == HOT_GROUPED_INCLUSIVE))
		perr_warn("diff: the two sides are grouped differently (%s and %s)", hot_group_name(d->side[0]->group_by),
			   hot_group_name(d->side[1]->group_by));
	int urc = diff_units(d);
	if (urc != EXIT_DONE)
		return urc;
	if (!hot_diff_unify_names((struct hot_table *)d->table[0], (struct hot_table *)d->table[1]))
		return perr_fail(EXIT_INPUT, "diff: out of memory");
	if (hot_diff(d->table[0], d->total[0], d->table[1], d->total[1], &d->rows, &d->nrows, &e))
		return perr_report(&e);
	d->compared = d->nrows;
	return diff_test(d);
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

/* plumb.hot-diff.v1 on stdout. Returns an exit code. */
static int diff_print_json(const struct diff_cmd *d)
{
	size_t n = d->top_seen && (size_t)d->top < d->nrows ? (size_t)d->top : d->nrows;
	struct sbuf sb = SBUF_INIT;
	sbuf_addf(&sb, "{\n  \"schema\": \"plumb.hot-diff.v1\",\n  \"table\": \"%s\",\n", hot_table_name(d->kind));
	json_side(&sb, "before", d->args[0], d->side[0], d->total[0]);
	json_side(&sb, "after", d->args[1], d->side[1], d->total[1]);
	if (d->tested)
		sbuf_addf(&sb, "  \"test\": {\"method\": \"two-proportion z-test, continuity-corrected\", "
			       "\"correction\": \"holm\", \"rows_compared\": %zu, \"alpha\": %g},\n",
			  d->compared, d->alpha);
	else
		sbuf_addstr(&sb, "  \"test\": null,\n");
	sbuf_addstr(&sb, "  \"rows\": [");
	for (size_t i = 0; i < n; i++) {
		const struct hot_diff_row *r = &d->rows[i];
		sbuf_addstr(&sb, i ? ",\n    {\"name\": " : "\n    {\"name\": ");
		sbuf_add_json_str(&sb, r->name, strlen(r->name));
		sbuf_addf(&sb,
			  ", \"before\": {\"count\": %llu, \"share\": %.4f}, \"after\": {\"count\": %llu, "
			  "\"share\": %.4f}, \"delta_points\": %.4f, \"delta_count\": %lld",
			  (unsigned long long)r->before, r->before_share, (unsigned long long)r->after, r->after_share,
			  r->delta_points, (long long)r->delta_count);
		if (d->tested)
			sbuf_addf(&sb, ", \"p_value\": %.6g, \"p_adjusted\": %.6g, \"significant\": %s}", r->p_value,
				  r->p_adjusted, r->significant ? "true" : "false");
		else
			sbuf_addstr(&sb, ", \"p_value\": null, \"p_adjusted\": null, \"significant\": null}");
	}
	sbuf_addstr(&sb, n ? "\n  ]\n}\n" : "]\n}\n");
	int rc = EXIT_DONE;
	if (sb.oom || fwrite(sb.buf, 1, sb.len, stdout) != sb.len)
		rc = perr_fail(EXIT_OUTPUT, "diff: cannot write to stdout");
	sbuf_release(&sb);
	return rc;
}

/* What the mark means, or why there is none, under the table. */
static void diff_print_legend(const struct diff_cmd *d)
{
	if (!d->tested) {
		printf("\n(no significance marks: %s)\n", d->untested);
		return;
	}
	size_t marked = 0;
	for (size_t i = 0; i < d->nrows; i++)
		marked += d->rows[i].significant;
	printf("\n* beyond sampling noise: two-proportion test, Holm-corrected over %zu row%s, alpha %g "
	       "(%zu row%s marked%s)\n",
	       d->compared, d->compared == 1 ? "" : "s", d->alpha, marked, marked == 1 ? "" : "s",
	       d->significant_only ? ", only they are shown" : "");
}

/* The table for people on stdout. */
static void diff_print_table(const struct diff_cmd *d)
{
	const char *unit = d->side[1]->weight_unit ? d->side[1]->weight_unit : "samples";
	size_t n = d->top && (size_t)d->top < d->nrows ? (size_t)d->top : d->nrows;
	char *shown[2] = { redact_dup(d->args[0]), redact_dup(d->args[1]) };
	printf("%s table: before ", hot_table_name(d->kind));
	shown_fputs(shown[0] ? shown[0] : "?", stdout);
	printf(" (%llu %s), after ", (unsigned long long)d->total[0], unit);
	shown_fputs(shown[1] ? shown[1] : "?", stdout);
	printf(" (%llu %s)\n", (unsigned long long)d->total[1], unit);
	free(shown[0]);
	free(shown[1]);
	if (n < d->nrows)
		printf("top %zu of %zu rows by change\n", n, d->nrows);
	int wc = 7;
	char buf[40];
	for (size_t i = 0; i < n; i++) {
		int l = snprintf(buf, sizeof buf, "%+lld", (long long)d->rows[i].delta_count);
		if (l > wc)
			wc = l;
	}
	printf("\n    change   before    after  %*s  %s\n", wc, strcmp(unit, "samples") == 0 ? "count" : unit, "name");
	for (size_t i = 0; i < n; i++) {
		const struct hot_diff_row *r = &d->rows[i];
		double delta = fabs(r->delta_points) < 0.05 ? 0.0 : r->delta_points;
		printf("  %c %+6.1f  %6.1f%%  %6.1f%%  %+*lld  ", r->significant ? '*' : ' ', delta, r->before_share,
		       r->after_share, wc, (long long)r->delta_count);
		shown_fputs(r->name, stdout); /* a name from the inputs: escaped (§3.3) */
		putchar('\n');
	}
	if (!n)
		puts("  (no rows)");
	diff_print_legend(d);
}

int cmd_diff(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--folded") == 0)
			return diff_folded(argc, argv);
	struct diff_cmd d = { .top = 20, .alpha = HOT_DIFF_ALPHA };
	long module_depth = 2;
	bool collapse = false, full_names = false;
	const char *table = "leaf", *group_by = "function", *thread = NULL, *weight = NULL;
	const struct opt opts[] = {
		OPT_STRING("table", 't', &table, "KIND", "leaf, inclusive, grouped-leaf or grouped-inclusive"),
		OPT_LONG_SEEN("top", 'n', &d.top, "N", "rows shown (default 20; --json keeps every row unless given)",
			      &d.top_seen),
		OPT_BOOL("json", 0, &d.json, "write the diff as JSON (plumb.hot-diff.v1) to stdout"),
		OPT_BOOL("significant", 0, &d.significant_only,
			 "keep only rows whose change is beyond sampling noise (marked *)"),
		OPT_DOUBLE("alpha", 0, &d.alpha, "A",
			   "family-wise error rate of the marks (default 0.01; Holm over all rows)"),
		OPT_DISPATCH("folded", "differential folded output (for flame --diff)"),
		OPT_STRING("group-by", 'g', &group_by, "KEY", "grouping for raw profiles' grouped tables"),
		OPT_LONG("module-depth", 0, &module_depth, "N", "module depth for raw profiles (default 2)"),
		OPT_BOOL("collapse-generics", 0, &collapse, "fold <...> in raw profiles' names"),
		OPT_BOOL("full-names", 0, &full_names, "the full C++ signature in labels (default: ns::Class::method)"),
		OPT_STRING("thread", 0, &thread, "RE", "keep threads of raw profiles whose name matches"),
		CMD_WEIGHT_OPT(weight),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, usage,
			       "What moved between two profiles (or summaries, or baselines); a * marks a change beyond "
			       "sampling noise.", argc, argv, &res, &rc))
		return rc;
	struct hot_opts o = HOT_OPTS_INIT;
	o.label_flags = full_names ? 0 : LABEL_SHORT_NAMES;
	rc = EXIT_DONE;
	if (res.npos != 2)
		rc = perr_fail(EXIT_USAGE, "diff: expected BEFORE and AFTER (see plumb diff --help)");
	else if (!hot_table_from_name(table, &d.kind))
		rc = perr_fail(EXIT_USAGE, "diff: --table must be leaf, inclusive, grouped-leaf or grouped-inclusive");
	else if (!hot_group_from_name(group_by, &o.group_by) || d.top < 0 || module_depth < 1 || module_depth > 64)
		rc = perr_fail(EXIT_USAGE, "diff: bad --group-by, --top or --module-depth");
	else if (!(d.alpha > 0 && d.alpha < 1))
		rc = perr_fail(EXIT_USAGE, "diff: --alpha must be between 0 and 1 (exclusive)");
	else
		cmd_weight_apply("diff", weight, &d.sample_index, &rc);
	if (!rc) {
		o.module_depth = (int)module_depth;
		o.collapse_generics = collapse;
		o.thread_re = thread;
		o.warn = cmd_warn_to_stderr;
		d.args[0] = res.pos[0];
		d.args[1] = res.pos[1];
		rc = diff_load(&d, &o);
	}
	if (!rc && d.json)
		rc = diff_print_json(&d);
	else if (!rc)
		diff_print_table(&d);
	free(d.rows);
	for (int i = 0; i < 2; i++) {
		hot_summary_free(d.side[i]);
		free(d.paths[i]);
	}
	opt_result_release(&res);
	return rc;
}
