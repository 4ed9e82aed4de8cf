/* spawn.h — the one way plumb starts a process: fill a struct child, child_start() it, child_finish() it (the
 * shape of git's run-command.h). An exec that fails is reported by the parent as an error with errno's text:
 * the child sends the errno of the step that failed back through a close-on-exec pipe, whose end-of-file means
 * the exec happened. Library code: nothing is printed, errors come back in a struct perr.
 *
 * Ownership: the caller owns every string and array it points the struct at, and must keep them alive until
 * child_start() returns. A CHILD_IO_PIPE end handed back in the struct belongs to the caller, who closes it.
 * child_finish() (or child_release() on an exec failure) reaps the process and closes what child_start opened. */
#ifndef PLUMB_OS_SPAWN_H
#define PLUMB_OS_SPAWN_H

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "base/err.h"

/* Where one of the child's standard streams goes. */
enum child_io {
	CHILD_IO_INHERIT = 0, /* plumb's own */
	CHILD_IO_NULL,        /* /dev/null */
	CHILD_IO_FD,          /* dup2 of `fd` (the caller's descriptor; left open in the parent) */
	CHILD_IO_PIPE,        /* a new pipe: child_start puts the parent's end in `fd` (read end for out/err) */
};

struct child_stream {
	enum child_io how;
	int fd;
};

struct child {
	/* ---- set by the caller ---- */
	const char *const *argv;  /* NULL-terminated; argv[0] is looked up on PATH unless it holds a '/' */
	const char *path;         /* the program to run when it is not argv[0] (argv[0] is then only its name) */
	const char *const *env;   /* NULL or NULL-terminated: "NAME=value" sets, "NAME" unsets, over our environ */
	const char *cwd;          /* directory to run in, or NULL */
	struct child_stream in, out, err;
	bool new_pgrp;            /* the child leads a new process group; child_signal() then signals the group */
	int pdeathsig;            /* non-zero: PR_SET_PDEATHSIG. Linux sends it when the *thread* that called
				   * child_start ends, not the process: start from a thread that outlives the child. */
	const sigset_t *sigmask;  /* the child's signal mask; NULL: the mask of the caller of child_start */
	/* Runs in the child after the steps above, just before exec; it must be async-signal-safe (the parent may
	 * have threads). 0 goes on to exec. A positive return is an exit status: the child exits with it and the
	 * start still counts as a success (the hook said why, e.g. on the child's stderr); a negative return is
	 * -errno, reported by child_start as a failure of the hook. */
	int (*hook)(void *arg);
	void *hook_arg;
	/* When set, the child runs fn(fn_arg) and exits with its return value instead of exec'ing argv (a worker
	 * process). Every other field applies as for an exec. */
	int (*fn)(void *arg);
	void *fn_arg;
	/* Stops the child after its setup, before exec, until child_release(): the parent can act on a process
	 * whose pid is known but which has not run the program yet (perf_event opens its counters on it). */
	bool hold;

	/* ---- filled by child_start ---- */
	pid_t pid;                /* -1 when not started or already reaped */
	int exec_errno;           /* the errno that stopped the child before exec (0: it did exec) */
	int hold_fd, report_fd;   /* internal */
};
#define CHILD_INIT { .pid = -1, .hold_fd = -1, .report_fd = -1, .in = { CHILD_IO_INHERIT, -1 }, \
		     .out = { CHILD_IO_INHERIT, -1 }, .err = { CHILD_IO_INHERIT, -1 } }

/* Starts the child. In the child: handled signals are reset to their default (ignored ones stay ignored, but
 * SIGPIPE is always reset: the program gets the SIGPIPE it expects), then the process group, the death signal,
 * the signal mask, the streams, the directory, the hook, the hold, and exec. Returns PLUMB_OK with c->pid set
 * (without a hold: once the exec happened); on a failure of a step before exec, the child is reaped, c->pid is
 * -1, c->exec_errno holds the errno and e says "cannot run 'ARGV0': <step>: <errno text>". The code follows the
 * errno: ENOENT/ENOTDIR PLUMB_ENOENT, EACCES/EPERM PLUMB_EPERM, ENOMEM PLUMB_ENOMEM, others PLUMB_EINVAL;
 * PLUMB_EIO when the pipe or fork itself failed. */
enum plumb_err child_start(struct child *c, struct perr *e);

/* Lets a held child go on to exec and reports the exec as child_start does; PLUMB_EIO when the held child is
 * gone (it is reaped). No-op without a hold. */
enum plumb_err child_release(struct child *c, struct perr *e);

/* Waits for the child to end (retrying after EINTR) and reaps it. Returns its wait status (WIFEXITED...), or -1
 * with errno when it cannot be waited for (never started, already reaped). Closes a held child's descriptors. */
int child_finish(struct child *c);
/* The same, also filling *ru with the child's resource usage (wait4). */
int child_finish_rusage(struct child *c, struct rusage *ru);
/* Reaps the child if it has ended, without waiting: 1 ended (*status and, when not NULL, *ru filled), 0 still
 * running, -1 with errno on error. */
int child_poll(struct child *c, int *status, struct rusage *ru);
/* Sends sig to the child, or to its process group when it leads one (new_pgrp). 0 or -1 with errno; ESRCH
 * once reaped. */
int child_signal(const struct child *c, int sig);
/* Forgets a child that is left to run on its own (it is not reaped here): closes what child_start kept open. */
void child_detach(struct child *c);

/* How child_terminate() ended a child. */
struct child_end {
	int status;   /* its wait status (WIFEXITED, WIFSIGNALED ...), -1 when it could not be waited for */
	int sent[3];  /* the signals plumb sent, in order (a signal the terminal delivered is not among them) */
	int nsent;
	int nsent_child; /* how many of them were sent while the child itself was alive (the rest, to what it left) */
	unsigned descendants; /* processes it had started that were signalled with it */
};

/* Ends a running child and every process it started that is still below it (children, their children; found
 * in /proc when the call begins): sends `sig` to all of them — unless `delivered`, when the terminal already
 * sent it to the whole process group — waits up to grace_ns for all to end, then sends SIGTERM and waits
 * another grace_ns, then SIGKILL; reaps the child (and fills *end). A descendant is signalled only while it is
 * the process that was found (same start time), never a pid reused since. Returns the child's wait status, or
 * -1 with errno (ECHILD) when there was no child to end. */
int child_terminate(struct child *c, int sig, bool delivered, unsigned long long grace_ns, struct child_end *end);

/* Makes the calling process a child subreaper (on) or not (off): a process below it whose parent ends comes back
 * to it, not to init, so child_end_orphans() can end it. 0 or -1 with errno. */
int child_subreaper(bool on);
/* Kills (SIGKILL) and reaps every child of the calling process but `spare` (the keeper; 0 for none) until none
 * is left or about 2 s have passed: what a subreaper was given back. Returns how many it ended. */
unsigned child_end_orphans(pid_t spare);

#endif
