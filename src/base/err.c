/* err.c — error codes, their text and their exit codes: the single place docs/design.md §3.2's table lives. */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum plumb_err perr_set(struct perr *e, enum plumb_err code, const char *fmt, ...)
{
	if (!e)
		return code;
	e->code = code;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof e->msg) /* say it was cut (the marker replaces the end; a character cut in two is
					escaped when printed) */
		memcpy(e->msg + sizeof e->msg - sizeof " [...]", " [...]", sizeof " [...]");
	return code;
}

bool perr_format_once(struct perr *e, bool *failed, const char *prefix, const char *fmt, va_list ap)
{
	if (*failed)
		return false;
	char what[PERR_MSG_MAX - 64];
	vsnprintf(what, sizeof what, fmt, ap);
	perr_set(e, PLUMB_EFORMAT, "%s: %s", prefix, what);
	*failed = true;
	return false;
}

static const struct {
	enum plumb_err code;
	int exit_code;
	const char *text;
} err_table[] = {
	{ PLUMB_OK, EXIT_DONE, "done" },
	{ PLUMB_ENOMEM, EXIT_FAILED, "out of memory" },
	{ PLUMB_EINVAL, EXIT_USAGE, "bad arguments" },
	{ PLUMB_ENOENT, EXIT_MISSING, "not found" },
	{ PLUMB_EPERM, EXIT_FAILED, "permission denied" },
	{ PLUMB_EFORMAT, EXIT_INPUT, "malformed input" },
	{ PLUMB_EIO, EXIT_INPUT, "input unreadable" },
	{ PLUMB_EOUTPUT, EXIT_OUTPUT, "output could not be written" },
	{ PLUMB_ETIMEDOUT, EXIT_TIMEOUT, "timed out" },
	{ PLUMB_EUNSUPPORTED, EXIT_MISSING, "not supported here" },
	{ PLUMB_EGATE, EXIT_FAILED, "debug switch is off" },
	{ PLUMB_EEMPTY, EXIT_FAILED, "nothing was sampled" },
	{ PLUMB_ECHECK, EXIT_FAILED, "check failed" },
};

const char *perr_exit_text(int exit_code)
{
	static const char *const text[] = {
		[EXIT_DONE] = "done",
		[EXIT_FAILED] = "the switch is off, nothing was sampled, a check failed (coverage, the regression gate), "
				"or the command record launched failed (the profile is written)",
		[EXIT_USAGE] = "bad arguments or an impossible combination, or a target that cannot be resolved",
		[EXIT_MISSING] = "something required is not there: a path, a saved baseline or recording, an optional "
				 "backend or tool",
		[EXIT_TIMEOUT] = "a backend or a command timed out",
		[EXIT_INPUT] = "an input is there but cannot be used: unreadable, malformed, empty, too big, or of an "
			       "unknown schema version",
		[EXIT_OUTPUT] = "the output could not be written, or a push to a metrics gateway failed (what was written "
				"stays)",
	};
	return exit_code >= 0 && exit_code < (int)(sizeof text / sizeof text[0]) ? text[exit_code] : NULL;
}

const char *perr_strerror(enum plumb_err code)
{
	for (size_t i = 0; i < sizeof err_table / sizeof err_table[0]; i++)
		if (err_table[i].code == code)
			return err_table[i].text;
	return "unknown error";
}

int perr_exit_code(enum plumb_err code)
{
	for (size_t i = 0; i < sizeof err_table / sizeof err_table[0]; i++)
		if (err_table[i].code == code)
			return err_table[i].exit_code;
	return EXIT_FAILED;
}
