/* metrics_record.c — `plumb metrics record`: a bounded recording of a process tree, launched or attached, through
 * the one sampling session (docs/design.md §7); with --profile, the tree's stacks too. The recording is written
 * whole (temp + rename) every few seconds; nothing is written when nothing was recorded. */
#include "cmd/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os/atomic.h"
#include "os/cleanup.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/opt.h"
#include "os/procfs.h"
#include "base/redact.h"
#include "os/spawn.h"
#include "os/store.h"
#include "base/sbuf.h"
#include "cmd/push_cmd.h"
#include "metrics/metrics.h"
#include "sample/backend.h"
#include "sample/session.h"
#include "symbol/files.h"
#include "symbol/symbol.h"
#include "format/format.h"
#include "render/output.h"
#include "ui/report.h"

#define NO_RECORDING_HINT "was the program started with PLUMB_DEBUG=1?"

/* ---------------------------------------------------------------- redaction */

/* Every path and command word this command prints goes through the redactor (docs/design.md §3.6): the recording's
 * path is under $PLUMB_HOME, by default in the home directory, which a message writes as `~/`. The redacted copy is
 * made where the text is printed (cmd_shown_text, cmd_fail_shown, cmd_report_redacted); the values the command
 * works with (paths it opens) stay whole. */

/* A recording name derived from text the user did not choose as a name (a command's basename, a comm): from
 * its redacted form, so that the file name and the artifact's name field cannot carry a secret either. */
static void name_from_redacted(const char *text, char *buf, size_t cap)
{
	char *r = redact_dup(text);
	store_name_from(r ? r : "process", buf, cap);
	free(r);
}

/* ---------------------------------------------------------------- recording */

/* SIGINT/SIGTERM (cleanup_catch: the number, and whether the terminal sent it to the whole group) */
static volatile sig_atomic_t stop_signal;

static void on_child(int sig)
{
	(void)sig; /* only wakes ppoll */
}

/* What `metrics record` was asked, once its options are checked. */
struct record_request {
	double every;
	long keep;
	const char *every_arg, *name_arg;
	const char *profile;                /* --profile FILE: also sample the stacks, as record would write them */
	char name[STORE_NAME_MAX + 1];      /* --name, else the program's (redacted) name */
	bool force;                         /* --force: replace a recording of that name */
	struct cmd_sampling samp;           /* the target (and how a profile would be sampled), as record takes it */
	struct opt_result res;              /* the parse: the command after `--` */
	struct session s;                   /* the target's life: launched, ended, and how it ended */
	enum fmt_kind kind;                 /* --profile's format */
	struct sym_files *files;            /* --profile: the target's files as it saw them, for the symbolizer */
	int done_pipe[2];                   /* --profile: the session's end, to wake the recording loop */
};

/* The sampling options that are about stacks: they go with --profile. */
static const char *stack_option(const struct cmd_sampling *c)
{
	return c->interval_set ? "--interval" : c->rate_set ? "--rate" : c->mode ? "--mode" : c->unwind ? "--unwind"
	       : c->stack_set ? "--stack-size" : c->no_kernel ? "--no-kernel" : c->backend ? "--backend"
	       : c->native ? "--native" : c->idle ? "--idle" : NULL;
}

