/* backend.h — the sampling backends behind `plumb record` (docs/design.md §5.3): perf_event, inprocess, ptrace,
 * python (CPython frames read from outside), py-spy. Each backend fills a profile with *raw* frames
 * (addresses with their module, see symbol/maps.h) or with finished frames (python); record.c then
 * symbolizes raw frames once per distinct address (sym_resolve_profile) and writes the output.
 *
 * Ownership: the caller owns opts, the profile and the result; a backend only fills them. */
#ifndef PLUMB_SAMPLE_BACKEND_H
#define PLUMB_SAMPLE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#include "base/err.h"
#include "base/hashmap.h"
#include "os/keeper.h"
#include "base/sbuf.h"
#include "os/spawn.h"
#include "profile/profile.h"
#include "symbol/files.h"
#include "symbol/maps.h"

enum record_target { TARGET_COMMAND, TARGET_PID, TARGET_CALL, TARGET_ALL /* every process (system.c) */ };
enum record_mode { MODE_CPU, MODE_WALL, MODE_ALLOC /* allocations, sampled by bytes (sample/alloc.c) */ };
enum record_unwind { UNWIND_DWARF, UNWIND_FP };

/* How far sampling has come, for the live views' hook (record_opts.on_poll). */
struct backend_sofar {
	uint64_t ticks;            /* samples taken so far */
	uint64_t lost;             /* samples the kernel reported lost so far */
	uint64_t start_ns;         /* CLOCK_MONOTONIC when sampling began */
};

struct record_opts {
	enum record_target target;
	char **argv;               /* TARGET_COMMAND: NULL-terminated command */
	pid_t pid;                 /* TARGET_PID */
	const char *call_lib;      /* TARGET_CALL: LIB.so */
	const char *call_sym;      /* TARGET_CALL: SYMBOL */
	uint64_t interval_ns;      /* requested interval */
	double seconds;            /* how long to sample; 0 = until the command exits */
	enum record_mode mode;
	enum record_unwind unwind;
	bool kernel;               /* include kernel frames where permitted */
	size_t stack_bytes;        /* user stack copied per sample (dwarf unwinding) */
	bool native;               /* python: merge native frames */
	bool idle;                 /* python: keep idle stacks */
	const char *backend;       /* forced backend name, NULL = automatic */
	const char *stages_path;   /* where the target's plumb.h stages go (PLUMB_STAGES), or NULL */
	const char *output;        /* the profile's path ("-", or NULL: stdout): a backend's scratch files go beside it */
	volatile int *stop;        /* set to nonzero (by a signal handler) to stop sampling early */
	struct progress *progress; /* the progress line to report to (base/progress.h), or NULL */
	const pid_t *pids;         /* TARGET_ALL: keep only these processes (npids of them); NULL: every one */
	size_t npids;
	const char *comm_re;       /* TARGET_ALL: keep only processes whose name matches (POSIX extended), or NULL */
	/* The live views (plumb top): called by the sampling loop after each read of the rings (at least every
	 * ~50 ms) with the profile being filled, which it may read but not change. NULL: none. Every backend
	 * calls it, through backend_poll(). */
	void (*on_poll)(void *ctx, struct profile *p, const struct backend_sofar *bp);
	void *poll_ctx;
	bool command_quiet;        /* a launched command's streams go to /dev/null (a full-screen live view) */
	const sigset_t *command_sigmask; /* a launched command's signal mask, NULL: that of the thread starting it */
	pid_t *launched;           /* where the pid of the launched command goes once it started (atomic), or NULL */
	const struct keeper *keeper; /* told of every process a backend launches (sample/session.c), or NULL */
	uint64_t alloc_interval;   /* MODE_ALLOC: mean bytes between sampled allocations (0: ALLOC_DEFAULT_INTERVAL) */
	struct sym_files *files;   /* where backends open the target's files as it sees them (symbol/files.h), kept
				    * for the symbolizer; NULL: by their names */
};

