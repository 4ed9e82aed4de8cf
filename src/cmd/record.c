/* record.c — `plumb record`, a face over the sampling session (sample/session.h: the target, the backend and its
 * fallback, the launched command's life): sample, symbolize each distinct frame once, write the profile
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
#include "os/atomic.h"
#include "os/cleanup.h"
#include "base/err.h"
#include "os/home.h"
#include "base/opt.h"
#include "os/procfs.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "os/store.h"
#include "base/str.h"
#include "format/format.h"
#include "format/hot_json.h"
#include "profile/label.h"
#include "render/output.h"
#include "sample/backend.h"
#include "sample/session.h"
#include "sample/stages.h"
#include "symbol/symbol.h"
#include "ui/report.h"
#include "ui/progress.h"

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
	const char *output, *format;
	const char *summary, *stages, *save_baseline;
	bool threads, no_lines, full_names, force, addresses;
	struct cmd_sampling samp;  /* the target and how to sample it, as top and metrics record take them */
	struct cmd_summary sum;    /* the summary options, as hot takes them */
};

/* One `plumb record`, from its options to its summary line (perf's struct record): each step below either
 * goes on or has said what went wrong and set the exit code. */
struct record {
	struct record_args a;      /* the options as given */
	struct hot_opts hot;       /* what --summary and --save-baseline summarize with */
	struct opt_result r;       /* their parse (the command after --) */
	struct session s;          /* the sampling session: its options, the target's life, what was sampled */
	enum fmt_kind kind;        /* the output format */
	struct atomic_file stage_lines; /* the program's stage lines: a private scratch file beside --stages */
	double start_unix;
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
		if (a->samp.pid)
			sbuf_addf(sb, " of pids %s", a->samp.pid);
		if (a->samp.comm)
			sbuf_addf(sb, " named like '%s'", a->samp.comm);
	} else {
		sbuf_addstr(sb, a->samp.call);
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
		rc = stages_write(rec->stage_lines.tmp_path, rec->s.res.start_ns, rec->s.res.end_ns, a->stages, e);
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
		CMD_SAMPLING_OPTS(a->samp),
		OPT_STRING("call", 0, &a->samp.call, "LIB.so:SYMBOL", "load LIB, call SYMBOL() and sample it"),
		OPT_STRING("output", 'o', &a->output, "PATH", "where to write (default ./plumb-profile.folded)"),
		OPT_STRING("format", 0, &a->format, "FMT",
			   "folded, gecko, speedscope, pprof or svg (default: by extension)"),
		OPT_BOOL("threads", 0, &a->threads, "add a root frame per thread: name (tid)"),
		OPT_BOOL("no-lines", 0, &a->no_lines, "drop line numbers so one function is one frame"),
		OPT_BOOL("addresses", 0, &a->addresses,
			 "folded output: each frame's instruction address (label@0xADDR), for plumb annotate"),
		OPT_BOOL("full-names", 0, &a->full_names,
			 "the full C++ signature in labels (default: ns::Class::method)"),
		OPT_STRING("summary", 0, &a->summary, "FILE", "also write the hot summary (plumb.hot.v1 JSON)"),
		OPT_STRING("stages", 0, &a->stages, "FILE",
			   "also write the stage file (a 'command' stage plus the stages the program emitted)"),
		OPT_STRING("save-baseline", 0, &a->save_baseline, "NAME",
			   "save the hot summary as profile baseline NAME (see plumb baseline)"),
		OPT_BOOL("force", 'f', &a->force, "--save-baseline: replace a baseline of that name"),
		CMD_SUMMARY_OPTS(a->sum),
		OPT_END(),
	};
	return cmd_parse_command_options(opts_table, usage_text, description, "record", argc, argv, &rec->r, rc);
}

/* --save-baseline, --force and the summary options: a name that is taken is found before the run, not after it
 * (docs/design.md §5.7), and the summary options are checked as hot checks them. */