/* The options of `metrics record` into rq; false with *rc set when they end the command (--help, a mistake). */
static bool record_options(int argc, char **argv, struct record_request *rq, int *rc)
{
	long keep = METRICS_DEFAULT_KEEP;
	rq->force = false;
	const struct opt opts[] = {
		CMD_SAMPLING_OPTS(rq->samp),
		OPT_STRING("every", 0, &rq->every_arg, "S", "seconds between samples (default 5; 200ms, 0.5, 1m)"),
		OPT_LONG("keep", 0, &keep, "N", "samples kept in the recording (default 120)"),
		OPT_STRING("name", 0, &rq->name_arg, "NAME",
			   "recording name: $PLUMB_HOME/metrics/NAME.json (default: the program's name)"),
		OPT_BOOL("force", 'f', &rq->force, "replace a recording of that name"),
		OPT_STRING("profile", 0, &rq->profile, "FILE",
			   "also sample the stacks of the tree into FILE, as plumb record writes it "
			   "(format by extension)"),
		OPT_END(),
	};
	if (!cmd_parse_command_options(opts,
				       "plumb metrics record [--every S] [--keep N] [--name NAME] (--pid PID | --target NAME | "
				       "-- COMMAND...)",
				       "Records CPU, wake-ups and memory of a process tree until its root exits, --seconds pass or\n"
				       "SIGINT/SIGTERM, into a bounded recording that `plumb metrics` reads. A launched command\n"
				       "lives as under plumb record: ended with plumb, however plumb ends. With --profile FILE the\n"
				       "stacks are sampled too, with record's sampling options (which need --profile).",
				       "metrics record", argc, argv, &rq->res, rc))
		return false;
	rq->every = METRICS_DEFAULT_EVERY;
	static const struct cmd_sampling_rules rules = { "metrics record", 0, false, false, true, false };
	const char *stack = stack_option(&rq->samp);
	if ((*rc = cmd_sampling_apply(&rq->samp, &rules, &rq->res, &rq->s.opts)))
		return false;
	const char *name = rq->name_arg;
	if (stack && !rq->profile)
		*rc = perr_fail(EXIT_USAGE, "metrics record: %s is about sampling stacks: it goes with --profile FILE "
					     "(metrics record alone reads CPU, wake-ups and memory from /proc)", stack);
	else if (rq->every_arg && (!opt_parse_seconds(rq->every_arg, &rq->every) || rq->every < METRICS_EVERY_MIN ||
				   rq->every > METRICS_EVERY_MAX))
		*rc = perr_fail(EXIT_USAGE, "metrics record: --every needs a duration between %gs and %gs, not '%s'",
				 METRICS_EVERY_MIN, METRICS_EVERY_MAX, rq->every_arg);
	else if (keep < 1 || keep > METRICS_KEEP_MAX)
		*rc = perr_fail(EXIT_USAGE, "metrics record: --keep must be between 1 and %d", METRICS_KEEP_MAX);
	else if (name && !store_name_valid(name))
		*rc = perr_fail(EXIT_USAGE, "metrics record: '%s' is not a recording name (letters, digits, '.', '_', '-')",
				 name);
	if (*rc != EXIT_DONE)
		return false;
	rq->keep = keep;
	if (name) {
		snprintf(rq->name, sizeof rq->name, "%s", name);
	} else if (rq->s.opts.target == TARGET_COMMAND) {
		const char *base = strrchr(rq->s.opts.argv[0], '/');
		name_from_redacted(base ? base + 1 : rq->s.opts.argv[0], rq->name, sizeof rq->name);
	} else {
		struct procfs_stat st;
		name_from_redacted(procfs_stat_read(rq->s.opts.pid, 0, &st) ? st.comm : "process", rq->name,
				   sizeof rq->name);
	}
	return true;
}

/* SIGINT/SIGTERM/SIGCHLD are blocked except while waiting, so none is lost between checks; *orig is the mask
 * to wait with (and to give the command). */
static void block_signals(sigset_t *orig)
{
	cleanup_catch(SIGINT, &stop_signal);
	cleanup_catch(SIGTERM, &stop_signal);
	struct sigaction sa = { 0 };
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, orig);
}

/* Starts the command to record through the session (the keeper, the parent-death signal); an exit code. */
static int start_command(struct record_request *rq, struct child *child, const sigset_t *orig)
{
	struct perr e = PERR_INIT;
	child->sigmask = orig; /* not the one blocking SIGINT/SIGTERM/SIGCHLD here */
	if (session_launch(&rq->s, child, &e) == PLUMB_OK)
		return EXIT_DONE;
	if (child->exec_errno) {
		char *word = cmd_shown_text(rq->s.opts.argv[0]);
		int code = perr_fail(EXIT_USAGE, "metrics record: cannot run '%s': %s", word, strerror(child->exec_errno));
		free(word);
		return code;
	}
	return cmd_fail_shown(EXIT_USAGE, "metrics record: %s", e.msg);
}

/* Waits until the next sample is due, the root has gone (its pidfd, or the command reaped: *status), the
 * --seconds deadline or a stop signal came. True when the root has gone. */
static bool wait_next(uint64_t next, uint64_t deadline, int pidfd, int done_fd, struct child *child, int *status,
		      const sigset_t *orig)
{
	while (!stop_signal) {
		uint64_t now = mono_ns();
		if (now >= next || (deadline && now >= deadline))
			return false;
		uint64_t until = deadline && deadline < next ? deadline : next;
		struct timespec wait = ns_timespec(until - now);
		/* the root's pidfd, and with --profile the end of the sampling session (it ended the target, or failed) */
		struct pollfd pfd[2] = { { pidfd, POLLIN, 0 }, { done_fd, POLLIN, 0 } };
		bool gone = ppoll(pfd, 2, &wait, orig) > 0;
		if (child->pid > 0 && child_poll(child, status, NULL) == 1)
			gone = true;
		if (gone)
			return true;
	}
	return false;
}

