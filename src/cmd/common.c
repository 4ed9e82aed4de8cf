/* common.c — shared command plumbing: option parsing with the uniform --help and error behaviour. */
#include "cmd/cmd.h"

#include <stdio.h>

#include "base/err.h"
#include "base/opt.h"

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
