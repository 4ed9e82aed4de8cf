/* annotate.c — `plumb annotate PROFILE FUNCTION` (docs/design.md §6.8): where inside the functions a regular
 * expression names the samples fall — per source line, inlined callees under the lines that inlined them, and with
 * --asm per instruction. --json writes plumb.annotate.v1 to stdout and nothing else; --html writes a page. */
#include "cmd/cmd.h"
#include "cmd/annotate.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "analyze/annotate.h"
#include "base/err.h"
#include "base/opt.h"
#include "base/sbuf.h"
#include "format/format.h"
#include "os/atomic.h"
#include "os/fs.h"
#include "profile/label.h"
#include "render/annotate.h"
#include "ui/report.h"

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
	struct annot_code_opts co = { disassemble, source_root, (unsigned)context, 0 };
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

int cmd_annotate_pages(const struct profile *p, const char *dir, struct cmd_annotate_links *links)
{
	memset(links, 0, sizeof *links);
	struct perr e = PERR_INIT;
	struct annot_result *r = NULL;
	if (fs_mkdirs(dir, 0700, &e) || annot_analyze(p, ".", &r, &e))
		return cmd_report_redacted(&e);
	size_t n = 0;
	while (n < r->n && n < CMD_ANNOTATE_PAGES && r->funcs[n].incl && r->funcs[n].incl * 100 >= r->total)
		n++;
	struct annot_code_opts co = { true, NULL, 3, n };
	int code = EXIT_DONE;
	links->keys = calloc(n ? n : 1, sizeof *links->keys);
	links->paths = calloc(n ? n : 1, sizeof *links->paths);
	if (!links->keys || !links->paths)
		code = perr_fail(EXIT_INPUT, "flame: out of memory");
	else if (n && annot_add_code(r, &co, &e))
		code = cmd_report_redacted(&e);
	struct sbuf sb = SBUF_INIT, path = SBUF_INIT;
	for (size_t i = 0; !code && i < n; i++) {
		struct annot_result one = *r;
		one.funcs = &r->funcs[i];
		one.n = 1;
		sbuf_reset(&sb);
		sbuf_reset(&path);
		render_annot_html(&sb, &one, r->funcs[i].label);
		sbuf_addf(&path, "%s/f%zu.html", dir, i);
		if (path.oom || !(links->keys[i] = strdup(r->funcs[i].label)) || !(links->paths[i] = strdup(path.buf))) {
			code = perr_fail(EXIT_INPUT, "flame: out of memory");
			break;
		}
		links->n = i + 1;
		code = write_out(&sb, path.buf);
	}
	sbuf_release(&sb);
	sbuf_release(&path);
	annot_result_free(r);
	if (code)
		cmd_annotate_links_release(links);
	return code;
}

const char *cmd_annotate_link(void *ctx, const char *label, size_t len)
{
	const struct cmd_annotate_links *links = ctx;
	struct label_parts lp;
	label_parse(label, len, &lp);
	struct sbuf key = SBUF_INIT;
	label_render(&key, &lp, LABEL_NO_LINES | LABEL_NO_SUFFIX);
	const char *found = NULL;
	for (size_t i = 0; !found && i < links->n; i++)
		if (strcmp(links->keys[i], key.buf) == 0)
			found = links->paths[i];
	sbuf_release(&key);
	return found;
}

void cmd_annotate_links_release(struct cmd_annotate_links *links)
{
	for (size_t i = 0; i < links->n; i++) {
		free(links->keys[i]);
		free(links->paths[i]);
	}
	free(links->keys);
	free(links->paths);
	memset(links, 0, sizeof *links);
}
