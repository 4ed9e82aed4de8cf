/* record.c — `plumb record`: choose a backend, sample, symbolize each distinct frame once, write the profile
 * atomically, and say in one line what was measured (docs/design.md §5). The output path is checked before the
 * target starts, so an unwritable --output costs nothing. */
#include "cmd/cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze/analyze.h"
#include "analyze/baseline.h"
#include "base/atomic.h"
#include "base/cleanup.h"
#include "base/err.h"
#include "base/opt.h"
#include "base/procfs.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "base/store.h"
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
	"       plumb record [options] --call LIB.so:SYMBOL";

static const char *const description =
	"Samples a command (and its children), a running process, or one function, and writes its stacks.\n"
	"Needs PLUMB_DEBUG=1. The output format follows the extension of --output (.folded/.txt folded,\n"
	".json/.json.gz Firefox Profiler, .speedscope.json, .pb.gz/.pprof pprof, .svg flame graph) or --format.";

struct record_args {
	const char *pid, *target_name, *call, *output, *format, *mode, *unwind, *backend;
	const char *summary, *stages, *save_baseline;
	double interval, rate, seconds;
	long stack_size;
	bool no_kernel, threads, no_lines, native, idle;
	bool interval_set, rate_set, seconds_set, stack_set;
};

/* Resolves which backends to try, in order: a forced one, or those that want this target, then the rest. */
static size_t choose_backends(const struct record_opts *opts, const struct backend **out, size_t max)
{
	size_t n, k = 0;
	const struct backend *const *all = backend_list(&n);
	if (opts->backend) {
		const struct backend *b = backend_find(opts->backend);
		if (b)
			out[k++] = b;
		return k;
	}
	bool taken[64] = { false };
	for (size_t i = 0; i < n && i < 64 && k < max; i++)
		if (all[i]->wants && all[i]->wants(opts)) {
			out[k++] = all[i];
			taken[i] = true;
		}
	/* then every other backend, in list order, as fallbacks (except those used only when named) */
	for (size_t i = 0; i < n && i < 64 && k < max; i++)
		if (!taken[i] && !all[i]->forced_only)
			out[k++] = all[i];
	return k;
}

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
	} else {
		sbuf_addstr(sb, a->call);
	}
}

static bool needs_timeline(enum fmt_kind kind)
{
	return kind == FMT_GECKO || kind == FMT_SPEEDSCOPE;
}

