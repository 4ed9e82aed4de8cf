/* opt.h — one small option parser for every command; the same table generates `--help` (git's
 * parse-options). Options may come before or after positionals; everything after `--` is positional. */
#ifndef PLUMB_BASE_OPT_H
#define PLUMB_BASE_OPT_H

#include <stdbool.h>
#include <stdio.h>

#include "base/err.h"

enum opt_type {
	OPT_END = 0,
	OPT_FLAG,     /* bool *; no argument */
	OPT_STRING,   /* const char **; points into argv */
	OPT_INT,      /* long *; whole number */
	OPT_DOUBLE,   /* double *; a number */
	OPT_LIST,     /* struct opt_list *; repeatable, every value kept */
};

struct opt_list {
	const char **v;  /* owned array (free with opt_list_release), elements point into argv */
	int n;
};

struct opt {
	const char *long_name;  /* without dashes, e.g. "output" */
	char short_name;        /* 'o', or 0 */
	enum opt_type type;
	void *target;
	const char *argname;    /* shown in --help, e.g. "PATH" */
	const char *help;
	bool *seen;             /* optional: set when the option was given */
};

/* Rows of an option table, each checking its target's type at compile time (git's parse-options.h): pointing
 * OPT_LONG at an int, or OPT_STRING at a char *, is an error, not a silent overwrite. The function-like macros
 * share their names with the enum opt_type values they use; a bare OPT_STRING is still the enum value.
 *   OPT_BOOL(long, short, bool *, help)
 *   OPT_STRING(long, short, const char **, argname, help)
 *   OPT_LONG(long, short, long *, argname, help)         OPT_LONG_SEEN(..., help, bool *seen)
 *   OPT_DOUBLE(long, short, double *, argname, help)     OPT_DOUBLE_SEEN(..., help, bool *seen)
 *   OPT_LIST(long, short, struct opt_list *, argname, help)
 *   OPT_DISPATCH(long, help)   a flag the command acts on before its table is parsed (no target)
 *   OPT_END()                  the end of the table */
#define OPT_TARGET_(type, v) _Generic((v), type *: (void *)(v))
#define OPT_BOOL(l, s, v, h) { (l), (s), OPT_FLAG, OPT_TARGET_(bool, v), NULL, (h), NULL }
#define OPT_STRING(l, s, v, a, h) { (l), (s), OPT_STRING, OPT_TARGET_(const char *, v), (a), (h), NULL }
#define OPT_LONG(l, s, v, a, h) { (l), (s), OPT_INT, OPT_TARGET_(long, v), (a), (h), NULL }
#define OPT_LONG_SEEN(l, s, v, a, h, seen) \
	{ (l), (s), OPT_INT, OPT_TARGET_(long, v), (a), (h), _Generic((seen), bool *: (seen)) }
#define OPT_DOUBLE(l, s, v, a, h) { (l), (s), OPT_DOUBLE, OPT_TARGET_(double, v), (a), (h), NULL }
#define OPT_DOUBLE_SEEN(l, s, v, a, h, seen) \
	{ (l), (s), OPT_DOUBLE, OPT_TARGET_(double, v), (a), (h), _Generic((seen), bool *: (seen)) }
#define OPT_LIST(l, s, v, a, h) { (l), (s), OPT_LIST, OPT_TARGET_(struct opt_list, v), (a), (h), NULL }
#define OPT_DISPATCH(l, h) { (l), 0, OPT_FLAG, NULL, NULL, (h), NULL }
#define OPT_END() { NULL, 0, OPT_END, NULL, NULL, NULL, NULL }

struct opt_result {
	const char **pos;    /* positional arguments (owned array; elements point into argv) */
	int npos;
	int dashdash;        /* index in pos of the first argument after `--`, or -1 when there was none */
};

enum opt_status { OPT_OK = 0, OPT_HELP = 1, OPT_ERROR = 2 };

/* Parses argv[1..argc) (argv[0] is the command name). On OPT_HELP the caller prints opt_usage() and exits 0;
 * on OPT_ERROR e holds one line naming the bad option (PLUMB_EINVAL). */
enum opt_status opt_parse(const struct opt *opts, int argc, char **argv, struct opt_result *res, struct perr *e);
/* Same, but stops at the first positional argument: the rest (from it on) are returned as positionals.
 * For commands whose positionals are a sub-command followed by its own options. */
enum opt_status opt_parse_prefix(const struct opt *opts, int argc, char **argv, struct opt_result *res,
				 struct perr *e);

/* Writes "usage: ..." then one line per option from the table. */
void opt_usage(FILE *out, const char *usage, const char *description, const struct opt *opts);
void opt_result_release(struct opt_result *res);
void opt_list_release(struct opt_list *l);

/* Parses a duration like "20s", "1.5", "250ms", "2m" into seconds. Returns false when malformed. */
bool opt_parse_seconds(const char *s, double *seconds);

#endif
