/* record.c — `plumb record`: choose a backend, sample, symbolize each distinct frame once, write the profile
 * atomically, and say in one line what was measured (docs/design.md §5). The output path is checked before the
 * target starts, so an unwritable --output costs nothing; one that fails at the end (a full disk) loses nothing:
 * the profile is rescued under $PLUMB_HOME/rescue/. */
#include "cmd/cmd.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "analyze/baseline.h"
#include "base/atomic.h"
#include "base/cleanup.h"
#include "base/err.h"
#include "base/home.h"
#include "base/opt.h"
#include "base/procfs.h"
#include "base/progress.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "base/store.h"
#include "base/str.h"
#include "format/format.h"
#include "format/hot_json.h"
#include "profile/label.h"
#include "render/output.h"
#include "sample/backend.h"
#include "sample/stages.h"
#include "sample/targets.h"
#include "symbol/symbol.h"

static volatile sig_atomic_t stop_requested; /* SIGINT/SIGTERM: stop sampling, then write what was sampled */

static const char *const usage_text =
	"plumb record [options] -- COMMAND [ARGS...]\n"
	"       plumb record [options] --pid PID\n"
	"       plumb record [options] --target NAME\n"
	"       plumb record [options] --call LIB.so:SYMBOL\n"
	"       plumb record [options] --all [--pid PID,...] [--comm RE]";

static const char *const description =
	"Samples a command (and its children), a running process, or one function, and writes its stacks.\n"
	"Needs PLUMB_DEBUG=1. The output format follows the extension of --output (.folded/.txt folded,\n"
	".json/.json.gz Firefox Profiler, .speedscope.json, .pb.gz/.pprof pprof, .svg flame graph) or --format.";

struct record_args {
	const char *pid, *target_name, *call, *output, *format, *mode, *unwind, *backend;
	const char *summary, *stages, *save_baseline, *comm;
	double interval, rate, seconds;
	long stack_size;
	bool no_kernel, threads, no_lines, native, idle, force, all;
	bool interval_set, rate_set, seconds_set, stack_set;
	struct cmd_summary sum;    /* the summary options, as hot takes them */
};

/* One `plumb record`, from its options to its summary line (perf's struct record): each step below either
 * goes on or has said what went wrong and set the exit code. */
struct record {
	struct record_args a;      /* the options as given */
	struct hot_opts hot;       /* what --summary and --save-baseline summarize with */
	struct opt_result r;       /* their parse (the command after --) */
	struct record_opts opts;   /* what the backends are asked to do */
	enum fmt_kind kind;        /* the output format */
	char target_pid[32];       /* --pid of an announced target */
	char call_lib[4096];       /* LIB of --call LIB.so:SYMBOL */
	pid_t *pids;               /* --all --pid PID,...: the processes kept */
	struct atomic_file stage_lines; /* the program's stage lines: a private scratch file beside --stages */
	double start_unix;
	struct profile *raw;       /* what the backend sampled (raw frames) */
	struct record_result res;
	struct backend_outcome run;
	char subject[160];         /* the target as the summary names it: "xz", "pid 42 (xz)", "split_run()" */
	char baseline_path[PATH_MAX]; /* where --save-baseline went */
	char summary[1024];        /* "Sampled N ticks over S ... xz exited with 0." */
	struct sbuf sym_hints;     /* the symbolizer's hints (what to install when names are missing) */
	struct sym_files *files;   /* the target's files as it saw them, opened by the backend for the symbolizer */
};

static void join_command(struct sbuf *sb, const struct record_opts *opts, const struct record_args *a)
{
	if (opts->target == TARGET_COMMAND) {
		for (char **v = opts->argv; *v; v++) {
			if (v != opts->argv)
				sbuf_addch(sb, ' ');
			sbuf_addstr(sb, *v);
		}
	} else if (opts->target == TARGET_PID) {
		char *cmd = NULL;
		size_t n = 0;
		if (procfs_cmdline(opts->pid, &cmd, &n) == 0)
			for (size_t i = 0; i < n; i++)
				if (cmd[i] == '\0')
					cmd[i] = ' ';
		sbuf_addf(sb, "%s (pid %d)", cmd ? cmd : "?", (int)opts->pid);
		free(cmd);
	} else if (opts->target == TARGET_ALL) {
		sbuf_addstr(sb, "every process");
		if (a->pid)
			sbuf_addf(sb, " of pids %s", a->pid);
		if (a->comm)
			sbuf_addf(sb, " named like '%s'", a->comm);
	} else {
		sbuf_addstr(sb, a->call);
	}
}

static bool needs_timeline(enum fmt_kind kind)
{
	return kind == FMT_GECKO || kind == FMT_SPEEDSCOPE;
}

