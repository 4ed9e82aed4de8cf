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

#include "os/atomic.h"
#include "base/clock.h"
#include "os/fs.h"
#include "base/gate.h"
#include "base/json_tree.h"
#include "base/lines.h"
#include "os/procfs.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "os/spawn.h"
#include "bench/launch.h"
#include "bench/machine.h"
#include "bench/stats.h"

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
	static const char *const runners[] = { "wall_ms", "user_ms", "sys_ms", "cpu_ms", "max_rss_bytes", "unqueued_ms" };
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
	sa.sa_handler = bench_on_signal;
	sigemptyset(&sa.sa_mask);
	bench_interrupted = 0;
	sigaction(SIGINT, &sa, &sr->old_int); /* before the launcher forks: it kills a run's group on Ctrl-C too */
	sigaction(SIGTERM, &sa, &sr->old_term);
	if (!bench_launcher_start(&sr->launcher, sr->s, sr->stderr_fd)) {
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
	bench_launcher_stop(&sr->launcher);
	close(sr->stderr_fd);
	sigaction(SIGINT, &sr->old_int, NULL);
	sigaction(SIGTERM, &sr->old_term, NULL);
}

/* The wall time less the wait for a CPU, never below the CPU time the run used within its wall time: the run's
 * and the launcher's waits can overlap (both runnable at the fork while others hold the CPUs), so their sum can
 * overstate the wait of a short run. */
static double unqueued(double wall_ms, double wait_ms, double cpu_ms)
{
	return fmax(wall_ms - wait_ms, fmin(cpu_ms, wall_ms));
}

/* A measured run that exited 0: the figures the runner takes itself, then the samples it wrote, into dst
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
		    { "max_rss_bytes", "memory", "bytes" },
		    { "unqueued_ms", "latency", "ms" } };
	/* cpu_ms = user + sys: the kernel splits a task's exact run time into user and sys by tick samples
	 * (cputime_adjust), so each part is off by up to a tick (4 ms at HZ=250) while their sum is exact — the
	 * steadiest CPU figure of a short run */
	/* unqueued_ms: the wall time less the run's (and the launcher's) wait on a runqueue — what an idle machine
	 * would have shown; only when that wait is known (note_contention) */
	double vals[6] = { r->wall_ms, tv_ms(r->ru.ru_utime), tv_ms(r->ru.ru_stime),
			   tv_ms(r->ru.ru_utime) + tv_ms(r->ru.ru_stime), (double)r->ru.ru_maxrss * 1024.0,
			   isfinite(run->wait_ms) ? unqueued(r->wall_ms, run->wait_ms, tv_ms(r->ru.ru_utime) + tv_ms(r->ru.ru_stime))
						  : NAN };
	struct sbuf name = SBUF_INIT;
	for (int m = 0; m < 6; m++) {
		if (isnan(vals[m]))
			continue;
		sbuf_reset(&name);
		sbuf_addf(&name, "%s.%s", c->name, own[m].metric);
		if (name.oom || !bench_evidence_add_sample(dst, name.buf, own[m].kind, own[m].unit, vals[m], run->index, NULL))
			sr->oom = true;
	}
	sbuf_release(&name);
	run->bad_sample_lines = bench_collect_samples(dst, c->name, run->index, samples_path);
}

/* The machine while the run went (docs/bench.md "Contention"): other processes' share of the CPUs (the busy
 * time /proc/stat counted minus the run's own CPU time), steal and idle, the run's own wait on a runqueue (when
 * its main process did most of its CPU work, so its schedstat speaks for the run; with the launcher's wait to
 * start and reap it, which the wall time holds too), and whether it was contended. */
