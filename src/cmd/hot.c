/* hot.c — `plumb hot PROFILE`: what is hot. Leaf and inclusive tables (and grouped ones), per stage when a
 * stage file is given; --json writes the plumb.hot.v1 summary to stdout and nothing else. */
#include "cmd/cmd.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "base/shown.h"
#include "base/err.h"
#include "base/opt.h"
#include "base/sbuf.h"
#include "format/hot_json.h"
#include "profile/label.h"
#include "ui/report.h"
#include "ui/progress.h"

static const char usage[] =
	"plumb hot [PROFILE] [--top N] [--json] [--group-by function|file|module|library] [--module-depth N]\n"
	"                  [--collapse-generics] [--include RE] [--exclude RE] [--repo-only [--root DIR]]\n"
	"                  [--thread RE] [--top-threads N] [--stages FILE] [--syms FILE]";

/* How a weight is shown: time weights (nanoseconds) as milliseconds (one decimal, three under 10 ms), the unit "ms"; every other
 * unit as the integer it is. */
static bool is_time(const char *unit)
{
	return strcmp(unit, "nanoseconds") == 0;
}

static int weight_text(char *buf, size_t n, uint64_t v, const char *unit)
{
	if (is_time(unit)) /* a microsecond shows under 10 ms */
		return snprintf(buf, n, v < 10000000 ? "%.3f" : "%.1f", (double)v / 1e6);
	return snprintf(buf, n, "%llu", (unsigned long long)v);
}

static void print_table(FILE *out, const char *title, const struct hot_table *t, uint64_t total, size_t top,
			const char *unit, const char *what)
{
	size_t n = top && top < t->n ? top : t->n;
	fprintf(out, "%s", title);
	if (n < t->n)
		fprintf(out, " (top %zu of %zu)", n, t->n);
	fputs(":\n", out);
	if (!n) {
		fputs("  (no samples)\n", out);
		return;
	}
	char buf[32];
	const char *head = is_time(unit) ? "ms" : unit;
	int w = (int)strlen(head);
	for (size_t i = 0; i < n; i++) {
		int l = weight_text(buf, sizeof buf, t->rows[i].count, unit);
		if (l > w)
			w = l;
	}
	fprintf(out, "  %*s   share  %s\n", w, head, what);
	for (size_t i = 0; i < n; i++) {
		double share = total ? 100.0 * (double)t->rows[i].count / (double)total : 0;
		weight_text(buf, sizeof buf, t->rows[i].count, unit);
		fprintf(out, "  %*s  %5.1f%%  ", w, buf, share);
		shown_fputs(t->rows[i].name, out); /* names come from the input: escaped (§3.3) */
		fputc('\n', out);
	}
}

static void hot_print_slice(FILE *out, const struct hot_summary *s, const struct hot_slice *sl, size_t top)
{
	const char *unit = s->weight_unit ? s->weight_unit : "samples";
	const char *what = hot_group_name(s->group_by);
	print_table(out, "leaf (self)", &sl->tables[HOT_LEAF], sl->total, top, unit, "function");
	fputc('\n', out);
	print_table(out, "inclusive", &sl->tables[HOT_INCLUSIVE], sl->total, top, unit, "function");
	if (s->group_by != HOT_GROUP_FUNCTION && s->has_grouped) {
		char title[64];
		fputc('\n', out);
		snprintf(title, sizeof title, "leaf by %s", what);
		print_table(out, title, &sl->tables[HOT_GROUPED_LEAF], sl->total, top, unit, what);
		fputc('\n', out);
		snprintf(title, sizeof title, "inclusive by %s", what);
		print_table(out, title, &sl->tables[HOT_GROUPED_INCLUSIVE], sl->total, top, unit, what);
	}
	if (sl->attributed < sl->total)
		fprintf(out, "\n(%llu of %llu %s had no frame that passed the filters)\n",
			(unsigned long long)(sl->total - sl->attributed), (unsigned long long)sl->total, unit);
}

