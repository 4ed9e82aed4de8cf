/* backend.c — the backend registry (in the order automatic selection tries them), the automatic choice with
 * its fallbacks (a refused perf_event gives way to inprocess or ptrace, and says why), and helpers every backend
 * shares: the command under record, the deadline and the stop, describing how a process ended, and explaining a
 * refused attach. */
#include "sample/backend.h"

#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "os/cleanup.h"
#include "base/clock.h"
#include "os/procfs.h"
#include "base/progress.h"

static const struct backend *const backends[] = {
	&backend_python,
	&backend_perf_event,
	&backend_inprocess,
	&backend_ptrace,
	&backend_pyspy,
	&backend_system,
	&backend_alloc,
};

const struct backend *const *backend_list(size_t *n)
{
	*n = sizeof backends / sizeof backends[0];
	return backends;
}

const struct backend *backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

size_t backend_choose(const struct record_opts *opts, const struct backend **out, size_t max)
{
	size_t n = sizeof backends / sizeof backends[0], k = 0;
	if (opts->backend) {
		const struct backend *b = backend_find(opts->backend);
		if (b && max)
			out[k++] = b;
		return k;
	}
	if (opts->target == TARGET_ALL) { /* every process: one backend can, and nothing falls back */
		if (max)
			out[k++] = &backend_system;
		return k;
	}
	bool taken[sizeof backends / sizeof backends[0]] = { false };
	for (size_t i = 0; i < n && k < max; i++)
		if (backends[i]->wants && backends[i]->wants(opts)) {
			out[k++] = backends[i];
			taken[i] = true;
		}
	/* then every other backend, in list order, as fallbacks (except those used only when named) */
	for (size_t i = 0; i < n && k < max; i++)
		if (!taken[i] && !backends[i]->forced_only)
			out[k++] = backends[i];
	return k;
}

void backend_outcome_release(struct backend_outcome *o)
{
	sbuf_release(&o->fallback);
	o->used = NULL;
	o->refused = PLUMB_OK;
}

enum plumb_err backend_run_auto(const struct record_opts *opts, bool keep_timeline, struct profile **out,
				struct record_result *res, struct backend_outcome *o, struct perr *e)
{
	const struct backend *cands[sizeof backends / sizeof backends[0]];
	size_t ncands = backend_choose(opts, cands, sizeof cands / sizeof cands[0]);
	struct profile *p = NULL;
	enum plumb_err rc = perr_set(e, PLUMB_EUNSUPPORTED, "no backend can sample this target");
	*out = NULL;
	for (size_t i = 0; i < ncands; i++) {
		profile_free(p);
		p = profile_new();
		if (!p)
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		profile_keep_timeline(p, keep_timeline);
		memset(res, 0, sizeof *res);
		*e = (struct perr)PERR_INIT;
		__atomic_store_n(&o->trying, cands[i], __ATOMIC_RELEASE);
		rc = cands[i]->run(opts, p, res, e);
		if (rc == PLUMB_OK) {
			o->used = cands[i];
			*out = p;
			return PLUMB_OK;
		}
		/* Only a refusal of the first backend leads to fallbacks; any other error of it is the answer. */
		if (i == 0 && ((rc != PLUMB_EPERM && rc != PLUMB_EUNSUPPORTED) || opts->backend))
			break;
		if (i > 0 && rc == PLUMB_EINVAL) { /* the target itself is wrong: that is the answer */
			sbuf_reset(&o->fallback);
			break;
		}
		if (i == 0) {
			o->refused = rc;
			sbuf_addstr(&o->fallback, e->msg);
		} else {
			sbuf_addf(&o->fallback, "; the %s fallback failed too: %s", cands[i]->name, e->msg);
		}
	}
	profile_free(p);
	return rc;
}

const char *backend_targets_text(const struct backend *b, char *buf, size_t n)
{
	static const char *const names[] = { [TARGET_COMMAND] = "a launched command (-- COMMAND)",
					     [TARGET_PID] = "a running process (--pid, --target)",
					     [TARGET_CALL] = "--call", [TARGET_ALL] = "every process (--all)" };
	size_t used = 0;
	buf[0] = '\0';
	for (size_t t = 0; t < sizeof names / sizeof names[0] && used < n; t++)
		if (b->targets & BACKEND_TARGET(t))
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? " or " : "", names[t]);
	return buf;
}

uint64_t backend_interval_ns(const struct record_opts *opts)
{
	return opts->interval_ns ? opts->interval_ns : 5000000;
}

