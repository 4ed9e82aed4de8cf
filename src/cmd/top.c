/* top.c — `plumb top`: a live view of a running process (--pid), of a command it launches, or of the whole machine
 * (--all), docs/design.md §13. The sampling session samples as `record` does (sample/session.h: the same options,
 * backends and fallbacks), in a thread of its own, and calls back after each read (record_opts.on_poll); once per
 * --refresh this thread asks for a copy of what is new (live_copy_take, done in
 * the sampler's thread, so the rings keep being read however long symbolizing takes here), symbolizes it into
 * the session and the last window (analyze/live.h) and shows them: full screen on a terminal, with keys; plain
 * tables, once per interval, in a pipe.
 * Invariant: nothing here stops or traces an attached target (unless `--backend ptrace` is asked for, or the
 * automatic choice falls back to it, and says so). Every way out — q, SIGINT, SIGTERM, SIGHUP, a terminal or
 * a pipe that went away — ends sampling through the backend's stop flag (which closes its perf events) and
 * puts the terminal back as it was. */
#include "cmd/cmd.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os/cleanup.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/opt.h"
#include "os/procfs.h"
#include "base/redact.h"
#include "cmd/top.h"
#include "format/format.h"
#include "profile/label.h"
#include "render/output.h"
#include "sample/backend.h"
#include "sample/session.h"
#include "ui/report.h"

static volatile sig_atomic_t top_stop; /* q, SIGINT, SIGTERM, SIGHUP, SIGPIPE: stop sampling and leave */
static int top_out_errno;              /* stdout failed for another reason than a reader gone (a full disk) */

static const char *const usage_text = "plumb top --pid PID [options]\n"
				      "       plumb top --all [options]\n"
				      "       plumb top [options] -- COMMAND [ARGS...]";

static const char *const description =
	"A live view of what a running process (--pid), a command it launches or the whole machine (--all) is\n"
	"doing: the leaf and inclusive tables of the last interval and of the whole session, side by side, redrawn\n"
	"every --refresh. It samples as record does (the same options, backends and Python frames).\n"
	"Keys: q quit, l leaf, i inclusive, g grouped, G group by, s sort, / filter, p pause, w write the session;\n"
	"with --all, Up/Down and Enter open a process, Esc goes back. In a pipe the tables are printed as plain\n"
	"text once per --refresh. Needs PLUMB_DEBUG=1; --all needs root or kernel.perf_event_paranoid <= 0.";

/* the status line's help, within 80 columns */
#define KEYS_HELP "q quit  l/i leaf/incl  g grouped  G group-by  s sort  / filter  p pause  w write"
#define KEYS_HELP_ALL "q quit  Enter open  Esc back  l/i/g/G tables  s sort  / filter  p pause  w write"

struct top_args {
	const char *group_by, *table, *output, *filter;
	double refresh;
	long top, iterations;
	bool lines, full_names;
	bool refresh_set, top_set, iterations_set;
	struct cmd_sampling samp;  /* the target and how to sample it, as record takes them */
};

struct top {
	struct top_args a;
	struct opt_result r;
	struct session s;          /* the sampling session (its own thread): options, target, backend, what it sampled */
	struct live *live;
	struct top_view_opts vo;
	struct top_tables tt;
	struct top_tty tty;
	struct term_frame frame;
	bool full;                 /* full screen on a terminal; else plain tables on stdout */
	char filter[256];          /* the tables' filter (plumb hot --include) */
	char proc_filter[256];     /* the process view's: on process names */
	uint64_t interval_ns;      /* between two updates */
	/* the sampler's thread and this one: under mu, the sampler takes a copy when `want` is set */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct live_copy *copy;
	bool want, ready, done;    /* asked for a copy, the copy is taken, sampling has ended */
	struct backend_sofar bp;
	struct perr take_err;
	uint64_t taken_ns;         /* when the sampler took the copy: the end of the window */
	struct backend_sofar shown; /* bp as of the last update (this thread's own) */
	uint64_t shown_ns;         /* taken_ns as of the last update */
	uint64_t start_ns, last_update_ns, next_update_ns;
	uint64_t updates;
	uint64_t window_samples;
	bool paused;
	/* the target's CPU (--pid), from /proc */
	uint64_t cpu_ticks;
	double cpu_percent;
	char comm[PROCFS_COMM_MAX]; /* the attached process's name */
	/* keys */
	int prompt;                /* 0, or '/' (filter) or 'w' (write) while a line is typed */
	char input[512];
	size_t ninput;
	char status[768];          /* a message for the status line ("" shows the keys) */
	size_t selected;           /* the row of the process view the cursor is on */
	uint32_t selected_pid;
	char opened[PROCFS_COMM_MAX]; /* the name of the process opened from the process view */
	bool dirty;                /* the screen must be drawn again */
	bool view_changed;         /* the tables must be built again */
	char ended[256];           /* how the target ended, when it did: "pid 42 (xz) exited with 0." */
};

