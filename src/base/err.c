/* err.c — error codes, their text and their exit codes: the single place docs/design.md §3.2's table lives. */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/progress.h"
#include "base/shown.h"

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

/* Writes prefix and the formatted line on stderr through the one escaper (base/shown.h): whatever an input put
 * into the message (a schema string, a case name, a path), no control byte reaches the terminal and the line is
 * one line, cut at SHOWN_LINE_MAX. Every message plumb prints goes through here. */
static void print_line(const char *prefix, const char *fmt, va_list ap)
{
	char raw[SHOWN_LINE_MAX + 1], shown[SHOWN_LINE_MAX * 4 + 64];
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(raw, sizeof raw, fmt, aq);
	va_end(aq);
	size_t len = n < 0 ? 0 : (size_t)n;
	size_t have = len < sizeof raw ? len : sizeof raw - 1;
	size_t k = shown_escape(shown, sizeof shown, raw, have, SHOWN_LINE_MAX);
	if (len > have) /* what vsnprintf could not hold */
		k += (size_t)snprintf(shown + k, sizeof shown - k, " [... %zu more bytes]", len - have);
	progress_clear();
	fprintf(stderr, "%s%.*s\n", prefix, (int)k, shown);
}

static void print_fmt(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void print_fmt(const char *prefix, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	print_line(prefix, fmt, ap);
	va_end(ap);
}

int perr_report(const struct perr *e)
{
	print_fmt("plumb: ", "%s", e->msg[0] ? e->msg : perr_strerror(e->code));
	return perr_exit_code(e->code);
}

int perr_fail(int exit_code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	print_line("plumb: ", fmt, ap);
	va_end(ap);
	return exit_code;
}

void perr_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	print_line("plumb: warning: ", fmt, ap);
	va_end(ap);
}

void perr_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	print_line("", fmt, ap);
	va_end(ap);
}