struct record_result {
	bool target_exited;        /* the launched command / attached process ended */
	int wait_status;           /* raw wait status of a launched command (when target_exited) */
	/* How the target ended, a predicate for its name ("xz exited with 3", "split_run() returned 0"): "exited
	 * with 0", "was killed by SIGSEGV (core dumped)", "returned 3", "exited during the attach", "was killed by
	 * SIGINT (plumb sent it when the 1s window ended)"; empty for an attached process still running. */
	char ended[192];
	bool failed;               /* it failed on its own: a non-zero exit status, a crash, a --call returning non-0 */
	bool ended_by_plumb;       /* plumb ended it (the --seconds window, or a signal plumb passed on) */
	uint64_t start_ns;         /* CLOCK_MONOTONIC when sampling began (profile_start) */
	uint64_t end_ns;           /* CLOCK_MONOTONIC when sampling ended */
	char limits[256];          /* what this backend cannot see (printed in the summary), may be empty */
	char summary[256];         /* the backend's own summary line instead of "Sampled N ticks ..." (alloc), or empty */
};
#define ALLOC_DEFAULT_INTERVAL (512 * 1024) /* jemalloc's lg_prof_sample = 19 */

struct backend {
	const char *name;
	/* True when this backend should be picked automatically for opts (e.g. python for a CPython target). */
	bool (*wants)(const struct record_opts *opts);
	/* Samples until the target ends, opts->seconds pass, or *opts->stop is set. Returns PLUMB_EPERM when the
	 * kernel refuses (the caller may fall back to another backend), with the cause in e. */
	enum plumb_err (*run)(const struct record_opts *opts, struct profile *p, struct record_result *res,
			      struct perr *e);
	/* Never picked automatically, only with --backend NAME (e.g. py-spy, an optional external tool). */
	bool forced_only;
	/* The targets it can sample: BACKEND_TARGET(TARGET_COMMAND) | ...; `--backend NAME` with another kind of
	 * target is a bad argument (exit 2), said before anything runs. */
	unsigned targets;
};
#define BACKEND_TARGET(t) (1u << (t))
/* "a launched command, --pid" — what b can sample, for a message. */
const char *backend_targets_text(const struct backend *b, char *buf, size_t n);

/* Backends in the order they are tried. */
const struct backend *backend_find(const char *name);
const struct backend *const *backend_list(size_t *n);

/* The backends to try for opts, in order, into out (at most max): the forced one, or those that want this
 * target, then every other that is not used only when named. Returns how many. */
size_t backend_choose(const struct record_opts *opts, const struct backend **out, size_t max);

/* What backend_run_auto() did. */
struct backend_outcome {
	const struct backend *used; /* the backend that sampled, NULL when none could */
	const struct backend *trying; /* the backend sampling now (written atomically: a live view reads it) */
	enum plumb_err refused;     /* the first backend's refusal, when fallback is not empty */
	struct sbuf fallback;       /* why the first backend was passed over, then "; the NAME fallback failed
				     * too: ..." for each fallback that failed; empty when the first one ran */
};
#define BACKEND_OUTCOME_INIT { NULL, NULL, PLUMB_OK, SBUF_INIT }
void backend_outcome_release(struct backend_outcome *o);

/* Runs the backends backend_choose() gives until one samples, each into a fresh profile (with a timeline when
 * keep_timeline): only a refusal of the first (PLUMB_EPERM or PLUMB_EUNSUPPORTED, and no forced backend) leads
 * to the next one, and a fallback that finds the target wrong (PLUMB_EINVAL) ends the attempts with that error
 * alone. PLUMB_OK: *out is the profile (the caller frees it), res the used backend's result and o says which
 * one it was and why others were passed over. On failure *out is NULL; o->fallback, when not empty, is the
 * whole story to tell (o->refused its code), else e is. */
enum plumb_err backend_run_auto(const struct record_opts *opts, bool keep_timeline, struct profile **out,
				struct record_result *res, struct backend_outcome *o, struct perr *e);