/* A message for the status line, through the redactor (it may name a path or quote an error). */
__attribute__((format(printf, 2, 3))) static void top_say(struct top *t, const char *fmt, ...)
{
	char text[sizeof t->status];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	char *shown = redact_dup(text);
	snprintf(t->status, sizeof t->status, "%s", shown ? shown : "?");
	free(shown);
}

/* ---- options ------------------------------------------------------------------------------------------- */

static bool top_parse_options(struct top *t, int argc, char **argv, int *rc)
{
	struct top_args *a = &t->a;
	a->output = "./plumb-top.folded";
	const struct opt opts_table[] = {
		CMD_SAMPLING_OPTS(a->samp),
		OPT_DOUBLE_SEEN("refresh", 'd', &a->refresh, "S", "seconds between redraws, 0.1-60 (default 1)",
				&a->refresh_set),
		OPT_STRING("table", 0, &a->table, "KIND",
			   "the table shown first: leaf (default), inclusive, grouped-leaf or grouped-inclusive"),
		OPT_STRING("group-by", 0, &a->group_by, "KEY",
			   "what the grouped tables roll up to: file (default), module, library or function"),
		OPT_STRING("filter", 0, &a->filter, "RE", "keep frames matching RE (as plumb hot --include)"),
		OPT_STRING("output", 'o', &a->output, "PATH",
			   "where w writes the session (default ./plumb-top.folded; the format follows the extension)"),
		OPT_LONG_SEEN("iterations", 'n', &a->iterations, "N", "stop after N redraws", &a->iterations_set),
		OPT_LONG_SEEN("top", 0, &a->top, "N", "rows per table in a pipe (default 15)", &a->top_set),
		OPT_BOOL("lines", 0, &a->lines, "keep line numbers (a row per line, not per function)"),
		OPT_BOOL("full-names", 0, &a->full_names,
			 "the full C++ signature in labels (default: ns::Class::method)"),
		OPT_END(),
	};
	return cmd_parse_command_options(opts_table, usage_text, description, "top", argc, argv, &t->r, rc);
}

/* The target and how to sample it (cmd_sampling_apply, as record checks them), then the redraw: --refresh,
 * --iterations, --top. */
static bool top_check_sampling(struct top *t, int *rc)
{
	struct top_args *a = &t->a;
	struct record_opts *o = &t->s.opts;
	static const struct cmd_sampling_rules rules = { "top", 0, false, true, true, false };
	if ((*rc = cmd_sampling_apply(&a->samp, &rules, &t->r, o)))
		return false;
	*rc = EXIT_USAGE;
	if (a->refresh_set && !(a->refresh >= 0.1 && a->refresh <= 60))
		return perr_fail(EXIT_USAGE, "top: --refresh must be between 0.1 and 60 seconds"), false;
	t->interval_ns = (uint64_t)((a->refresh_set ? a->refresh : 1.0) * 1e9);
	if (a->iterations_set && a->iterations < 1)
		return perr_fail(EXIT_USAGE, "top: --iterations must be at least 1"), false;
	if (a->top_set && (a->top < 1 || a->top > 100000))
		return perr_fail(EXIT_USAGE, "top: --top must be between 1 and 100000"), false;
	o->stop = &top_stop;
	return true;
}