uint64_t backend_deadline(const struct record_opts *opts, uint64_t start_ns)
{
	return opts->seconds > 0 ? start_ns + (uint64_t)(opts->seconds * 1e9) : 0;
}

bool backend_should_stop(const struct record_opts *opts, uint64_t deadline)
{
	return (opts->stop && *opts->stop) || (deadline && mono_ns() >= deadline);
}

/* ", then SIGTERM, then SIGKILL" for the signals after the first that child_terminate sent the command. */
static void add_escalation(char *buf, size_t n, const struct child_end *end, int from)
{
	size_t used = strlen(buf);
	for (int i = from; i < end->nsent_child && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, ", then SIG%s", sigabbrev_np(end->sent[i]));
}

void backend_end_command(const struct record_opts *opts, struct child *c, struct record_result *res)
{
	if (c->pid <= 0)
		return;
	int stop = opts->stop ? *opts->stop : 0;
	int sig = CLEANUP_SIG_NUMBER(stop);
	bool from_terminal = (stop & CLEANUP_SIG_GROUP) != 0;
	if (!stop || sig <= 0 || !sigabbrev_np(sig))
		sig = SIGINT, from_terminal = false; /* the window ended (or a stop without a signal) */
	struct child_end end;
	int status = child_terminate(c, sig, from_terminal, BACKEND_GRACE_NS, &end);
	char how[64], why[128];
	if (status == -1)
		snprintf(how, sizeof how, "could not be waited for");
	else
		describe_wait_status(status, how, sizeof how);
	/* "killed by SIGINT (plumb sent it when ...)": the signal is named once when it is the one that ended it */
	char first[16];
	bool it = status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == sig && end.nsent_child <= 1;
	snprintf(first, sizeof first, it ? "it" : "SIG%s", sigabbrev_np(sig));
	if (from_terminal && status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == sig && !end.nsent_child) {
		snprintf(why, sizeof why, "the terminal sent it");
	} else if (from_terminal) {
		snprintf(why, sizeof why, "after SIG%s from the terminal", sigabbrev_np(sig));
		if (end.nsent_child) {
			size_t used = strlen(why);
			snprintf(why + used, sizeof why - used, "; plumb sent SIG%s", sigabbrev_np(end.sent[0]));
			add_escalation(why, sizeof why, &end, 1);
		}
	} else {
		if (stop & BACKEND_STOP_QUIT)
			snprintf(why, sizeof why, "plumb sent %s when it stopped sampling", first);
		else if (stop)
			snprintf(why, sizeof why, it ? "plumb passed it on" : "plumb passed on the %s it received", first);
		else
			snprintf(why, sizeof why, "plumb sent %s when the %gs window ended", first, opts->seconds);
		add_escalation(why, sizeof why, &end, 1);
	}
	snprintf(res->ended, sizeof res->ended, "%s (%s)", how, why);
	res->wait_status = status;
	res->target_exited = true;
	res->ended_by_plumb = true;
	res->failed = false;
}