/* The hot summary of prof as `plumb hot` makes it with the same options from the written output, sliced by the
 * stage file when --stages wrote one (docs/design.md §5.7), into json. */
static enum plumb_err summary_json(const struct record *rec, const struct profile *prof, struct sbuf *json,
				   struct perr *e)
{
	const struct record_args *a = &rec->a;
	struct hot_summary *s = NULL;
	enum plumb_err rc = hot_analyze(prof, &rec->hot, &s, e);
	if (!rc && a->stages) {
		struct fmt_stage *stages = NULL;
		size_t n = 0;
		rc = fmt_stages_load(a->stages, &stages, &n, e);
		if (!rc)
			rc = hot_analyze_stages(prof, &rec->hot, stages, n, s, e);
		fmt_stages_free(stages, n);
	}
	if (rc) {
		hot_summary_free(s);
		return rc;
	}
	if (!hot_summary_set_origin(s, a->output, fmt_name(rec->kind))) {
		hot_summary_free(s);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	fmt_hot_json_write(json, s, a->sum.top_seen ? (size_t)a->sum.top : 0);
	hot_summary_free(s);
	return json->oom ? perr_set(e, PLUMB_ENOMEM, "out of memory writing the summary") : PLUMB_OK;
}

/* --stages, --summary and --save-baseline: one command that profiles, summarizes and keeps. */
static enum plumb_err write_extras(struct record *rec, const struct profile *prof, struct perr *e)
{
	const struct record_args *a = &rec->a;
	enum plumb_err rc = PLUMB_OK;
	if (a->stages)
		rc = stages_write(rec->stage_lines.tmp_path, rec->res.start_ns, rec->res.end_ns, a->stages, e);
	if (rc || !(a->summary || a->save_baseline))
		return rc;
	struct sbuf json = SBUF_INIT;
	rc = summary_json(rec, prof, &json, e);
	if (!rc && a->summary)
		rc = atomic_write_file(a->summary, json.buf, json.len, e);
	if (!rc && a->save_baseline)
		rc = baseline_profile_save(a->save_baseline, json.buf, json.len, a->force, rec->baseline_path,
					   sizeof rec->baseline_path, e);
	sbuf_release(&json);
	return rc;
}

/* Parses the options; false when done (--help, or a bad option: *rc says which). */
static bool record__parse_options(struct record *rec, int argc, char **argv, int *rc)
{
	struct record_args *a = &rec->a;
	a->output = CMD_DEFAULT_PROFILE;
	a->sum = (struct cmd_summary)CMD_SUMMARY_INIT;
	const struct opt opts_table[] = {
		{ "pid", 'p', OPT_STRING, &a->pid, "PID",
		  "attach to a running process (all its threads); with --all, a list PID,... to keep", NULL },
		{ "target", 't', OPT_STRING, &a->target_name, "NAME",
		  "attach to a process that announced itself (plumb.h)", NULL },
		{ "call", 0, OPT_STRING, &a->call, "LIB.so:SYMBOL", "load LIB, call SYMBOL() and sample it", NULL },
		{ "all", 'a', OPT_FLAG, &a->all, NULL,
		  "every process on the machine, a root per process (needs root or perf_event_paranoid <= 0)", NULL },
		{ "comm", 0, OPT_STRING, &a->comm, "RE", "with --all: keep processes whose name matches RE", NULL },
		{ "interval", 'i', OPT_DOUBLE, &a->interval, "S", "seconds between samples, 0.0001-1.0 (default 0.005)",
		  &a->interval_set },
		{ "rate", 'F', OPT_DOUBLE, &a->rate, "HZ", "samples per second (the same as --interval 1/HZ)",
		  &a->rate_set },
		{ "seconds", 's', OPT_DOUBLE, &a->seconds, "N",
		  "how long to sample, 1-300 (default 10 for --pid and --all; a command runs to its end)",
		  &a->seconds_set },
		{ "output", 'o', OPT_STRING, &a->output, "PATH", "where to write (default ./plumb-profile.folded)", NULL },
		{ "format", 0, OPT_STRING, &a->format, "FMT",
		  "folded, gecko, speedscope, pprof or svg (default: by extension)", NULL },
		{ "mode", 0, OPT_STRING, &a->mode, "cpu|wall", "on-CPU samples (default) or every thread at every tick",
		  NULL },
		{ "unwind", 0, OPT_STRING, &a->unwind, "dwarf|fp", "user-stack unwinder (default dwarf)", NULL },
		{ "stack-size", 0, OPT_INT, &a->stack_size, "BYTES",
		  "user stack copied per sample for dwarf (default 16384)", &a->stack_set },
		{ "no-kernel", 0, OPT_FLAG, &a->no_kernel, NULL, "drop kernel frames", NULL },
		{ "threads", 0, OPT_FLAG, &a->threads, NULL, "add a root frame per thread: name (tid)", NULL },
		{ "no-lines", 0, OPT_FLAG, &a->no_lines, NULL, "drop line numbers so one function is one frame", NULL },
		{ "backend", 0, OPT_STRING, &a->backend, "NAME", "force a backend (perf_event, ...)", NULL },
		{ "summary", 0, OPT_STRING, &a->summary, "FILE", "also write the hot summary (plumb.hot.v1 JSON)", NULL },
		{ "stages", 0, OPT_STRING, &a->stages, "FILE",
		  "also write the stage file (a 'command' stage plus the stages the program emitted)", NULL },
		{ "save-baseline", 0, OPT_STRING, &a->save_baseline, "NAME",
		  "save the hot summary as profile baseline NAME (see plumb baseline)", NULL },
		{ "force", 'f', OPT_FLAG, &a->force, NULL, "--save-baseline: replace a baseline of that name", NULL },
		CMD_SUMMARY_OPTS(a->sum),
		{ "native", 0, OPT_FLAG, &a->native, NULL, "python targets: merge native frames", NULL },
		{ "idle", 0, OPT_FLAG, &a->idle, NULL, "python targets: keep idle stacks", NULL },
		{ 0 },
	};
	return cmd_parse_command_options(opts_table, usage_text, description, "record", argc, argv, &rec->r, rc);
}

/* Exactly one target: a command after --, --pid, --call, --target NAME, or else the only announced target
 * (docs/design.md §5.1), whose pid becomes --pid. */
static bool record__choose_target(struct record *rec, int *rc)
{
	struct record_args *a = &rec->a;
	const struct opt_result *r = &rec->r;
	*rc = EXIT_USAGE;
	int ntargets = (a->pid != NULL && !a->all) + (a->call != NULL) + (a->target_name != NULL) + a->all +
		       (r->dashdash >= 0 && r->npos > r->dashdash);
	if (r->dashdash < 0 && r->npos > 0) {
		plumb_fail(EXIT_USAGE, "record: unexpected argument '%s' (put the command after --)", r->pos[0]);
		return false;
	}
	if (ntargets > 1) {
		plumb_fail(EXIT_USAGE,
			   "record: give one target: -- COMMAND, --pid PID, --target NAME, --call LIB.so:SYMBOL or --all");
		return false;
	}
	if (a->comm && !a->all) {
		plumb_fail(EXIT_USAGE, "record: --comm narrows --all; give --all too");
		return false;
	}
	if (ntargets == 1 && !a->target_name)
		return true;
	char list[2048];
	pid_t pid = 0;
	int found = targets_find(a->target_name, &pid, list, sizeof list);
	if (found != 1) {
		if (found < 0)
			cmd_fail_shown(EXIT_USAGE, "record: cannot look up announced targets: %s", list);
		else if (a->target_name)
			plumb_fail(EXIT_USAGE, "record: no live target announced as '%s'%s%s", a->target_name,
				   list[0] ? "; announced: " : " (none is announced)", list);
		else if (found == 0)
			plumb_fail(EXIT_USAGE, "record: give a target: -- COMMAND, --pid PID, --target NAME or --call "
				   "LIB.so:SYMBOL (no program announced itself with plumb_announce)");
		else
			plumb_fail(EXIT_USAGE, "record: %d targets are announced, pick one with --target NAME: %s", found,
				   list);
		return false;
	}
	snprintf(rec->target_pid, sizeof rec->target_pid, "%d", (int)pid);
	a->pid = rec->target_pid;
	return true;
}

/* --interval and --rate (one of them), --seconds, --mode, --unwind and --stack-size into rec->opts. */
static bool record__check_sampling(struct record *rec)
{
	struct record_args *a = &rec->a;
	struct record_opts *opts = &rec->opts;
	if (a->interval_set && a->rate_set)
		return plumb_fail(EXIT_USAGE, "record: give --interval or --rate, not both"), false;
	if (a->rate_set) {
		if (!(a->rate >= 1.0 && a->rate <= 10000.0))
			return plumb_fail(EXIT_USAGE, "record: --rate must be between 1 and 10000 Hz"), false;
		a->interval = 1.0 / a->rate;
		a->interval_set = true;
	}
	if (a->interval_set) {
		if (!(a->interval >= 0.0001 && a->interval <= 1.0))
			return plumb_fail(EXIT_USAGE, "record: --interval must be between 0.0001 and 1.0 seconds"), false;
		opts->interval_ns = (uint64_t)(a->interval * 1e9 + 0.5);
	}
	if (a->seconds_set && !(a->seconds >= 1 && a->seconds <= 300))
		return plumb_fail(EXIT_USAGE, "record: --seconds must be between 1 and 300"), false;
	if (a->mode && strcmp(a->mode, "cpu") == 0)
		opts->mode = MODE_CPU;
	else if (a->mode && strcmp(a->mode, "wall") == 0)
		opts->mode = MODE_WALL;
	else if (a->mode)
		return plumb_fail(EXIT_USAGE, "record: --mode must be cpu or wall, not '%s'", a->mode), false;
	if (a->unwind && strcmp(a->unwind, "dwarf") == 0)
		opts->unwind = UNWIND_DWARF;
	else if (a->unwind && strcmp(a->unwind, "fp") == 0)
		opts->unwind = UNWIND_FP;
	else if (a->unwind)
		return plumb_fail(EXIT_USAGE, "record: --unwind must be dwarf or fp, not '%s'", a->unwind), false;
	if (a->stack_set) {
		if (a->stack_size < 1024 || a->stack_size > 65000)
			return plumb_fail(EXIT_USAGE, "record: --stack-size must be between 1024 and 65000 bytes"), false;
		opts->stack_bytes = (size_t)a->stack_size & ~(size_t)7;
	}
	return true;
}

/* --save-baseline, --force and the summary options: a name that is taken is found before the run, not after it
 * (docs/design.md §5.7), and the summary options are checked as hot checks them. */
static bool record__check_summary(struct record *rec, int *rc)
{
	struct record_args *a = &rec->a;
	*rc = EXIT_USAGE;
	if (a->save_baseline && !a->force && store_exists(&STORE_PROFILE_BASELINES, a->save_baseline)) {
		plumb_fail(EXIT_USAGE, "record: a profile baseline named '%s' exists (--force replaces it; `plumb baseline "
				       "list` shows them)", a->save_baseline);
		return false;
	}
	if (a->force && !a->save_baseline)
		return plumb_fail(EXIT_USAGE, "record: --force goes with --save-baseline"), false;
	if (!a->summary && !a->save_baseline && cmd_summary_given(&a->sum))
		return plumb_fail(EXIT_USAGE, "record: the summary options (--group-by, --top, ...) go with --summary or "
					      "--save-baseline"), false;
	rec->hot = (struct hot_opts)HOT_OPTS_INIT;
	rec->hot.label_flags = a->no_lines ? LABEL_NO_LINES : 0;
	if ((a->summary || a->save_baseline) && (*rc = cmd_summary_apply(&a->sum, "record", &rec->hot)))
		return false;
	return true;
}

/* Every option but the target: the defaults, then what was given, in a fixed order (the first wrong one is
 * the one reported). */
static bool record__check_options(struct record *rec, int *rc)
{
	struct record_args *a = &rec->a;
	struct record_opts *opts = &rec->opts;
	*rc = EXIT_USAGE;
	opts->interval_ns = 5000000;
	opts->kernel = !a->no_kernel;
	opts->unwind = UNWIND_DWARF;
	opts->stack_bytes = 16384;
	opts->native = a->native;
	opts->idle = a->idle;
	opts->stop = &stop_requested;
	if (a->save_baseline && !store_name_valid(a->save_baseline)) {
		plumb_fail(EXIT_USAGE, "record: --save-baseline needs a name of letters, digits, '.', '_' or '-' (not "
				       "starting with '.' or '-'), not '%s'",
			   a->save_baseline);
		return false;
	}
	if (!record__check_summary(rec, rc))
		return false;
	*rc = EXIT_USAGE;
	if (!record__check_sampling(rec))
		return false;
	if (a->backend && !backend_find(a->backend)) {
		size_t n;
		const struct backend *const *all = backend_list(&n);
		struct sbuf names = SBUF_INIT;
		for (size_t i = 0; i < n; i++)
			sbuf_addf(&names, "%s%s", i ? ", " : "", all[i]->name);
		plumb_fail(EXIT_USAGE, "record: unknown backend '%s' (available: %s)", a->backend, names.buf);
		sbuf_release(&names);
		return false;
	}
	opts->backend = a->backend;
	rec->kind = a->format ? fmt_from_name(a->format) : fmt_from_path(a->output);
	if (a->format && rec->kind == FMT_UNKNOWN) {
		plumb_fail(EXIT_USAGE, "record: unknown --format '%s'", a->format);
		return false;
	}
	if (rec->kind == FMT_UNKNOWN)
		rec->kind = FMT_FOLDED;
	return true;
}

/* Parses "PID[,PID...]" into a new array (*out, *n); false (with the message printed) when one is not a pid. */
static bool parse_pid_list(const char *text, pid_t **out, size_t *n)
{
	size_t cap = 1;
	for (const char *q = text; *q; q++)
		cap += *q == ',';
	pid_t *v = calloc(cap, sizeof *v);
	if (!v)
		return plumb_fail(EXIT_FAILED, "record: out of memory"), false;
	size_t k = 0;
	for (const char *q = text;;) {
		char *end;
		errno = 0;
		long pid = strtol(q, &end, 10);
		if (end == q || errno || pid <= 0 || pid > 0x3fffffff || (*end && *end != ',')) {
			free(v);
			return cmd_fail_shown(EXIT_USAGE, "record: --pid with --all needs a list of process ids, not '%s'",
					      text), false;
		}
		v[k++] = (pid_t)pid;
		if (!*end)
			break;
		q = end + 1;
	}
	*out = v;
	*n = k;
	return true;
}

/* --all: every process of the machine through the system backend, narrowed by --pid PID,... and --comm RE. */
static bool record__set_all(struct record *rec)
{
	struct record_args *a = &rec->a;
	struct record_opts *opts = &rec->opts;
	if (a->backend && strcmp(a->backend, "system") != 0)
		return plumb_fail(EXIT_USAGE, "record: --all samples with the system backend, not '%s'", a->backend), false;
	if (opts->mode == MODE_WALL)
		return plumb_fail(EXIT_USAGE, "record: --mode wall follows the threads of one target; it cannot be used "
					      "with --all"), false;
	opts->target = TARGET_ALL;
	opts->backend = "system";
	snprintf(rec->subject, sizeof rec->subject, "every process");
	opts->seconds = a->seconds_set ? a->seconds : 10;
	opts->comm_re = a->comm;
	if (a->pid && !parse_pid_list(a->pid, &rec->pids, &opts->npids))
		return false;
	opts->pids = rec->pids;
	return true;
}

/* The target into rec->opts: a live process, LIB.so:SYMBOL, every process, or the command after --. */
static bool record__set_target(struct record *rec, int *rc)
{
	struct record_args *a = &rec->a;
	struct record_opts *opts = &rec->opts;
	*rc = EXIT_USAGE;
	if (a->all) {
		return record__set_all(rec);
	} else if (a->pid) {
		char *end;
		long v = strtol(a->pid, &end, 10);
		if (*end || end == a->pid || v <= 0 || v > 0x3fffffff)
			return plumb_fail(EXIT_USAGE, "record: --pid needs a process id, not '%s'", a->pid), false;
		opts->target = TARGET_PID;
		opts->pid = (pid_t)v;
		opts->seconds = a->seconds_set ? a->seconds : 10;
		if (kill(opts->pid, 0) != 0 && errno == ESRCH)
			return plumb_fail(EXIT_USAGE, "record: process %d does not exist", (int)opts->pid), false;
		char comm[PROCFS_COMM_MAX];
		if (procfs_comm(opts->pid, 0, comm, sizeof comm))
			snprintf(rec->subject, sizeof rec->subject, "pid %d (%s)", (int)opts->pid, comm);
		else
			snprintf(rec->subject, sizeof rec->subject, "pid %d", (int)opts->pid);
	} else if (a->call) {
		const char *colon = strrchr(a->call, ':');
		if (!colon || colon == a->call || !colon[1])
			return plumb_fail(EXIT_USAGE, "record: --call needs LIB.so:SYMBOL, not '%s'", a->call), false;
		snprintf(rec->call_lib, sizeof rec->call_lib, "%.*s", (int)(colon - a->call), a->call);
		opts->target = TARGET_CALL;
		opts->call_lib = rec->call_lib;
		opts->call_sym = colon + 1;
		opts->seconds = a->seconds_set ? a->seconds : 0;
		snprintf(rec->subject, sizeof rec->subject, "%s()", opts->call_sym);
	} else {
		opts->target = TARGET_COMMAND;
		opts->argv = (char **)&rec->r.pos[rec->r.dashdash];
		opts->seconds = a->seconds_set ? a->seconds : 0;
		const char *slash = strrchr(opts->argv[0], '/');
		snprintf(rec->subject, sizeof rec->subject, "%s", slash && slash[1] ? slash + 1 : opts->argv[0]);
	}
	return true;
}

/* A forced backend that cannot sample this kind of target is a bad argument, said before anything runs. */
static bool record__check_backend_target(struct record *rec, int *rc)
{
	const struct backend *b = rec->a.backend ? backend_find(rec->a.backend) : NULL;
	if (!b || (b->targets & BACKEND_TARGET(rec->opts.target)))
		return true;
	char can[160];
	*rc = plumb_fail(EXIT_USAGE, "record: the %s backend samples %s, not %s", b->name,
			 backend_targets_text(b, can, sizeof can),
			 rec->opts.target == TARGET_COMMAND ? "a launched command"
			 : rec->opts.target == TARGET_PID ? "a running process"
			 : rec->opts.target == TARGET_ALL ? "every process" : "--call");
	return false;
}

/* Checks that every output can be written before the target starts (an unwritable --output costs nothing), and
 * gives the program's stage lines a private temporary file (the stage file is written at the end). */
static bool record__open_outputs(struct record *rec, int *rc)
{
	struct record_args *a = &rec->a;
	struct perr e = PERR_INIT;
	char baseline[PATH_MAX];
	if (atomic_check_writable(a->output, &e) || (a->summary && atomic_check_writable(a->summary, &e)) ||
	    (a->stages && atomic_check_writable(a->stages, &e)) ||
	    (a->save_baseline && store_path_for_write(&STORE_PROFILE_BASELINES, a->save_baseline, true, baseline,
						      sizeof baseline, &e))) {
		*rc = cmd_report_redacted(&e);
		return false;
	}
	rec->opts.output = a->output;
	if (!a->stages)
		return true;
	if (atomic_scratch_open(&rec->stage_lines, a->stages, &e)) {
		*rc = perr_report(&e);
		return false;
	}
	rec->opts.stages_path = rec->stage_lines.tmp_path;
	return true;
}

/* Samples with the first backend that can (backend_run_auto), stopping early on SIGINT or SIGTERM. When none
 * could, the first refusal is the real cause; the fallbacks' failures follow on the same line. */
static bool record__sample(struct record *rec, int *rc)
{
	cleanup_catch(SIGINT, &stop_requested);
	cleanup_catch(SIGTERM, &stop_requested);
	signal(SIGPIPE, SIG_IGN);
	rec->start_unix = (double)time(NULL);
	rec->files = rec->opts.files = sym_files_new(); /* NULL (out of memory): files are opened by name */
	struct perr e = PERR_INIT;
	/* elapsed time, samples and the effective rate on one line, on a terminal only (docs/design.md §3.7) */
	char label[200];
	snprintf(label, sizeof label, "recording %s", rec->subject);
	char *shown = cmd_shown_text(label);
	rec->opts.progress = progress_new(shown, 0);
	free(shown);
	/* sample times are kept for a format that holds them, and for a summary sliced by the stages */
	bool timeline = needs_timeline(rec->kind) || (rec->a.stages && (rec->a.summary || rec->a.save_baseline));
	enum plumb_err ran = backend_run_auto(&rec->opts, timeline, &rec->raw, &rec->res, &rec->run, &e);
	progress_end(rec->opts.progress);
	rec->opts.progress = NULL;
	if (ran == PLUMB_OK)
		return true;
	if (!rec->run.fallback.len)
		*rc = perr_report(&e);
	else
		*rc = plumb_fail(plumb_exit_code(rec->run.refused), "record: %s", rec->run.fallback.buf);
	return false;
}

/* The one summary line (docs/design.md §5.5): what was sampled, how, and how the target ended. */
static void record__summary_line(struct record *rec)
{
	const struct profile *raw = rec->raw;
	const struct profile_meta *meta = profile_meta_const(raw);
	const struct record_result *res = &rec->res;
	double secs = meta->duration_s;
	uint64_t ticks = meta->ticks;
	char procs[48] = "", fate[256] = "";
	if (meta->processes)
		snprintf(procs, sizeof procs, " (%u process%s)", meta->processes, meta->processes > 1 ? "es" : "");
	if (res->ended[0])
		snprintf(fate, sizeof fate, " %s %s.", rec->subject, res->ended);
	else if (rec->opts.target == TARGET_PID)
		snprintf(fate, sizeof fate, " %s is still running.", rec->subject);
	snprintf(rec->summary, sizeof rec->summary,
		 "Sampled %llu tick%s over %.2fs (%.0f/s effective%s, %gs requested) with %s/%s%s; %llu lost.%s",
		 (unsigned long long)ticks, ticks == 1 ? "" : "s", secs,
		 backend_effective_rate(raw, rec->opts.mode, ticks, secs),
		 rec->opts.mode == MODE_WALL && profile_nthreads(raw) > 1 ? " per thread" : "",
		 (double)rec->opts.interval_ns / 1e9, profile_str(raw, meta->backend), profile_str(raw, meta->unwinder),
		 procs, (unsigned long long)meta->lost, fate);
}

/* The summary line on stderr, redacted (it names the target, docs/design.md §3.6). */
static void record__print_summary(const struct record *rec)
{
	char *shown = cmd_shown_text(rec->summary);
	fprintf(stderr, "%s\n", shown);
	free(shown);
}

/* Why nothing was sampled, when a likely cause is known (malloc'd, or NULL). */
static char *record__nothing_sampled_why(const struct record *rec)
{
	const struct record_result *res = &rec->res;
	char *why = NULL;
	if (rec->opts.target == TARGET_PID) {
		struct procfs_stat st;
		/* a kernel thread (kthreadd, kworker/...) has no user space: no user stack to sample */
		if (procfs_stat_read(rec->opts.pid, 0, &st) && (st.pid == 2 || st.ppid == 2))
			return asprintf(&why, "pid %d (%s) is a kernel thread, which has no user stack to sample%s",
					(int)rec->opts.pid, st.comm,
					rec->opts.kernel ? "" : " (and --no-kernel drops its kernel frames)") < 0 ? NULL : why;
		if (res->ended[0])
			return asprintf(&why, "%s %s", rec->subject, res->ended) < 0 ? NULL : why;
		return asprintf(&why, "%s did not run on a CPU while it was sampled (it was idle or asleep; --mode "
				      "wall samples waiting threads too)", rec->subject) < 0 ? NULL : why;
	}
	if (res->ended[0])
		return asprintf(&why, "%s %s", rec->subject, res->ended) < 0 ? NULL : why;
	return NULL;
}

/* What was measured, into the profile's metadata and the summary line; false (nothing is written) when
 * nothing was sampled. */
static bool record__finish_meta(struct record *rec, int *rc)
{
	struct profile *raw = rec->raw;
	const struct record_opts *opts = &rec->opts;
	const struct record_result *res = &rec->res;
	struct profile_meta *meta = profile_meta(raw);
	struct sbuf cmdline = SBUF_INIT;
	join_command(&cmdline, opts, &rec->a);
	meta->command = profile_intern_cstr(raw, cmdline.buf);
	sbuf_release(&cmdline);
	meta->pid = opts->target == TARGET_PID ? opts->pid : 0;
	meta->start_unix = rec->start_unix;
	meta->clock_origin_ns = res->start_ns;
	meta->interval_ns = opts->interval_ns;
	meta->duration_s = res->end_ns > res->start_ns ? (double)(res->end_ns - res->start_ns) / 1e9 : 0;
	meta->mode = profile_intern_cstr(raw, opts->mode == MODE_WALL ? "wall" : "cpu");
	meta->format = profile_intern_cstr(raw, fmt_name(rec->kind)); /* --summary says what the profile was saved as */
	if (res->ended[0])
		meta->ended = profile_intern_cstr(raw, res->ended);

	record__summary_line(rec);
	if (profile_total_weight(raw) != 0)
		return true;
	record__print_summary(rec);
	char *why = record__nothing_sampled_why(rec);
	*rc = plumb_fail(EXIT_FAILED, "record: nothing was sampled%s%s; no profile written", why ? ": " : "",
			 why ? why : "");
	free(why);
	return false;
}

/* The extension a rescued profile gets, so that every reader knows its format again. */
static const char *rescue_ext(enum fmt_kind kind, const char *output)
{
	switch (kind) {
	case FMT_GECKO:
		return str_ends_with(output, ".gz") ? ".json.gz" : ".json";
	case FMT_SPEEDSCOPE:
		return ".speedscope.json";
	case FMT_PPROF:
		return ".pb.gz";
	case FMT_SVG:
		return ".svg";
	default:
		return ".folded";
	}
}

/* The output could not be written (a full disk, a directory gone read-only, a reader gone) at the end of what
 * may have been a long recording: the profile goes to $PLUMB_HOME/rescue/record-DATE-PID.EXT instead
 * (docs/design.md §3.4), and the user is told where. The exit code stays the output's failure. */
static void record__rescue(const struct record *rec, const struct profile *prof, const struct fmt_write_opts *wo)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], stamp[32];
	struct perr e = PERR_INIT;
	int dfd;
	time_t now = time(NULL);
	struct tm tm;
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
	enum plumb_err rc = plumb_home_open("rescue", true, dir, sizeof dir, &dfd, &e);
	if (!rc) {
		close(dfd);
		snprintf(path, sizeof path, "%s/record-%s-%ld%s", dir, stamp, (long)getpid(),
			 rescue_ext(rec->kind, rec->a.output));
		rc = render_write_file(prof, path, rec->kind, wo, NULL, &e);
	}
	if (rc) {
		char *why = redact_dup(e.msg);
		plumb_fail(EXIT_OUTPUT, "record: the profile could not be saved under $PLUMB_HOME/rescue either: %s",
			   why ? why : e.msg);
		free(why);
		return;
	}
	char *shown = redact_path_dup(path);
	fprintf(stderr, "plumb: the profile was saved to %s instead (move it, or `plumb convert` it, where it belongs)\n",
		shown ? shown : path);
	free(shown);
}

