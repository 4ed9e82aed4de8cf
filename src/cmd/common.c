/* common.c — shared command plumbing: option parsing with the uniform --help and error behaviour, warnings and
 * redacted messages. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/opt.h"
#include "base/redact.h"
#include "format/format.h"

bool cmd_parse_options(const struct opt *opts, const char *usage, const char *description, int argc, char **argv,
		       struct opt_result *res, int *exit_code)
{
	struct perr e = PERR_INIT;
	switch (opt_parse(opts, argc, argv, res, &e)) {
	case OPT_OK:
		return true;
	case OPT_HELP:
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

void cmd_warn_to_stderr(void *ctx, const char *msg)
{
	(void)ctx;
	plumb_warn("%s", msg);
}

char *cmd_shown_text(const char *s)
{
	char *r = redact_dup(s);
	return r ? r : strdup("?");
}

int cmd_report_redacted(struct perr *e)
{
	char *r = redact_dup(e->msg);
	if (r) {
		snprintf(e->msg, sizeof e->msg, "%s", r);
		free(r);
	}
	return perr_report(e);
}

int cmd_fail_shown(int exit_code, const char *fmt, const char *text)
{
	char *shown = cmd_shown_text(text);
	int rc = plumb_fail(exit_code, fmt, shown);
	free(shown);
	return rc;
}

void cmd_collapse_apply(const struct cmd_collapse *c, struct fmt_read_opts *ro)
{
	ro->pid = c->pid;
	ro->tid = c->tid;
	ro->kernel = c->kernel || c->all;
	ro->jit = c->jit || c->all;
	ro->addrs = c->addrs;
	ro->sample_index = c->sample_index;
}
