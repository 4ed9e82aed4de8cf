/* session.h — one sampling session, the part `record`, `top` and `metrics record` share (docs/design.md §5): the
 * target and the options (struct record_opts, filled by the face), the backend choice and its fallback
 * (backend_run_auto), the launched command's life (a keeper process so that plumb's death, even by SIGKILL,
 * ends what it launched; the signal passed on, the grace, SIGTERM, SIGKILL: backend_end_command), the sampling
 * thread for the live views, the drain, and one sentence for how the target ended.
 *
 * Ownership: the caller owns struct session and what opts points at (argv, paths, the stop flag); the session
 * owns the sampled profile (s->raw) until session_release(), or until the caller takes it (sets s->raw NULL). */
#ifndef PLUMB_SAMPLE_SESSION_H
#define PLUMB_SAMPLE_SESSION_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "os/keeper.h"
#include "os/spawn.h"
#include "profile/profile.h"
#include "sample/backend.h"

struct session {
	/* ---- set by the caller ---- */
	struct record_opts opts;   /* what to sample; opts.keeper is the session's own */
	bool keep_timeline;        /* keep sample times (formats that hold them, stage slicing) */
	/* Called in the sampling thread when sampling has ended (session_start_thread), NULL: none. */
	void (*ended)(void *ctx);
	void *ended_ctx;

	/* ---- filled by the session ---- */
	struct profile *raw;       /* what the backend sampled (raw frames), once it ended */
	struct record_result res;  /* how the target ended */
	struct backend_outcome run; /* the backend used and why others were passed over */
	enum plumb_err rc;         /* the run's result */
	struct perr err;           /* its message when rc is not PLUMB_OK */
	struct keeper keeper;
	pid_t launched;            /* the launched command's pid once a backend started it (session_launched) */
	pthread_t thread;
	bool threaded;
};

/* Gets s ready (every field zero, the outcome empty, no keeper). */
void session_init(struct session *s);
/* Samples to the end in this thread: starts the keeper when a command is launched, runs the backends
 * (backend_run_auto), ends the keeper. Returns s->rc. */
enum plumb_err session_run(struct session *s);
/* The same in a thread of its own (the live views): returns at once; PLUMB_EIO when the thread cannot start.
 * The thread calls s->ended when sampling has ended; session_join() waits for it. */
enum plumb_err session_start_thread(struct session *s, struct perr *e);
void session_join(struct session *s);

/* A launched command without a sampler (metrics record): starts opts.argv as the backends start a command
 * (the keeper, the stage file, the exec error as a bad target) into c. */
enum plumb_err session_launch(struct session *s, struct child *c, struct perr *e);
/* The end of a command started by session_launch(): it ended on its own (status from its reaping, res filled as
 * every backend fills it), or, when sampling stopped early, it is plumb's to end (backend_end_command). Ends the
 * keeper. */
void session_launch_ended(struct session *s, struct child *c, int status);
void session_launch_stop(struct session *s, struct child *c);

/* How the target ended, one sentence the three commands print alike: "xz exited with 0.", "pid 42 (xz) is still
 * running.", "sh was killed by SIGINT (plumb passed it on)."; empty when there is nothing to say (--all). subject
 * names the target ("xz", "pid 42 (xz)", "split_run()"). */
void session_fate(const struct session *s, const char *subject, char *buf, size_t n);

/* The pid of the command a backend launched, 0 until it started (or when none is launched); any thread may ask. */
pid_t session_launched(const struct session *s);
/* The name of the backend sampling now (or that sampled), "?" before one started; any thread may ask. */
const char *session_backend(const struct session *s);

/* Frees the profile and the outcome; ends a keeper still running. */
void session_release(struct session *s);

#endif