void backend_ended_with(struct record_result *res, int status)
{
	res->wait_status = status;
	res->target_exited = true;
	describe_wait_status(status, res->ended, sizeof res->ended);
	res->failed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

double backend_effective_rate(const struct profile *p, enum record_mode mode, uint64_t ticks, double seconds)
{
	if (seconds <= 0)
		return 0;
	double rate = (double)ticks / seconds;
	size_t threads = mode == MODE_WALL ? profile_nthreads(p) : 1;
	return threads > 1 ? rate / (double)threads : rate;
}

void backend_poll(const struct record_opts *opts, struct profile *p, uint64_t start_ns, uint64_t ticks,
		  uint64_t lost)
{
	if (opts->on_poll) { /* the live views read what was sampled so far */
		struct backend_sofar bp = { ticks, lost, start_ns };
		opts->on_poll(opts->poll_ctx, p, &bp);
	}
	if (!opts->progress || !start_ns)
		return;
	double secs = (double)(mono_ns() - start_ns) / 1e9;
	progress_record(opts->progress, secs, ticks, backend_effective_rate(p, opts->mode, ticks, secs));
}

void backend_meta(struct profile *p, const char *name, const char *unwinder, uint64_t ticks, uint64_t lost)
{
	struct profile_meta *meta = profile_meta(p);
	meta->ticks += ticks;
	meta->lost += lost;
	meta->backend = profile_intern_cstr(p, name);
	meta->unwinder = profile_intern_cstr(p, unwinder);
	struct utsname u;
	char os[2 * sizeof u.sysname + 2];
	if (!meta->os && uname(&u) == 0) {
		snprintf(os, sizeof os, "%s %s", u.sysname, u.machine);
		meta->os = profile_intern_cstr(p, os);
	}
}

const char *backend_unwinder_name(const struct record_opts *opts)
{
	return opts->unwind == UNWIND_DWARF ? "dwarf" : "fp";
}

uint32_t backend_user_frame(struct profile *p, const struct map_entry *m, uint64_t addr, bool caller,
			    str_id unknown)
{
	return maps_raw_frame(p, m, addr, caller, unknown);
}

uint32_t backend_thread(struct profile *p, struct hmap *cache, pid_t pid, pid_t tid)
{
	uint64_t key = ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid;
	uint32_t id;
	if (hmap_get(cache, key, &id))
		return id;
	char name[PROCFS_COMM_MAX];
	procfs_comm(pid, tid, name, sizeof name);
	id = profile_thread(p, (uint32_t)pid, (uint32_t)tid, name);
	char process[PROCFS_COMM_MAX];
	if (id != PROFILE_NOMEM && tid != pid) { /* a thread's process is named for its main thread */
		procfs_comm(pid, pid, process, sizeof process);
		if (process[0] && !profile_thread_set_process(p, id, process, strlen(process)))
			return PROFILE_NOMEM;
	} else if (id != PROFILE_NOMEM && name[0] && !profile_thread_set_process(p, id, name, strlen(name))) {
		return PROFILE_NOMEM;
	}
	if (id != PROFILE_NOMEM && !hmap_put(cache, key, id))
		return PROFILE_NOMEM;
	return id;
}

void describe_wait_status(int status, char *buf, size_t n)
{
	if (WIFEXITED(status))
		snprintf(buf, n, "exited with %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, n, "was killed by SIG%s%s", sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
			 WCOREDUMP(status) ? " (core dumped)" : "");
	else
		snprintf(buf, n, "ended (status 0x%x)", status);
}

/* In the child, before exec: the keeper hears of the command from the command itself, before it can start
 * anything, so a plumb killed between the fork and its own keeper_watch (a loaded CI run: the command's children
 * ran 2 s after plumb's death) leaves nothing. Async-signal-safe: one write to a descriptor the exec closes. */
static int tell_keeper(void *arg)
{
	keeper_watch(arg, getpid());
	return 0;
}

void backend_child_opts(const struct record_opts *opts, struct child *c)
{
	if (keeper_running(opts->keeper) && !c->hook) {
		c->hook = tell_keeper;
		c->hook_arg = (void *)opts->keeper;
	}
	/* with a keeper, the command is left alive when plumb dies, so that the keeper finds its whole tree by parent
	 * links before it kills it; without one, the kernel ends the command with plumb */
	c->pdeathsig = keeper_running(opts->keeper) ? 0 : SIGKILL;
	if (opts->command_quiet && opts->target == TARGET_COMMAND)
		c->in.how = c->out.how = c->err.how = CHILD_IO_NULL;
	if (opts->command_sigmask)
		c->sigmask = opts->command_sigmask;
}

void backend_command(const struct record_opts *opts, struct child *c, struct backend_env *env)
{
	c->argv = (const char *const *)opts->argv;
	c->env = NULL;
	backend_child_opts(opts, c);
	if (opts->stages_path) {
		snprintf(env->stages, sizeof env->stages, "PLUMB_STAGES=%s", opts->stages_path);
		env->vars[0] = env->stages;
		env->vars[1] = NULL;
		c->env = env->vars;
	}
}

/* An exec that failed names the command as a target that cannot be resolved. */
static enum plumb_err exec_failure(const struct child *c, enum plumb_err rc, struct perr *e)
{
	if (rc != PLUMB_OK && c->exec_errno) {
		e->code = PLUMB_EINVAL;
		return PLUMB_EINVAL;
	}
	return rc;
}

void backend_launched(const struct record_opts *opts, const struct child *c)
{
	keeper_watch(opts->keeper, c->pid);
	pid_t none = 0;
	if (opts->launched && c->pid > 0 && (opts->target == TARGET_COMMAND || opts->target == TARGET_CALL))
		__atomic_compare_exchange_n(opts->launched, &none, c->pid, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

enum plumb_err backend_start(const struct record_opts *opts, struct child *c, struct perr *e)
{
	enum plumb_err rc = exec_failure(c, child_start(c, e), e);
	if (c->pid > 0)
		backend_launched(opts, c);
	return rc;
}

enum plumb_err backend_release(struct child *c, struct perr *e)
{
	return exec_failure(c, child_release(c, e), e);
}

bool backend_target_ended(const struct record_opts *opts, struct child *c, pid_t pid, struct record_result *res)
{
	if (c->pid > 0) {
		int status;
		if (child_poll(c, &status, NULL) != 1)
			return false;
		backend_ended_with(res, status);
		return true;
	} else if (opts->target == TARGET_PID && !procfs_alive(pid)) {
		snprintf(res->ended, sizeof res->ended, "exited during the attach");
	} else {
		return false;
	}
	res->target_exited = true;
	return true;
}

enum plumb_err backend_shared_memfd(const char *name, size_t len, const char *who, const char *what, int *fd,
				    void **map, struct perr *e)
{
	int f = memfd_create(name, 0); /* inherited by the target: no CLOEXEC */
	if (f < 0)
		return perr_set(e, PLUMB_EUNSUPPORTED, "%s: memfd_create: %s", who, strerror(errno));
	if (ftruncate(f, (off_t)len) != 0) {
		int err = errno;
		close(f);
		return perr_set(e, PLUMB_ENOMEM, "%s: cannot size %s: %s", who, what, strerror(err));
	}
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
	if (m == MAP_FAILED) {
		int err = errno;
		close(f);
		return perr_set(e, PLUMB_ENOMEM, "%s: cannot map %s: %s", who, what, strerror(err));
	}
	*fd = f;
	*map = m;
	return PLUMB_OK;
}

void backend_ensure_maps(struct maps *maps, struct hmap *loaded, pid_t pid, bool force)
{
	uint32_t seen;
	if (hmap_get(loaded, (uint64_t)pid, &seen) && !force)
		return;
	maps_load_proc(maps, pid);
	hmap_put(loaded, (uint64_t)pid, 1);
}

const struct map_entry *backend_find_map(struct maps *maps, uint64_t *last_reload_ns, pid_t pid, uint64_t addr,
					 bool *reloaded)
{
	const struct map_entry *m = maps_find(maps, pid, addr);
	if (!m && !*reloaded) {
		*reloaded = true; /* a library loaded since the maps were read */
		uint64_t now = mono_ns();
		if (now - *last_reload_ns >= 20000000ull) {
			*last_reload_ns = now;
			maps_load_proc(maps, pid);
			m = maps_find(maps, pid, addr);
		}
	}
	return m;
}

bool backend_loop_done(const struct record_opts *opts, struct child *c, uint64_t deadline, int *status,
		       bool *stopped, struct record_result *res)
{
	if (child_poll(c, status, NULL) == 1) {
		res->target_exited = true;
		res->wait_status = *status;
		return true;
	}
	if (backend_should_stop(opts, deadline)) {
		*stopped = true;
		return true;
	}
	return false;
}

void backend_kill_failed(enum plumb_err rc, struct child *c, const struct record_result *res, bool stopped)
{
	if (rc && c->pid > 0 && !res->target_exited && !stopped) {
		child_signal(c, SIGKILL);
		child_finish(c);
	}
}

int perf_event_paranoid(void)
{
	long v;
	return procfs_sysctl("kernel/perf_event_paranoid", &v) ? (int)v : -1;
}

void describe_attach_refusal(pid_t pid, const char *what, int err, char *buf, size_t n)
{
	struct procfs_status st;
	int tracer = procfs_status_read(pid, 0, &st) ? (int)st.tracer_pid : 0;
	if (tracer > 0) {
		char comm[PROCFS_COMM_MAX];
		if (!procfs_comm(tracer, 0, comm, sizeof comm))
			snprintf(comm, sizeof comm, "?");
		snprintf(buf, n,
			 "%s on pid %d refused: it is already traced by pid %d (%s), and Linux admits only one tracer "
			 "per process; detach that tracer or try again when it is done",
			 what, (int)pid, tracer, comm);
		return;
	}
	int paranoid = perf_event_paranoid();
	char p[64] = "";
	if (paranoid != -1)
		snprintf(p, sizeof p, " (kernel.perf_event_paranoid = %d)", paranoid);
	snprintf(buf, n,
		 "%s on pid %d refused: %s%s; run as the target's user with CAP_PERFMON (perf_event) or "
		 "CAP_SYS_PTRACE (ptrace), or lower kernel.perf_event_paranoid",
		 what, (int)pid, strerror(err), p);
}
