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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/procfs.h"

static const struct backend *const backends[] = {
	&backend_python,
	&backend_perf_event,
	&backend_inprocess,
	&backend_ptrace,
	&backend_pyspy,
	&backend_system,
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

void backend_leave_running(struct child *c, struct record_result *res)
{
	if (c->pid <= 0)
		return;
	snprintf(res->ended, sizeof res->ended, "still running (pid %d) when sampling stopped", (int)c->pid);
	child_detach(c);
}

void backend_meta(struct profile *p, const char *name, const char *unwinder, uint64_t ticks, uint64_t lost)
{
	struct profile_meta *meta = profile_meta(p);
	meta->ticks += ticks;
	meta->lost += lost;
	meta->backend = profile_intern_cstr(p, name);
	meta->unwinder = profile_intern_cstr(p, unwinder);
}

const char *backend_unwinder_name(const struct record_opts *opts)
{
	return opts->unwind == UNWIND_DWARF ? "dwarf" : "fp";
}

uint32_t backend_user_frame(struct profile *p, const struct map_entry *m, uint64_t addr, bool caller,
			    str_id unknown)
{
	struct frame f = { 0 };
	f.kind = FRAME_USER;
	f.line = caller ? 1 : 0;
	if (maps_is_image(m)) {
		f.module = profile_intern_cstr(p, m->path);
		f.addr = maps_vaddr(m, addr);
	} else {
		f.module = m ? profile_intern_cstr(p, m->path) : unknown;
		f.addr = addr;
	}
	return profile_frame(p, &f);
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
	if (id != PROFILE_NOMEM && !hmap_put(cache, key, id))
		return PROFILE_NOMEM;
	return id;
}

void describe_wait_status(int status, char *buf, size_t n)
{
	if (WIFEXITED(status))
		snprintf(buf, n, "exited with %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, n, "killed by SIG%s%s", sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
			 WCOREDUMP(status) ? " (core dumped)" : "");
	else
		snprintf(buf, n, "ended (status 0x%x)", status);
}

void backend_command(const struct record_opts *opts, struct child *c, struct backend_env *env)
{
	c->argv = (const char *const *)opts->argv;
	c->env = NULL;
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

enum plumb_err backend_start(struct child *c, struct perr *e)
{
	return exec_failure(c, child_start(c, e), e);
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
		res->wait_status = status;
		describe_wait_status(status, res->ended, sizeof res->ended);
	} else if (opts->target == TARGET_PID && !procfs_alive(pid)) {
		snprintf(res->ended, sizeof res->ended, "process %d exited during the attach", (int)pid);
	} else {
		return false;
	}
	res->target_exited = true;
	return true;
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
