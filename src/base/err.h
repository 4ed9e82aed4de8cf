/* err.h — the one error enum, its message buffer, and the exit-code table of docs/design.md §3.2.
 * Library code returns an enum plumb_err and fills a struct perr; only commands turn it into an exit code and
 * print it (ui/report.h). */
#ifndef PLUMB_BASE_ERR_H
#define PLUMB_BASE_ERR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum plumb_err {
	PLUMB_OK = 0,
	PLUMB_ENOMEM,      /* out of memory */
	PLUMB_EINVAL,      /* bad argument or unresolvable target */
	PLUMB_ENOENT,      /* something required is missing */
	PLUMB_EPERM,       /* refused by the kernel or by privileges */
	PLUMB_EFORMAT,     /* malformed input or unknown schema version */
	PLUMB_EIO,         /* input could not be read */
	PLUMB_EOUTPUT,     /* output could not be written */
	PLUMB_ETIMEDOUT,   /* a backend or command timed out */
	PLUMB_EUNSUPPORTED,/* feature not available in this build or on this machine */
	PLUMB_EGATE,       /* the debug switch is off */
	PLUMB_EEMPTY,      /* nothing was sampled */
	PLUMB_ECHECK,      /* a check failed (coverage, regression gate) */
};

/* Exit codes, one table for all commands (docs/design.md §3.2). */
enum plumb_exit {
	EXIT_DONE = 0,
	EXIT_FAILED = 1,   /* switch off, nothing sampled, or a check failed */
	EXIT_USAGE = 2,    /* bad arguments or an unresolvable target */
	EXIT_MISSING = 3,  /* an optional backend, artifact or baseline is missing */
	EXIT_TIMEOUT = 4,
	EXIT_INPUT = 5,    /* input unreadable, malformed, or unknown schema version */
	EXIT_OUTPUT = 6,   /* output could not be written */
};

#define PERR_MSG_MAX 1024

/* An error with its detail. PERR_INIT zeroes it; perr_set() fills it and returns the code. */
struct perr {
	enum plumb_err code;
	char msg[PERR_MSG_MAX];
};
#define PERR_INIT { PLUMB_OK, { 0 } }

/* Sets code and a printf-style message; returns code so callers can `return perr_set(...)`. */
enum plumb_err perr_set(struct perr *e, enum plumb_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A reader's first complaint: unless *failed, sets e to PLUMB_EFORMAT with "PREFIX: " and the formatted message
 * and sets *failed; later ones are dropped. Returns false, for `return reader_fail(...)`. */
bool perr_format_once(struct perr *e, bool *failed, const char *prefix, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

/* Short fixed text for a code ("out of memory", ...). */
const char *perr_strerror(enum plumb_err code);

/* What an exit code means, one line (the table of docs/design.md §3.2, for the man pages); NULL past 6. */
const char *perr_exit_text(int exit_code);

/* The exit code a command returns for an error code (the table of docs/design.md §3.2). */
int perr_exit_code(enum plumb_err code);

#endif