/* The first view: --table, --group-by, --filter. */
static bool top_check_view(struct top *t)
{
	struct top_args *a = &t->a;
	struct top_view_opts *vo = &t->vo;
	vo->table = HOT_LEAF;
	vo->group_by = HOT_GROUP_FILE;
	if (a->table && !hot_table_from_name(a->table, &vo->table))
		return cmd_fail_shown(EXIT_USAGE, "top: --table must be leaf, inclusive, grouped-leaf or "
						  "grouped-inclusive, not '%s'", a->table), false;
	if (a->group_by && !hot_group_from_name(a->group_by, &vo->group_by))
		return cmd_fail_shown(EXIT_USAGE, "top: --group-by must be function, file, module or library, not '%s'",
				      a->group_by), false;
	if (a->filter) {
		if (strlen(a->filter) >= sizeof t->filter)
			return perr_fail(EXIT_USAGE, "top: --filter is too long"), false;
		snprintf(t->filter, sizeof t->filter, "%s", a->filter);
		vo->filter = t->filter;
	}
	vo->label_flags = (a->lines ? 0 : LABEL_NO_LINES) | (a->full_names ? 0 : LABEL_SHORT_NAMES);
	vo->processes = a->samp.all;
	vo->interval_ns = t->s.opts.interval_ns;
	return true;
}

/* ---- what is shown ------------------------------------------------------------------------------------- */

/* Builds the tables again for the current view; a filter that is not a regular expression is dropped and
 * said so. */
static void top_rebuild(struct top *t)
{
	struct perr e = PERR_INIT;
	t->vo.processes = t->a.samp.all && !t->vo.pid;
	t->vo.processes_only = t->full;
	t->vo.session_ns = t->last_update_ns - t->start_ns;
	if (top_tables_build(&t->tt, t->live, &t->vo, &e) == PLUMB_EINVAL && (t->vo.filter || t->vo.proc_filter)) {
		top_say(t, "%s", e.msg);
		if (t->vo.processes)
			t->vo.proc_filter = NULL;
		else
			t->vo.filter = NULL;
		e = (struct perr)PERR_INIT;
		top_tables_build(&t->tt, t->live, &t->vo, &e);
	}
	if (e.code)
		top_say(t, "%s", e.msg);
	/* the cursor stays on its process when the order changes */
	for (size_t i = 0; t->selected_pid && i < t->tt.nprocs; i++)
		if (t->tt.procs[i].pid == t->selected_pid)
			t->selected = i;
	if (t->selected >= t->tt.nprocs)
		t->selected = t->tt.nprocs ? t->tt.nprocs - 1 : 0;
	t->selected_pid = t->tt.nprocs ? t->tt.procs[t->selected].pid : 0;
	t->view_changed = false;
	t->dirty = true;
}

/* The CPU the target (--pid) has used, in clock ticks (utime + stime); false for --all or when it is gone. */
static bool top_cpu_ticks(const struct top *t, uint64_t *ticks)
{
	struct procfs_stat st;
	*ticks = t->cpu_ticks;
	if (t->s.opts.target != TARGET_PID || !procfs_stat_read(t->s.opts.pid, 0, &st))
		return false;
	*ticks = st.utime + st.stime;
	return true;
}

/* Asks the sampler's thread for a copy of what is new and waits for it (it is taken within ~50 ms); false when
 * sampling ended first or we are told to stop. */
static bool top_request(struct top *t)
{
	pthread_mutex_lock(&t->mu);
	t->want = true;
	t->ready = false;
	while (!t->ready && !t->done && !top_stop) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&t->cv, &t->mu, &until);
	}
	bool got = t->ready;
	t->want = false;
	t->shown = t->bp;
	t->shown_ns = t->taken_ns;
	if (got && t->take_err.code)
		top_say(t, "%s", t->take_err.msg);
	pthread_mutex_unlock(&t->mu);
	return got;
}

/* Takes in what was sampled since the last update (the new window) and the target's CPU over it. The copy
 * must be up to date: top_request() while sampling, live_copy_take() of the final profile after. */
static void top_update(struct top *t, uint64_t now)
{
	struct perr e = PERR_INIT;
	if (live_update(t->live, live_copy_profile(t->copy), &e))
		top_say(t, "%s", e.msg);
	t->vo.window_ns = now - t->last_update_ns;
	t->last_update_ns = now;
	t->window_samples = live_window_total(t->live);
	uint64_t ticks;
	long hz = sysconf(_SC_CLK_TCK);
	if (top_cpu_ticks(t, &ticks) && t->vo.window_ns && hz > 0)
		t->cpu_percent = 100.0 * (double)(ticks - t->cpu_ticks) / (double)hz / ((double)t->vo.window_ns / 1e9);
	t->cpu_ticks = ticks;
	t->updates++;
	top_rebuild(t);
}