/* Samples every `every` seconds into the recording until the root has gone, --seconds passed or a stop signal
 * came. *gone: the root ended on its own (a command's wait status in *status when it was reaped here). */
static int record_loop(struct metrics_recorder *rec, struct record_request *rq, struct child *child, int done_fd,
		       bool *gone, int *status, const sigset_t *orig)
{
	struct perr e = PERR_INIT;
	int pidfd = procfs_pidfd(rec->root_pid);
	uint64_t next = mono_ns(), step_ns = (uint64_t)(rq->every * 1e9);
	uint64_t deadline = rq->s.opts.seconds > 0 ? next + (uint64_t)(rq->s.opts.seconds * 1e9) : 0;
	int exit_code = EXIT_DONE;
	*gone = false;
	for (;;) {
		size_t n;
		if (metrics_recorder_sample(rec, &n, &e) || (n > 0 && metrics_recorder_write(rec, "recording", &e))) {
			exit_code = cmd_report_redacted(&e);
			break;
		}
		if (n == 0) { /* the root has exited */
			*gone = true;
			break;
		}
		next += step_ns;
		if (wait_next(next, deadline, pidfd, done_fd, child, status, orig)) {
			*gone = true;
			break;
		}
		if (stop_signal || (deadline && mono_ns() >= deadline))
			break;
		uint64_t now = mono_ns();
		if (now > next)
			next = now; /* fell behind: no burst of catch-up samples */
	}
	if (pidfd >= 0)
		close(pidfd);
	return exit_code;
}

/* The root's end, said as record says it (session_fate): a command that ended on its own is reaped; one still
 * running when recording stopped is plumb's to end (the signal passed on, the grace, SIGTERM, SIGKILL). */
static void end_target(struct record_request *rq, struct child *child, bool gone, int status)
{
	struct session *s = &rq->s;
	s->opts.stop = &stop_signal;
	if (s->opts.target == TARGET_COMMAND) {
		if (child->pid > 0 && gone) /* it exited: a zombie to reap (or reaped by child_poll already) */
			status = child_finish(child);
		if (child->pid > 0)
			session_launch_stop(s, child);
		else
			session_launch_ended(s, child, status);
	} else if (gone) {
		snprintf(s->res.ended, sizeof s->res.ended, "exited during the attach");
		s->res.target_exited = true;
	}
}

/* --profile: the sampling session ended (the target ended, or sampling failed); wakes the recording loop. */
static void profile_session_ended(void *ctx)
{
	int fd = *(const int *)ctx;
	ssize_t n;
	do
		n = write(fd, "e", 1);
	while (n < 0 && errno == EINTR);
}

/* --profile: why the session could not sample, as record says it; an exit code. */
static int profile_failure(struct record_request *rq)
{
	struct session *s = &rq->s;
	if (s->run.fallback.len)
		return cmd_fail_shown(perr_exit_code(s->run.refused), "metrics record: %s", s->run.fallback.buf);
	return cmd_report_redacted(&s->err);
}

/* --profile: the sampling session starts in its own thread (its backend launches the command, or attaches to
 * --pid); *root becomes the root's pid. An exit code. */
static int start_profile(struct record_request *rq, const sigset_t *orig, pid_t *root)
{
	struct session *s = &rq->s;
	struct perr e = PERR_INIT;
	if (pipe2(rq->done_pipe, O_CLOEXEC) != 0)
		return perr_fail(EXIT_FAILED, "metrics record: pipe: %s", strerror(errno));
	s->opts.stop = &stop_signal;
	s->opts.command_sigmask = orig; /* the sampling thread has SIGINT/SIGTERM/SIGCHLD blocked, as this one */
	s->opts.files = rq->files = sym_files_new();
	s->keep_timeline = rq->kind == FMT_GECKO || rq->kind == FMT_SPEEDSCOPE;
	s->ended = profile_session_ended;
	s->ended_ctx = &rq->done_pipe[1];
	if (session_start_thread(s, &e))
		return perr_fail(EXIT_FAILED, "metrics record: %s", e.msg);
	if (s->opts.target != TARGET_COMMAND) {
		*root = s->opts.pid;
		return EXIT_DONE;
	}
	for (;;) { /* the pid of the command the backend launches, or the end of a session that could not */
		*root = session_launched(s);
		if (*root > 0)
			return EXIT_DONE;
		struct pollfd pfd = { rq->done_pipe[0], POLLIN, 0 };
		if (poll(&pfd, 1, 10) > 0)
			break;
	}
	session_join(s);
	return s->rc ? profile_failure(rq) : perr_fail(EXIT_FAILED, "metrics record: the command never started");
}

