/* inprocess.c — the `inprocess` backend: plumb preloads libplumb-preload.so into a launched command (or into a
 * child of its own for --call LIB.so:SYMBOL), whose signal handler copies registers and a slice of the stack into
 * a shared-memory ring (inproc_ring.h). plumb drains the ring, unwinds each sample here with the same unwinders
 * as perf_event, and fills the profile with raw frames. Works where perf_event_open is refused. Invariant: the
 * ring is plumb's memory too, so every committed sample survives the target crashing; the crash handler's
 * sample (marked with a `[crash: SIGNAL]` leaf frame) is the last one in the profile. */
#include "sample/backend.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/hashmap.h"
#include "os/procfs.h"
#include "sample/inproc_ring.h"
#include "symbol/maps.h"
#include "unwind/unwind.h"
#include "base/settings.h"

#define MAX_FRAMES 256
#define NSLOTS 1024

struct ip_state {
	const struct record_opts *opts;
	struct profile *p;
	struct maps *maps;
	struct unwinder *unw;
	struct inproc_hdr *h;
	size_t ring_len;
	char lib_path[PATH_MAX]; /* the preloaded sampler library */
	char self[PATH_MAX];     /* plumb itself: the host of a --call */
	int ring_fd;             /* the ring's memfd, inherited by the target */
	struct child child;      /* the target */
	int status;              /* its wait status once it ended */
	bool stopped;            /* sampling was stopped (signal, --seconds) before it ended */
	struct hmap loaded;     /* pids whose maps were read */
	uint64_t tail;
	uint64_t ticks;
	uint64_t origin_ns;
	uint64_t last_reload_ns; /* misses (JIT code, anonymous memory) re-read the maps at most every 20 ms */
	str_id s_unknown;
	/* The crash sample, added last. */
	bool have_crash;
	uint32_t crash_stack, crash_thread;
	uint64_t crash_time;
	int crash_signal;
};

#define PRELOAD_NAME "libplumb-preload.so"

/* The sampler library (PRELOAD_NAME): PLUMB_PRELOAD when set, else beside the plumb binary (the build tree), else
 * in the library directory of its install prefix. On failure `looked` lists every place tried. */
bool inprocess_find_preload(char *out, size_t n, char *looked, size_t looked_n)
{
	looked[0] = 0;
	const char *env = settings()->preload;
	if (env && *env) {
		char res[PATH_MAX];
		if (!realpath(env, res)) {
			snprintf(looked, looked_n, "PLUMB_PRELOAD=%s: %s", env, strerror(errno));
			return false;
		}
		return (size_t)snprintf(out, n, "%s", res) < n;
	}
	char exe[PATH_MAX];
	if (procfs_exe(PROCFS_SELF, exe, sizeof exe) <= 0) {
		snprintf(looked, looked_n, "nowhere: /proc/self/exe: %s", strerror(errno));
		return false;
	}
	char *slash = strrchr(exe, '/');
	if (!slash) {
		snprintf(looked, looked_n, "nowhere: /proc/self/exe is %s", exe);
		return false;
	}
	*slash = 0;
	static const char *const rel[] = { "/" PRELOAD_NAME, "/../lib/" PRELOAD_NAME, "/../lib64/" PRELOAD_NAME,
					   "/../lib/plumb/" PRELOAD_NAME };
	size_t used = (size_t)snprintf(looked, looked_n, "looked in ");
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char cand[PATH_MAX + 64], res[PATH_MAX];
		snprintf(cand, sizeof cand, "%s%s", exe, rel[i]);
		if (access(cand, R_OK) == 0 && realpath(cand, res))
			return (size_t)snprintf(out, n, "%s", res) < n;
		if (used < looked_n)
			used += (size_t)snprintf(looked + used, looked_n - used, "%s%s", i ? ", " : "", cand);
	}
	if (used < looked_n)
		snprintf(looked + used, looked_n - used, " (PLUMB_PRELOAD may name it)");
	return false;
}