/* The first line: what is watched, how, the effective rate, samples, lost and the CPU used. */
static void top_header(struct top *t, char *buf, size_t n)
{
	double window_s = (double)t->vo.window_ns / 1e9;
	double rate = window_s > 0 ? (double)t->window_samples / window_s : 0;
	char what[160], cpu[64];
	char *name = redact_dup(t->s.opts.target == TARGET_PID ? t->comm : t->a.samp.subject);
	if (t->s.opts.target == TARGET_PID) {
		snprintf(what, sizeof what, "pid %d %s", (int)t->s.opts.pid, name ? name : "?");
		snprintf(cpu, sizeof cpu, "CPU %.0f%%", t->cpu_percent);
	} else if (t->s.opts.target == TARGET_COMMAND) {
		snprintf(what, sizeof what, "%s (launched)", name ? name : "?");
		snprintf(cpu, sizeof cpu, "busy %.2f CPUs",
			 window_s > 0 ? (double)t->window_samples * (double)t->s.opts.interval_ns / 1e9 / window_s : 0);
	} else {
		if (t->vo.pid)
			snprintf(what, sizeof what, "pid %u %s (all processes)", t->vo.pid, t->opened);
		else
			snprintf(what, sizeof what, "all processes (%zu)", t->tt.nprocs);
		/* CPU the samples of the last window stand for, in CPUs */
		snprintf(cpu, sizeof cpu, "busy %.2f CPUs",
			 window_s > 0 ? (double)t->window_samples * (double)t->s.opts.interval_ns / 1e9 / window_s : 0);
	}
	free(name);
	snprintf(buf, n, "plumb top | %s | %s/%s %s | %.0f/s | %llu samples | %llu lost | %s", what,
		 session_backend(&t->s), backend_unwinder_name(&t->s.opts),
		 t->s.opts.mode == MODE_WALL ? "wall" : "cpu", rate, (unsigned long long)t->shown.ticks,
		 (unsigned long long)t->shown.lost, cpu);
}

static void top_mode_line(struct top *t, char *buf, size_t n)
{
	char table[64];
	const char *active = t->vo.processes ? t->vo.proc_filter : t->vo.filter;
	char *filter = active ? redact_dup(active) : NULL;
	snprintf(buf, n, "%s | sort by %s | filter: %s | last %.1fs | session %.1fs%s",
		 t->vo.processes ? "processes" : top_table_title(&t->vo, table, sizeof table),
		 t->vo.sort == TOP_SORT_NAME ? "name" : "share", filter ? filter : "none",
		 (double)t->vo.window_ns / 1e9, (double)(t->last_update_ns - t->start_ns) / 1e9,
		 t->paused ? " | PAUSED" : "");
	free(filter);
}

/* The model of one redraw (strings in the caller's buffers). */
static void top_fill_model(struct top *t, struct top_model *m, char *header, char *mode, char *titles, size_t n)
{
	bool leaf = t->vo.table == HOT_LEAF || t->vo.table == HOT_GROUPED_LEAF;
	bool grouped = t->vo.table == HOT_GROUPED_LEAF || t->vo.table == HOT_GROUPED_INCLUSIVE;
	top_header(t, header, n);
	top_mode_line(t, mode, n);
	snprintf(titles, 64, "last %.1fs", (double)t->vo.window_ns / 1e9);
	snprintf(titles + 64, 64, "session %.1fs", (double)(t->last_update_ns - t->start_ns) / 1e9);
	memset(m, 0, sizeof *m);
	m->header = header;
	m->mode_line = mode;
	m->primary = leaf ? "own%" : "total%";
	m->secondary = leaf ? "total%" : "own%";
	m->what = grouped ? hot_group_name(t->vo.group_by) : "function";
	m->processes = t->vo.processes;
	for (int k = 0; k < 2; k++)
		m->tables[k] = (struct top_table){ titles + 64 * k, t->tt.rows[k], t->tt.nrows[k] };
	m->procs = t->tt.procs;
	m->nprocs = t->tt.nprocs;
	m->selected = t->selected;
	m->status = t->status[0] ? t->status : t->a.samp.all ? KEYS_HELP_ALL : KEYS_HELP;
	m->status_cursor = -1;
}