/* --profile: waits for the session to end (the target's end, the signal or the window reached it too; after a
 * failure of the recording it is stopped), then symbolizes and writes the profile as record does. */
static int finish_profile(struct record_request *rq, pid_t root, bool failed)
{
	struct session *s = &rq->s;
	if (failed && !stop_signal)
		stop_signal = BACKEND_STOP_QUIT;
	session_join(s);
	if (s->rc)
		return profile_failure(rq);
	struct profile_meta *meta = profile_meta(s->raw);
	meta->command = profile_intern_cstr(s->raw, rq->samp.subject);
	meta->pid = root;
	meta->clock_origin_ns = s->res.start_ns;
	meta->interval_ns = s->opts.interval_ns;
	meta->duration_s = s->res.end_ns > s->res.start_ns ? (double)(s->res.end_ns - s->res.start_ns) / 1e9 : 0;
	meta->mode = profile_intern_cstr(s->raw, s->opts.mode == MODE_WALL ? "wall" : "cpu");
	meta->format = profile_intern_cstr(s->raw, fmt_name(rq->kind));
	if (s->res.ended[0])
		meta->ended = profile_intern_cstr(s->raw, s->res.ended);
	if (profile_total_weight(s->raw) == 0) {
		perr_warn("metrics record: --profile: nothing was sampled (with %s); no profile written",
			   session_backend(s));
		return EXIT_DONE;
	}
	struct perr e = PERR_INIT;
	struct profile *prof = NULL;
	struct sym_opts so = { .files = rq->files };
	if (sym_resolve_profile(s->raw, &so, &prof, &e))
		return perr_report(&e);
	struct fmt_write_opts wo = { 0 };
	enum plumb_err wrc = render_write_file(prof, rq->profile, rq->kind, &wo, NULL, &e);
	profile_free(prof);
	if (wrc)
		return cmd_report_redacted(&e);
	char *shown = cmd_shown_text(rq->profile);
	perr_say("plumb: metrics: %llu stack sample%s with %s/%s written to %s",
		(unsigned long long)meta->ticks, meta->ticks == 1 ? "" : "s", session_backend(s),
		profile_str(s->raw, meta->unwinder), shown);
	free(shown);
	return EXIT_DONE;
}

/* name (taken) into the first free NAME.N, N from 2; unchanged when none of 2-999 is free (the caller refuses). */
static void free_derived_name(char *name, size_t cap)
{
	char base[96], next[128];
	snprintf(base, sizeof base, "%s", name);
	for (int n = 2; n < 1000; n++) {
		snprintf(next, sizeof next, "%s.%d", base, n);
		if (store_name_valid(next) && !store_exists(&STORE_METRICS, next) && strlen(next) < cap) {
			snprintf(name, cap, "%s", next);
			return;
		}
	}
}

