/* hot.c — `plumb hot PROFILE`: what is hot. Leaf and inclusive tables (and grouped ones), per stage when a
 * stage file is given; --json writes the plumb.hot.v1 summary to stdout and nothing else. */
#include "cmd/cmd.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "base/err.h"
#include "base/opt.h"
#include "base/sbuf.h"
#include "format/hot_json.h"
#include "profile/label.h"

static const char usage[] =
	"plumb hot PROFILE [--top N] [--json] [--group-by function|file|module|library] [--module-depth N]\n"
	"                  [--collapse-generics] [--include RE] [--exclude RE] [--repo-only [--root DIR]]\n"
	"                  [--thread RE] [--top-threads N] [--stages FILE] [--syms FILE]";

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
	int w = (int)strlen(unit);
	for (size_t i = 0; i < n; i++) {
		int l = snprintf(buf, sizeof buf, "%llu", (unsigned long long)t->rows[i].count);
		if (l > w)
			w = l;
	}
	fprintf(out, "  %*s   share  %s\n", w, unit, what);
	for (size_t i = 0; i < n; i++) {
		double share = total ? 100.0 * (double)t->rows[i].count / (double)total : 0;
		fprintf(out, "  %*llu  %5.1f%%  %s\n", w, (unsigned long long)t->rows[i].count, share, t->rows[i].name);
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
	fprintf(out, "%s (%s): %llu %s in %zu thread%s\n\n", s->source ? s->source : "profile",
		s->format ? s->format : "?", (unsigned long long)s->all.total, unit, s->nthreads,
		s->nthreads == 1 ? "" : "s");
	if (s->nthreads > 1) {
		size_t n = top && top < s->nthreads ? top : s->nthreads;
		int w = (int)strlen(unit);
		char buf[32];
		for (size_t i = 0; i < n; i++) {
			int l = snprintf(buf, sizeof buf, "%llu", (unsigned long long)s->threads[i].count);
			if (l > w)
				w = l;
		}
		fputs("threads:\n", out);
		fprintf(out, "  %*s   share  thread\n", w, unit);
		for (size_t i = 0; i < n; i++) {
			const struct hot_thread_row *t = &s->threads[i];
			double share = s->all.total ? 100.0 * (double)t->count / (double)s->all.total : 0;
			fprintf(out, "  %*llu  %5.1f%%  %s (%u)\n", w, (unsigned long long)t->count, share, t->name, t->tid);
		}
		fputc('\n', out);
	}
	if (!s->nstages) {
		hot_print_slice(out, s, &s->all, top);
		return;
	}
	for (size_t i = 0; i < s->nstages; i++) {
		const struct hot_slice *sl = &s->stages[i];
		fprintf(out, "%s== stage %s [%.1f ms, %.1f ms): %llu %s ==\n", i ? "\n" : "", sl->name, sl->start_ms,
			sl->end_ms, (unsigned long long)sl->total, unit);
		hot_print_slice(out, s, sl, top);
	}
}

/* What `plumb hot` works on: its options as parsed, and what they become. */
struct hot_cmd {
	long top, module_depth, top_threads;
	bool json, collapse, repo_only, no_lines, top_seen;
	const char *group_by, *root, *thread, *stages, *syms, *sample_index;
	struct opt_list include, exclude;
	char *root_buf; /* the resolved --root (or git top level) */
};

/* Checks the options and resolves the repository root. Returns an exit code. */
static int hot_check_options(struct hot_cmd *h, const struct opt_result *res, struct hot_opts *o)
{
	if (res->npos != 1)
		return plumb_fail(EXIT_USAGE, "hot: expected one PROFILE (see plumb hot --help)");
	if (!hot_group_from_name(h->group_by, &o->group_by))
		return plumb_fail(EXIT_USAGE, "hot: --group-by must be function, file, module or library, not '%s'",
				  h->group_by);
	if (h->top < 0 || h->module_depth < 1 || h->module_depth > 64 || h->top_threads < 0)
		return plumb_fail(EXIT_USAGE, "hot: --top and --top-threads must be >= 0 and --module-depth 1 to 64");
	if (!h->repo_only && !h->root)
		return EXIT_DONE;
	if (!h->root) {
		h->root_buf = hot_git_toplevel();
		if (!h->root_buf)
			return plumb_fail(EXIT_USAGE, "hot: --repo-only: the current directory is not in a git repository; "
						      "pass --root DIR");
		return EXIT_DONE;
	}
	h->root_buf = realpath(h->root, NULL);
	if (!h->root_buf)
		return plumb_fail(EXIT_USAGE, "hot: --root %s: no such directory", h->root);
	return EXIT_DONE;
}

