/* launch.c — one run of a bench case: the prepare command, then the case as a fork of /bin/sh -c RUN in its own
 * process group (so a timeout kills the whole command), reaped with wait4 for that run's own rusage; the
 * machine's CPU time (/proc/stat) around it and the main process's schedstat read while it is a zombie; the
 * launcher process that forks the runs; and the samples a run wrote to PLUMB_SAMPLES. */
#include "bench/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "os/fs.h"
#include "base/json_tree.h"
#include "base/lines.h"
#include "os/procfs.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "base/shown.h"
#include "bench/machine.h"
#include "bench/runner.h"

volatile sig_atomic_t bench_interrupted;

void bench_on_signal(int sig)
{
	(void)sig;
	bench_interrupted = 1;
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
		/* the name and the tags are redacted here, where the sample is captured: the artifact holds only that
		 * form (a program may name a sample after its input, docs/design.md §3.6) */
		sbuf_addf(&full, "%s.", case_name);
		struct sbuf red = SBUF_INIT;
		redact_append(&red, json_string_value(name), json_string_length(name));
		char shown[1024 + 64]; /* a name is an identifier: any control byte in it is kept escaped (§3.3) */
		shown_escape(shown, sizeof shown, red.buf, red.len, 1024);
		sbuf_addstr(&full, shown);
		full.oom |= red.oom;
		sbuf_release(&red);
		char *tag_text = NULL;
		bool tags_ok = !json_is_object(tags) || bench_tags_redacted(tags, &tag_text);
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
long bench_collect_samples(struct bench_evidence *ev, const char *case_name, long run, const char *path)
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
		if (bench_interrupted)
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
		struct procfs_sched ss;
		if (procfs_sched_read(ch->pid, 0, &ss)) {
			r->sched_known = true;
			r->exec_ns = ss.run_ns;
			r->delay_ns = ss.wait_ns;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	if (ch->pid > 0 && (r->timed_out || bench_interrupted))
		child_signal(ch, SIGKILL); /* the whole group */
}

/* The launcher's own time waiting on a runqueue so far (the second field of its schedstat), 0 when unknown. */
static uint64_t self_delay_ns(void)
{
	struct procfs_sched ss;
	return procfs_sched_read(getpid(), 0, &ss) ? ss.wait_ns : 0;
}

/* The CPU time (ms, this thread's clock) of a fixed loop of dependent multiply-adds, about 2 ms here: the speed
 * of the machine's CPUs right now. On a shared machine a CPU-bound run's CPU time drifts with the neighbours' load
 * (cache, SMT siblings and frequency on the host), every case by the same few percent; this loop drifts with it
 * (measured here beside a loaded `make check`: windows of 100 runs of a 25 ms spin and of this loop moved by up to
 * 8% together, correlation 0.975), so compare can take the drift out. NAN when the clock cannot be read. */
static double yardstick_ms(void)
{
	struct timespec a, b;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a) != 0)
		return NAN;
	uint64_t x = 1;
	for (long i = 0; i < 2000000; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ volatile("" : "+r"(x)); /* one multiply-add a step, none folded away */
	}
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b) != 0 || x == 0)
		return NAN;
	return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
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

void bench_run_once(const struct bench_case *c, const char *samples_path, int stderr_fd, struct one_run *r)
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
		if (pr.timed_out || bench_interrupted || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
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
	r->yardstick_ms = yardstick_ms();
	cpu_times_read(&r->before);
	uint64_t self0 = self_delay_ns();
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
	/* the launcher's own wait for a CPU (to fork the run, to wake when it ends) is in the wall time too */
	uint64_t self1 = self_delay_ns();
	r->launcher_delay_ns = self1 >= self0 ? self1 - self0 : 0;
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
			bench_run_once(&x->s->cases[rq.case_index], rq.samples_path, x->stderr_fd, &r);
		else {
			memset(&r, 0, sizeof r);
			snprintf(r.err, sizeof r.err, "no such case");
		}
		if (!full_io(x->sv[1], &r, sizeof r, true))
			break;
	}
	return 0;
}

bool bench_launcher_start(struct launcher *l, const struct bench_suite *s, int stderr_fd)
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
void bench_launcher_run(struct launcher *l, size_t case_index, const char *samples_path, struct one_run *r)
{
	struct launch_request rq = { .case_index = case_index };
	snprintf(rq.samples_path, sizeof rq.samples_path, "%s", samples_path);
	bool ok = full_io(l->fd, &rq, sizeof rq, true), forwarded = false;
	char *p = (char *)r;
	size_t left = sizeof *r;
	while (ok && left) {
		ssize_t n = read(l->fd, p, left);
		if (n < 0 && errno == EINTR) {
			if (bench_interrupted && !forwarded) {
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

void bench_launcher_stop(struct launcher *l)
{
	close(l->fd);
	child_finish(&l->c);
}