struct void_probe {
	const char *name;
	int result; /* -1 unknown, 0 returns a value, 1 void */
};

static int probe_func(Dwarf_Die *die, void *arg)
{
	struct void_probe *vp = arg;
	const char *n = dwarf_diename(die);
	if (!n || strcmp(n, vp->name) != 0 || !dwarf_hasattr(die, DW_AT_low_pc))
		return DWARF_CB_OK;
	vp->result = dwarf_hasattr(die, DW_AT_type) ? 0 : 1;
	return DWARF_CB_ABORT;
}

/* Whether SYMBOL in LIB is declared void, from the library's DWARF: 1 void, 0 not, -1 unknown (no debug
 * information). `void fn(void)` leaves garbage in the return register, which must not read as a failure. */
static int call_is_void(const char *lib, const char *sym)
{
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct void_probe vp = { sym, -1 };
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (dw) {
		Dwarf_Off off = 0, next;
		size_t hsize;
		while (vp.result < 0 && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;
			if (dwarf_offdie(dw, off + hsize, &cu))
				dwarf_getfuncs(&cu, probe_func, &vp, 0);
			off = next;
		}
		dwarf_end(dw);
	}
	close(fd);
	return vp.result;
}

static bool is_sampler(const struct ip_state *st, const struct map_entry *m)
{
	return m && strcmp(m->path, st->lib_path) == 0;
}

/* Unwinds one slot into the profile. */
static void consume(struct ip_state *st, struct inproc_slot *s)
{
	pid_t pid = (pid_t)s->pid;
	backend_ensure_maps(st->maps, &st->loaded, pid, (s->flags & INPROC_F_CRASH) != 0);
	struct unwind_regs regs;
	memcpy(regs.r, s->regs, sizeof regs.r);
	const uint8_t *stack = (const uint8_t *)(s + 1);
	uint32_t len = s->stack_len <= st->h->stack_bytes ? s->stack_len : st->h->stack_bytes;
	uint64_t ips[MAX_FRAMES];
	size_t n = st->opts->unwind == UNWIND_FP ? unwind_fp(&regs, stack, len, ips, MAX_FRAMES)
						  : unwind_dwarf(st->unw, pid, &regs, stack, len, ips, MAX_FRAMES);
	if (n == 0) {
		ips[0] = regs.r[UREG_IP];
		n = 1;
	}
	/* Raw frames, innermost first; then drop the harness: the sampler library's frames that start the thread (and, for
	 * --call, everything outside the called function). */
	const struct map_entry *ms[MAX_FRAMES];
	bool reloaded = false;
	for (size_t i = 0; i < n; i++)
		ms[i] = backend_find_map(st->maps, &st->last_reload_ns, pid, i ? ips[i] - 1 : ips[i], &reloaded);
	/* The outermost run of sampler-library frames [cut_lo, cut_hi) is the harness: thread_start between the thread
	 * library and the thread's function, or for --call the constructor that calls the function. */
	size_t cut_lo = n, cut_hi = n;
	bool harness = false;
	for (size_t i = n; i-- > 0;)
		if (is_sampler(st, ms[i])) {
			harness = true;
			cut_hi = i + 1;
			cut_lo = i;
			while (cut_lo > 0 && is_sampler(st, ms[cut_lo - 1]))
				cut_lo--;
			break;
		}
	size_t outer = n;
	if (st->opts->target == TARGET_CALL && harness) {
		if (cut_lo == 0 && !(s->flags & INPROC_F_CRASH))
			return; /* a tick in the harness itself, just before or after the call: not the callable's time */
		outer = cut_lo;
	} else if (harness && cut_lo == 0) {
		cut_lo = cut_hi = n; /* the leaf is in the sampler library (its pthread_create): nothing to trim */
	}
	uint32_t frames[MAX_FRAMES + 1];
	size_t nf = 0;
	for (size_t k = outer; k-- > 0;) {
		if (k >= cut_lo && k < cut_hi)
			continue;
		frames[nf++] = backend_user_frame(st->p, ms[k], ips[k], k > 0, st->s_unknown);
	}
	char comm[sizeof s->comm + 1]; /* the target wrote it: terminate it ourselves */
	memcpy(comm, s->comm, sizeof s->comm);
	comm[sizeof s->comm] = 0;
	uint32_t thread = profile_thread(st->p, s->pid, s->tid, comm[0] ? comm : NULL);
	uint64_t t = s->time_ns > st->origin_ns ? s->time_ns - st->origin_ns : 0;
	if (s->flags & INPROC_F_CRASH) {
		int sig = (int)((s->flags >> 8) & 0xff);
		char label[64];
		const char *abbrev = sigabbrev_np(sig);
		snprintf(label, sizeof label, "[crash: SIG%s]", abbrev ? abbrev : "?");
		struct frame f = { 0 };
		f.func = profile_intern_cstr(st->p, label);
		frames[nf++] = profile_frame(st->p, &f);
		st->have_crash = true;
		st->crash_stack = profile_stack_from(st->p, frames, nf);
		st->crash_thread = thread;
		st->crash_time = t;
		st->crash_signal = sig;
		return;
	}
	uint32_t sid = profile_stack_from(st->p, frames, nf);
	profile_add_sample(st->p, sid, thread, t, s->weight ? s->weight : 1);
	st->ticks++;
}