int cmd_metrics_record(int argc, char **argv)
{
	struct record_request *rq = calloc(1, sizeof *rq);
	if (!rq)
		return perr_fail(EXIT_FAILED, "metrics record: out of memory");
	session_init(&rq->s);
	rq->done_pipe[0] = rq->done_pipe[1] = -1;
	int rc, dfd = -1;
	if (!record_options(argc, argv, rq, &rc))
		goto out;
	struct perr e = PERR_INIT;
	char path[PATH_MAX], file[STORE_NAME_MAX + 16];
	/* a name the user gave is replaced only with --force, as every stored thing (docs/design.md §5.7); a name
	 * taken from the command or the process is not the user's choice: a run of the same command again takes the
	 * next free NAME.N, so an earlier recording is neither lost nor in the way (docs/design.md §7) */
	if (!rq->force && !rq->name_arg && store_exists(&STORE_METRICS, rq->name))
		free_derived_name(rq->name, sizeof rq->name);
	if (!rq->force && store_exists(&STORE_METRICS, rq->name)) {
		rc = perr_fail(EXIT_USAGE, "metrics record: a recording named '%s' exists (--force replaces it; `plumb "
					    "metrics --name %s` shows it)", rq->name, rq->name);
		goto out;
	}
	rq->kind = rq->profile ? fmt_from_path(rq->profile) : FMT_FOLDED;
	if (rq->kind == FMT_UNKNOWN && fmt_path_ext_unknown(rq->profile)) {
		rc = perr_fail(EXIT_USAGE, "metrics record: cannot tell the format of --profile '%s' from its extension "
					    "(.folded, .json, .speedscope.json, .pb.gz, .svg)", rq->profile);
		goto out;
	}
	if (rq->kind == FMT_UNKNOWN)
		rq->kind = FMT_FOLDED;
	/* the recording's directory, checked once and kept open: every rewrite is relative to it (§3.5) */
	struct atomic_file probe;
	if ((dfd = store_open_dir_for_write(&STORE_METRICS, rq->name, rq->force, path, sizeof path, file, &e)) < 0 ||
	    atomic_open_at(&probe, dfd, file, path, false, &e) || (atomic_abort(&probe), false) ||
	    (rq->profile && atomic_check_writable(rq->profile, &e))) {
		rc = cmd_report_redacted(&e);
		goto out;
	}
	sigset_t orig;
	block_signals(&orig);
	struct child child = CHILD_INIT;
	bool command = rq->s.opts.target == TARGET_COMMAND;
	pid_t root = rq->s.opts.pid;
	rc = EXIT_DONE;
	if (rq->profile)
		rc = start_profile(rq, &orig, &root);
	else if (command && (rc = start_command(rq, &child, &orig)) == EXIT_DONE)
		root = child.pid;
	struct metrics_recorder rec;
	if (rc == EXIT_DONE && (metrics_recorder_init(&rec, path, rq->name, root, rq->every, (size_t)rq->keep, &e) ||
				metrics_recorder_anchor(&rec, dfd, file, &e))) {
		rc = cmd_report_redacted(&e);
		if (rq->profile)
			finish_profile(rq, root, true);
		else if (command)
			session_launch_stop(&rq->s, &child);
	}
	if (rc != EXIT_DONE) {
		sigprocmask(SIG_SETMASK, &orig, NULL);
		goto out;
	}
	char *path_shown = cmd_shown_text(path);
	/* rec.root_name is redacted already (the recorder keeps only that form) */
	perr_say("plumb: metrics: recording pid %d (%s) every %gs into %s", rec.root_pid, rec.root_name,
		rq->every, path_shown);
	bool gone;
	int status = 0;
	rc = record_loop(&rec, rq, &child, rq->profile ? rq->done_pipe[0] : -1, &gone, &status, &orig);
	int prc = EXIT_DONE;
	if (rq->profile)
		prc = finish_profile(rq, root, rc != EXIT_DONE);
	else
		end_target(rq, &child, gone, status);
	char fate[256] = " ";
	session_fate(&rq->s, rq->samp.subject, fate + 1, sizeof fate - 1);
	if (!fate[1])
		fate[0] = '\0';
	if (rc == EXIT_DONE && prc != EXIT_DONE && rq->s.rc != PLUMB_OK && rec.samples_taken == 0) {
		rc = prc; /* --profile: the session could not sample (a command that cannot run): that is the answer */
	} else if (rc == EXIT_DONE && rec.samples_taken == 0) {
		/* nothing to keep: no recording is written, so the next run of the same name is not refused */
		char why[512];
		snprintf(why, sizeof why, "%s %s before the first sample", rq->samp.subject,
			 rq->s.res.ended[0] ? rq->s.res.ended : "ended");
		char *shown = cmd_shown_text(why);
		rc = perr_fail(EXIT_FAILED, "metrics record: nothing was recorded: %s; no recording written", shown);
		free(shown);
	} else if (rc == EXIT_DONE || rec.count > 0) {
		struct perr we = PERR_INIT;
		if (metrics_recorder_write(&rec, "ended", &we) && rc == EXIT_DONE)
			rc = cmd_report_redacted(&we);
	}
	if (rc == EXIT_DONE) {
		char *shown = cmd_shown_text(fate);
		perr_say("plumb: metrics: %llu sample%s (%zu kept) of %s written to %s.%s",
			(unsigned long long)rec.samples_taken, rec.samples_taken == 1 ? "" : "s", rec.count, rq->name,
			path_shown, shown);
		free(shown);
	}
	if (rc == EXIT_DONE)
		rc = prc;
	/* docs/design.md §3.2: a command that failed on its own is exit 1, with what was recorded written */
	if (rc == EXIT_DONE && rq->s.res.failed && (!stop_signal || stop_signal == BACKEND_STOP_QUIT))
		rc = EXIT_FAILED;
	metrics_recorder_release(&rec);
	free(path_shown);
	sigprocmask(SIG_SETMASK, &orig, NULL);
out:
	if (dfd >= 0)
		close(dfd);
	session_release(&rq->s);
	sym_files_free(rq->files);
	for (int i = 0; i < 2; i++)
		if (rq->done_pipe[i] >= 0)
			close(rq->done_pipe[i]);
	cmd_sampling_release(&rq->samp);
	opt_result_release(&rq->res);
	free(rq);
	return rc;
}
