/* common.c — shared command plumbing: option parsing with the uniform --help and error behaviour, warnings and
 * redacted messages. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err.h"
#include "base/opt.h"
#include "base/redact.h"
#include "base/shown.h"
#include "base/sbuf.h"
#include "analyze/analyze.h"
#include "format/format.h"
#include "ui/report.h"
#include "ui/progress.h"

void (*cmd_help_hook)(void *ctx, const char *usage, const char *description, const struct opt *opts);
void *cmd_help_hook_ctx;

bool cmd_parse_options(const struct opt *opts, const char *usage, const char *description, int argc, char **argv,
		       struct opt_result *res, int *exit_code)
{
	struct perr e = PERR_INIT;
	switch (opt_parse(opts, argc, argv, res, &e)) {
	case OPT_OK:
		return true;
	case OPT_HELP:
		if (cmd_help_hook)
			cmd_help_hook(cmd_help_hook_ctx, usage, description, opts);
		else
			opt_usage(stdout, usage, description, opts);
		opt_result_release(res);
		*exit_code = EXIT_DONE;
		return false;
	case OPT_ERROR:
	default:
		opt_result_release(res);
		*exit_code = perr_report(&e);
		return false;
	}
}

static void sub_usage(FILE *out, const char *cmd, const struct cmd_sub *subs)
{
	fprintf(out, "usage: plumb %s SUBCOMMAND [OPTIONS]\n\nsubcommands:\n", cmd);
	for (const struct cmd_sub *s = subs; s->name; s++)
		fprintf(out, "  %-13s %s\n", s->name, s->summary);
	fprintf(out, "\n`plumb %s SUBCOMMAND --help` shows its options.\n", cmd);
}

int cmd_dispatch_sub(const char *cmd, const struct cmd_sub *subs, int argc, char **argv)
{
	if (argc < 2) {
		sub_usage(stderr, cmd, subs);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		sub_usage(stdout, cmd, subs);
		return EXIT_DONE;
	}
	for (const struct cmd_sub *s = subs; s->name; s++)
		if (strcmp(s->name, argv[1]) == 0)
			return s->fn(argc - 1, argv + 1);
	return perr_fail(EXIT_USAGE, "%s: '%s' is not a %s subcommand (see plumb %s --help)", cmd, argv[1], cmd, cmd);
}

/* A word as a shell reads it back: as it is when it has nothing special, else in single quotes. */
static void add_shell_word(struct sbuf *sb, const char *w)
{
	if (*w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+-@%") == strlen(w)) {
		sbuf_addstr(sb, w);
		return;
	}
	sbuf_addch(sb, '\'');
	for (; *w; w++)
		if (*w == '\'')
			sbuf_addstr(sb, "'\\''");
		else
			sbuf_addch(sb, *w);
	sbuf_addch(sb, '\'');
}

bool cmd_parse_command_options(const struct opt *opts, const char *usage, const char *description, const char *who,
			       int argc, char **argv, struct opt_result *res, int *exit_code)
{
	struct perr e = PERR_INIT;
	if (opt_parse(opts, argc, argv, res, &e) != OPT_ERROR) {
		opt_result_release(res);
		return cmd_parse_options(opts, usage, description, argc, argv, res, exit_code);
	}
	opt_result_release(res);
	/* parsed up to the first word that is not an option: is that word a command missing its `--`? */
	struct opt_result pre;
	struct perr pe = PERR_INIT;
	if (opt_parse_prefix(opts, argc, argv, &pre, &pe) == OPT_OK && pre.npos > 0 && pre.dashdash != 0 &&
	    pre.pos[0][0] != '-') {
		struct sbuf cmd = SBUF_INIT;
		for (int i = 0; i < pre.npos && i < 3; i++) {
			if (i)
				sbuf_addch(&cmd, ' ');
			add_shell_word(&cmd, pre.pos[i]);
		}
		if (pre.npos > 3)
			sbuf_addstr(&cmd, " ...");
		char *shown = cmd_shown_text(cmd.buf);
		*exit_code = perr_fail(EXIT_USAGE, "%s: %s; put the command after `--`: plumb %s [OPTIONS] -- %s", who,
					e.msg, who, shown);
		free(shown);
		sbuf_release(&cmd);
	} else {
		*exit_code = perr_report(&e);
	}
	opt_result_release(&pre);
	return false;
}

const char *cmd_profile_arg(const struct opt_result *res, const char *who, int *exit_code)
{
	if (res->npos == 1)
		return res->pos[0];
	if (res->npos > 1) {
		*exit_code = perr_fail(EXIT_USAGE, "%s: give one PROFILE (see plumb %s --help)", who, who);
		return NULL;
	}
	if (access(CMD_DEFAULT_PROFILE, F_OK) == 0)
		return CMD_DEFAULT_PROFILE;
	*exit_code = perr_fail(EXIT_MISSING, "%s: give a PROFILE; there is no %s here (what plumb record writes by "
					     "default)", who, CMD_DEFAULT_PROFILE);
	return NULL;
}