static void note_contention(struct bench_run *run, const struct one_run *r)
{
	run->other_cpu_pct = run->steal_pct = run->idle_pct = run->wait_pct = run->wait_ms = run->load = NAN;
	run->has_contention = true;
	run->load = r->runnable;
	run->yardstick_ms = r->yardstick_ms;
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
	if (r->sched_known && r->wall_ms > 0 && (double)r->exec_ns / 1e6 >= 0.5 * own_ms) {
		run->wait_ms = (double)(r->delay_ns + r->launcher_delay_ns) / 1e6;
		run->wait_pct = fmin(100, run->wait_ms / r->wall_ms * 100);
	}
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
	bench_launcher_run(&sr->launcher, ci, samples_path, &r);
	enum plumb_err rc = PLUMB_OK;
	bool exited_ok = !r.prepare_failed && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && !r.timed_out;
	if (!r.started || r.err[0]) {
		rc = perr_set(e, PLUMB_EIO, "case %s: %s", c->name, r.err);
	} else if (bench_interrupted && !r.timed_out) {
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
			at->delay_ms = isfinite(run->wait_ms) ? run->wait_ms : NAN;
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

/* The case's core metric: the suite's word, else cpu_ms when its CPU time is at least BENCH_CPU_BOUND_RATIO of
 * the time it did not spend waiting for a CPU, else wall_ms. The ratio is the upper quartile of the repeats'
 * ratios: contention only ever lowers a repeat's ratio (it adds wall time plumb's own wake-up latency puts beside
 * the run's measured wait, never CPU time), so the least disturbed repeats tell the case's nature. */
static bool choose_core(const struct bench_case *c, struct bench_case_result *cr, const struct attempt *ats, size_t n)
{
	double *ratio = calloc(n + 1, sizeof *ratio);
	size_t k = 0;
	for (size_t i = 0; ratio && i < n; i++) {
		double busy = isfinite(ats[i].delay_ms) ? unqueued(ats[i].wall_ms, ats[i].delay_ms, ats[i].cpu_ms)
							: ats[i].wall_ms;
		if (ats[i].filled && ats[i].ok && busy > 0)
			ratio[k++] = ats[i].cpu_ms / busy;
	}
	if (!ratio)
		return false;
	qsort(ratio, k, sizeof *ratio, cmp_dbl);
	cr->cpu_wall_ratio = k ? bench_percentile(ratio, k, 0.75) : NAN;
	free(ratio);
	const char *core, *source;
	if (c->core && strcmp(c->core, "auto") != 0) {
		core = c->core;
		source = "suite";
	} else if (isfinite(cr->cpu_wall_ratio)) {
		/* a wall-bound case is gated on its unqueued time when every repeat knows its wait for a CPU */
		bool unqueued = true;
		for (size_t i = 0; i < n; i++)
			if (ats[i].filled && ats[i].ok && !isfinite(ats[i].delay_ms))
				unqueued = false;
		core = cr->cpu_wall_ratio >= BENCH_CPU_BOUND_RATIO ? "cpu_ms" : unqueued ? "unqueued_ms" : "wall_ms";
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
	for (size_t j = 0; j < sc->nsel && !bench_interrupted; j++) {
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

/* A kept attempt's figure of its case's core metric (wall-gated cases: unqueued_ms or wall_ms). */
static double core_value(const struct bench_case_result *cr, const struct attempt *at)
{
	bool unq = cr->core_metric && strcmp(cr->core_metric, "unqueued_ms") == 0 && isfinite(at->delay_ms);
	return unq ? unqueued(at->wall_ms, at->delay_ms, at->cpu_ms) : at->wall_ms;
}

/* The figure above which a repeat of a wall-gated case looks odd: more than 3 robust standard deviations and 5%
 * above the median of the case's kept repeats (INFINITY when there are too few to tell). */
static double odd_above(const struct bench_case_result *cr, const struct attempt *ats, size_t n)
{
	double *v = calloc(n + 1, sizeof *v), sd = 0;
	size_t k = 0;
	for (size_t i = 0; v && i < n; i++)
		if (ats[i].filled && ats[i].ok)
			v[k++] = core_value(cr, &ats[i]);
	double med = k >= 5 ? bench_median_inplace(v, k) : NAN;
	bool ok = v && isfinite(med) && bench_robust_sd(v, k, &sd);
	free(v);
	return ok ? fmax(med + 3 * sd, med * 1.05) : INFINITY;
}

/* Re-runs, once more, each repeat of a live wall-gated case that ran contended or looks odd (its core figure
 * beyond odd_above: a delay no counter saw, such as a page read from disk — the seeds' practice of running again
 * a result that looks odd), in a shuffled order so a burst that caused them is not met again in the same place.
 * A contended repeat's re-run is kept when it ran uncontended or less contended; an odd one's when its figure is
 * lower. */
static enum plumb_err rerun_contended(struct suite_run *sr, struct sched *sc, uint64_t *rng, bool *any,
				      struct perr *e)
{
	size_t reps = (size_t)sr->o->repeats, n = 0;
	size_t *todo = malloc((sc->nsel * reps + 1) * sizeof *todo);
	if (!todo)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < sc->nsel; i++) {
		const struct bench_case_result *cr = &sr->ev->cases[i];
		if (!sc->alive[i] || !sc->rerun[i])
			continue;
		double above = odd_above(cr, &sc->at[i * reps], cr->nruns);
		for (size_t k = 0; k < cr->nruns; k++) {
			const struct attempt *at = &sc->at[i * reps + k];
			if (cr->runs[k].contended || (at->filled && at->ok && core_value(cr, at) > above))
				todo[n++] = i * reps + k;
		}
	}
	*any = n > 0;
	shuffle(todo, n, rng);
	enum plumb_err rc = PLUMB_OK;
	for (size_t t = 0; t < n && !rc && !bench_interrupted; t++) {
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
		bool better = kept->run.contended ? !fresh.run.contended || contention_score(&fresh.run) <
										 contention_score(&kept->run)
						  : core_value(cr, &fresh) < core_value(cr, kept);
		if (!fresh.ok) { /* it failed this time: the case ends as failed, the repeat keeps its good attempt */
			sc->alive[i] = false;
			bench_evidence_release(&fresh.samples);
		} else if (better) {
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
	for (long k = 0; k < o->warmup + o->repeats && !rc && !bench_interrupted; k++) {
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
	for (size_t i = 0; !rc && !bench_interrupted && i < sc->nsel; i++) {
		struct bench_case_result *cr = &sr->ev->cases[i];
		if (!choose_core(&sr->s->cases[sc->ci[i]], cr, &sc->at[i * (size_t)o->repeats], cr->nruns))
			sr->oom = true;
		sc->rerun[i] = sc->alive[i] && (!cr->core_metric || strcmp(cr->core_metric, "cpu_ms") != 0);
	}
	bool any = true;
	for (long pass = 0; pass < o->retries && any && !rc && !bench_interrupted; pass++)
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
	out->interrupted = bench_interrupted;
	free(sel);
	if (rc == PLUMB_OK && sr.oom)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	set_trust(ev);
	return rc;
}