static bool record__check_summary(struct record *rec, int *rc)
{
	struct record_args *a = &rec->a;
	*rc = EXIT_USAGE;
	if (a->save_baseline && !a->force && store_exists(&STORE_PROFILE_BASELINES, a->save_baseline)) {
		perr_fail(EXIT_USAGE, "record: a profile baseline named '%s' exists (--force replaces it; `plumb baseline "
				       "list` shows them)", a->save_baseline);
		return false;
	}
	if (a->force && !a->save_baseline)
		return perr_fail(EXIT_USAGE, "record: --force goes with --save-baseline"), false;
	if (!a->summary && !a->save_baseline && cmd_summary_given(&a->sum))
		return perr_fail(EXIT_USAGE, "record: the summary options (--group-by, --top, ...) go with --summary or "
					      "--save-baseline"), false;
	rec->hot = (struct hot_opts)HOT_OPTS_INIT;
	rec->hot.label_flags = (a->no_lines ? LABEL_NO_LINES : 0) | (a->full_names ? 0 : LABEL_SHORT_NAMES);
	if ((a->summary || a->save_baseline) && (*rc = cmd_summary_apply(&a->sum, "record", &rec->hot)))
		return false;
	return true;
}

/* The target and how to sample it (one check for record, top and metrics record: cmd_sampling_apply), then the
 * summary and output options, in a fixed order (the first wrong one is the one reported). */
static bool record__check_options(struct record *rec, int *rc)
{
	struct record_args *a = &rec->a;
	static const struct cmd_sampling_rules rules = { "record", 10, true, true, true, true };
	rec->s.opts.stop = &stop_requested;
	if ((*rc = cmd_sampling_apply(&a->samp, &rules, &rec->r, &rec->s.opts)))
		return false;
	*rc = EXIT_USAGE;
	if (a->save_baseline && !store_name_valid(a->save_baseline)) {
		perr_fail(EXIT_USAGE, "record: --save-baseline needs a name of letters, digits, '.', '_' or '-' (not "
				       "starting with '.' or '-'), not '%s'",
			   a->save_baseline);
		return false;
	}
	if (!record__check_summary(rec, rc))
		return false;
	*rc = EXIT_USAGE;
	rec->kind = a->format ? fmt_from_name(a->format) : fmt_from_path(a->output);
	if (a->format && rec->kind == FMT_UNKNOWN) {
		perr_fail(EXIT_USAGE, "record: unknown --format '%s'", a->format);
		return false;
	}
	if (rec->kind == FMT_UNKNOWN && fmt_path_ext_unknown(a->output)) {
		/* "-o a.xml" would be folded text under a name that promises something else */
		perr_fail(EXIT_USAGE, "record: cannot tell the output format from '%s' (.folded, .txt, .json, .json.gz, "
				       ".speedscope.json, .pb.gz, .pprof, .svg); add --format FMT", a->output);
		return false;
	}
	if (rec->kind == FMT_UNKNOWN)
		rec->kind = FMT_FOLDED;
	return true;
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
	rec->s.opts.output = a->output;
	if (!a->stages)
		return true;
	if (atomic_scratch_open(&rec->stage_lines, a->stages, &e)) {
		*rc = perr_report(&e);
		return false;
	}
	rec->s.opts.stages_path = rec->stage_lines.tmp_path;
	return true;
}

/* Samples through the session (the first backend that can, the launched command's life), stopping early on SIGINT
 * or SIGTERM. When none could, the first refusal is the real cause; the fallbacks' failures follow on the same
 * line. */
static bool record__sample(struct record *rec, int *rc)
{
	cleanup_catch(SIGINT, &stop_requested);
	cleanup_catch(SIGTERM, &stop_requested);
	signal(SIGPIPE, SIG_IGN);
	rec->start_unix = (double)time(NULL);
	rec->files = rec->s.opts.files = sym_files_new(); /* NULL (out of memory): files are opened by name */
	/* elapsed time, samples and the effective rate on one line, on a terminal only (docs/design.md §3.7) */
	char label[200];
	snprintf(label, sizeof label, "recording %s", rec->a.samp.subject);
	char *shown = cmd_shown_text(label);
	rec->s.opts.progress = progress_new(shown, 0);
	free(shown);
	/* sample times are kept for a format that holds them, and for a summary sliced by the stages */
	rec->s.keep_timeline = needs_timeline(rec->kind) || (rec->a.stages && (rec->a.summary || rec->a.save_baseline));
	enum plumb_err ran = session_run(&rec->s);
	progress_end(rec->s.opts.progress);
	rec->s.opts.progress = NULL;
	if (ran == PLUMB_OK)
		return true;
	if (!rec->s.run.fallback.len)
		*rc = perr_report(&rec->s.err);
	else
		*rc = perr_fail(perr_exit_code(rec->s.run.refused), "record: %s", rec->s.run.fallback.buf);
	return false;
}