/* The analysis options from the command's. */
static void hot_fill_opts(const struct hot_cmd *h, struct hot_opts *o)
{
	o->module_depth = (int)h->module_depth;
	o->collapse_generics = h->collapse;
	o->include = h->include.v;
	o->ninclude = h->include.n;
	o->exclude = h->exclude.v;
	o->nexclude = h->exclude.n;
	o->repo_only = h->repo_only;
	o->root = h->root_buf;
	o->thread_re = h->thread;
	o->top_threads = (int)h->top_threads;
	o->label_flags = h->no_lines ? LABEL_NO_LINES : 0;
}

/* --json: the plumb.hot.v1 summary on stdout. Returns an exit code. */
static int hot_print_json(const struct hot_summary *s, size_t top)
{
	struct sbuf sb = SBUF_INIT;
	int rc = EXIT_DONE;
	fmt_hot_json_write(&sb, s, top);
	if (sb.oom)
		rc = plumb_fail(EXIT_FAILED, "hot: out of memory");
	else if (fwrite(sb.buf, 1, sb.len, stdout) != sb.len)
		rc = plumb_fail(EXIT_OUTPUT, "hot: cannot write to stdout");
	sbuf_release(&sb);
	return rc;
}

int cmd_hot(int argc, char **argv)
{
	struct hot_cmd h = { .top = 20, .module_depth = 2, .group_by = "function" };
	const struct opt opts[] = {
		{ "top", 'n', OPT_INT, &h.top, "N", "rows per table (default 20; --json keeps every row unless given)",
		  &h.top_seen },
		{ "json", 0, OPT_FLAG, &h.json, NULL, "write the plumb.hot.v1 summary to stdout", NULL },
		{ "group-by", 'g', OPT_STRING, &h.group_by, "KEY", "function, file, module or library", NULL },
		{ "module-depth", 0, OPT_INT, &h.module_depth, "N",
		  "path components (or :: names) a module keeps (default 2)", NULL },
		{ "collapse-generics", 0, OPT_FLAG, &h.collapse, NULL, "fold <...> template/generic arguments", NULL },
		{ "include", 0, OPT_LIST, &h.include, "RE", "keep frames whose label matches (repeatable)", NULL },
		{ "exclude", 0, OPT_LIST, &h.exclude, "RE", "drop frames whose label matches (repeatable)", NULL },
		{ "repo-only", 0, OPT_FLAG, &h.repo_only, NULL, "keep frames whose source file is under --root", NULL },
		{ "root", 0, OPT_STRING, &h.root, "DIR", "repository root (default: git top level of the cwd)", NULL },
		{ "thread", 0, OPT_STRING, &h.thread, "RE", "keep threads whose name matches", NULL },
		{ "top-threads", 0, OPT_INT, &h.top_threads, "N", "keep the N threads with the most samples", NULL },
		{ "stages", 0, OPT_STRING, &h.stages, "FILE", "one table per stage (plumb.stages.v1)", NULL },
		{ "syms", 0, OPT_STRING, &h.syms, "FILE", "samply symbol sidecar (default: found beside the profile)",
		  NULL },
		{ "no-lines", 0, OPT_FLAG, &h.no_lines, NULL, "filters see labels without line numbers", NULL },
		{ "sample-index", 0, OPT_STRING, &h.sample_index, "N|TYPE", "pprof input: the sample type to read "
		  "(index or name)", NULL },
		{ NULL, 0, OPT_END, NULL, NULL, NULL, NULL },
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, usage, "Leaf (self) and inclusive hot tables of a profile.", argc, argv, &res,
			       &rc))
		return rc;
	struct hot_opts o = HOT_OPTS_INIT;
	struct hot_summary *s = NULL;
	rc = hot_check_options(&h, &res, &o);
	if (!rc) {
		hot_fill_opts(&h, &o);
		struct hot_load_opts lo = { h.syms, h.stages, (size_t)h.top, h.sample_index };
		struct perr e = PERR_INIT;
		if (hot_summary_from_file(res.pos[0], &lo, &o, &s, &e))
			rc = perr_report(&e);
	}
	if (!rc && h.json)
		rc = hot_print_json(s, h.top_seen ? (size_t)h.top : 0);
	else if (!rc)
		print_summary(stdout, s, (size_t)h.top);
	hot_summary_free(s);
	free(h.root_buf);
	opt_list_release(&h.include);
	opt_list_release(&h.exclude);
	opt_result_release(&res);
	return rc;
}
