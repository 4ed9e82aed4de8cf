/* cmd.h — one entry point per command (src/cmd/NAME.c), registered in src/main.c's table.
 * Each returns an exit code from enum plumb_exit; argv[0] is the command name. */
#ifndef PLUMB_CMD_CMD_H
#define PLUMB_CMD_CMD_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/opt.h"
#include "ui/report.h"
#include "ui/progress.h"

int cmd_record(int argc, char **argv);
int cmd_hot(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
int cmd_metrics_record(int argc, char **argv);  /* `metrics record` (metrics_record.c), under cmd_metrics */
int cmd_bench(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_dump(int argc, char **argv);

/* A command's sub-commands (bench, baseline): one table, NULL-terminated, that dispatches, lists itself in
 * --help, and that the man pages and completions are generated from. */
struct cmd_sub {
	const char *name;
	int (*fn)(int argc, char **argv); /* argv[0] is the sub-command's name */
	const char *summary;
};
extern const struct cmd_sub cmd_bench_subs[];
extern const struct cmd_sub cmd_baseline_subs[];
extern const struct cmd_sub cmd_metrics_subs[]; /* `record`; metrics has options of its own too */
/* Runs sub-command argv[1] of `cmd` from subs; `--help`, `-h` or `help` lists them (exit 0), none lists them on
 * stderr (exit 2), an unknown one is exit 2. */
int cmd_dispatch_sub(const char *cmd, const struct cmd_sub *subs, int argc, char **argv);

/* `plumb help`: a command's help, its man page, or the shell completion, all made from the option tables
 * (src/cmd/doc.c). commands is the dispatcher's table (NULL-terminated), usage prints plumb's own. */
#include <stdio.h>
struct cmd_help_ctx {
	const struct cmd_sub *commands;
	const char *version;
	void (*usage)(FILE *out);
};
int cmd_help(const struct cmd_help_ctx *h, int argc, char **argv);
/* While set, cmd_parse_options() hands a command's --help to the hook instead of printing it: how doc.c reads
 * the option tables. Never set outside `plumb help`. */
extern void (*cmd_help_hook)(void *ctx, const char *usage, const char *description, const struct opt *opts);
extern void *cmd_help_hook_ctx;

/* Parses argv with the command's option table; on --help prints the generated usage and returns 0 through
 * *exit_code; on a bad option prints the one-line error and sets *exit_code to 2. Returns true to go on. */
bool cmd_parse_options(const struct opt *opts, const char *usage, const char *description, int argc, char **argv,
		       struct opt_result *res, int *exit_code);
/* The same for a command that runs COMMAND after `--` (record, metrics record): when an option is unknown and a
 * word before it reads as a command (`plumb record perl -e ...`), the message says to put it after `--`. `who`
 * names the command ("record", "metrics record"). */
bool cmd_parse_command_options(const struct opt *opts, const char *usage, const char *description, const char *who,
			       int argc, char **argv, struct opt_result *res, int *exit_code);

/* Where `record` writes by default, and what `hot` and `flame` read when given no PROFILE. */
#define CMD_DEFAULT_PROFILE "./plumb-profile.folded"
/* The profile a reading command works on: its one PROFILE argument, or, given none, CMD_DEFAULT_PROFILE when
 * it is there. NULL with the message printed and *exit_code set (3 when there is no default file, 2 for more than
 * one PROFILE) otherwise. */
const char *cmd_profile_arg(const struct opt_result *res, const char *who, int *exit_code);

/* The reader options of the commands that read any profile (convert, flame): stackcollapse-perf's for `perf
 * script` text and pprof's --sample-index. The rows go into the command's option table (base/opt.h),
 * cmd_collapse_apply() turns them into reader options. */
struct cmd_collapse {
	bool pid, tid, kernel, jit, all, addrs;
	const char *sample_index;
	const char *weight;
};
#define CMD_COLLAPSE_OPTS(c)                                                                                      \
	OPT_BOOL("pid", 0, &(c).pid, "perf script input: append -PID to the process name frame"),                 \
	OPT_BOOL("tid", 0, &(c).tid, "perf script input: append -PID/TID to the process name frame"),             \
	OPT_BOOL("kernel", 0, &(c).kernel, "perf script input: suffix kernel frames with _[k]"),                  \
	OPT_BOOL("jit", 0, &(c).jit, "perf script input: suffix JIT frames with _[j]"),                           \
	OPT_BOOL("all", 0, &(c).all, "perf script input: --kernel and --jit"),                                    \
	OPT_BOOL("addrs", 0, &(c).addrs, "perf script input: show addresses of unknown symbols"),                 \
	OPT_STRING("sample-index", 0, &(c).sample_index, "N|TYPE",                                                \
		   "pprof input: the sample type to read, by index or name (default: the profile's default, "     \
		   "else the last, as go tool pprof); perf.data input: the event (default: the first)"),          \
	CMD_WEIGHT_OPT((c).weight)
/* --weight alloc|inuse|peak|freed: which bytes of an allocation profile (record --mode alloc, docs/alloc.md) are
 * the weight — its pprof sample types alloc_space, inuse_space, peak_space, freed_space. */
#define CMD_WEIGHT_OPT(var)                                                                                       \
	OPT_STRING("weight", 0, &(var), "alloc|inuse|peak|freed",                                                 \
		   "allocation profiles: bytes allocated (default), in use at exit, "                             \
		   "in use at the peak, or freed")
/* The sample type --weight names into *sample_index (unchanged when weight is NULL); false with the message
 * printed and *rc set when it is not one of the four, or --sample-index was given too. */
bool cmd_weight_apply(const char *who, const char *weight, const char **sample_index, int *rc);
struct fmt_read_opts;
void cmd_collapse_apply(const struct cmd_collapse *c, struct fmt_read_opts *ro);  /* --weight checked already */

/* The summary options of `hot`, declared once and shared with `record --summary` and `baseline save`
 * (docs/design.md §5.7, §6.2): the rows go into the command's option table, cmd_summary_apply() checks them and
 * turns them into analysis options. */
struct cmd_summary {
	long top, module_depth, top_threads;
	bool collapse, repo_only, top_seen;
	const char *group_by, *root, *thread;
	struct opt_list include, exclude;
	char *root_buf; /* the resolved --root (or git top level), owned */
};
#define CMD_SUMMARY_INIT { .top = 20, .module_depth = 2, .group_by = "function" }
#define CMD_SUMMARY_OPTS(c)                                                                                       \
	OPT_LONG_SEEN("top", 'n', &(c).top, "N",                                                                  \
		      "rows per table (default 20; a JSON summary keeps every row unless given)", &(c).top_seen), \
	OPT_STRING("group-by", 'g', &(c).group_by, "KEY", "function, file, module or library"),                   \
	OPT_LONG("module-depth", 0, &(c).module_depth, "N",                                                       \
		 "path components (or :: names) a module keeps (default 2)"),                                     \
	OPT_BOOL("collapse-generics", 0, &(c).collapse, "fold <...> template/generic arguments"),                 \
	OPT_LIST("include", 0, &(c).include, "RE", "keep frames whose label matches (repeatable)"),               \
	OPT_LIST("exclude", 0, &(c).exclude, "RE", "drop frames whose label matches (repeatable)"),               \
	OPT_BOOL("repo-only", 0, &(c).repo_only, "keep frames whose source file is under --root"),                \
	OPT_STRING("root", 0, &(c).root, "DIR", "repository root (default: git top level of the cwd)"),           \
	OPT_STRING("thread", 0, &(c).thread, "RE", "keep threads whose name matches"),                            \
	OPT_LONG("top-threads", 0, &(c).top_threads, "N", "keep the N threads with the most samples")
struct hot_opts;
/* Checks the summary options (`who` names the command in a message) and resolves --root; fills o (label_flags
 * is the caller's). Returns an exit code: 0, or 2 having printed why. */
int cmd_summary_apply(struct cmd_summary *c, const char *who, struct hot_opts *o);
/* True when any summary option was given (for a command where they need --summary). */
bool cmd_summary_given(const struct cmd_summary *c);
void cmd_summary_release(struct cmd_summary *c);

/* The sampling options of `record`, `top` and `metrics record`, declared once (docs/design.md §5.2): what to
 * sample and how. The rows go into each command's option table; cmd_sampling_apply() checks them one way for
 * all three and fills the session's options (sample/backend.h struct record_opts). `--call` is record's alone
 * (its own row, into .call). */
struct cmd_sampling {
	const char *pid, *target_name, *call, *comm, *mode, *unwind, *backend;
	double interval, rate, seconds;
	long stack_size, alloc_interval;
	bool all, no_kernel, native, idle;
	bool interval_set, rate_set, seconds_set, stack_set;
	/* filled by cmd_sampling_apply */
	char subject[160];         /* the target as messages name it: "xz", "pid 42 (xz)", "split_run()" */
	char target_pid[32];       /* --pid of an announced target */
	char call_lib[4096];       /* LIB of --call LIB.so:SYMBOL */
	pid_t *pids;               /* --all --pid PID,...: the processes kept (owned) */
};
#define CMD_SAMPLING_OPTS(c)                                                                                      \
	OPT_STRING("pid", 'p', &(c).pid, "PID",                                                                   \
		   "attach to a running process (all its threads); with --all, a list PID,... to keep"),          \
	OPT_STRING("target", 't', &(c).target_name, "NAME",                                                       \
		   "attach to a process that announced itself (plumb.h)"),                                        \
	OPT_BOOL("all", 'a', &(c).all,                                                                            \
		 "every process on the machine, a root per process (needs root or perf_event_paranoid <= 0)"),    \
	OPT_STRING("comm", 0, &(c).comm, "RE", "with --all: keep processes whose name matches RE"),               \
	OPT_DOUBLE_SEEN("interval", 'i', &(c).interval, "S",                                                      \
			"seconds between samples, 0.0001-1.0 (default 0.005)", &(c).interval_set),                \
	OPT_DOUBLE_SEEN("rate", 'F', &(c).rate, "HZ",                                                             \
			"samples per second, 1-10000 (the same as --interval 1/HZ)", &(c).rate_set),              \
	OPT_DOUBLE_SEEN("seconds", 's', &(c).seconds, "N",                                                        \
			"how long to sample, 1-86400 (default: a command runs to its end; "                       \
			"record attaches for 10)", &(c).seconds_set),                                             \
	OPT_STRING("mode", 0, &(c).mode, "cpu|wall|alloc",                                                        \
		   "on-CPU samples (default), every thread at every tick, or allocations (record -- COMMAND; "    \
		   "docs/alloc.md)"),                                                                             \
	OPT_LONG("alloc-interval", 0, &(c).alloc_interval, "BYTES",                                               \
		 "--mode alloc: mean bytes between sampled allocations, 1024-1073741824 (default 524288)"),       \
	OPT_STRING("unwind", 0, &(c).unwind, "dwarf|fp", "user-stack unwinder (default dwarf)"),                  \
	OPT_LONG_SEEN("stack-size", 0, &(c).stack_size, "BYTES",                                                  \
		      "user stack copied per sample for dwarf, 1024-65000 (default 16384)", &(c).stack_set),      \
	OPT_BOOL("no-kernel", 0, &(c).no_kernel, "drop kernel frames"),                                           \
	OPT_STRING("backend", 0, &(c).backend, "NAME", "force a backend (perf_event, ...)"),                      \
	OPT_BOOL("native", 0, &(c).native, "python targets: merge native frames"),                                \
	OPT_BOOL("idle", 0, &(c).idle, "python targets: keep idle stacks")
/* What a command allows of the sampling options. */
struct cmd_sampling_rules {
	const char *who;           /* "record", "top", "metrics record": names the command in a message */
	double attach_seconds;     /* --seconds of an attach when not given (0: until stopped) */
	bool call, all, command;   /* --call, --all, a command after `--` are targets of this command */
	bool alloc;                /* --mode alloc (a launched command's allocations) is a mode of this command */
};
struct opt_result;
struct record_opts;
/* Checks the sampling options and the target (exactly one of the command after `--` in r, --pid, --target NAME
 * (or the only announced target), --call, --all; docs/design.md §5.1) and fills o and c->subject. Returns an exit
 * code: 0, or 2 (3 for a missing announced target) having printed why. */
int cmd_sampling_apply(struct cmd_sampling *c, const struct cmd_sampling_rules *rules, const struct opt_result *r,
		       struct record_opts *o);
void cmd_sampling_release(struct cmd_sampling *c);

/* A warning callback for library options (`void (*warn)(void *ctx, const char *msg)`): prints one
 * "plumb: warning: MSG" line; ctx is unused. */
void cmd_warn_to_stderr(void *ctx, const char *msg);

/* Text for a message or a report: a redacted copy (every path and command line printed goes through the redactor,
 * docs/design.md §3.6), escaped by the one escaper (§3.3), "?" when out of memory. The caller frees it. */
char *cmd_shown_text(const char *s);
/* perr_report() of a message that may name a path or a command: redacted first. Returns the exit code. */
struct perr;
int cmd_report_redacted(struct perr *e);
/* The progress line of a command working on `path` ("hot big.json", the path redacted), or NULL when there must be
 * none (not a terminal, or `quiet`: the command writes --json). The caller ends it with progress_end(). */
struct progress;
struct progress *cmd_progress_new(const char *command, const char *path, bool quiet);
/* perr_fail(exit_code, fmt, text) with text redacted first; fmt holds one %s, for it. */
int cmd_fail_shown(int exit_code, const char *fmt, const char *text);

#endif
