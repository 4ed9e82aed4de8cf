/* cmd.h — one entry point per command (src/cmd/NAME.c), registered in src/main.c's table.
 * Each returns an exit code from enum plumb_exit; argv[0] is the command name. */
#ifndef PLUMB_CMD_CMD_H
#define PLUMB_CMD_CMD_H

int cmd_record(int argc, char **argv);
int cmd_hot(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_top(int argc, char **argv);

/* Parses argv with the command's option table; on --help prints the generated usage and returns 0 through
 * *exit_code; on a bad option prints the one-line error and sets *exit_code to 2. Returns true to go on. */
struct opt;
struct opt_result;
#include <stdbool.h>
bool cmd_parse_options(const struct opt *opts, const char *usage, const char *description, int argc, char **argv,
		       struct opt_result *res, int *exit_code);

/* The reader options of the commands that read any profile (convert, flame): stackcollapse-perf's for `perf
 * script` text and pprof's --sample-index. The rows go into the command's option table (base/opt.h),
 * cmd_collapse_apply() turns them into reader options. */
struct cmd_collapse {
	bool pid, tid, kernel, jit, all, addrs;
	const char *sample_index;
};
#define CMD_COLLAPSE_OPTS(c)                                                                                      \
	{ "pid", 0, OPT_FLAG, &(c).pid, NULL, "perf script input: append -PID to the process name frame", NULL },    \
	{ "tid", 0, OPT_FLAG, &(c).tid, NULL, "perf script input: append -PID/TID to the process name frame", NULL }, \
	{ "kernel", 0, OPT_FLAG, &(c).kernel, NULL, "perf script input: suffix kernel frames with _[k]", NULL },     \
	{ "jit", 0, OPT_FLAG, &(c).jit, NULL, "perf script input: suffix JIT frames with _[j]", NULL },              \
	{ "all", 0, OPT_FLAG, &(c).all, NULL, "perf script input: --kernel and --jit", NULL },                       \
	{ "addrs", 0, OPT_FLAG, &(c).addrs, NULL, "perf script input: show addresses of unknown symbols", NULL }, \
	{ "sample-index", 0, OPT_STRING, &(c).sample_index, "N|TYPE", "pprof input: the sample type to read, by "      \
	  "index or name (default: the profile's default, else the last, as go tool pprof)", NULL }
struct fmt_read_opts;
void cmd_collapse_apply(const struct cmd_collapse *c, struct fmt_read_opts *ro);

/* A warning callback for library options (`void (*warn)(void *ctx, const char *msg)`): prints one
 * "plumb: warning: MSG" line; ctx is unused. */
void cmd_warn_to_stderr(void *ctx, const char *msg);

/* Text for a message: a redacted copy (every path and command line printed goes through the redactor,
 * docs/design.md §3.6), "?" when out of memory. The caller frees it. */
char *cmd_shown_text(const char *s);
/* perr_report() of a message that may name a path or a command: redacted first. Returns the exit code. */
struct perr;
int cmd_report_redacted(struct perr *e);
/* plumb_fail(exit_code, fmt, text) with text redacted first; fmt holds one %s, for it. */
int cmd_fail_shown(int exit_code, const char *fmt, const char *text);

#endif