/* A debuginfod fetch (the symbolizer bounds its time): one line when it starts, then the progress display on a
 * terminal (ctx: the record's display, made at the first fetch). */
static void say_fetching(void *ctx, const char *module, bool first, long done, long total)
{
	struct progress **display = ctx;
	const char *base = strrchr(module, '/');
	base = base ? base + 1 : module;
	char label[256];
	snprintf(label, sizeof label, "fetching debug information for %s from debuginfod", base);
	if (first) {
		progress_clear();
		fprintf(stderr, "plumb: %s (DEBUGINFOD_URLS)\n", label);
		if (!*display)
			*display = progress_new(label, 0);
		progress_label(*display, label);
	}
	progress_bytes(*display, done > 0 ? (uint64_t)done : 0, total > 0 ? (uint64_t)total : 0);
}

/* Symbolizes each distinct frame once and writes the profile, then --summary, --save-baseline and --stages. */
static bool record__write_outputs(struct record *rec, int *rc)
{
	const struct record_args *a = &rec->a;
	struct profile *prof = NULL;
	struct perr e = PERR_INIT;
	struct progress *fetch_display = NULL;
	struct sym_opts so = { .no_lines = a->no_lines, .hints = &rec->sym_hints, .files = rec->files,
			       .fetching = say_fetching, .fetching_ctx = &fetch_display };
	enum plumb_err src = sym_resolve_profile(rec->raw, &so, &prof, &e);
	progress_end(fetch_display);
	if (src) {
		*rc = perr_report(&e);
		return false;
	}
	enum fmt_kind kind = rec->kind;
	struct fmt_write_opts wo = { 0 };
	wo.threads = a->threads || a->all; /* --all: a root per process, `name (pid)` */
	wo.label_flags = a->no_lines ? LABEL_NO_LINES : 0;
	if (render_write_file(prof, a->output, kind, &wo, NULL, &e)) {
		*rc = cmd_report_redacted(&e);
		if (e.code == PLUMB_EOUTPUT)
			record__rescue(rec, prof, &wo);
		profile_free(prof);
		return false;
	}
	if (write_extras(rec, prof, &e)) {
		*rc = perr_report(&e);
		profile_free(prof);
		return false;
	}
	profile_free(prof);
	return true;
}

