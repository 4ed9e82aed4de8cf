/* ui/report.h — the lines plumb prints on stderr: an error, a warning, a summary line (docs/design.md §3.3). Only
 * the faces print; code below them fills a struct perr (base/err.h) and returns. */
#ifndef PLUMB_UI_REPORT_H
#define PLUMB_UI_REPORT_H

#include "base/err.h"

/* Every line below is printed through the one escaper (base/shown.h, docs/design.md §3.3): control bytes of the
 * formatted text are shown as \x1b, \n and so on, and the line is cut at SHOWN_LINE_MAX with a marker, so a
 * caller may pass text from an input as a plain %s. */

/* Prints "plumb: <msg>" (or the code's text when msg is empty) on stderr, one line, and returns
 * perr_exit_code(e->code). */
int perr_report(const struct perr *e);

/* Prints one "plumb: ..." line on stderr and returns `exit_code`. */
int perr_fail(int exit_code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints one "plumb: warning: ..." line on stderr. */
void perr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints one line on stderr as formatted, with no prefix (a summary line, "Wrote PATH"). */
void perr_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
