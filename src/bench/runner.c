/* runner.c — the bench runner. Each run is one fork of /bin/sh -c RUN in its own process group (so a timeout
 * kills the whole command), reaped with wait4 for that run's own rusage. stdin and stdout are /dev/null;
 * stderr goes to an unnamed file whose last line explains a failure. Every file it makes lives beside the
 * artifact (docs/design.md §3.4), and a killed plumb takes the running case with it (the launcher's death
 * signal kills the run's process group). */
#include "bench/runner.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/gate.h"
#include "base/json_tree.h"
#include "base/lines.h"
#include "base/procfs.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "base/spawn.h"
#include "bench/machine.h"

long bench_repeats_for_duration(double duration_s)
{
	double r = ceil(duration_s / BENCH_DURATION_PER_REPEAT_S - 1e-9);
	return r < 1 ? 1 : (long)r;
}

void bench_run_policy(const struct bench_suite *s, const struct bench_policy_request *rq, struct bench_run_opts *o)
{
	/* the command line's choice first, then the suite's: a count of repeats, or a duration that sets one */
	const struct {
		long repeats;
		double duration_s;
		const char *repeats_source, *duration_source;
	} from[] = { { rq->repeats, rq->duration_s, "--repeats", "--duration" },
		     { s->repeats, s->duration_s, "suite repeats", "suite duration" } };
	o->repeats = BENCH_DEFAULT_REPEATS;
	o->duration_s = 0;
	o->policy_source = "default";
	for (size_t i = 0; i < 2; i++) {
		if (from[i].repeats) {
			o->repeats = from[i].repeats;
			o->policy_source = from[i].repeats_source;
			break;
		}
		if (from[i].duration_s > 0) {
			o->repeats = bench_repeats_for_duration(from[i].duration_s);
			o->duration_s = from[i].duration_s;
			o->policy_source = from[i].duration_source;
			break;
		}
	}
	o->warmup = rq->warmup >= 0 ? rq->warmup : s->warmup >= 0 ? s->warmup : BENCH_DEFAULT_WARMUP;
	o->order = rq->order != BENCH_ORDER_UNSET ? rq->order : s->order != BENCH_ORDER_UNSET ? s->order : BENCH_ORDER_SHUFFLE;
	/* without a seed, one from the clock, recorded in the artifact so the order can be run again */
	o->seed = rq->seed >= 0 ? rq->seed : s->seed >= 0 ? s->seed : (long)(mono_ns() % 1000000000ull);
	o->retries = rq->retries >= 0 ? rq->retries : s->retries >= 0 ? s->retries : BENCH_DEFAULT_RETRIES;
}

/* Whether a case's result holds a sample of the program's own (CASE.NAME beyond the runner's five). */
static bool has_own_sample(const struct bench_evidence *ev, const char *case_name)
{
	static const char *const runners[] = { "wall_ms", "user_ms", "sys_ms", "cpu_ms", "max_rss_bytes" };
	size_t prefix = strlen(case_name);
	for (size_t k = 0; k < ev->nsamples; k++) {
		const char *n = ev->samples[k].name;
		if (strncmp(n, case_name, prefix) != 0 || n[prefix] != '.')
			continue;
		bool theirs = true;
		for (size_t i = 0; i < sizeof runners / sizeof runners[0] && theirs; i++)
			theirs = strcmp(n + prefix + 1, runners[i]) != 0;
		if (theirs)
			return true;
	}
	return false;
}

void bench_find_silent_libplumb(const struct bench_suite *s, const struct bench_evidence *ev,
				void (*silent)(void *ctx, const struct bench_case *c), void *ctx)
{
	for (size_t i = 0; i < ev->ncases; i++) {
		const struct bench_case_result *cr = &ev->cases[i];
		const struct bench_case *c = NULL;
		for (size_t k = 0; k < s->ncases && !c; k++)
			if (strcmp(s->cases[k].name, cr->name) == 0)
				c = &s->cases[k];
		if (!c || (cr->status && strcmp(cr->status, "ok") != 0))
			continue;
		const char *debug = getenv("PLUMB_DEBUG");
		for (size_t k = 0; k < c->nenv; k++)
			if (strncmp(c->env[k], "PLUMB_DEBUG=", 12) == 0)
				debug = c->env[k] + 12;
		if (gate_value_enabled(debug) || has_own_sample(ev, cr->name))
			continue;
		char *bin = c->binary ? strdup(c->binary) : bench_command_program(c->run, c->cwd);
		if (bin && bench_binary_needs(bin, "libplumb.so"))
			silent(ctx, c);
		free(bin);
	}
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Redacts every string inside a tags value in place (tags are free text a program attaches to a sample: a URL,
 * a path, an input file's name). Returns false when out of memory. */
static bool redact_tags(json_t *v)
{
	if (json_is_string(v)) {
		char *red = redact_dup(json_string_value(v));
		bool ok = red && json_string_set(v, red) == 0;
		free(red);
		return ok;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x)
			if (!redact_tags(x))
				return false;
	} else if (json_is_array(v)) {
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x)
			if (!redact_tags(x))
				return false;
	}
	return true;
}

bool bench_parse_sample_line(struct bench_evidence *ev, const char *case_name, long run, const char *line, size_t len)
{
	json_t *o = jr_parse(line, len, 0, NULL);
	if (!o)
		return false;
	bool ok = false;
	json_t *name = json_object_get(o, "name"), *value = json_object_get(o, "value");
	json_t *kind = json_object_get(o, "kind"), *unit = json_object_get(o, "unit"), *tags = json_object_get(o, "tags");
	if (json_is_object(o) && json_is_string(name) && json_string_length(name) > 0 &&
	    json_string_length(name) < 256 && !memchr(json_string_value(name), '\0', json_string_length(name)) &&
	    json_is_number(value) && isfinite(json_number_value(value)) && (!kind || json_is_string(kind)) &&
	    (!unit || json_is_string(unit)) && (!tags || json_is_null(tags) || json_is_object(tags))) {
		struct sbuf full = SBUF_INIT;
		sbuf_addf(&full, "%s.%s", case_name, json_string_value(name));
		/* the tags are redacted here, where the sample is captured: the artifact holds only that form */
		bool tags_ok = !json_is_object(tags) || redact_tags(tags);
		char *tag_text = tags_ok && json_is_object(tags) && json_object_size(tags)
					 ? json_dumps(tags, JSON_COMPACT | JSON_SORT_KEYS)
					 : NULL;
		ok = tags_ok && !full.oom && bench_evidence_add_sample(ev, full.buf, kind ? json_string_value(kind) : "",
							    unit ? json_string_value(unit) : "", json_number_value(value),
							    run, tag_text);
		free(tag_text);
		sbuf_release(&full);
	}
	json_decref(o);
	return ok;
}