/* The one summary line (docs/design.md §5.5): what was sampled, how, and how the target ended. */
static void record__summary_line(struct record *rec)
{
	const struct profile *raw = rec->s.raw;
	const struct profile_meta *meta = profile_meta_const(raw);
	double secs = meta->duration_s;
	uint64_t ticks = meta->ticks;
	char procs[48] = "", fate[256] = " ";
	if (meta->processes)
		snprintf(procs, sizeof procs, " (%u process%s)", meta->processes, meta->processes > 1 ? "es" : "");
	session_fate(&rec->s, rec->a.samp.subject, fate + 1, sizeof fate - 1);
	if (!fate[1])
		fate[0] = '\0';
	if (rec->s.res.summary[0]) /* the backend says what it sampled (--mode alloc) */
		return (void)snprintf(rec->summary, sizeof rec->summary, "%s%s", rec->s.res.summary, fate);
	snprintf(rec->summary, sizeof rec->summary,
		 "Sampled %llu tick%s over %.2fs (%.0f/s effective%s, %gs requested) with %s/%s%s; %llu lost.%s",
		 (unsigned long long)ticks, ticks == 1 ? "" : "s", secs,
		 backend_effective_rate(raw, rec->s.opts.mode, ticks, secs),
		 rec->s.opts.mode == MODE_WALL && profile_nthreads(raw) > 1 ? " per thread" : "",
		 (double)rec->s.opts.interval_ns / 1e9, profile_str(raw, meta->backend), profile_str(raw, meta->unwinder),
		 procs, (unsigned long long)meta->lost, fate);
}

/* The summary line on stderr, redacted (it names the target, docs/design.md §3.6). */
static void record__print_summary(const struct record *rec)
{
	char *shown = cmd_shown_text(rec->summary);
	perr_say("%s", shown);
	free(shown);
}

/* Why nothing was sampled, when a likely cause is known (malloc'd, or NULL). */
static char *record__nothing_sampled_why(const struct record *rec)
{
	const struct record_result *res = &rec->s.res;
	char *why = NULL;
	if (rec->s.opts.target == TARGET_PID) {
		struct procfs_stat st;
		/* a kernel thread (kthreadd, kworker/...) has no user space: no user stack to sample */
		if (procfs_stat_read(rec->s.opts.pid, 0, &st) && (st.pid == 2 || st.ppid == 2))
			return asprintf(&why, "pid %d (%s) is a kernel thread, which has no user stack to sample%s",
					(int)rec->s.opts.pid, st.comm,
					rec->s.opts.kernel ? "" : " (and --no-kernel drops its kernel frames)") < 0 ? NULL : why;
		if (res->ended[0])
			return asprintf(&why, "%s %s", rec->a.samp.subject, res->ended) < 0 ? NULL : why;
		return asprintf(&why, "%s did not run on a CPU while it was sampled (it was idle or asleep; --mode "
				      "wall samples waiting threads too)", rec->a.samp.subject) < 0 ? NULL : why;
	}
	if (res->ended[0])
		return asprintf(&why, "%s %s", rec->a.samp.subject, res->ended) < 0 ? NULL : why;
	return NULL;
}

/* What was measured, into the profile's metadata and the summary line; false (nothing is written) when
 * nothing was sampled. */