static void top_draw(struct top *t)
{
	char header[512], mode[512], titles[128], prompt[600];
	struct top_model m;
	top_fill_model(t, &m, header, mode, titles, sizeof header);
	if (t->prompt) {
		snprintf(prompt, sizeof prompt, "%s%.*s", t->prompt == '/' ? "filter (regex): " : "write to: ",
			 (int)t->ninput, t->input);
		m.status = prompt;
		m.status_cursor = (int)term_width(prompt);
	}
	top_view_draw(&t->frame, &m, t->tty.rows, t->tty.cols);
	top_tty_write(&t->tty, t->frame.out.buf, t->frame.out.len);
	t->dirty = false;
}

/* In a pipe: the tables as plain text; a reader that went away ends the session quietly. */
static void top_print(struct top *t)
{
	char header[512], mode[512], titles[128];
	struct top_model m;
	top_fill_model(t, &m, header, mode, titles, sizeof header);
	struct sbuf out = SBUF_INIT;
	top_view_plain(&out, &m, t->a.top_set ? (size_t)t->a.top : 15);
	for (size_t off = 0; off < out.len;) {
		ssize_t w = write(STDOUT_FILENO, out.buf + off, out.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			top_stop = BACKEND_STOP_QUIT; /* EPIPE: `plumb top | head` has what it wanted */
			if (w < 0 && errno != EPIPE)
				top_out_errno = errno; /* anything else is exit 6 (docs/design.md §3.3) */
			break;
		}
		off += (size_t)w;
	}
	sbuf_release(&out);
	t->dirty = false;
}

/* ---- keys ---------------------------------------------------------------------------------------------- */

/* w: the whole session so far, in the format of path's extension (folded when it has none), while sampling
 * goes on. */
static void top_write(struct top *t, const char *path)
{
	struct perr e = PERR_INIT;
	struct profile *s = NULL;
	if (live_view(t->live, false, 0, &s, &e)) {
		top_say(t, "cannot write: %s", e.msg);
		return;
	}
	struct profile_meta *meta = profile_meta(s);
	char command[64];
	if (t->s.opts.target == TARGET_PID)
		snprintf(command, sizeof command, "plumb top --pid %d", (int)t->s.opts.pid);
	else if (t->s.opts.target == TARGET_COMMAND)
		snprintf(command, sizeof command, "plumb top -- %s", t->a.samp.subject);
	else
		snprintf(command, sizeof command, "plumb top --all");
	meta->command = profile_intern_cstr(s, command);
	meta->pid = t->s.opts.target == TARGET_PID ? t->s.opts.pid : 0;
	meta->interval_ns = t->s.opts.interval_ns;
	meta->duration_s = (double)(t->last_update_ns - t->start_ns) / 1e9;
	meta->ticks = profile_total_weight(s);
	meta->lost = t->shown.lost;
	meta->backend = profile_intern_cstr(s, session_backend(&t->s));
	meta->unwinder = profile_intern_cstr(s, backend_unwinder_name(&t->s.opts));
	meta->mode = profile_intern_cstr(s, t->s.opts.mode == MODE_WALL ? "wall" : "cpu");
	enum fmt_kind kind = fmt_from_path(path);
	struct fmt_write_opts wo = { 0 };
	wo.label_flags = t->vo.label_flags;
	wo.threads = t->a.samp.all; /* a root per process, as record --all writes */
	if (render_write_file(s, path, kind == FMT_UNKNOWN ? FMT_FOLDED : kind, &wo, NULL, &e) == PLUMB_OK)
		top_say(t, "wrote %s (%llu samples over %.1fs)", path, (unsigned long long)meta->ticks,
			meta->duration_s);
	else
		top_say(t, "cannot write: %s", e.msg);
	profile_free(s);
}