/* --summary, --save-baseline and --stages: one command that profiles, summarizes and keeps. */
static enum plumb_err write_extras(const struct profile *prof, const struct record_args *a,
				   const struct record_result *res, const char *stage_lines, struct perr *e)
{
	enum plumb_err rc = PLUMB_OK;
	if (a->summary || a->save_baseline) {
		struct hot_opts ho = HOT_OPTS_INIT;
		ho.label_flags = a->no_lines ? LABEL_NO_LINES : 0;
		struct hot_summary *s = NULL;
		rc = hot_analyze(prof, &ho, &s, e);
		if (rc)
			return rc;
		free(s->source);
		s->source = redact_dup(a->output);
		struct sbuf json = SBUF_INIT;
		fmt_hot_json_write(&json, s, 0);
		hot_summary_free(s);
		if (json.oom)
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory writing the summary");
		if (!rc && a->summary)
			rc = atomic_write_file(a->summary, json.buf, json.len, e);
		if (!rc && a->save_baseline)
			rc = baseline_profile_save(a->save_baseline, json.buf, json.len, e);
		sbuf_release(&json);
		if (rc)
			return rc;
	}
	if (a->stages)
		rc = stages_write(stage_lines, res->start_ns, res->end_ns, a->stages, e);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	a.output = "./plumb-profile.folded";
	const struct opt opts_table[] = {
		{ "pid", 'p', OPT_STRING, &a.pid, "PID", "attach to a running process (all its threads)", NULL },
		{ "target", 't', OPT_STRING, &a.target_name, "NAME", "attach to a process that announced itself (plumb.h)",
		  NULL },
		{ "call", 0, OPT_STRING, &a.call, "LIB.so:SYMBOL", "load LIB, call SYMBOL() and sample it", NULL },
		{ "interval", 'i', OPT_DOUBLE, &a.interval, "S", "seconds between samples, 0.0001-1.0 (default 0.005)",
		  &a.interval_set },
		{ "rate", 'F', OPT_DOUBLE, &a.rate, "HZ", "samples per second (the same as --interval 1/HZ)", &a.rate_set },
		{ "seconds", 's', OPT_DOUBLE, &a.seconds, "N",
		  "how long to sample, 1-300 (default 10 for --pid; a command runs to its end)", &a.seconds_set },
		{ "output", 'o', OPT_STRING, &a.output, "PATH", "where to write (default ./plumb-profile.folded)", NULL },
		{ "format", 0, OPT_STRING, &a.format, "FMT", "folded, gecko, speedscope, pprof or svg (default: by extension)",
		  NULL },
		{ "mode", 0, OPT_STRING, &a.mode, "cpu|wall", "on-CPU samples (default) or every thread at every tick", NULL },
		{ "unwind", 0, OPT_STRING, &a.unwind, "dwarf|fp", "user-stack unwinder (default dwarf)", NULL },
		{ "stack-size", 0, OPT_INT, &a.stack_size, "BYTES", "user stack copied per sample for dwarf (default 16384)",
		  &a.stack_set },
		{ "no-kernel", 0, OPT_FLAG, &a.no_kernel, NULL, "drop kernel frames", NULL },
		{ "threads", 0, OPT_FLAG, &a.threads, NULL, "add a root frame per thread: name (tid)", NULL },
		{ "no-lines", 0, OPT_FLAG, &a.no_lines, NULL, "drop line numbers so one function is one frame", NULL },
		{ "backend", 0, OPT_STRING, &a.backend, "NAME", "force a backend (perf_event, ...)", NULL },
		{ "summary", 0, OPT_STRING, &a.summary, "FILE", "also write the hot summary (plumb.hot.v1 JSON)", NULL },
		{ "stages", 0, OPT_STRING, &a.stages, "FILE",
		  "also write the stage file (a 'command' stage plus the stages the program emitted)", NULL },
		{ "save-baseline", 0, OPT_STRING, &a.save_baseline, "NAME", "save the hot summary as profile baseline NAME",
		  NULL },
		{ "native", 0, OPT_FLAG, &a.native, NULL, "python targets: merge native frames", NULL },
		{ "idle", 0, OPT_FLAG, &a.idle, NULL, "python targets: keep idle stacks", NULL },
		{ 0 },
	};
	struct opt_result r;
	int rc;
	if (!cmd_parse_options(opts_table, usage_text, description, argc, argv, &r, &rc))
		return rc;

	struct record_opts opts = { 0 };
	opts.interval_ns = 5000000;
	opts.kernel = !a.no_kernel;
	opts.unwind = UNWIND_DWARF;
	opts.stack_bytes = 16384;
	opts.native = a.native;
	opts.idle = a.idle;
	opts.stop = &stop_requested;
	rc = EXIT_USAGE;
	int ntargets = (a.pid != NULL) + (a.call != NULL) + (a.target_name != NULL) +
		       (r.dashdash >= 0 && r.npos > r.dashdash);
	if (r.dashdash < 0 && r.npos > 0) {
		plumb_fail(EXIT_USAGE, "record: unexpected argument '%s' (put the command after --)", r.pos[0]);
		goto out;
	}
	if (ntargets > 1) {
		plumb_fail(EXIT_USAGE,
			   "record: give one target: -- COMMAND, --pid PID, --target NAME or --call LIB.so:SYMBOL");
		goto out;
	}
	static char target_pid[32];
	if (ntargets == 0 || a.target_name) {
		/* an announced target: the one named, or the only live one (docs/design.md §5.1) */
		char list[2048];
		pid_t pid = 0;
		int found = targets_find(a.target_name, &pid, list, sizeof list);
		if (found != 1) {
			if (a.target_name)
				plumb_fail(EXIT_USAGE, "record: no live target announced as '%s'%s%s", a.target_name,
					   list[0] ? "; announced: " : " (none is announced)", list);
			else if (found == 0)
				plumb_fail(EXIT_USAGE, "record: give a target: -- COMMAND, --pid PID, --target NAME or --call "
					   "LIB.so:SYMBOL (no program announced itself with plumb_announce)");
			else
				plumb_fail(EXIT_USAGE, "record: %d targets are announced, pick one with --target NAME: %s",
					   found, list);
			goto out;
		}
		snprintf(target_pid, sizeof target_pid, "%d", (int)pid);
		a.pid = target_pid;
	}
	if (a.save_baseline && !store_name_valid(a.save_baseline)) {
		plumb_fail(EXIT_USAGE, "record: --save-baseline needs a name of letters, digits, '.', '_' or '-' (not "
				       "starting with '.' or '-'), not '%s'",
			   a.save_baseline);
		goto out;
	}
	if (a.interval_set && a.rate_set) {
		plumb_fail(EXIT_USAGE, "record: give --interval or --rate, not both");
		goto out;
	}
	if (a.rate_set) {
		if (!(a.rate >= 1.0 && a.rate <= 10000.0)) {
			plumb_fail(EXIT_USAGE, "record: --rate must be between 1 and 10000 Hz");
			goto out;
		}
		a.interval = 1.0 / a.rate;
		a.interval_set = true;
	}
	if (a.interval_set) {
		if (!(a.interval >= 0.0001 && a.interval <= 1.0)) {
			plumb_fail(EXIT_USAGE, "record: --interval must be between 0.0001 and 1.0 seconds");
			goto out;
		}
		opts.interval_ns = (uint64_t)(a.interval * 1e9 + 0.5);
	}
	if (a.seconds_set && !(a.seconds >= 1 && a.seconds <= 300)) {
		plumb_fail(EXIT_USAGE, "record: --seconds must be between 1 and 300");
		goto out;
	}
	if (a.mode) {
		if (strcmp(a.mode, "cpu") == 0)
			opts.mode = MODE_CPU;
		else if (strcmp(a.mode, "wall") == 0)
			opts.mode = MODE_WALL;
		else {
			plumb_fail(EXIT_USAGE, "record: --mode must be cpu or wall, not '%s'", a.mode);
			goto out;
		}
	}
	if (a.unwind) {
		if (strcmp(a.unwind, "dwarf") == 0)
			opts.unwind = UNWIND_DWARF;
		else if (strcmp(a.unwind, "fp") == 0)
			opts.unwind = UNWIND_FP;
		else {
			plumb_fail(EXIT_USAGE, "record: --unwind must be dwarf or fp, not '%s'", a.unwind);
			goto out;
		}
	}
	if (a.stack_set) {
		if (a.stack_size < 1024 || a.stack_size > 65000) {
			plumb_fail(EXIT_USAGE, "record: --stack-size must be between 1024 and 65000 bytes");
			goto out;
		}
		opts.stack_bytes = (size_t)a.stack_size & ~(size_t)7;
	}
	if (a.backend && !backend_find(a.backend)) {
		size_t n;
		const struct backend *const *all = backend_list(&n);
		struct sbuf names = SBUF_INIT;
		for (size_t i = 0; i < n; i++)
			sbuf_addf(&names, "%s%s", i ? ", " : "", all[i]->name);
		plumb_fail(EXIT_USAGE, "record: unknown backend '%s' (available: %s)", a.backend, names.buf);
		sbuf_release(&names);
		goto out;
	}
	opts.backend = a.backend;
	enum fmt_kind kind = a.format ? fmt_from_name(a.format) : fmt_from_path(a.output);
	if (a.format && kind == FMT_UNKNOWN) {
		plumb_fail(EXIT_USAGE, "record: unknown --format '%s'", a.format);
		goto out;
	}
	if (kind == FMT_UNKNOWN)
		kind = FMT_FOLDED;
	if (a.pid) {
		char *end;
		long v = strtol(a.pid, &end, 10);
		if (*end || end == a.pid || v <= 0 || v > 0x3fffffff) {
			plumb_fail(EXIT_USAGE, "record: --pid needs a process id, not '%s'", a.pid);
			goto out;
		}
		opts.target = TARGET_PID;
		opts.pid = (pid_t)v;
		opts.seconds = a.seconds_set ? a.seconds : 10;
		if (kill(opts.pid, 0) != 0 && errno == ESRCH) {
			plumb_fail(EXIT_USAGE, "record: process %d does not exist", (int)opts.pid);
			goto out;
		}
	} else if (a.call) {
		const char *colon = strrchr(a.call, ':');
		if (!colon || colon == a.call || !colon[1]) {
			plumb_fail(EXIT_USAGE, "record: --call needs LIB.so:SYMBOL, not '%s'", a.call);
			goto out;
		}
		static char lib[4096];
		snprintf(lib, sizeof lib, "%.*s", (int)(colon - a.call), a.call);
		opts.target = TARGET_CALL;
		opts.call_lib = lib;
		opts.call_sym = colon + 1;
		opts.seconds = a.seconds_set ? a.seconds : 0;
	} else {
		opts.target = TARGET_COMMAND;
		opts.argv = (char **)&r.pos[r.dashdash];
		opts.seconds = a.seconds_set ? a.seconds : 0;
	}

	struct perr e = PERR_INIT;
	if (atomic_check_writable(a.output, &e) || (a.summary && atomic_check_writable(a.summary, &e)) ||
	    (a.stages && atomic_check_writable(a.stages, &e))) {
		rc = perr_report(&e);
		goto out;
	}
	/* the program's stage lines go to a private scratch file beside the stage file, written at the end */
	struct atomic_file stage_lines = ATOMIC_FILE_INIT;
	if (a.stages) {
		if (atomic_scratch_open(&stage_lines, a.stages, &e)) {
			rc = perr_report(&e);
			goto out;
		}
		opts.stages_path = stage_lines.tmp_path;
	}

	cleanup_catch(SIGINT, &stop_requested);
	cleanup_catch(SIGTERM, &stop_requested);
	signal(SIGPIPE, SIG_IGN);

	const struct backend *cands[16];
	size_t ncands = choose_backends(&opts, cands, 16);
	struct profile *raw = NULL;
	struct record_result res;
	struct sbuf fallback = SBUF_INIT;
	const struct backend *used = NULL;
	enum plumb_err brc = PLUMB_EUNSUPPORTED, first_rc = PLUMB_OK;
	double start_unix = (double)time(NULL);
	for (size_t i = 0; i < ncands; i++) {
		profile_free(raw);
		raw = profile_new();
		if (!raw) {
			rc = plumb_fail(EXIT_FAILED, "record: out of memory");
			goto out_profile;
		}
		profile_keep_timeline(raw, needs_timeline(kind));
		memset(&res, 0, sizeof res);
		e = (struct perr)PERR_INIT;
		brc = cands[i]->run(&opts, raw, &res, &e);
		if (brc == PLUMB_OK) {
			used = cands[i];
			break;
		}
		/* Only a refusal of the first backend leads to fallbacks; any other error of it is the answer. */
		if (i == 0 && ((brc != PLUMB_EPERM && brc != PLUMB_EUNSUPPORTED) || opts.backend))
			break;
		if (i > 0 && brc == PLUMB_EINVAL) { /* the target itself is wrong: that is the answer */
			sbuf_reset(&fallback);
			break;
		}
		if (i == 0) {
			first_rc = brc;
			sbuf_addstr(&fallback, e.msg);
		} else {
			sbuf_addf(&fallback, "; the %s fallback failed too: %s", cands[i]->name, e.msg);
		}
	}
	if (!used) {
		if (!fallback.len)
			rc = perr_report(&e);
		else /* the first refusal is the real cause; the fallbacks' failures follow on the same line */
			rc = plumb_fail(plumb_exit_code(first_rc), "record: %s", fallback.buf);
		goto out_profile;
	}

	struct profile_meta *meta = profile_meta(raw);
	struct sbuf cmdline = SBUF_INIT;
	join_command(&cmdline, &opts, &a);
	meta->command = profile_intern_cstr(raw, cmdline.buf);
	sbuf_release(&cmdline);
	meta->pid = opts.target == TARGET_PID ? opts.pid : 0;
	meta->start_unix = start_unix;
	meta->clock_origin_ns = res.start_ns;
	meta->interval_ns = opts.interval_ns;
	meta->duration_s = res.end_ns > res.start_ns ? (double)(res.end_ns - res.start_ns) / 1e9 : 0;
	meta->mode = profile_intern_cstr(raw, opts.mode == MODE_WALL ? "wall" : "cpu");
	meta->format = profile_intern_cstr(raw, fmt_name(kind)); /* --summary says what the profile was saved as */
	if (res.ended[0])
		meta->ended = profile_intern_cstr(raw, res.ended);

	double secs = meta->duration_s;
	uint64_t ticks = meta->ticks;
	char summary[768], procs[48] = "";
	if (meta->processes)
		snprintf(procs, sizeof procs, " (%u process%s)", meta->processes, meta->processes > 1 ? "es" : "");
	snprintf(summary, sizeof summary,
		 "Sampled %llu ticks over %.2fs (%.0f/s effective, %gs requested) with %s/%s%s; %llu lost.",
		 (unsigned long long)ticks, secs, secs > 0 ? (double)ticks / secs : 0.0, (double)opts.interval_ns / 1e9,
		 profile_str(raw, meta->backend), profile_str(raw, meta->unwinder), procs, (unsigned long long)meta->lost);
	if (profile_total_weight(raw) == 0) {
		fprintf(stderr, "%s\n", summary);
		if (res.ended[0])
			rc = plumb_fail(EXIT_FAILED, "record: nothing was sampled (the target %s); no profile written",
					res.ended);
		else
			rc = plumb_fail(EXIT_FAILED, "record: nothing was sampled; no profile written");
		goto out_profile;
	}

	struct profile *prof = NULL;
	struct sym_opts so = { .no_lines = a.no_lines };
	if (sym_resolve_profile(raw, &so, &prof, &e)) {
		rc = perr_report(&e);
		goto out_profile;
	}
	struct fmt_write_opts wo = { 0 };
	wo.threads = a.threads;
	wo.label_flags = a.no_lines ? LABEL_NO_LINES : 0;
	if (render_write_file(prof, a.output, kind, &wo, NULL, &e) || write_extras(prof, &a, &res, stage_lines.tmp_path, &e)) {
		rc = perr_report(&e);
		profile_free(prof);
		goto out_profile;
	}
	profile_free(prof);
	fprintf(stderr, "%s\n", summary);
	if (fallback.len)
		fprintf(stderr, "plumb: fell back to the %s backend (%s)\n", used->name, fallback.buf);
	if (res.limits[0])
		fprintf(stderr, "plumb: note: %s\n", res.limits);
	if (res.ended[0] && opts.target != TARGET_COMMAND)
		fprintf(stderr, "plumb: the target %s\n", res.ended);
	char *shown = redact_dup(a.output);
	fprintf(stderr, "Wrote %s\n", shown ? shown : a.output);
	free(shown);
	rc = EXIT_DONE;
out_profile:
	atomic_abort(&stage_lines);
	profile_free(raw);
	sbuf_release(&fallback);
out:
	opt_result_release(&r);
	return rc;
}