/* Consumes every committed slot in order; returns how many. */
static size_t drain(struct ip_state *st)
{
	struct inproc_hdr *h = st->h;
	size_t done = 0;
	for (;;) {
		struct inproc_slot *s = inproc_peek(h, st->tail);
		if (!s)
			break;
		bool crash = (s->flags & INPROC_F_CRASH) != 0;
		consume(st, s);
		inproc_release(h, s, st->tail);
		st->tail++;
		done++;
		if (crash) /* the crashing thread waits for this before it dies: we have read its maps */
			atomic_store_explicit(&h->ack, 1, memory_order_release);
	}
	return done;
}

/* After the target died: a producer that claimed a slot but never committed it (killed mid-sample) would
 * block the queue; skip such holes so that later committed samples are still read. */
static void drain_final(struct ip_state *st)
{
	drain(st);
	uint64_t head = atomic_load_explicit(&st->h->head, memory_order_acquire);
	while (st->tail < head) {
		if (!inproc_peek(st->h, st->tail)) {
			st->tail++;
			continue;
		}
		drain(st);
	}
}

static enum plumb_err setup_ring(struct ip_state *st, int *fd_out, struct perr *e)
{
	const struct record_opts *o = st->opts;
	uint32_t stack_bytes = (uint32_t)(o->stack_bytes ? o->stack_bytes : 16384);
	if (stack_bytes > 65536)
		stack_bytes = 65536;
	uint32_t slot = (uint32_t)((sizeof(struct inproc_slot) + stack_bytes + 63) & ~(size_t)63);
	st->ring_len = INPROC_HDR_SIZE + (size_t)NSLOTS * slot;
	int fd;
	void *m;
	enum plumb_err rc = backend_shared_memfd("plumb-inprocess-ring", st->ring_len, "inprocess", "the sample ring",
						 &fd, &m, e);
	if (rc)
		return rc;
	struct inproc_hdr *h = m;
	h->magic = INPROC_MAGIC;
	h->version = INPROC_VERSION;
	inproc_ring_init(h, INPROC_HDR_SIZE, NSLOTS, slot);
	h->stack_bytes = stack_bytes;
	h->mode = o->mode == MODE_WALL ? INPROC_WALL : INPROC_CPU;
	h->interval_ns = o->interval_ns ? o->interval_ns : 5000000;
	atomic_store(&h->enabled, 1);
	st->h = h;
	*fd_out = fd;
	return PLUMB_OK;
}

/* Sanitizer runtimes loaded into plumb itself (a `make asan` build): the --call host is plumb, and such a
 * runtime must come before any preloaded library. Appends "PATH:" for each to buf. */