static void print_summary(FILE *out, const struct hot_summary *s, size_t top)
{
	const char *unit = s->weight_unit ? s->weight_unit : "samples";
	bool one = s->all.total == 1 && strcmp(unit, "samples") == 0; /* "1 sample", not "1 samples" */
	shown_fputs(s->source ? s->source : "profile", out);
	fprintf(out, " (%s): ", s->format ? s->format : "?");
	char ms[32];
	weight_text(ms, sizeof ms, s->all.total, unit);
	if (is_time(unit) && !s->all.samples) /* a time whose number of samples is not known (an evented profile) */
		fprintf(out, "%s ms", ms);
	else if (is_time(unit)) /* a time and its sample count, both (perf script with periods) */
		fprintf(out, "%s ms (%llu sample%s)", ms, (unsigned long long)s->all.samples, s->all.samples == 1 ? "" : "s");
	else
		fprintf(out, "%llu %s", (unsigned long long)s->all.total, one ? "sample" : unit);
	if (!is_time(unit) && strcmp(unit, "samples") == 0 && s->interval_ns) /* what the samples stand for */
		fprintf(out, " (%.1f ms at one per %.3g ms)", (double)s->all.total * (double)s->interval_ns / 1e6,
			(double)s->interval_ns / 1e6);
	fprintf(out, " in %zu thread%s\n\n", s->nthreads, s->nthreads == 1 ? "" : "s");
	if (s->nthreads > 1) {
		size_t n = top && top < s->nthreads ? top : s->nthreads;
		const char *head = is_time(unit) ? "ms" : unit;
		int w = (int)strlen(head);
		char buf[32];
		for (size_t i = 0; i < n; i++) {
			int l = weight_text(buf, sizeof buf, s->threads[i].count, unit);
			if (l > w)
				w = l;
		}
		fputs("threads:\n", out);
		fprintf(out, "  %*s   share  thread\n", w, head);
		for (size_t i = 0; i < n; i++) {
			const struct hot_thread_row *t = &s->threads[i];
			double share = s->all.total ? 100.0 * (double)t->count / (double)s->all.total : 0;
			weight_text(buf, sizeof buf, t->count, unit);
			fprintf(out, "  %*s  %5.1f%%  ", w, buf, share);
			shown_fputs(t->name, out);
			fprintf(out, " (%u)\n", t->tid);
		}
		fputc('\n', out);
	}
	if (!s->nstages) {
		hot_print_slice(out, s, &s->all, top);
		return;
	}
	for (size_t i = 0; i < s->nstages; i++) {
		const struct hot_slice *sl = &s->stages[i];
		char w[32];
		weight_text(w, sizeof w, sl->total, unit);
		fprintf(out, "%s== stage ", i ? "\n" : "");
		shown_fputs(sl->name, out);
		fprintf(out, " [%.1f ms, %.1f ms): %s %s ==\n", sl->start_ms, sl->end_ms, w, is_time(unit) ? "ms" : unit);
		hot_print_slice(out, s, sl, top);
	}
}

/* What `plumb hot` works on: its options as parsed. The summary options are shared with record --summary. */
struct hot_cmd {
	struct cmd_summary sum;
	bool json, no_lines, full_names;
	const char *stages, *syms, *sample_index, *weight;
};

/* --json: the plumb.hot.v1 summary on stdout. Returns an exit code. */
static int hot_print_json(const struct hot_summary *s, size_t top)
{
	struct sbuf sb = SBUF_INIT;
	int rc = EXIT_DONE;
	fmt_hot_json_write(&sb, s, top);
	if (sb.oom)
		rc = perr_fail(EXIT_FAILED, "hot: out of memory");
	else if (fwrite(sb.buf, 1, sb.len, stdout) != sb.len)
		rc = perr_fail(EXIT_OUTPUT, "hot: cannot write to stdout");
	sbuf_release(&sb);
	return rc;
}

int cmd_hot(int argc, char **argv)
{
	struct hot_cmd h = { .sum = CMD_SUMMARY_INIT };
	const struct opt opts[] = {
		CMD_SUMMARY_OPTS(h.sum),
		OPT_BOOL("json", 0, &h.json, "write the plumb.hot.v1 summary to stdout"),
		OPT_STRING("stages", 0, &h.stages, "FILE", "one table per stage (plumb.stages.v1)"),
		OPT_STRING("syms", 0, &h.syms, "FILE", "samply symbol sidecar (default: found beside the profile)"),
		OPT_BOOL("no-lines", 0, &h.no_lines, "filters see labels without line numbers"),
		OPT_BOOL("full-names", 0, &h.full_names, "the full C++ signature in labels (default: ns::Class::method)"),
		OPT_STRING("sample-index", 0, &h.sample_index, "N|TYPE", "pprof input: the sample type to read; "
			   "perf.data: the event (index or name)"),
		CMD_WEIGHT_OPT(h.weight),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, usage, "Leaf (self) and inclusive hot tables of a profile (default: " CMD_DEFAULT_PROFILE
						   ", what plumb record writes).", argc, argv, &res,
			       &rc))
		return rc;
	struct hot_opts o = HOT_OPTS_INIT;
	struct hot_summary *s = NULL;
	const char *input = cmd_profile_arg(&res, "hot", &rc);
	if (input)
		rc = cmd_summary_apply(&h.sum, "hot", &o);
	if (input && !rc)
		cmd_weight_apply("hot", h.weight, &h.sample_index, &rc);
	if (!rc) {
		o.label_flags = (h.no_lines ? LABEL_NO_LINES : 0) | (h.full_names ? 0 : LABEL_SHORT_NAMES);
		struct hot_load_opts lo = { h.syms, h.stages, (size_t)h.sum.top, h.sample_index };
		struct perr e = PERR_INIT;
		o.progress = cmd_progress_new("hot", input, h.json);
		if (hot_summary_from_file(input, &lo, &o, &s, &e))
			rc = perr_report(&e);
		progress_end(o.progress);
	}
	if (!rc && h.json)
		rc = hot_print_json(s, h.sum.top_seen ? (size_t)h.sum.top : 0);
	else if (!rc)
		print_summary(stdout, s, (size_t)h.sum.top);
	hot_summary_free(s);
	cmd_summary_release(&h.sum);
	opt_result_release(&res);
	return rc;
}