/* The summary line, and what the user should know about how it was measured. */
static void record__report(const struct record *rec)
{
	const struct record_result *res = &rec->res;
	record__print_summary(rec);
	if (rec->run.fallback.len)
		fprintf(stderr, "plumb: fell back to the %s backend (%s)\n", rec->run.used->name, rec->run.fallback.buf);
	if (res->limits[0])
		fprintf(stderr, "plumb: note: %s\n", res->limits);
	/* one line per module whose samples had no names, each ending in '\n' */
	for (const char *h = rec->sym_hints.buf, *nl; (nl = strchr(h, '\n')) != NULL; h = nl + 1)
		fprintf(stderr, "plumb: %.*s\n", (int)(nl - h), h);
	char *shown = cmd_shown_text(rec->a.output);
	fprintf(stderr, "Wrote %s\n", shown);
	free(shown);
	if (rec->a.save_baseline) { /* every save says where it went */
		shown = cmd_shown_text(rec->baseline_path);
		fprintf(stderr, "Saved profile baseline %s to %s\n", rec->a.save_baseline, shown);
		free(shown);
	}
}

int cmd_record(int argc, char **argv)
{
	struct record *rec = calloc(1, sizeof *rec);
	if (!rec)
		return plumb_fail(EXIT_FAILED, "record: out of memory");
	rec->run = (struct backend_outcome)BACKEND_OUTCOME_INIT;
	rec->stage_lines = (struct atomic_file)ATOMIC_FILE_INIT;
	sbuf_init(&rec->sym_hints);
	int rc = EXIT_FAILED;
	if (record__parse_options(rec, argc, argv, &rc) && record__choose_target(rec, &rc) &&
	    record__check_options(rec, &rc) && record__set_target(rec, &rc) &&
	    record__check_backend_target(rec, &rc) && record__open_outputs(rec, &rc) &&
	    record__sample(rec, &rc) && record__finish_meta(rec, &rc) && record__write_outputs(rec, &rc)) {
		record__report(rec);
		/* docs/design.md §3.2: a target that failed on its own (not one plumb or the user ended) is exit 1,
		 * with the profile written and the summary saying how it ended */
		rc = rec->res.failed && !stop_requested ? EXIT_FAILED : EXIT_DONE;
	}
	atomic_abort(&rec->stage_lines);
	sbuf_release(&rec->sym_hints);
	sym_files_free(rec->files);
	profile_free(rec->raw);
	backend_outcome_release(&rec->run);
	opt_result_release(&rec->r);
	cmd_summary_release(&rec->a.sum);
	free(rec->pids);
	free(rec);
	return rc;
}
