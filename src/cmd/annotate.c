/* annotate.c — `plumb annotate PROFILE FUNCTION` (docs/design.md §6.8): where inside the functions a regular
 * expression names the samples fall — per source line, inlined callees under the lines that inlined them, and with
 * --asm per instruction. --json writes plumb.annotate.v1 to stdout and nothing else; --html writes a page. */
#include "cmd/cmd.h"

#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "analyze/annotate.h"
#include "base/err.h"
#include "base/opt.h"
#include "base/sbuf.h"
#include "format/format.h"
#include "os/atomic.h"
#include "render/annotate.h"

static const char usage[] = "plumb annotate PROFILE FUNCTION [--asm] [--json] [--context N] [--source-root DIR] "
			    "[--html PATH] [--width N]";

static size_t terminal_width(long asked)
{
	if (asked > 0)
		return (size_t)asked;
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 60)
		return ws.ws_col;
	return 80;
}

static int write_out(const struct sbuf *sb, const char *html_path)
{
	if (sb->oom)
		return perr_fail(EXIT_INPUT, "annotate: out of memory");
	if (html_path) {
		struct perr e = PERR_INIT;
		if (atomic_write_file(html_path, sb->buf, sb->len, &e))
			return cmd_report_redacted(&e);
		return EXIT_DONE;
	}
	if (fwrite(sb->buf, 1, sb->len, stdout) != sb->len)
		return perr_fail(EXIT_OUTPUT, "annotate: cannot write to stdout");
	return EXIT_DONE;
}

int cmd_annotate(int argc, char **argv)
{
	bool json = false, disassemble = false;
	long context = 3, width = 0;
	const char *source_root = NULL, *html_path = NULL, *sample_index = NULL;
	const struct opt opts[] = {
		OPT_BOOL("asm", 0, &disassemble, "also the function's instructions (disassembled), with their samples"),
		OPT_BOOL("json", 0, &json, "write the plumb.annotate.v1 document to stdout"),
		OPT_LONG("context", 'C', &context, "N", "source lines shown around the lines with samples (default 3)"),
		OPT_STRING("source-root", 0, &source_root, "DIR",
			   "look sources up under DIR by the tail of the path the profile has"),
		OPT_STRING("html", 0, &html_path, "PATH", "write an HTML page of the annotation to PATH"),
		OPT_LONG("width", 0, &width, "N", "columns of the terminal view (default: the terminal's, else 80)"),
		OPT_STRING("sample-index", 0, &sample_index, "N|TYPE",
			   "pprof input: the sample type to read; perf.data: the event (index or name)"),
		OPT_END(),
	};
	struct opt_result res;
	int code;
	if (!cmd_parse_options(opts, usage,
			       "Where inside a function the samples fall: its source lines with self and inclusive "
			       "samples, inlined callees under the lines that inlined them, and with --asm its "
			       "instructions. FUNCTION is a regular expression on frame labels (`gzip+0x4710` names a "
			       "function by its offset).",
			       argc, argv, &res, &code))
		return code;
	if (res.npos != 2) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "annotate: give a PROFILE and a FUNCTION (usage: %s)", usage);
	}
	if (context < 0 || context > 10000 || width < 0 || (width && width < 60) || width > 10000) {
		opt_result_release(&res);
		return perr_fail(EXIT_USAGE, "annotate: --context must be 0-10000 and --width 60-10000");
	}
	const char *input = res.pos[0], *func = res.pos[1];
	struct fmt_read_opts ro = { 0 };
	ro.lenient = true;
	ro.warn = cmd_warn_to_stderr;
	ro.sample_index = sample_index;
	ro.source_path = input;
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	struct annot_result *r = NULL;
	if (fmt_read_file(input, FMT_UNKNOWN, &ro, &p, &e) || annot_analyze(p, func, &r, &e)) {
		profile_free(p);
		opt_result_release(&res);
		return cmd_report_redacted(&e);
	}
	struct annot_code_opts co = { disassemble, source_root, (unsigned)context };
	if (annot_add_code(r, &co, &e)) {
		annot_result_free(r);
		profile_free(p);
		opt_result_release(&res);
		return cmd_report_redacted(&e);
	}
	if (!r->n) {
		annot_result_free(r);
		profile_free(p);
		code = cmd_fail_shown(EXIT_USAGE, "annotate: no function of the profile matches '%s'", func);
		opt_result_release(&res);
		return code;
	}
	struct sbuf sb = SBUF_INIT;
	if (json)
		render_annot_json(&sb, r);
	else
		render_annot_text(&sb, r, terminal_width(width));
	code = write_out(&sb, NULL);
	if (!code && html_path) {
		sbuf_reset(&sb);
		render_annot_html(&sb, r, func);
		code = write_out(&sb, html_path);
	}
	sbuf_release(&sb);
	annot_result_free(r);
	profile_free(p);
	opt_result_release(&res);
	return code;
}
