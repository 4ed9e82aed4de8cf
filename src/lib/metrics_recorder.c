/* metrics_recorder.c — libplumb's metrics recorder: one thread, started only with PLUMB_DEBUG on, that samples
 * this process and its children every few seconds into the bounded plumb.metrics.v1 artifact. The thread blocks
 * every signal (the host's handlers stay the host's), sleeps on a condition variable so stopping is immediate,
 * and takes a last sample and writes the artifact one last time ("ended") before it exits. */
#include "lib/lib_internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/gate.h"
#include "base/redact.h"
#include "os/store.h"
#include "metrics/metrics.h"

static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER; /* serializes start and stop */
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;  /* guards rec_stopping, with rec_wake */
static pthread_cond_t rec_wake;
static bool rec_cond_ready;
static bool rec_running;   /* a thread exists (in rec_owner) */
static bool rec_stopping;
static pid_t rec_owner;
static pthread_t rec_thread;
static struct metrics_recorder rec;

static double env_seconds(const char *var, double fallback)
{
	const char *v = getenv(var);
	if (!v || !*v)
		return fallback;
	char *end;
	double s = strtod(v, &end);
	if (end == v || *end || !(s >= METRICS_EVERY_MIN && s <= METRICS_EVERY_MAX))
		return fallback;
	return s;
}

static size_t env_keep(void)
{
	const char *v = getenv("PLUMB_METRICS_KEEP");
	if (!v || !*v)
		return METRICS_DEFAULT_KEEP;
	char *end;
	long k = strtol(v, &end, 10);
	if (end == v || *end || k < 1 || k > METRICS_KEEP_MAX)
		return METRICS_DEFAULT_KEEP;
	return (size_t)k;
}

static void *recorder_main(void *arg)
{
	(void)arg;
	uint64_t next = mono_ns();
	uint64_t step_ns = (uint64_t)(rec.every_s * 1e9);
	pthread_mutex_lock(&rec_lock);
	while (!rec_stopping) {
		pthread_mutex_unlock(&rec_lock);
		struct perr e = PERR_INIT;
		size_t n;
		/* failures are not fatal: a full disk may clear, and the host must never notice us */
		if (metrics_recorder_sample(&rec, &n, &e) == PLUMB_OK && n > 0)
			metrics_recorder_write(&rec, "recording", &e);
		next += step_ns;
		uint64_t now = mono_ns();
		if (now > next)
			next = now; /* fell behind (a stopped process, a slow disk): no burst of catch-up samples */
		struct timespec until = ns_timespec(next);
		pthread_mutex_lock(&rec_lock);
		while (!rec_stopping) {
			int rc = pthread_cond_timedwait(&rec_wake, &rec_lock, &until);
			if (rc == ETIMEDOUT)
				break;
		}
	}
	pthread_mutex_unlock(&rec_lock);
	/* one last sample: the state of the process as it stops (and the only one of a very short life) */
	struct perr e = PERR_INIT;
	size_t n;
	metrics_recorder_sample(&rec, &n, &e);
	metrics_recorder_write(&rec, "ended", &e);
	return NULL;
}

int lib_metrics_start(const char *name)
{
	if (!gate_enabled())
		return PLUMB_EGATE;
	pthread_mutex_lock(&life_lock);
	if (rec_running && rec_owner == getpid()) {
		pthread_mutex_unlock(&life_lock);
		return PLUMB_OK;
	}
	if (rec_running) { /* a forked child: the parent's thread does not exist here, its lock may be held */
		pthread_mutex_init(&rec_lock, NULL);
		rec_cond_ready = false;
		rec_running = false;
		memset(&rec, 0, sizeof rec); /* the parent's storage is abandoned, not freed mid-use */
	}
	struct perr e = PERR_INIT;
	/* the recorder thread redacts process names, and the redactor reads $HOME: hand it $HOME now, in the
	 * host's thread, so that our thread never calls getenv (unsafe against a host thread's setenv) */
	const char *home = getenv("HOME");
	if (home && home[0] == '/' && home[1])
		redact_set_home(home);
	char file_name[STORE_NAME_MAX + 1];
	if (name && *name) {
		store_name_from(name, file_name, sizeof file_name);
	} else { /* derived from the program's name: from its redacted form, as `plumb metrics record` does */
		char *red = redact_dup(program_invocation_short_name);
		store_name_from(red ? red : "process", file_name, sizeof file_name);
		free(red);
	}
	char path[PATH_MAX], file[STORE_NAME_MAX + 16];
	/* the directory checked once and kept open: neither the host changing its working directory nor someone
	 * re-pointing a home that is a link moves the recording (docs/design.md §3.5) */
	int dfd = store_open_dir_for_write(&STORE_METRICS, file_name, true, path, sizeof path, file, &e);
	enum plumb_err rc = dfd < 0 ? e.code : PLUMB_OK;
	if (!rc)
		rc = metrics_recorder_init(&rec, path, file_name, getpid(),
					   env_seconds("PLUMB_METRICS_EVERY", METRICS_DEFAULT_EVERY), env_keep(), &e);
	if (!rc && (rc = metrics_recorder_anchor(&rec, dfd, file, &e)) != PLUMB_OK)
		metrics_recorder_release(&rec);
	if (dfd >= 0)
		close(dfd);
	if (rc) {
		pthread_mutex_unlock(&life_lock);
		return rc;
	}
	if (!rec_cond_ready) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&rec_wake, &ca);
		pthread_condattr_destroy(&ca);
		rec_cond_ready = true;
	}
	rec_stopping = false;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&rec_thread, NULL, recorder_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		metrics_recorder_release(&rec);
		pthread_mutex_unlock(&life_lock);
		return PLUMB_EPERM;
	}
	pthread_setname_np(rec_thread, "plumb-metrics");
	rec_running = true;
	rec_owner = getpid();
	static bool at_exit_registered;
	if (!at_exit_registered) /* in a .so glibc ties this to the library, so a dlclose unregisters it */
		at_exit_registered = atexit(lib_metrics_stop) == 0;
	pthread_mutex_unlock(&life_lock);
	return PLUMB_OK;
}

void lib_metrics_stop(void)
{
	/* in a forked child the thread does not exist and the locks may have been copied held: touch nothing */
	if (!rec_running || rec_owner != getpid())
		return;
	pthread_mutex_lock(&life_lock);
	if (!rec_running) {
		pthread_mutex_unlock(&life_lock);
		return;
	}
	pthread_mutex_lock(&rec_lock);
	rec_stopping = true;
	pthread_cond_broadcast(&rec_wake);
	pthread_mutex_unlock(&rec_lock);
	pthread_join(rec_thread, NULL);
	metrics_recorder_release(&rec);
	rec_running = false;
	pthread_mutex_unlock(&life_lock);
}