static void sanitizer_runtimes(char *buf, size_t n)
{
	static const char *const runtimes[] = { "libasan.so", "libubsan.so" }; /* ASan insists on being first */
	for (size_t r = 0; r < sizeof runtimes / sizeof runtimes[0]; r++) {
		struct procfs_maps it;
		struct procfs_map m;
		if (!procfs_maps_open(&it, PROCFS_SELF))
			return;
		while (procfs_maps_next(&it, &m)) {
			const char *path = m.path;
			if (path[0] != '/')
				continue;
			const char *base = strrchr(path, '/') + 1;
			if (strncmp(base, runtimes[r], strlen(runtimes[r])) == 0 && !strstr(buf, path) &&
			    strlen(buf) + strlen(path) + 2 < n) {
				strcat(buf, path);
				strcat(buf, ":");
			}
		}
		procfs_maps_close(&it);
	}
}

static void env_free(char **env)
{
	for (int i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* Appends one "NAME=value" to env (which has room and stays NULL-terminated). */
static bool env_add(char **env, int *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool env_add(char **env, int *n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = vasprintf(&env[*n], fmt, ap);
	va_end(ap);
	if (w < 0) {
		env[*n] = NULL; /* vasprintf leaves it undefined */
		return false;
	}
	(*n)++;
	return true;
}

/* The environment of the target on top of ours: the preload, the ring and (when asked) the stage file, as
 * "NAME=value" strings (malloc'd, NULL-terminated; env_free releases them). NULL when out of memory. */
static char **child_env(const struct ip_state *st, int fd)
{
	char **env = calloc(8, sizeof *env);
	if (!env)
		return NULL;
	char v[PATH_MAX * 4 + 16] = "";
	if (st->opts->target == TARGET_CALL)
		sanitizer_runtimes(v, sizeof v / 2);
	const char *old = getenv("LD_PRELOAD");
	size_t used = strlen(v);
	if (old && *old)
		snprintf(v + used, sizeof v - used, "%s:%s", st->lib_path, old);
	else
		snprintf(v + used, sizeof v - used, "%s", st->lib_path);
	int n = 0;
	bool ok = env_add(env, &n, "LD_PRELOAD=%s", v) && env_add(env, &n, "%s=%d", INPROC_ENV_FD, fd) &&
		  env_add(env, &n, "PLUMB_DEBUG=1"); /* record runs gated; the library reads the same switch */
	if (ok && st->opts->stages_path)
		ok = env_add(env, &n, "PLUMB_STAGES=%s", st->opts->stages_path);
	if (ok && st->opts->target == TARGET_CALL)
		ok = env_add(env, &n, "%s=%s", INPROC_ENV_CALL_LIB, st->opts->call_lib) &&
		     env_add(env, &n, "%s=%s", INPROC_ENV_CALL_SYM, st->opts->call_sym);
	if (!ok) {
		env_free(env);
		return NULL;
	}
	return env;
}

/* What must hold before anything starts: the sampler library is found, and a --call library exists. */
static enum plumb_err ip_check(struct ip_state *st, struct perr *e)
{
	const struct record_opts *opts = st->opts;
	char looked[PERR_MSG_MAX / 2];
	if (!inprocess_find_preload(st->lib_path, sizeof st->lib_path, looked, sizeof looked))
		return perr_set(e, PLUMB_ENOENT, "inprocess: " PRELOAD_NAME " not found: %s", looked);
	if (procfs_exe(PROCFS_SELF, st->self, sizeof st->self) <= 0)
		return perr_set(e, PLUMB_EUNSUPPORTED, "inprocess: cannot read /proc/self/exe: %s", strerror(errno));
	if (opts->target == TARGET_CALL && access(opts->call_lib, F_OK) != 0 && strchr(opts->call_lib, '/'))
		return perr_set(e, PLUMB_EINVAL, "--call: %s: %s", opts->call_lib, strerror(errno));
	return PLUMB_OK;
}

/* Sets up the ring and the unwinder and starts the target with the sampler preloaded (res->start_ns): the
 * command, or for --call plumb itself as the host whose sampler library runs the function. */
static enum plumb_err ip_launch(struct ip_state *st, struct record_result *res, struct perr *e)
{
	const struct record_opts *opts = st->opts;
	enum plumb_err rc = setup_ring(st, &st->ring_fd, e);
	if (rc)
		return rc;
	st->maps = maps_new();
	if (st->maps)
		maps_use_files(st->maps, opts->files);
	st->unw = st->maps ? unwinder_new(st->maps) : NULL;
	if (!st->maps || !st->unw)
		return perr_set(e, PLUMB_ENOMEM, "inprocess: out of memory");
	st->s_unknown = profile_intern_cstr(st->p, "[unknown]");
	fflush(NULL);
	char **env = child_env(st, st->ring_fd);
	if (!env)
		return perr_set(e, PLUMB_ENOMEM, "inprocess: out of memory");
	/* plumb itself hosts a --call: the sampler library's constructor runs it and exits before main() */
	static const char *const call_host[] = { "plumb", "--inprocess-call-host-without-libplumb", NULL };
	st->child.env = (const char *const *)env;
	if (opts->target == TARGET_CALL) {
		st->child.path = st->self;
		st->child.argv = call_host;
	} else {
		st->child.argv = (const char *const *)opts->argv;
	}
	res->start_ns = mono_ns();
	st->origin_ns = res->start_ns;
	backend_child_opts(opts, &st->child); /* as backend_command gives a command */
	if (opts->target == TARGET_CALL) {
		/* what the call starts comes back to plumb if the host dies first (a crash): ip_run ends it */
		child_subreaper(true);
		rc = child_start(&st->child, e);
		backend_launched(opts, &st->child);
	} else {
		rc = backend_start(opts, &st->child, e);
	}
	env_free(env);
	if (rc && rc != PLUMB_EINVAL) { /* not the command's fault: another backend may do better */
		char why[PERR_MSG_MAX];
		snprintf(why, sizeof why, "%s", e->msg);
		rc = perr_set(e, PLUMB_EUNSUPPORTED, "inprocess: %s", why);
	}
	return rc;
}

/* The sampling loop: drains the ring until the target ends (st->status), time is up or we are told to stop
 * (st->stopped); then a stopped command or --call is ended (backend_end_command) and the ring read to its end. */
static void ip_loop(struct ip_state *st, struct record_result *res)
{
	const struct record_opts *opts = st->opts;
	uint64_t deadline = backend_deadline(opts, res->start_ns);
	for (;;) {
		if (opts->target == TARGET_CALL && !atomic_load(&st->h->ack) &&
		    atomic_load(&st->h->call_state) == CALL_READY) {
			backend_ensure_maps(st->maps, &st->loaded, st->child.pid, true);
			atomic_store_explicit(&st->h->ack, 1, memory_order_release);
		}
		size_t got = drain(st);
		backend_progress(opts, st->p, res->start_ns, st->ticks);
		if (backend_loop_done(opts, &st->child, deadline, &st->status, &st->stopped, res))
			break;
		/* Wake up rarely: a process that wakes every millisecond costs the target CPU-timer signals (the
		 * kernel folds more expiries into fewer signals). Drain often only while the ring is busy. */
		if (got < NSLOTS / 8) {
			struct timespec nap = ns_timespec(got > NSLOTS / 64 ? 2000000 : 10000000);
			nanosleep(&nap, NULL);
		}
	}
	res->end_ns = mono_ns();
	atomic_store(&st->h->enabled, 0);
	if (st->stopped) /* a command or a --call still running is plumb's to end, as in every backend */
		backend_end_command(opts, &st->child, res);
	drain_final(st);
}

/* How the target ended, from what the sampler library reported: a --call that failed or returned, a target
 * that never loaded the library (not a refusal another backend could get around), or its wait status. */
static enum plumb_err ip_outcome(struct ip_state *st, struct record_result *res, struct perr *e)
{
	const struct record_opts *opts = st->opts;
	uint32_t call_state = atomic_load(&st->h->call_state);
	if (opts->target == TARGET_CALL && call_state == CALL_FAILED) {
		st->h->call_error[sizeof st->h->call_error - 1] = 0;
		return perr_set(e, PLUMB_EINVAL, "--call %s:%s: %s", opts->call_lib, opts->call_sym, st->h->call_error);
	}
	if (!atomic_load(&st->h->attached) && !st->stopped)
		return perr_set(e, PLUMB_ENOENT,
				"inprocess: %s did not load " PRELOAD_NAME " (a statically linked or set-user-ID program "
				"cannot be preloaded)",
				opts->target == TARGET_CALL ? "the --call host" : opts->argv[0]);
	if (st->stopped)
		return PLUMB_OK;
	if (opts->target == TARGET_CALL && call_state == CALL_RETURNED && WIFEXITED(st->status)) {
		res->wait_status = st->status;
		if (call_is_void(opts->call_lib, opts->call_sym) == 1) {
			snprintf(res->ended, sizeof res->ended, "returned (void)");
			res->failed = false;
		} else {
			snprintf(res->ended, sizeof res->ended, "returned %d", st->h->call_ret);
			res->failed = st->h->call_ret != 0;
		}
	} else {
		backend_ended_with(res, st->status);
	}
	return PLUMB_OK;
}

/* The crash sample last, and what was sampled. */
static void ip_finish(struct ip_state *st, struct record_result *res)
{
	const struct record_opts *opts = st->opts;
	if (st->have_crash) {
		profile_add_sample(st->p, st->crash_stack, st->crash_thread, st->crash_time, 1);
		st->ticks++;
	}
	backend_meta(st->p, "inprocess", backend_unwinder_name(opts), st->ticks, atomic_load(&st->h->lost));
	uint64_t terr = atomic_load(&st->h->timer_errors);
	snprintf(res->limits, sizeof res->limits,
		 "inprocess backend: user frames only (no kernel frames); threads started through pthread_create "
		 "and the main thread are sampled%s%s",
		 opts->mode == MODE_WALL ? "; wall-clock ticks interrupt sleeping system calls (EINTR)"
					 : "; CPU timers fire at the kernel's scheduler tick, so a sample may stand for several "
					   "intervals (its weight)",
		 terr ? "; some threads could not get a timer" : "");
}

static enum plumb_err ip_run(const struct record_opts *opts, struct profile *p, struct record_result *res,
			     struct perr *e)
{
	if (opts->target == TARGET_PID)
		return perr_set(e, PLUMB_EUNSUPPORTED,
				"the inprocess backend samples commands it launches and --call, not a running process");
	struct ip_state st = { 0 };
	st.opts = opts;
	st.p = p;
	st.ring_fd = -1;
	st.child = (struct child)CHILD_INIT;
	enum plumb_err rc = ip_check(&st, e);
	if (rc)
		return rc;
	rc = ip_launch(&st, res, e);
	if (!rc) {
		ip_loop(&st, res);
		rc = ip_outcome(&st, res, e);
	}
	if (!rc)
		ip_finish(&st, res);
	backend_kill_failed(rc, &st.child, res, st.stopped);
	if (opts->target == TARGET_CALL) { /* the call ends what it started, however the host ended (§5.4) */
		child_end_orphans(opts->keeper ? opts->keeper->pid : 0);
		child_subreaper(false);
	}
	unwinder_free(st.unw);
	maps_free(st.maps);
	hmap_release(&st.loaded);
	if (st.h)
		munmap(st.h, st.ring_len);
	if (st.ring_fd >= 0)
		close(st.ring_fd);
	return rc;
}

/* --call runs inside a process of plumb's own making: only this backend can do it. */
static bool ip_wants(const struct record_opts *opts)
{
	return opts->target == TARGET_CALL;
}

const struct backend backend_inprocess = {
	.name = "inprocess",
	.wants = ip_wants,
	.run = ip_run,
	.targets = BACKEND_TARGET(TARGET_COMMAND) | BACKEND_TARGET(TARGET_CALL),
};
