/* flame.c — `plumb flame PROFILE -o out.svg` (docs/design.md §6.4): any profile plumb reads, drawn as an interactive
 * flame graph (src/render/flame.c). Folded input is read leniently: bad lines are skipped with one warning.
 * A two-column differential folded file (`plumb diff --folded`) draws a differential graph by itself. */
#include "cmd/cmd.h"
#include "cmd/annotate.h"

#include <string.h>

#include "base/err.h"
#include "base/opt.h"
#include "format/diff_folded.h"
#include "format/format.h"
#include "profile/label.h"
#include "render/output.h"
#include "ui/report.h"
#include "ui/progress.h"

/* Reads a profile for drawing; a two-column differential folded file yields both sides. */
static int load(const char *path, const struct fmt_read_opts *ro, struct profile **after, struct profile **before)
{
	struct fmt_source in;
	struct perr e = PERR_INIT;
	const char *head;
	size_t hlen;
	enum plumb_err rc = fmt_source_open(&in, path, &e);
	if (!rc)
		rc = fmt_stream_head(in.st, 4096, &head, &hlen, &e);
	if (!rc && in.kind == FMT_FOLDED && fmt_diff_folded_is_two_column(head, hlen)) {
		rc = fmt_diff_folded_read_stream(in.st, ro, before, after, &e);
	} else if (!rc) {
		rc = fmt_source_read(&in, FMT_UNKNOWN, ro, after, &e);
	}
	fmt_source_close(&in);
	if (rc) {
		if (!strstr(e.msg, path)) {
			char tmp[PERR_MSG_MAX];
			snprintf(tmp, sizeof tmp, "%s: %s", path, e.msg);
			memcpy(e.msg, tmp, sizeof tmp);
		}
		return perr_report(&e);
	}
	return EXIT_DONE;
}