/* Individual backends (each in its own file). */
extern const struct backend backend_perf_event;
extern const struct backend backend_ptrace;    /* attach by PTRACE_SEIZE/INTERRUPT (ptrace.c) */
extern const struct backend backend_inprocess; /* libplumb preloaded: signal + timers (inprocess.c) */
extern const struct backend backend_python;    /* CPython frames read from outside (sample/python.c) */
extern const struct backend backend_pyspy;     /* py-spy, only when forced (sample/pyspy.c) */
extern const struct backend backend_system;    /* every process, per-CPU events (system.c); TARGET_ALL only */
extern const struct backend backend_alloc;     /* --mode alloc: the preloaded allocation profiler (alloc.c) */
/* The preloaded library (libplumb-preload.so): PLUMB_PRELOAD, beside plumb, or under its prefix; on failure
 * `looked` says where it looked (inprocess.c). */
bool inprocess_find_preload(char *out, size_t n, char *looked, size_t looked_n);

/* Helpers shared by backends. */
/* The environment a recorded command gets on top of plumb's (PLUMB_STAGES when --stages is given). */
struct backend_env {
	char stages[4096 + 16];
	const char *vars[2];
};
/* Points c at opts->argv and at env (which must outlive child_start) for the command under record; without a
 * keeper (opts->keeper) the command gets SIGKILL as its parent-death signal, so that it ends with plumb. */
void backend_command(const struct record_opts *opts, struct child *c, struct backend_env *env);
/* What backend_command sets in c besides argv and env: the parent-death signal (none with a keeper), a quiet
 * command's streams (/dev/null) and the signal mask opts asks for. */
void backend_child_opts(const struct record_opts *opts, struct child *c);
/* child_start / child_release for the command under record: a command that cannot be run is PLUMB_EINVAL
 * ("cannot run 'X': <errno text>"), an unresolvable target (docs/design.md §3.2, exit 2), whatever the errno.
 * The started process is handed to the keeper (backend_launched). */
enum plumb_err backend_start(const struct record_opts *opts, struct child *c, struct perr *e);
/* Tells the session's keeper of a process a backend started itself (py-spy, the --call host). */
void backend_launched(const struct record_opts *opts, const struct child *c);
enum plumb_err backend_release(struct child *c, struct perr *e);
/* True when the target has ended: the launched command c (reaped here; res->wait_status and res->ended filled),
 * or, with --pid, process pid (gone or a zombie). Sets res->target_exited. */
bool backend_target_ended(const struct record_opts *opts, struct child *c, pid_t pid, struct record_result *res);
/* The sampling interval in nanoseconds (5 ms when opts does not say). */
uint64_t backend_interval_ns(const struct record_opts *opts);
/* When sampling that began at start_ns must end (opts->seconds), or 0: when the target ends. */
uint64_t backend_deadline(const struct record_opts *opts, uint64_t start_ns);
/* True when sampling should stop now: *opts->stop was set (a signal) or the deadline (when not 0) has passed. */
bool backend_should_stop(const struct record_opts *opts, uint64_t deadline);
/* A launched command (or the --call host) still running when sampling stopped early belongs to plumb: it gets
 * the signal that stopped plumb (*opts->stop, passed on unless the terminal sent it to the whole group) or, when
 * the --seconds window ended, SIGINT; then SIGTERM and SIGKILL after BACKEND_GRACE_NS each (os/spawn.h
 * child_terminate, with every process it started). It is reaped and res says how it ended (ended_by_plumb).
 * Nothing when c was reaped or never started. */
void backend_end_command(const struct record_opts *opts, struct child *c, struct record_result *res);
/* *opts->stop for a stop without a signal (top's q, --iterations, a reader gone): the command gets SIGINT. */
#define BACKEND_STOP_QUIT 0x200
#define BACKEND_GRACE_NS 2000000000ULL
/* The effective sampling rate the summary line and the progress line show: ticks a second, and in wall mode
 * ticks a second per sampled thread (every thread is sampled at every tick, so the total grows with them). */
double backend_effective_rate(const struct profile *p, enum record_mode mode, uint64_t ticks, double seconds);
/* Reports sampling so far on opts->progress (the time since start_ns, ticks, the effective rate) and to the live
 * view's hook (opts->on_poll, with p). Cheap when no redraw is due; call it from a sampling loop after each read. */