void cmd_warn_to_stderr(void *ctx, const char *msg)
{
	(void)ctx;
	perr_warn("%s", msg);
}

char *cmd_shown_text(const char *s)
{
	char *r = redact_dup_message(s);
	if (!r)
		return strdup("?");
	/* and escaped: the text is for a person, on stderr or a report on stdout (§3.3) */
	size_t n = strlen(r), cap = n * SHOWN_ESC_MAX + 64;
	char *shown = malloc(cap);
	if (shown)
		shown_escape(shown, cap, r, n, n);
	free(r);
	return shown ? shown : strdup("?");
}

struct progress *cmd_progress_new(const char *command, const char *path, bool quiet)
{
	char *shown = cmd_shown_text(path);
	char label[256];
	snprintf(label, sizeof label, "%s %s", command, shown ? shown : "?");
	free(shown);
	return progress_new(label, quiet ? PROGRESS_QUIET : 0);
}

int cmd_report_redacted(struct perr *e)
{
	char *r = redact_dup_message(e->msg);
	if (r) {
		snprintf(e->msg, sizeof e->msg, "%s", r);
		free(r);
	}
	return perr_report(e);
}

int cmd_fail_shown(int exit_code, const char *fmt, const char *text)
{
	char *shown = cmd_shown_text(text);
	int rc = perr_fail(exit_code, fmt, shown);
	free(shown);
	return rc;
}

int cmd_summary_apply(struct cmd_summary *c, const char *who, struct hot_opts *o)
{
	if (!hot_group_from_name(c->group_by, &o->group_by))
		return perr_fail(EXIT_USAGE, "%s: --group-by must be function, file, module or library, not '%s'", who,
				  c->group_by);
	if (c->top < 0 || c->module_depth < 1 || c->module_depth > 64 || c->top_threads < 0)
		return perr_fail(EXIT_USAGE, "%s: --top and --top-threads must be >= 0 and --module-depth 1 to 64", who);
	if (c->repo_only || c->root) {
		c->root_buf = c->root ? realpath(c->root, NULL) : hot_git_toplevel();
		if (!c->root_buf && c->root)
			return perr_fail(EXIT_USAGE, "%s: --root %s: no such directory", who, c->root);
		if (!c->root_buf)
			return perr_fail(EXIT_USAGE, "%s: --repo-only: the current directory is not in a git repository; "
						      "pass --root DIR", who);
	}
	o->module_depth = (int)c->module_depth;
	o->collapse_generics = c->collapse;
	o->include = c->include.v;
	o->ninclude = c->include.n;
	o->exclude = c->exclude.v;
	o->nexclude = c->exclude.n;
	o->repo_only = c->repo_only;
	o->root = c->root_buf;
	o->thread_re = c->thread;
	o->top_threads = (int)c->top_threads;
	o->warn = cmd_warn_to_stderr;
	return EXIT_DONE;
}

bool cmd_summary_given(const struct cmd_summary *c)
{
	const struct cmd_summary d = CMD_SUMMARY_INIT;
	return c->top_seen || c->module_depth != d.module_depth || c->top_threads || c->collapse || c->repo_only ||
	       strcmp(c->group_by, d.group_by) != 0 || c->root || c->thread || c->include.n || c->exclude.n;
}

void cmd_summary_release(struct cmd_summary *c)
{
	free(c->root_buf);
	c->root_buf = NULL;
	opt_list_release(&c->include);
	opt_list_release(&c->exclude);
}

bool cmd_weight_apply(const char *who, const char *weight, const char **sample_index, int *rc)
{
	static const char *const names[][2] = { { "alloc", "alloc_space" }, { "inuse", "inuse_space" },
						{ "peak", "peak_space" }, { "freed", "freed_space" } };
	if (!weight)
		return true;
	if (*sample_index) {
		*rc = perr_fail(EXIT_USAGE, "%s: give --weight or --sample-index, not both", who);
		return false;
	}
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(weight, names[i][0]) == 0) {
			*sample_index = names[i][1];
			return true;
		}
	*rc = perr_fail(EXIT_USAGE, "%s: --weight must be alloc, inuse, peak or freed", who);
	return false;
}

void cmd_collapse_apply(const struct cmd_collapse *c, struct fmt_read_opts *ro)
{
	ro->pid = c->pid;
	ro->tid = c->tid;
	ro->kernel = c->kernel || c->all;
	ro->jit = c->jit || c->all;
	ro->addrs = c->addrs;
	ro->sample_index = c->sample_index;
	if (c->weight) /* cmd_weight_apply checked it */
		cmd_weight_apply("", c->weight, &ro->sample_index, &(int){ 0 });
}
