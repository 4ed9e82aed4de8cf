/* convert.c — `plumb convert INPUT -o OUTPUT [--from FMT] [--to FMT]` (docs/design.md §6.5): any format plumb reads
 * into any format it writes, through the one profile model (§6.7). `-` is stdin/stdout. The stackcollapse-perf
 * options (--pid --tid --kernel --jit --all --addrs) shape frames read from `perf script` text, --sample-index
 * picks a pprof input's sample type. */
#include "cmd/cmd.h"

#include <string.h>

#include "base/err.h"
#include "base/opt.h"
#include "format/format.h"
#include "profile/label.h"
#include "render/output.h"
#include "ui/report.h"
#include "ui/progress.h"

int cmd_convert(int argc, char **argv)
{
	const char *output = NULL, *from = NULL, *to = NULL;
	struct cmd_collapse collapse = { 0 };
	bool no_lines = false, short_names = false;
	bool threads = false, addresses = false;
	const struct opt opts[] = {
		OPT_STRING("output", 'o', &output, "PATH", "where to write (`-` for stdout)"),
		OPT_STRING("from", 0, &from, "FMT", "input format: folded, gecko, gecko-raw, speedscope, pprof, "
			   "perf-script, perf-data, cpuprofile, chrome-trace, heapprofile (default: sniffed from the content)"),
		OPT_STRING("to", 0, &to, "FMT", "output format: folded, gecko, speedscope, pprof, svg "
			   "(default: from the output's extension)"),
		CMD_COLLAPSE_OPTS(collapse),
		OPT_BOOL("threads", 0, &threads, "folded output: a root frame per thread"),
		OPT_BOOL("no-lines", 0, &no_lines, "drop line numbers from labels"),
		OPT_BOOL("addresses", 0, &addresses, "folded output: each frame's instruction address (label@0xADDR)"),
		OPT_BOOL("short-names", 0, &short_names, "C++ names as ns::Class::method (default: names as read)"),
		OPT_END(),
	};
	struct opt_result res;
	int code;
	if (!cmd_parse_options(opts, "plumb convert INPUT -o OUTPUT [--from FMT] [--to FMT] [options]",
			       "Convert a profile between formats. INPUT `-` reads stdin, OUTPUT `-` writes stdout.", argc,
			       argv, &res, &code))
		return code;
	const char *input = res.npos >= 1 ? res.pos[0] : NULL;
	if (res.npos != 1) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "convert: give exactly one INPUT (see `plumb convert --help`)");
	}
	if (!output) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "convert: say where to write with -o OUTPUT (`-o -` for stdout)");
	}
	enum fmt_kind in_kind = FMT_UNKNOWN, out_kind = FMT_UNKNOWN;
	if (from && ((in_kind = fmt_from_name(from)) == FMT_UNKNOWN || in_kind == FMT_SVG)) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "convert: unknown input format '%s' (folded, gecko, gecko-raw, "
					      "speedscope, pprof, perf-script, perf-data, cpuprofile, chrome-trace, heapprofile)", from);
	}
	if (to) {
		out_kind = fmt_from_name(to);
		if (out_kind == FMT_UNKNOWN || out_kind == FMT_PERF_SCRIPT || out_kind == FMT_HOT_JSON ||
		    out_kind == FMT_PERF_DATA) {
			opt_result_release(&res);
			return perr_fail(EXIT_USAGE, "convert: unknown output format '%s' (folded, gecko, speedscope, "
						      "pprof, svg)", to);
		}
	} else {
		out_kind = strcmp(output, "-") == 0 ? FMT_FOLDED : fmt_from_path(output);
		if (out_kind == FMT_UNKNOWN) {
			opt_result_release(&res);
			return perr_fail(EXIT_USAGE, "convert: cannot tell the output format from '%s'; add --to FMT",
					  output);
		}
	}
	int wrc;
	if (!cmd_weight_apply("convert", collapse.weight, &(const char *){ collapse.sample_index }, &wrc)) {
		opt_result_release(&res);
		return wrc;
	}
	struct fmt_read_opts ro = { 0 };
	cmd_collapse_apply(&collapse, &ro);
	ro.keep_timeline = out_kind == FMT_GECKO || out_kind == FMT_SPEEDSCOPE;
	ro.warn = cmd_warn_to_stderr;
	ro.lenient = true; /* folded lines that are not "stack COUNT" are skipped, in one warning */
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	/* a progress line on a terminal for a long read or write (base/progress.h) */
	char label[160];
	snprintf(label, sizeof label, "reading %s", strcmp(input, "-") == 0 ? "stdin" : input);
	struct progress *pr = progress_new(label, strcmp(output, "-") == 0 ? PROGRESS_QUIET : 0);
	ro.progress = pr;
	enum plumb_err rc = fmt_read_file(input, in_kind, &ro, &p, &e);
	opt_result_release(&res);
	if (rc) {
		progress_end(pr);
		return perr_report(&e);
	}
	snprintf(label, sizeof label, "writing %s", output);
	progress_label(pr, label);
	/* folded counts that are not samples say their unit in a "# plumb:" first line (format/folded.c) */
	struct fmt_write_opts wo = { 0 };
	wo.label_flags = (no_lines ? LABEL_NO_LINES : 0) | (short_names ? LABEL_SHORT_NAMES : 0) |
			 (addresses && out_kind == FMT_FOLDED ? LABEL_ADDRESS : 0);
	wo.threads = threads;
	wo.progress = pr;
	rc = render_write_file(p, output, out_kind, &wo, NULL, &e);
	progress_end(pr);
	profile_free(p);
	if (rc)
		return perr_report(&e);
	return EXIT_DONE;
}