static bool record__finish_meta(struct record *rec, int *rc)
{
	struct profile *raw = rec->s.raw;
	const struct record_opts *opts = &rec->s.opts;
	const struct record_result *res = &rec->s.res;
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
	meta->mode = profile_intern_cstr(raw, opts->mode == MODE_WALL ? "wall" : opts->mode == MODE_ALLOC ? "alloc" : "cpu");
	meta->format = profile_intern_cstr(raw, fmt_name(rec->kind)); /* --summary says what the profile was saved as */
	if (res->ended[0])
		meta->ended = profile_intern_cstr(raw, res->ended);

	record__summary_line(rec);
	if (profile_total_weight(raw) != 0)
		return true;
	record__print_summary(rec);
	char *why = record__nothing_sampled_why(rec);
	*rc = perr_fail(EXIT_FAILED, "record: nothing was sampled%s%s; no profile written", why ? ": " : "",
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
	enum plumb_err rc = home_open("rescue", true, dir, sizeof dir, &dfd, &e);
	if (!rc) {
		/* written through the directory checked by home_open, not by its path again (docs/design.md §3.5) */
		char anchored[128];
		const char *ext = rescue_ext(rec->kind, rec->a.output);
		snprintf(path, sizeof path, "%s/record-%s-%ld%s", dir, stamp, (long)getpid(), ext);
		snprintf(anchored, sizeof anchored, "/proc/self/fd/%d/record-%s-%ld%s", dfd, stamp, (long)getpid(), ext);
		rc = render_write_file(prof, anchored, rec->kind, wo, NULL, &e);
		close(dfd);
	}
	if (rc) {
		char *why = redact_dup(e.msg);
		perr_fail(EXIT_OUTPUT, "record: the profile could not be saved under $PLUMB_HOME/rescue either: %s",
			   why ? why : e.msg);
		free(why);
		return;
	}
	char *shown = redact_path_dup(path);
	perr_say("plumb: the profile was saved to %s instead (move it, or `plumb convert` it, where it belongs)",
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
		perr_say("plumb: %s (DEBUGINFOD_URLS)", label);
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
	enum plumb_err src = sym_resolve_profile(rec->s.raw, &so, &prof, &e);
	progress_end(fetch_display);
	if (src) {
		*rc = perr_report(&e);
		return false;
	}
	enum fmt_kind kind = rec->kind;
	struct fmt_write_opts wo = { 0 };
	wo.threads = a->threads || a->samp.all; /* --all: a root per process, `name (pid)` */
	wo.label_flags = (a->no_lines ? LABEL_NO_LINES : 0) | (a->full_names ? 0 : LABEL_SHORT_NAMES) |
			 (a->addresses && kind == FMT_FOLDED ? LABEL_ADDRESS : 0);
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
	const struct record_result *res = &rec->s.res;
	record__print_summary(rec);
	if (rec->s.run.fallback.len)
		perr_say("plumb: fell back to the %s backend (%s)", rec->s.run.used->name, rec->s.run.fallback.buf);
	if (res->limits[0])
		perr_say("plumb: note: %s", res->limits);
	/* one line per module whose samples had no names, each ending in '\n' */
	for (const char *h = rec->sym_hints.buf, *nl; (nl = strchr(h, '\n')) != NULL; h = nl + 1)
		perr_say("plumb: %.*s", (int)(nl - h), h);
	char *shown = cmd_shown_text(rec->a.output);
	perr_say("Wrote %s", shown);
	free(shown);
	if (rec->a.save_baseline) { /* every save says where it went */
		shown = cmd_shown_text(rec->baseline_path);
		perr_say("Saved profile baseline %s to %s", rec->a.save_baseline, shown);
		free(shown);
	}
}

int cmd_record(int argc, char **argv)
{
	struct record *rec = calloc(1, sizeof *rec);
	if (!rec)
		return perr_fail(EXIT_FAILED, "record: out of memory");
	session_init(&rec->s);
	rec->stage_lines = (struct atomic_file)ATOMIC_FILE_INIT;
	sbuf_init(&rec->sym_hints);
	int rc = EXIT_FAILED;
	if (record__parse_options(rec, argc, argv, &rc) && record__check_options(rec, &rc) &&
	    record__open_outputs(rec, &rc) &&
	    record__sample(rec, &rc) && record__finish_meta(rec, &rc) && record__write_outputs(rec, &rc)) {
		record__report(rec);
		/* docs/design.md §3.2: a target that failed on its own (not one plumb or the user ended) is exit 1,
		 * with the profile written and the summary saying how it ended */
		rc = rec->s.res.failed && !stop_requested ? EXIT_FAILED : EXIT_DONE;
	}
	atomic_abort(&rec->stage_lines);
	sbuf_release(&rec->sym_hints);
	sym_files_free(rec->files);
	session_release(&rec->s);
	opt_result_release(&rec->r);
	cmd_summary_release(&rec->a.sum);
	cmd_sampling_release(&rec->a.samp);
	free(rec);
	return rc;
}