/* What collect_samples passes along each line. */
struct sample_lines {
	struct bench_evidence *ev;
	const char *case_name;
	long run;
	long bad;
};

static bool take_line(void *ctx, const char *line, size_t n)
{
	struct sample_lines *sl = ctx;
	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
		n--;
	if (n > 0 && !bench_parse_sample_line(sl->ev, sl->case_name, sl->run, line, n))
		sl->bad++;
	return true;
}

/* Reads every line of the samples file (the run's scratch file, reopened by path under the trust rule: the case
 * could have replaced it) into ev, within the caps (base/lines.h): a line longer than BENCH_SAMPLE_LINE_MAX is
 * a bad line, and past BENCH_SAMPLES_FILE_MAX bytes the rest is one more. Returns the number of lines that were
 * not samples. */
static long collect_samples(struct bench_evidence *ev, const char *case_name, long run, const char *path)
{
	struct perr e = PERR_INIT;
	int fd = fs_open_trusted(AT_FDCWD, path, geteuid(), NULL, &e);
	if (fd < 0)
		return e.code == PLUMB_ENOENT ? 0 : 1; /* removed by the case: no samples; replaced by a link: refused */
	struct sample_lines sl = { ev, case_name, run, 0 };
	struct lines_stats st;
	int err = lines_read_fd(fd, BENCH_SAMPLE_LINE_MAX, BENCH_SAMPLES_FILE_MAX, take_line, &sl, &st);
	close(fd);
	return sl.bad + (long)st.too_long + (st.truncated || err); /* each at most the cap's bytes: no wrap */
}

/* The machine's CPU time so far (the first line of /proc/stat), in clock ticks. */
struct cpu_times {
	bool ok;
	unsigned long long busy, idle, steal, total;
};

static void cpu_times_read(struct cpu_times *t)
{
	char buf[512];
	memset(t, 0, sizeof *t);
	ssize_t n = procfs_read_path("/proc/stat", buf, sizeof buf);
	if (n <= 0)
		return;
	buf[n < (ssize_t)sizeof buf ? n : (ssize_t)sizeof buf - 1] = '\0';
	unsigned long long v[8] = { 0 }; /* user nice system idle iowait irq softirq steal */
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
		   &v[7]) < 4)
		return;
	t->busy = v[0] + v[1] + v[2] + v[5] + v[6];
	t->idle = v[3] + v[4];
	t->steal = v[7];
	t->total = t->busy + t->idle + t->steal;
	t->ok = true;
}

struct one_run {
	bool started;
	bool timed_out;
	bool prepare_failed; /* the prepare command exited non-zero: status is its status */
	int status;
	double wall_ms;
	struct rusage ru;
	struct cpu_times before, after; /* the machine around the run */
	bool sched_known;    /* the main process's schedstat was read before it was reaped */
	uint64_t exec_ns, delay_ns; /* its time on a CPU and waiting on a runqueue */
	double runnable;     /* runnable tasks when it ended (/proc/loadavg), NAN when unknown */
	char err[512];       /* why it could not start */
	char stderr_tail[256];
};

static void last_line(int fd, char *out, size_t len)
{
	out[0] = '\0';
	off_t end = lseek(fd, 0, SEEK_END);
	if (end <= 0)
		return;
	off_t start = end > 4096 ? end - 4096 : 0;
	char buf[4097];
	ssize_t n = pread(fd, buf, (size_t)(end - start), start);
	if (n <= 0)
		return;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	char *nl = strrchr(buf, '\n');
	snprintf(out, len, "%s", nl ? nl + 1 : buf);
}

/* In the run's child, after its streams are set: a directory that cannot be entered fails the run (status 126,
 * the reason on the run's stderr), as a shell would. */
static int enter_cwd(void *arg)
{
	const char *dir = arg;
	if (!dir || chdir(dir) == 0)
		return 0;
	dprintf(2, "plumb: cannot enter %s: %s\n", dir, strerror(errno));
	return 126;
}

/* Waits for the run, killing its process group at the timeout or on an interruption. A pidfd lets poll() wait
 * with a timeout; without one (Linux < 5.3) the run is polled every 5 ms. */