/* A key while a line is typed (the filter, the path to write to). */
static void top_prompt_key(struct top *t, int key)
{
	if (key == TERM_KEY_ESC) {
		t->prompt = 0;
	} else if (key == TERM_CTRL('u')) {
		t->ninput = 0;
	} else if (key == TERM_KEY_BACKSPACE) {
		while (t->ninput > 0 && ((unsigned char)t->input[--t->ninput] & 0xc0) == 0x80)
			; /* a whole UTF-8 character */
	} else if (key == TERM_KEY_ENTER) {
		t->input[t->ninput] = '\0';
		if (t->prompt == '/' && t->vo.processes) {
			snprintf(t->proc_filter, sizeof t->proc_filter, "%s", t->input);
			t->vo.proc_filter = t->proc_filter[0] ? t->proc_filter : NULL;
			t->view_changed = true;
		} else if (t->prompt == '/') {
			snprintf(t->filter, sizeof t->filter, "%s", t->input);
			t->vo.filter = t->filter[0] ? t->filter : NULL;
			t->view_changed = true;
		} else if (t->ninput) {
			top_write(t, t->input);
		}
		t->prompt = 0;
	} else if (key >= 0x20 && key < 0x100 && key != 0x7f && t->ninput + 1 < sizeof t->input) {
		t->input[t->ninput++] = (char)key;
	}
}

static void top_start_prompt(struct top *t, int which, const char *initial)
{
	t->prompt = which;
	snprintf(t->input, sizeof t->input, "%s", initial ? initial : "");
	t->ninput = strlen(t->input);
	t->status[0] = '\0';
}

/* Up, Down and the pages in the process view; Enter opens the process, Esc (and Left, b, Backspace) go back. */
static bool top_process_key(struct top *t, int key)
{
	size_t page = t->tty.rows > 6 ? (size_t)t->tty.rows - 5 : 1, n = t->tt.nprocs;
	if (t->vo.pid) {
		if (key != TERM_KEY_ESC && key != TERM_KEY_LEFT && key != TERM_KEY_BACKSPACE && key != 'b')
			return false;
		t->vo.pid = 0;
	} else if (key == TERM_KEY_UP || key == 'k') {
		t->selected -= t->selected > 0;
	} else if (key == TERM_KEY_DOWN || key == 'j') {
		t->selected += t->selected + 1 < n;
	} else if (key == TERM_KEY_PGUP) {
		t->selected = t->selected > page ? t->selected - page : 0;
	} else if (key == TERM_KEY_PGDN) {
		t->selected = n && t->selected + page < n ? t->selected + page : n ? n - 1 : 0;
	} else if (key == TERM_KEY_HOME || key == TERM_KEY_END) {
		t->selected = key == TERM_KEY_HOME || !n ? 0 : n - 1;
	} else if ((key == TERM_KEY_ENTER || key == TERM_KEY_RIGHT) && n) {
		t->vo.pid = t->tt.procs[t->selected].pid;
		snprintf(t->opened, sizeof t->opened, "%s", t->tt.procs[t->selected].name); /* redacted already */
	} else {
		return false;
	}
	t->selected_pid = n ? t->tt.procs[t->selected < n ? t->selected : n - 1].pid : 0;
	t->view_changed = true;
	return true;
}

static void top_key(struct top *t, int key)
{
	bool grouped = t->vo.table == HOT_GROUPED_LEAF || t->vo.table == HOT_GROUPED_INCLUSIVE;
	bool leaf = t->vo.table == HOT_LEAF || t->vo.table == HOT_GROUPED_LEAF;
	t->dirty = true;
	if (t->prompt) {
		top_prompt_key(t, key);
		return;
	}
	t->status[0] = '\0';
	if (t->a.samp.all && top_process_key(t, key))
		return;
	switch (key) {
	case 'q': case 'Q':
		top_stop = BACKEND_STOP_QUIT;
		return;
	case 'l': case 'i': case 'g':
		leaf = key == 'g' ? leaf : key == 'l';
		grouped = key == 'g' ? !grouped : grouped;
		t->vo.table = grouped ? (leaf ? HOT_GROUPED_LEAF : HOT_GROUPED_INCLUSIVE)
				      : (leaf ? HOT_LEAF : HOT_INCLUSIVE);
		break;
	case 'G': /* file -> module -> library -> function -> file */
		t->vo.group_by = (enum hot_group)((t->vo.group_by + 1) % (HOT_GROUP_LIBRARY + 1));
		if (!grouped)
			t->vo.table = leaf ? HOT_GROUPED_LEAF : HOT_GROUPED_INCLUSIVE;
		break;
	case 's':
		t->vo.sort = (enum top_sort)((t->vo.sort + 1) % TOP_SORT_COUNT);
		break;
	case '/':
		top_start_prompt(t, '/', t->vo.processes ? t->vo.proc_filter : t->vo.filter);
		return;
	case 'w':
		top_start_prompt(t, 'w', t->a.output);
		return;
	case 'p': case ' ':
		t->paused = !t->paused;
		return;
	case TERM_CTRL('l'):
		top_tty_write(&t->tty, "\033[2J", 4);
		return;
	case '?': case 'h':
		top_say(t, "%s", t->a.samp.all ? KEYS_HELP_ALL : KEYS_HELP);
		return;
	default:
		return;
	}
	t->view_changed = true;
}

