/* report.c — see ui/report.h. */
#include "ui/report.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/shown.h"
#include "ui/progress.h"

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
