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

/* Parses argv with the command's option table; on --help prints the generated usage and returns 0 through
 * *exit_code; on a bad option prints the one-line error and sets *exit_code to 2. Returns true to go on. */
struct opt;
struct opt_result;
#include <stdbool.h>
bool cmd_parse_options(const struct opt *opts, const char *usage, const char *description, int argc, char **argv,
		       struct opt_result *res, int *exit_code);

/* Text for a message: a redacted copy (every path and command line printed goes through the redactor, DESIGN
 * §1), "?" when out of memory. The caller frees it. */
char *cmd_shown_text(const char *s);
/* perr_report() of a message that may name a path or a command: redacted first. Returns the exit code. */
struct perr;
int cmd_report_redacted(struct perr *e);

#endif