/* ---- the loop ------------------------------------------------------------------------------------------ */

/* Called by the backend, in the sampler's thread, after each read of its rings: the progress so far, and a
 * copy of what is new when this thread asked for one. */
static void top_poll(void *ctx, struct profile *raw, const struct backend_sofar *bp)
{
	struct top *t = ctx;
	pthread_mutex_lock(&t->mu);
	t->bp = *bp;
	if (t->want && !t->ready) {
		live_copy_take(t->copy, raw, &t->take_err);
		t->taken_ns = mono_ns();
		t->ready = true;
		pthread_cond_broadcast(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
}

/* Called in the sampler's thread when sampling has ended. */
static void top_sampling_ended(void *ctx)
{
	struct top *t = ctx;
	pthread_mutex_lock(&t->mu);
	t->done = true;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

/* Until q, a signal, --iterations or --seconds, or the end of the target: keys as they come, an update once
 * per interval. */
static void top_loop(struct top *t)
{
	for (;;) {
		pthread_mutex_lock(&t->mu);
		bool done = t->done;
		uint64_t started = t->bp.start_ns;
		pthread_mutex_unlock(&t->mu);
		if (done || top_stop)
			return;
		if (started && !t->start_ns) { /* sampling has begun: the session starts now */
			t->start_ns = t->last_update_ns = started;
			t->next_update_ns = started + t->interval_ns;
			top_cpu_ticks(t, &t->cpu_ticks);
		}
		uint64_t now = mono_ns();
		int wait_ms = !t->start_ns			? 50
			      : now >= t->next_update_ns	? 0
							: (int)((t->next_update_ns - now) / 1000000);
		wait_ms = wait_ms > 100 ? 100 : wait_ms; /* the end of sampling is noticed within 0.1 s */
		if (t->full) {
			top_tty_wait(&t->tty, wait_ms);
			for (int key; !top_stop && (key = top_tty_key(&t->tty)) != TERM_KEY_NONE;)
				top_key(t, key);
			if (top_tty_resized(&t->tty))
				t->dirty = true;
			if (t->tty.gone)
				top_stop = BACKEND_STOP_QUIT; /* nobody is watching: leave the target alone */
		} else if (wait_ms > 0) {
			poll(NULL, 0, wait_ms);
		}
		now = mono_ns();
		if (t->start_ns && now >= t->next_update_ns && !top_stop) {
			t->next_update_ns += t->interval_ns;
			if (t->next_update_ns <= now) /* behind (a slow update): start again from now */
				t->next_update_ns = now + t->interval_ns;
			if (!t->paused && top_request(t)) {
				top_update(t, t->shown_ns); /* the window ends where the copy was taken */
				if (!t->full)
					top_print(t);
				if (t->a.iterations_set && t->updates >= (uint64_t)t->a.iterations)
					top_stop = BACKEND_STOP_QUIT;
			}
		}
		if (t->view_changed)
			top_rebuild(t);
		if (t->full && t->dirty && !top_stop)
			top_draw(t);
	}
}

/* Sampling has ended. When the target exited, its last samples are shown (in a pipe, printed once more; on a
 * terminal, the session stays on screen until q). */
static void top_after(struct top *t)
{
	struct perr e = PERR_INIT;
	session_fate(&t->s, t->a.samp.subject, t->ended, sizeof t->ended);
	if (t->s.opts.target == TARGET_PID && !t->s.res.target_exited)
		t->ended[0] = '\0'; /* still running: top was stopped, nothing to say */
	if (!t->start_ns || top_stop || !t->ended[0])
		return;
	t->shown.ticks = profile_meta_const(t->s.raw)->ticks;
	t->shown.lost = profile_meta_const(t->s.raw)->lost;
	if (live_copy_take(t->copy, t->s.raw, &e) == PLUMB_OK)
		top_update(t, mono_ns());
	if (!t->full) {
		top_print(t);
		return;
	}
	top_say(t, "%s w writes the session, q quits", t->ended);
	t->dirty = true;
	while (!top_stop && !t->tty.gone) {
		if (t->view_changed)
			top_rebuild(t);
		if (t->dirty)
			top_draw(t);
		top_tty_wait(&t->tty, 500);
		for (int key; !top_stop && (key = top_tty_key(&t->tty)) != TERM_KEY_NONE;)
			top_key(t, key);
		if (top_tty_resized(&t->tty))
			t->dirty = true;
	}
}

static int top_run(struct top *t)
{
	struct sym_opts so = { .no_lines = !t->a.lines };
	t->live = live_new(&so);
	t->copy = live_copy_new();
	if (!t->live || !t->copy)
		return perr_fail(EXIT_FAILED, "top: out of memory");
	t->s.opts.on_poll = top_poll;
	t->s.opts.poll_ctx = t;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	t->full = top_tty_open(&t->tty);
	if (!t->full && isatty(STDOUT_FILENO))
		return perr_fail(EXIT_FAILED, "top: cannot set up the terminal: %s", strerror(errno));
	/* a launched command must not draw over the full screen: its streams go to /dev/null there */
	t->s.opts.command_quiet = t->full;
	t->s.ended = top_sampling_ended;
	t->s.ended_ctx = t;
	struct perr e = PERR_INIT;
	if (session_start_thread(&t->s, &e)) {
		top_tty_close(&t->tty);
		return perr_fail(EXIT_FAILED, "top: %s", e.msg);
	}
	top_loop(t);
	pthread_mutex_lock(&t->mu);
	if (!t->done)
		top_stop = BACKEND_STOP_QUIT; /* q, a signal, --iterations: sampling ends too (the target ending ended it already) */
	pthread_mutex_unlock(&t->mu);
	session_join(&t->s);
	if (t->s.rc == PLUMB_OK)
		top_after(t);
	top_tty_close(&t->tty);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	if (t->s.rc && t->s.run.fallback.len)
		return perr_fail(perr_exit_code(t->s.run.refused), "top: %s", t->s.run.fallback.buf);
	if (t->s.rc)
		return cmd_report_redacted(&t->s.err);
	if (t->s.run.fallback.len)
		perr_warn("top: fell back to the %s backend (%s)", t->s.run.used->name, t->s.run.fallback.buf);
	if (t->ended[0]) { /* how the target ended, as record and metrics record say it */
		char *shown = cmd_shown_text(t->ended);
		perr_say("plumb: top: %s", shown);
		free(shown);
	}
	return t->s.res.failed && !top_stop ? EXIT_FAILED : EXIT_DONE;
}

int cmd_top(int argc, char **argv)
{
	struct top *t = calloc(1, sizeof *t);
	if (!t)
		return perr_fail(EXIT_FAILED, "top: out of memory");
	session_init(&t->s);
	int rc = EXIT_USAGE;
	if (top_parse_options(t, argc, argv, &rc) && top_check_sampling(t, &rc) && top_check_view(t)) {
		if (t->s.opts.target == TARGET_PID)
			procfs_comm(t->s.opts.pid, 0, t->comm, sizeof t->comm);
		cleanup_catch(SIGINT, &top_stop);
		cleanup_catch(SIGTERM, &top_stop);
		cleanup_catch(SIGHUP, &top_stop);
		cleanup_catch(SIGPIPE, &top_stop);
		rc = top_run(t);
		if (rc == EXIT_DONE && top_out_errno)
			rc = perr_fail(EXIT_OUTPUT, "top: cannot write to standard output: %s", strerror(top_out_errno));
	}
	top_tables_release(&t->tt);
	term_frame_release(&t->frame);
	live_free(t->live);
	live_copy_free(t->copy);
	session_release(&t->s);
	opt_result_release(&t->r);
	cmd_sampling_release(&t->a.samp);
	free(t);
	return rc;
}