static void wait_run(const struct bench_case *c, struct child *ch, uint64_t t0, struct one_run *r)
{
	int pidfd = procfs_pidfd(ch->pid);
	bool ended = false;
	for (;;) {
		double left = c->timeout_s > 0 ? c->timeout_s - (double)(mono_ns() - t0) / 1e9 : -1;
		if (c->timeout_s > 0 && left <= 0) {
			r->timed_out = true;
			break;
		}
		if (interrupted)
			break;
		if (pidfd >= 0) {
			struct pollfd pfd = { pidfd, POLLIN, 0 };
			if (poll(&pfd, 1, c->timeout_s > 0 ? (int)ceil(left * 1000) : -1) > 0) {
				ended = true;
				break;
			}
		} else {
			int got = child_poll(ch, &r->status, &r->ru);
			if (got != 0)
				break;
			struct timespec nap = { 0, 5000000 };
			nanosleep(&nap, NULL);
		}
	}
	if (ended) {
		/* the main process is a zombie until it is reaped: its schedstat still reads (docs/bench.md) */
		char text[128];
		ssize_t n = procfs_read(ch->pid, 0, "schedstat", text, sizeof text - 1);
		unsigned long long run_ns, wait_ns;
		if (n > 0) {
			text[n] = '\0';
			if (sscanf(text, "%llu %llu", &run_ns, &wait_ns) == 2) {
				r->sched_known = true;
				r->exec_ns = run_ns;
				r->delay_ns = wait_ns;
			}
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	if (ch->pid > 0 && (r->timed_out || interrupted))
		child_signal(ch, SIGKILL); /* the whole group */
}

/* Whether the shell may exec a case's command in place of itself: one simple command (no ; & | < > ( ) ` or
 * newline) whose first word is a program (not an assignment, a builtin or `exec` already). Then the run's main
 * process is the program, and its schedstat (its wait for a CPU) speaks for the run. */
static bool may_exec(const char *run, const char *cwd)
{
	if (strpbrk(run, ";&|<>()`\n"))
		return false;
	const char *w = run + strspn(run, " \t");
	size_t n = strcspn(w, " \t");
	if (n == 0 || memchr(w, '=', n) || (n == 4 && strncmp(w, "exec", 4) == 0) || w[0] == '\'' || w[0] == '"')
		return false;
	char *prog = bench_command_program(run, cwd);
	bool ok = prog != NULL;
	free(prog);
	return ok;
}

static void run_once(const struct bench_case *c, const char *samples_path, int stderr_fd, struct one_run *r)
{
	memset(r, 0, sizeof *r);
	if (ftruncate(stderr_fd, 0) != 0 || lseek(stderr_fd, 0, SEEK_SET) < 0) {
		snprintf(r->err, sizeof r->err, "cannot reset the stderr file: %s", strerror(errno));
		return;
	}
	const char **env = calloc(c->nenv + 2, sizeof *env);
	char *samples = NULL;
	if (!env || asprintf(&samples, "PLUMB_SAMPLES=%s", samples_path) < 0) {
		free(env);
		snprintf(r->err, sizeof r->err, "out of memory");
		return;
	}
	for (size_t i = 0; i < c->nenv; i++)
		env[i] = c->env[i];
	env[c->nenv] = samples;
	char *direct = NULL;
	if (may_exec(c->run, c->cwd) && asprintf(&direct, "exec %s", c->run) < 0)
		direct = NULL;
	const char *argv[] = { "sh", "-c", direct ? direct : c->run, NULL };
	struct child ch = CHILD_INIT;
	struct perr e = PERR_INIT;
	ch.path = "/bin/sh";
	ch.argv = argv;
	ch.env = env;
	ch.new_pgrp = true; /* a timeout kills the whole command */
	ch.pdeathsig = SIGKILL; /* the launcher gone (plumb killed): the run goes too */
	ch.in.how = ch.out.how = CHILD_IO_NULL;
	ch.err = (struct child_stream){ CHILD_IO_FD, stderr_fd };
	ch.hook = enter_cwd;
	ch.hook_arg = c->cwd;
	if (c->prepare) {
		/* the prepare command: the same environment, directory and streams, before the clock starts */
		const char *pargv[] = { "sh", "-c", c->prepare, NULL };
		struct child pc = ch;
		pc.argv = pargv;
		enum plumb_err prc = child_start(&pc, &e);
		if (prc) {
			free(samples);
			free(env);
			free(direct);
			snprintf(r->err, sizeof r->err, "prepare: %s", e.msg);
			return;
		}
		struct one_run pr = { 0 };
		wait_run(c, &pc, mono_ns(), &pr);
		int st = pc.pid > 0 ? child_finish(&pc) : -1;
		if (pr.timed_out || interrupted || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			free(samples);
			free(env);
			free(direct);
			r->started = true;
			r->prepare_failed = true;
			r->timed_out = pr.timed_out;
			r->status = st;
			last_line(stderr_fd, r->stderr_tail, sizeof r->stderr_tail);
			return;
		}
		if (ftruncate(stderr_fd, 0) != 0 || lseek(stderr_fd, 0, SEEK_SET) < 0) {
			free(samples);
			free(env);
			free(direct);
			snprintf(r->err, sizeof r->err, "cannot reset the stderr file: %s", strerror(errno));
			return;
		}
	}
	cpu_times_read(&r->before);
	uint64_t t0 = mono_ns();
	enum plumb_err rc = child_start(&ch, &e);
	free(samples);
	free(env);
	free(direct);
	if (rc) {
		snprintf(r->err, sizeof r->err, "%s", e.msg);
		return;
	}
	r->started = true;
	wait_run(c, &ch, t0, r);
	if (ch.pid > 0)
		r->status = child_finish_rusage(&ch, &r->ru);
	r->wall_ms = (double)(mono_ns() - t0) / 1e6;
	cpu_times_read(&r->after);
	r->runnable = NAN;
	char la[128];
	ssize_t ln = procfs_read_path("/proc/loadavg", la, sizeof la - 1);
	int running = 0;
	if (ln > 0) {
		la[ln] = '\0';
		if (sscanf(la, "%*s %*s %*s %d/", &running) == 1)
			r->runnable = running > 0 ? running - 1 : 0; /* not counting the launcher reading it */
	}
	if (r->status < 0)
		snprintf(r->err, sizeof r->err, "cannot wait for the command: %s", strerror(errno));
	last_line(stderr_fd, r->stderr_tail, sizeof r->stderr_tail);
}

/* The launcher: a small process forked before any sample is kept, which forks every run. A forked child's
 * peak RSS starts at its parent's resident size (fork copies the page tables of anonymous memory and exec keeps
 * the old peak), so forking runs from plumb itself would lift every run's max_rss_bytes to plumb's own size,
 * which grows with the samples it holds (measured: /bin/true at 84 MiB after 600k samples). The launcher stays
 * at its start-up size. Requests and replies are fixed-size records over a socketpair. */
struct launch_request {
	size_t case_index;
	char samples_path[4096];
};

struct launcher {
	struct child c;
	int fd;
};

static bool full_io(int fd, void *buf, size_t len, bool write_it)
{
	char *p = buf;
	while (len) {
		ssize_t n = write_it ? write(fd, p, len) : read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* What the launcher process works with (it is a fork: these are its copies). */
struct launcher_ctx {
	const struct bench_suite *s;
	int stderr_fd;
	int sv[2];
};

/* The launcher's loop: one run per request, until plumb closes its end. */
static int launcher_main(void *arg)
{
	const struct launcher_ctx *x = arg;
	close(x->sv[0]);
	struct launch_request rq;
	while (full_io(x->sv[1], &rq, sizeof rq, false)) {
		struct one_run r;
		rq.samples_path[sizeof rq.samples_path - 1] = '\0';
		if (rq.case_index < x->s->ncases)
			run_once(&x->s->cases[rq.case_index], rq.samples_path, x->stderr_fd, &r);
		else {
			memset(&r, 0, sizeof r);
			snprintf(r.err, sizeof r.err, "no such case");
		}
		if (!full_io(x->sv[1], &r, sizeof r, true))
			break;
	}
	return 0;
}

static bool launcher_start(struct launcher *l, const struct bench_suite *s, int stderr_fd)
{
	struct launcher_ctx x = { s, stderr_fd, { -1, -1 } };
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, x.sv) != 0)
		return false;
	l->c = (struct child)CHILD_INIT;
	l->c.fn = launcher_main;
	/* plumb killed (SIGKILL cannot be caught): the launcher gets SIGTERM, which its copy of on_signal turns into
	 * killing the running case's whole process group, as for a Ctrl-C */
	l->c.pdeathsig = SIGTERM;
	l->c.fn_arg = &x; /* read by the fork, which has its own copy */
	struct perr e = PERR_INIT;
	enum plumb_err rc = child_start(&l->c, &e);
	int err = errno;
	close(x.sv[1]);
	if (rc) {
		close(x.sv[0]);
		errno = err;
		return false;
	}
	l->fd = x.sv[0];
	return true;
}

/* Runs one case through the launcher. A SIGINT/SIGTERM sent to plumb alone (not to its process group, as a
 * terminal's Ctrl-C is) is passed on, so the launcher stops the run instead of letting it finish. */
static void launcher_run(struct launcher *l, size_t case_index, const char *samples_path, struct one_run *r)
{
	struct launch_request rq = { .case_index = case_index };
	snprintf(rq.samples_path, sizeof rq.samples_path, "%s", samples_path);
	bool ok = full_io(l->fd, &rq, sizeof rq, true), forwarded = false;
	char *p = (char *)r;
	size_t left = sizeof *r;
	while (ok && left) {
		ssize_t n = read(l->fd, p, left);
		if (n < 0 && errno == EINTR) {
			if (interrupted && !forwarded) {
				child_signal(&l->c, SIGTERM);
				forwarded = true;
			}
			continue;
		}
		if (n <= 0)
			ok = false;
		else {
			p += n;
			left -= (size_t)n;
		}
	}
	if (!ok) {
		memset(r, 0, sizeof *r);
		snprintf(r->err, sizeof r->err, "the launcher process is gone");
	}
}

static void launcher_stop(struct launcher *l)
{
	close(l->fd);
	child_finish(&l->c);
}

static double tv_ms(struct timeval tv)
{
	return (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
}

static char *redacted_or_null(const char *s)
{
	return s ? redact_dup(s) : NULL;
}

/* Fills the case's record before any run: command, cwd, env (redacted), binary and trust. */
static bool describe_case(const struct bench_case *c, struct bench_case_result *cr)
{
	cr->name = strdup(c->name);
	cr->command = redact_dup(c->run);
	cr->cwd = bench_redact_path(c->cwd); /* a suite in the home directory itself runs there */
	cr->timeout_s = c->timeout_s;
	if (c->nenv) {
		cr->env = calloc(c->nenv, sizeof *cr->env);
		if (!cr->env)
			return false;
		for (size_t i = 0; i < c->nenv; i++)
			if (!(cr->env[cr->nenv++] = redact_dup(c->env[i])))
				return false;
	}
	char *bin = c->binary ? strdup(c->binary) : bench_command_program(c->run, c->cwd);
	enum bench_build b = BENCH_BUILD_UNKNOWN;
	if (bin) {
		char why[512];
		char *producer = NULL;
		b = bench_binary_build(bin, &producer, why, sizeof why);
		cr->binary = redacted_or_null(bin);
		/* a DWARF producer string holds the compiler's flags, paths among them (-fdebug-prefix-map=...) */
		cr->producer = redacted_or_null(producer);
		free(producer);
		free(bin);
	}
	cr->trust = strdup(bench_build_trust(b));
	cr->status = strdup("ok");
	if (c->prepare && !(cr->prepare = redact_dup(c->prepare)))
		return false;
	return cr->name && cr->command && cr->cwd && cr->trust && cr->status;
}

static bool set_status(struct bench_case_result *cr, const char *status)
{
	char *s = strdup(status);
	if (!s)
		return false;
	free(cr->status);
	cr->status = s;
	return true;
}

/* The cases the filter selects: sel[i] for each, *nsel of them. PLUMB_EINVAL for a bad filter or none. */
static enum plumb_err select_cases(const struct bench_suite *s, const char *filter, bool **sel, size_t *nsel,
				   struct perr *e)
{
	regex_t re;
	if (filter) {
		int rc = regcomp(&re, filter, REG_EXTENDED | REG_NOSUB);
		if (rc != 0) {
			char msg[128];
			regerror(rc, &re, msg, sizeof msg);
			return perr_set(e, PLUMB_EINVAL, "--case '%s' is not a regular expression: %s", filter, msg);
		}
	}
	*nsel = 0;
	*sel = calloc(s->ncases ? s->ncases : 1, sizeof **sel);
	for (size_t i = 0; *sel && i < s->ncases; i++) {
		(*sel)[i] = !filter || regexec(&re, s->cases[i].name, 0, NULL, 0) == 0;
		*nsel += (*sel)[i];
	}
	if (filter)
		regfree(&re);
	if (!*sel)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (*nsel == 0) {
		free(*sel);
		*sel = NULL;
		return perr_set(e, PLUMB_EINVAL, "--case '%s' matches no case of %s", filter, s->path);
	}
	return PLUMB_OK;
}

/* The artifact's header: suite, policy, machine and git state, and room for nsel cases. */
static enum plumb_err describe_run(const struct bench_suite *s, const struct bench_run_opts *o, size_t nsel,
				   struct bench_evidence *ev, struct perr *e)
{
	ev->suite = strdup(s->name);
	ev->suite_path = redact_dup(s->path);
	/* redacted like every path in the artifact; report and compare find a catalog under the home directory
	 * again through its home-relative form (bench_catalog_of_artifact) */
	ev->catalog_path = redacted_or_null(s->catalog);
	ev->repeats = o->repeats;
	ev->warmup = o->warmup;
	ev->duration_s = o->duration_s;
	ev->policy_source = o->policy_source ? strdup(o->policy_source) : NULL;
	ev->case_filter = o->case_filter ? strdup(o->case_filter) : NULL;
	ev->order = strdup(bench_order_name(o->order));
	ev->seed = o->order == BENCH_ORDER_SHUFFLE ? o->seed : -1;
	ev->retries = o->retries;
	bench_machine_fill(ev);
	bench_git_fill(ev, s->dir);
	ev->cases = calloc(nsel, sizeof *ev->cases);
	if (!ev->suite || !ev->suite_path || !ev->cases)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	return PLUMB_OK;
}

/* A suite run in progress: what bench_run_suite's steps share. */
struct suite_run {
	const struct bench_suite *s;
	const struct bench_run_opts *o;
	struct bench_evidence *ev;
	struct bench_run_outcome *out;
	struct launcher launcher;
	int stderr_fd;                /* the runs' stderr: an unnamed file beside the artifact */
	struct atomic_file samples;   /* this run's PLUMB_SAMPLES: a scratch file beside the artifact */
	struct sigaction old_int, old_term;
	bool oom; /* a sample or a status was lost for want of memory */
};

/* A file with no name for the runs' stderr, in the directory of `near` (a scratch file of ours): nothing to leave
 * behind whatever ends plumb. Where the file system has no O_TMPFILE, a scratch file unlinked at once. */
static int unnamed_file(const char *output, const char *near, struct perr *e)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(near, '/');
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - near) : 1, slash ? near : ".");
	int fd = open(dir[0] ? dir : "/", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	struct atomic_file af;
	if (atomic_scratch_open(&af, output, e))
		return -1;
	fd = open(af.tmp_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		perr_set(e, PLUMB_EOUTPUT, "cannot create a temporary file beside %s: %s", output, strerror(errno));
	atomic_abort(&af);
	return fd;
}

/* The stderr file, the signal handlers and the launcher. */
static enum plumb_err run_open(struct suite_run *sr, struct perr *e)
{
	const char *output = sr->o->output ? sr->o->output : "-";
	sr->samples = (struct atomic_file)ATOMIC_FILE_INIT;
	if (atomic_scratch_open(&sr->samples, output, e))
		return e->code;
	sr->stderr_fd = unnamed_file(output, sr->samples.tmp_path, e);
	atomic_abort(&sr->samples); /* each run gets a fresh one */
	if (sr->stderr_fd < 0)
		return e->code;
	struct sigaction sa = { 0 };
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, &sr->old_int); /* before the launcher forks: it kills a run's group on Ctrl-C too */
	sigaction(SIGTERM, &sa, &sr->old_term);
	if (!launcher_start(&sr->launcher, sr->s, sr->stderr_fd)) {
		int err = errno;
		close(sr->stderr_fd);
		sigaction(SIGINT, &sr->old_int, NULL);
		sigaction(SIGTERM, &sr->old_term, NULL);
		return perr_set(e, PLUMB_EIO, "cannot start the launcher process: %s", strerror(err));
	}
	return PLUMB_OK;
}

static void run_close(struct suite_run *sr)
{
	launcher_stop(&sr->launcher);
	close(sr->stderr_fd);
	sigaction(SIGINT, &sr->old_int, NULL);
	sigaction(SIGTERM, &sr->old_term, NULL);
}

/* A measured run that exited 0: the five figures the runner takes itself, then the samples it wrote, into dst
 * (the attempt's own evidence: it joins the artifact only if it is kept). */
static void keep_measures(struct suite_run *sr, struct bench_evidence *dst, const struct bench_case *c,
			  struct bench_run *run, const struct one_run *r, const char *samples_path)
{
	static const struct {
		const char *metric, *kind, *unit;
	} own[] = { { "wall_ms", "latency", "ms" },
		    { "user_ms", "cpu", "ms" },
		    { "sys_ms", "cpu", "ms" },
		    { "cpu_ms", "cpu", "ms" },
		    { "max_rss_bytes", "memory", "bytes" } };
	/* cpu_ms = user + sys: the kernel splits a task's exact run time into user and sys by tick samples
	 * (cputime_adjust), so each part is off by up to a tick (4 ms at HZ=250) while their sum is exact — the
	 * steadiest CPU figure of a short run */
	double vals[5] = { r->wall_ms, tv_ms(r->ru.ru_utime), tv_ms(r->ru.ru_stime),
			   tv_ms(r->ru.ru_utime) + tv_ms(r->ru.ru_stime), (double)r->ru.ru_maxrss * 1024.0 };
	struct sbuf name = SBUF_INIT;
	for (int m = 0; m < 5; m++) {
		sbuf_reset(&name);
		sbuf_addf(&name, "%s.%s", c->name, own[m].metric);
		if (name.oom || !bench_evidence_add_sample(dst, name.buf, own[m].kind, own[m].unit, vals[m], run->index, NULL))
			sr->oom = true;
	}
	sbuf_release(&name);
	run->bad_sample_lines = collect_samples(dst, c->name, run->index, samples_path);
}

/* The machine while the run went (docs/bench.md "Contention"): other processes' share of the CPUs (the busy
 * time /proc/stat counted minus the run's own CPU time), steal and idle, the run's own wait on a runqueue (when
 * its main process did most of its CPU work, so its schedstat speaks for the run), and whether it was
 * contended. */
static void note_contention(struct bench_run *run, const struct one_run *r)
{
	run->other_cpu_pct = run->steal_pct = run->idle_pct = run->wait_pct = run->load = NAN;
	run->has_contention = true;
	run->load = r->runnable;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	long tick = sysconf(_SC_CLK_TCK);
	double own_ms = tv_ms(r->ru.ru_utime) + tv_ms(r->ru.ru_stime);
	if (r->before.ok && r->after.ok && r->after.total > r->before.total && tick > 0 && ncpu > 0) {
		double ms_per_tick = 1000.0 / (double)tick;
		double total = (double)(r->after.total - r->before.total);
		double busy_ms = (double)(r->after.busy - r->before.busy) * ms_per_tick;
		double cap_ms = r->wall_ms * (double)ncpu;
		double other = busy_ms - own_ms;
		run->other_cpu_pct = cap_ms > 0 ? fmin(100, fmax(0, other) / cap_ms * 100) : NAN;
		run->steal_pct = (double)(r->after.steal - r->before.steal) / total * 100;
		run->idle_pct = (double)(r->after.idle - r->before.idle) / total * 100;
	}
	/* the main process's schedstat speaks for the run when it did most of the run's CPU work (a shell that
	 * exec'd the program; not a shell that waited for a pipeline) */
	if (r->sched_known && r->wall_ms > 0 && (double)r->exec_ns / 1e6 >= 0.5 * own_ms)
		run->wait_pct = fmin(100, (double)r->delay_ns / 1e6 / r->wall_ms * 100);
	bool stolen = isfinite(run->steal_pct) && run->steal_pct >= BENCH_CONTENDED_STEAL_PCT;
	bool waited = isfinite(run->wait_pct) && run->wait_pct >= BENCH_CONTENDED_WAIT_PCT;
	bool saturated = !isfinite(run->wait_pct) && isfinite(run->idle_pct) && run->idle_pct < BENCH_CONTENDED_IDLE_PCT &&
			 run->other_cpu_pct >= BENCH_CONTENDED_OTHER_PCT;
	run->contended = stolen || waited || saturated;
}

/* How contended a kept attempt was, to choose between two (lower is better). */
static double contention_score(const struct bench_run *run)
{
	return isfinite(run->wait_pct) ? run->wait_pct : isfinite(run->other_cpu_pct) ? run->other_cpu_pct : 100;
}

/* A run that did not exit 0: the case's status, the outcome's counts and, for the first, one line on why. */
static void note_failure(struct suite_run *sr, const struct bench_case *c, struct bench_case_result *cr,
			 const struct one_run *r, bool warm, long nth)
{
	char what[160];
	const char *which = r->prepare_failed ? "'s prepare command" : "";
	if (r->timed_out)
		snprintf(what, sizeof what, "%s timed out after %gs", which, c->timeout_s);
	else if (WIFSIGNALED(r->status))
		snprintf(what, sizeof what, "%s was killed by signal %d (%s)", which, WTERMSIG(r->status),
			 strsignal(WTERMSIG(r->status)));
	else
		snprintf(what, sizeof what, "%s exited with status %d", which, WEXITSTATUS(r->status));
	if (!set_status(cr, r->timed_out ? "timed-out" : "failed"))
		sr->oom = true;
	if (r->timed_out)
		sr->out->timed_out++;
	else
		sr->out->failed++;
	if (sr->out->first_problem[0])
		return;
	char *tail = redact_dup(r->stderr_tail);
	snprintf(sr->out->first_problem, sizeof sr->out->first_problem, "case %s%s in %s run %ld%s%s", c->name, what,
		 warm ? "warm-up" : "measured", nth + 1, tail && *tail ? ": " : "", tail ? tail : "");
	free(tail);
}

/* One measured repeat as it may join the artifact: its record, its samples, and the figures that choose the
 * case's core metric. */
struct attempt {
	struct bench_run run;
	struct bench_evidence samples;
	bool filled, ok;
	double wall_ms, cpu_ms, delay_ms; /* delay_ms NAN when unknown */
};

/* One attempt of case ci: a warm-up (into nothing) or repeat run_index (into *at). *go_on turns false when the
 * case stops here: it failed (the rest of its runs would fail the same way) or plumb was interrupted. */
static enum plumb_err run_attempt(struct suite_run *sr, size_t ci, size_t idx, size_t nsel,
				  struct bench_case_result *cr, bool warm, long nth, struct attempt *at, bool *go_on,
				  struct perr *e)
{
	const struct bench_case *c = &sr->s->cases[ci];
	const struct bench_run_opts *o = sr->o;
	*go_on = false;
	if (o->progress)
		o->progress(o->progress_ctx, c->name, idx, nsel, nth, warm ? o->warmup : o->repeats, warm);
	/* a fresh scratch file per run, beside the artifact: removed on any signal plumb can catch, and swept by the
	 * next run after one it cannot (SIGKILL) */
	if (atomic_scratch_open(&sr->samples, o->output ? o->output : "-", e))
		return e->code;
	const char *samples_path = sr->samples.tmp_path;
	struct one_run r;
	launcher_run(&sr->launcher, ci, samples_path, &r);
	enum plumb_err rc = PLUMB_OK;
	bool exited_ok = !r.prepare_failed && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && !r.timed_out;
	if (!r.started || r.err[0]) {
		rc = perr_set(e, PLUMB_EIO, "case %s: %s", c->name, r.err);
	} else if (interrupted && !r.timed_out) {
		/* the run was cut short: nothing of it is kept */
	} else {
		if (!warm) {
			bench_evidence_init(&at->samples);
			memset(&at->run, 0, sizeof at->run);
			struct bench_run *run = &at->run;
			run->index = nth;
			run->attempts = 1;
			run->timed_out = r.timed_out;
			run->signal = WIFSIGNALED(r.status) ? WTERMSIG(r.status) : 0;
			run->exit_code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
			note_contention(run, &r);
			at->filled = true;
			at->ok = exited_ok;
			at->wall_ms = r.wall_ms;
			at->cpu_ms = tv_ms(r.ru.ru_utime) + tv_ms(r.ru.ru_stime);
			at->delay_ms = r.sched_known && isfinite(run->wait_pct) ? (double)r.delay_ns / 1e6 : NAN;
			if (exited_ok)
				keep_measures(sr, &at->samples, c, run, &r, samples_path);
		}
		if (!exited_ok)
			note_failure(sr, c, cr, &r, warm, nth);
		*go_on = exited_ok;
	}
	atomic_abort(&sr->samples);
	return rc;
}

/* A small deterministic generator for the shuffle (splitmix64): the artifact records the seed, so an order can
 * be run again. */
static uint64_t mix_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void shuffle(size_t *v, size_t n, uint64_t *state)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(mix_next(state) % i);
		size_t t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* The selected cases' state through the interleaved rounds. */
struct sched {
	size_t nsel;
	size_t *ci;             /* the suite's case index of each selected case */
	bool *alive;            /* it has not failed */
	bool *rerun;            /* its contended repeats are re-run (its core metric is its wall time) */
	struct attempt *at;     /* nsel * repeats: the kept attempt of each repeat */
};

/* Moves a kept attempt's samples into the artifact (in case, then repeat order). */
static void commit_samples(struct suite_run *sr, struct attempt *at)
{
	for (size_t i = 0; i < at->samples.nsamples; i++) {
		const struct bench_sample *x = &at->samples.samples[i];
		if (!bench_evidence_add_sample(sr->ev, x->name, x->kind, x->unit, x->value, x->run, x->tags))
			sr->oom = true;
	}
	bench_evidence_release(&at->samples);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_of(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof *v, cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The case's core metric: the suite's word, else cpu_ms when its CPU time is at least BENCH_CPU_BOUND_RATIO of
 * the time it did not spend waiting for a CPU (median over its kept repeats), else wall_ms. */
static bool choose_core(const struct bench_case *c, struct bench_case_result *cr, const struct attempt *ats, size_t n)
{
	double *cpu = calloc(n + 1, sizeof *cpu), *busy = calloc(n + 1, sizeof *busy);
	size_t k = 0;
	for (size_t i = 0; cpu && busy && i < n; i++)
		if (ats[i].filled && ats[i].ok) {
			cpu[k] = ats[i].cpu_ms;
			busy[k] = ats[i].wall_ms - (isfinite(ats[i].delay_ms) ? ats[i].delay_ms : 0);
			k++;
		}
	double mc = median_of(cpu, k), mb = median_of(busy, k);
	free(cpu);
	free(busy);
	cr->cpu_wall_ratio = mb > 0 ? mc / mb : NAN;
	const char *core, *source;
	if (c->core && strcmp(c->core, "auto") != 0) {
		core = c->core;
		source = "suite";
	} else if (isfinite(cr->cpu_wall_ratio)) {
		core = cr->cpu_wall_ratio >= BENCH_CPU_BOUND_RATIO ? "cpu_ms" : "wall_ms";
		source = "cpu/wall ratio";
	} else {
		return true; /* no kept repeat: nothing to decide from */
	}
	cr->core_metric = strdup(core);
	cr->core_source = strdup(source);
	return cr->core_metric && cr->core_source;
}

/* Repeat k of every live case, in the round's order. */
static enum plumb_err run_round(struct suite_run *sr, struct sched *sc, long k, bool warm, const size_t *order,
				struct perr *e)
{
	for (size_t j = 0; j < sc->nsel && !interrupted; j++) {
		size_t i = order[j];
		if (!sc->alive[i])
			continue;
		struct bench_case_result *cr = &sr->ev->cases[i];
		struct attempt *at = warm ? NULL : &sc->at[i * (size_t)sr->o->repeats + (size_t)k];
		struct attempt scratch = { 0 };
		bool go_on;
		enum plumb_err rc = run_attempt(sr, sc->ci[i], i, sc->nsel, cr, warm, k, at ? at : &scratch, &go_on, e);
		if (rc)
			return rc;
		if (at && at->filled)
			cr->runs[cr->nruns++] = at->run;
		sc->alive[i] = go_on;
	}
	return PLUMB_OK;
}

/* Re-runs each contended repeat of the live cases once more (in a shuffled order, so a burst that made them
 * contended is not met again in the same place); a re-run is kept when it ran uncontended or less contended. */
static enum plumb_err rerun_contended(struct suite_run *sr, struct sched *sc, uint64_t *rng, bool *any,
				      struct perr *e)
{
	size_t reps = (size_t)sr->o->repeats, n = 0;
	size_t *todo = malloc((sc->nsel * reps + 1) * sizeof *todo);
	if (!todo)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < sc->nsel; i++)
		for (size_t k = 0; sc->alive[i] && sc->rerun[i] && k < sr->ev->cases[i].nruns; k++)
			if (sr->ev->cases[i].runs[k].contended)
				todo[n++] = i * reps + k;
	*any = n > 0;
	shuffle(todo, n, rng);
	enum plumb_err rc = PLUMB_OK;
	for (size_t t = 0; t < n && !rc && !interrupted; t++) {
		size_t i = todo[t] / reps, k = todo[t] % reps;
		if (!sc->alive[i])
			continue;
		struct bench_case_result *cr = &sr->ev->cases[i];
		struct attempt fresh = { 0 };
		bool go_on;
		rc = run_attempt(sr, sc->ci[i], i, sc->nsel, cr, false, (long)k, &fresh, &go_on, e);
		if (rc || !fresh.filled)
			break;
		cr->reruns++;
		struct attempt *kept = &sc->at[todo[t]];
		long attempts = kept->run.attempts + 1;
		if (!fresh.ok) { /* it failed this time: the case ends as failed, the repeat keeps its good attempt */
			sc->alive[i] = false;
			bench_evidence_release(&fresh.samples);
		} else if (!fresh.run.contended || contention_score(&fresh.run) < contention_score(&kept->run)) {
			bench_evidence_release(&kept->samples);
			*kept = fresh;
		} else {
			bench_evidence_release(&fresh.samples);
		}
		kept->run.attempts = attempts;
		cr->runs[k] = kept->run;
	}
	free(todo);
	return rc;
}

/* The interleaved schedule (docs/bench.md "The model"): the warm-ups of every case, then round after round one
 * repeat of each live case (in a fresh shuffled order each round, or round-robin), then up to `retries` passes
 * over the repeats that ran contended; then the kept attempts' samples join the artifact. */
static enum plumb_err run_schedule(struct suite_run *sr, struct sched *sc, struct perr *e)
{
	const struct bench_run_opts *o = sr->o;
	size_t *order = malloc((sc->nsel + 1) * sizeof *order);
	if (!order)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	uint64_t rng = (uint64_t)o->seed;
	enum plumb_err rc = PLUMB_OK;
	for (long k = 0; k < o->warmup + o->repeats && !rc && !interrupted; k++) {
		bool warm = k < o->warmup;
		for (size_t j = 0; j < sc->nsel; j++)
			order[j] = j;
		if (o->order == BENCH_ORDER_SHUFFLE)
			shuffle(order, sc->nsel, &rng);
		rc = run_round(sr, sc, warm ? k : k - o->warmup, warm, order, e);
	}
	free(order);
	/* the core metric is chosen from the rounds' repeats: only a case gated on its wall time is re-run when a
	 * repeat was contended (its CPU time is what it used, whoever else ran) */
	for (size_t i = 0; !rc && !interrupted && i < sc->nsel; i++) {
		struct bench_case_result *cr = &sr->ev->cases[i];
		if (!choose_core(&sr->s->cases[sc->ci[i]], cr, &sc->at[i * (size_t)o->repeats], cr->nruns))
			sr->oom = true;
		sc->rerun[i] = sc->alive[i] && (!cr->core_metric || strcmp(cr->core_metric, "cpu_ms") != 0);
	}
	bool any = true;
	for (long pass = 0; pass < o->retries && any && !rc && !interrupted; pass++)
		rc = rerun_contended(sr, sc, &rng, &any, e);
	for (size_t i = 0; i < sc->nsel; i++) {
		struct attempt *ats = &sc->at[i * (size_t)o->repeats];
		for (size_t k = 0; k < (size_t)o->repeats; k++)
			if (ats[k].filled)
				commit_samples(sr, &ats[k]);
	}
	return rc;
}

/* The artifact's trust is its weakest case's. */
static void set_trust(struct bench_evidence *ev)
{
	const char *trust = BENCH_TRUST_OPTIMIZED;
	for (size_t i = 0; i < ev->ncases; i++) {
		const char *t = ev->cases[i].trust ? ev->cases[i].trust : BENCH_TRUST_UNKNOWN;
		if (strcmp(t, BENCH_TRUST_HARNESS) == 0)
			trust = BENCH_TRUST_HARNESS;
		else if (strcmp(t, BENCH_TRUST_UNKNOWN) == 0 && strcmp(trust, BENCH_TRUST_OPTIMIZED) == 0)
			trust = BENCH_TRUST_UNKNOWN;
	}
	free(ev->trust);
	ev->trust = strdup(trust);
}

enum plumb_err bench_run_suite(const struct bench_suite *s, const struct bench_run_opts *o, struct bench_evidence *ev,
			       struct bench_run_outcome *out, struct perr *e)
{
	memset(out, 0, sizeof *out);
	bool *sel;
	size_t nsel;
	enum plumb_err rc = select_cases(s, o->case_filter, &sel, &nsel, e);
	if (rc)
		return rc;
	struct suite_run sr = { .s = s, .o = o, .ev = ev, .out = out };
	struct sched sc = { .nsel = nsel };
	sc.ci = calloc(nsel, sizeof *sc.ci);
	sc.alive = calloc(nsel, sizeof *sc.alive);
	sc.rerun = calloc(nsel, sizeof *sc.rerun);
	sc.at = calloc(nsel * (size_t)o->repeats, sizeof *sc.at);
	rc = describe_run(s, o, nsel, ev, e);
	if (!rc && (!sc.ci || !sc.alive || !sc.rerun || !sc.at))
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	/* every selected case's record first: the rounds visit them all */
	for (size_t ci = 0; !rc && ci < s->ncases; ci++) {
		if (!sel[ci])
			continue;
		struct bench_case_result *cr = &ev->cases[ev->ncases];
		sc.ci[ev->ncases] = ci;
		sc.alive[ev->ncases] = true;
		ev->ncases++;
		cr->cpu_wall_ratio = NAN;
		if (!describe_case(&s->cases[ci], cr) || !(cr->runs = calloc((size_t)o->repeats, sizeof *cr->runs)))
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		out->cases_run++;
	}
	if (!rc)
		rc = run_open(&sr, e);
	if (!rc) {
		rc = run_schedule(&sr, &sc, e);
		run_close(&sr);
	}
	for (size_t i = 0; sc.at && i < nsel * (size_t)o->repeats; i++)
		bench_evidence_release(&sc.at[i].samples);
	free(sc.ci);
	free(sc.alive);
	free(sc.rerun);
	free(sc.at);
	out->interrupted = interrupted;
	free(sel);
	if (rc == PLUMB_OK && sr.oom)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	set_trust(ev);
	return rc;
}