void backend_poll(const struct record_opts *opts, struct profile *p, uint64_t start_ns, uint64_t ticks,
		  uint64_t lost);
#define backend_progress(opts, p, start_ns, ticks) backend_poll((opts), (p), (start_ns), (ticks), 0)
/* Adds what a backend sampled to p's metadata: its ticks and lost records, its name and its unwinder's. */
void backend_meta(struct profile *p, const char *name, const char *unwinder, uint64_t ticks, uint64_t lost);
/* "dwarf" or "fp", as opts->unwind says. */
const char *backend_unwinder_name(const struct record_opts *opts);
/* The raw frame (symbol/symbol.h) of the user-space address addr, found in mapping m (NULL: in none): a mapped
 * file or the vDSO keeps addr as its ELF vaddr, any other mapping the address itself under its pseudo name,
 * no mapping the address under `unknown`. caller: addr is a return address. PROFILE_NOMEM when out of memory. */
uint32_t backend_user_frame(struct profile *p, const struct map_entry *m, uint64_t addr, bool caller,
			    str_id unknown);
/* The profile thread of (pid, tid), named from /proc/PID/task/TID/comm when first seen; cache maps
 * (pid << 32 | tid) to the thread id (the caller's, released with hmap_release). PROFILE_NOMEM when out of
 * memory. */
uint32_t backend_thread(struct profile *p, struct hmap *cache, pid_t pid, pid_t tid);
/* The backends of a preloaded library (inprocess, alloc) share a memory with the target and unwind what it
 * reports there. backend_shared_memfd: a memfd named name (inherited by the target: no CLOEXEC) of len bytes,
 * mapped read-write into *map, its descriptor in *fd; on failure nothing is left open and e says
 * "WHO: memfd_create: ..." (PLUMB_EUNSUPPORTED) or "WHO: cannot size|map WHAT: ..." (PLUMB_ENOMEM). */
enum plumb_err backend_shared_memfd(const char *name, size_t len, const char *who, const char *what, int *fd,
				    void **map, struct perr *e);
/* Reads the maps of pid into maps once (loaded: the pids read; again when force). */
void backend_ensure_maps(struct maps *maps, struct hmap *loaded, pid_t pid, bool force);
/* The mapping of addr in pid; on a miss (a library loaded since the maps were read) the maps are read again,
 * once per stack (*reloaded) and at most every 20 ms (*last_reload_ns, CLOCK_MONOTONIC). */
const struct map_entry *backend_find_map(struct maps *maps, uint64_t *last_reload_ns, pid_t pid, uint64_t addr,
					 bool *reloaded);
/* The end test of a sampling loop over a launched child c: true when it ended (*status, res->target_exited and
 * res->wait_status set) or sampling should stop (backend_should_stop; *stopped set). */
bool backend_loop_done(const struct record_opts *opts, struct child *c, uint64_t deadline, int *status,
		       bool *stopped, struct record_result *res);
/* After a failed run (rc not PLUMB_OK): a launched child c that neither ended (res->target_exited) nor was ended
 * by backend_end_command (stopped) is killed (SIGKILL) and reaped. */
void backend_kill_failed(enum plumb_err rc, struct child *c, const struct record_result *res, bool stopped);
/* A wait status as a predicate ("exited with 3", "was killed by SIGSEGV (core dumped)"). */
void describe_wait_status(int status, char *buf, size_t n);
/* res->wait_status, res->ended and res->failed from the wait status of a target that ended on its own. */
void backend_ended_with(struct record_result *res, int status);
/* kernel.perf_event_paranoid, or -1 when it cannot be read. */
int perf_event_paranoid(void);
/* The explanation for a refused attach (docs/design.md §5.3): another tracer (TracerPid with its name), or the missing
 * privilege (perf_event_paranoid, CAP_PERFMON / CAP_SYS_PTRACE). Writes one sentence to buf. */
void describe_attach_refusal(pid_t pid, const char *what, int err, char *buf, size_t n);

#endif