int cmd_flame(int argc, char **argv)
{
	const char *output = "-", *title = NULL, *diff = NULL, *colors = "hot", *annotate_dir = NULL;
	bool inverted = false, reverse = false, flamechart = false, no_lines = false, full_names = false;
	struct cmd_collapse collapse = { 0 };
	long width = 1200;
	double min_width = 0.1;
	const struct opt opts[] = {
		OPT_STRING("output", 'o', &output, "PATH", "where to write the SVG (default: stdout)"),
		OPT_STRING("title", 0, &title, "TEXT", "the graph's title"),
		OPT_STRING("diff", 0, &diff, "BEFORE", "differential: colour by the change from BEFORE (red grew, "
			   "blue shrank); widths are PROFILE's"),
		OPT_BOOL("inverted", 0, &inverted, "icicle graph: the root at the top, callees below"),
		OPT_BOOL("reverse", 0, &reverse,
			 "reverse the stacks and merge them from the leaf: each leaf at the base, its callers above"),
		OPT_BOOL("flamechart", 0, &flamechart, "time order instead of merged, sorted stacks"),
		OPT_LONG("width", 0, &width, "PX", "image width in pixels (default 1200)"),
		OPT_DOUBLE("min-width", 0, &min_width, "PX", "leave out boxes narrower than this (default 0.1)"),
		OPT_STRING("colors", 0, &colors, "PALETTE", "hot (default), mem, io, wakeup, chain, java, js, perl, "
			   "red, green, blue, aqua, yellow, purple, orange"),
		OPT_BOOL("no-lines", 0, &no_lines, "drop line numbers so one function is one frame"),
		OPT_STRING("annotate-dir", 0, &annotate_dir, "DIR", "also write an annotation page per hot function "
			   "(plumb annotate) into DIR; a shift-click on a box opens its function's page"),
		OPT_BOOL("full-names", 0, &full_names, "the full C++ signature in labels (default: ns::Class::method)"),
		CMD_COLLAPSE_OPTS(collapse),
		OPT_END(),
	};
	struct opt_result res;
	int code;
	if (!cmd_parse_options(opts, "plumb flame [PROFILE] [-o out.svg] [--title T] [--diff BEFORE] [--inverted] "
				     "[--reverse] [--flamechart] [--width PX] [--min-width PX] [--colors PALETTE]",
			       "Draw an interactive flame graph (SVG): hover for samples and share, click to zoom, "
			       "search with Ctrl-F. PROFILE defaults to " CMD_DEFAULT_PROFILE ", what plumb record writes.",
			       argc, argv, &res, &code))
		return code;
	const char *input = cmd_profile_arg(&res, "flame", &code);
	if (!input) {
		opt_result_release(&res);
		return code;
	}
	const char *list;
	if (width < 100 || width > 100000)
		code = perr_fail(EXIT_USAGE, "flame: --width must be between 100 and 100000 pixels (got %ld)", width);
	else if (!(min_width >= 0 && min_width <= 1000))
		code = perr_fail(EXIT_USAGE, "flame: --min-width must be between 0 and 1000 pixels");
	else if (!flame_palette_valid(colors, &list))
		code = perr_fail(EXIT_USAGE, "flame: unknown palette '%s' (one of: %s)", colors, list);
	else if (diff && flamechart)
		code = perr_fail(EXIT_USAGE, "flame: --diff draws merged stacks; it cannot be combined with --flamechart");
	else if (reverse && flamechart)
		code = perr_fail(EXIT_USAGE, "flame: --reverse merges stacks from the leaf; a --flamechart keeps time order");
	else if (strcmp(output, "-") != 0 && fmt_from_path(output) != FMT_SVG &&
		 (fmt_from_path(output) != FMT_UNKNOWN || fmt_path_ext_unknown(output)))
		code = perr_fail(EXIT_USAGE, "flame: writes an SVG flame graph, not '%s': name it .svg (`plumb convert` "
					      "writes the other formats)", output);
	else if (!cmd_weight_apply("flame", collapse.weight, &(const char *){ collapse.sample_index }, &code))
		;
	else
		code = EXIT_DONE;
	if (code) {
		opt_result_release(&res);
		return code;
	}
	struct fmt_read_opts ro = { 0 };
	cmd_collapse_apply(&collapse, &ro);
	ro.keep_timeline = flamechart;
	ro.lenient = true;
	ro.warn = cmd_warn_to_stderr;
	struct profile *after = NULL, *before = NULL, *before2 = NULL;
	struct progress *line = cmd_progress_new("flame", input, false);
	code = load(input, &ro, &after, &before);
	if (!code && diff) {
		struct profile *unused = NULL;
		code = load(diff, &ro, &before2, &unused);
		profile_free(unused);
		if (!code) {
			profile_free(before);
			before = before2;
		}
	}
	opt_result_release(&res);
	if (code) {
		progress_end(line);
		profile_free(after);
		profile_free(before);
		return code;
	}
	struct cmd_annotate_links links = { 0 };
	if (annotate_dir && (code = cmd_annotate_pages(after, annotate_dir, &links)) != 0) {
		progress_end(line);
		profile_free(after);
		profile_free(before);
		return code;
	}
	struct flame_opts fo = { 0 };
	fo.annotate_link = annotate_dir ? cmd_annotate_link : NULL;
	fo.annotate_ctx = &links;
	fo.progress = line;
	fo.title = title;
	fo.width = (unsigned)width;
	fo.min_width = min_width;
	fo.inverted = inverted;
	fo.reverse = reverse;
	fo.flamechart = flamechart;
	fo.colors = colors;
	fo.before = before;
	fo.label_flags = (no_lines ? LABEL_NO_LINES : 0) | (full_names ? 0 : LABEL_SHORT_NAMES);
	struct perr e = PERR_INIT;
	enum plumb_err rc = render_write_file(after, output, FMT_SVG, NULL, &fo, &e);
	progress_end(line);
	profile_free(after);
	profile_free(before);
	cmd_annotate_links_release(&links);
	return rc ? perr_report(&e) : EXIT_DONE;
}
