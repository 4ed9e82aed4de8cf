/* plumb.c — the public API of libplumb (include/plumb.h): benchmark samples and stage ranges as JSON lines,
 * and target announcement through lock files. Invariant: with the debug switch off (read once at load), every
 * entry point returns after one load and a branch — no thread, no file, no timer, no allocation. */
#include "plumb.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os/announce.h"
#include "os/atomic.h"
#include "base/clock.h"
#include "base/gate.h"
#include "os/home.h"
#include "base/sbuf.h"
#include "os/store.h"
#include "lib/lib_internal.h"

/* -1 unknown (the constructor has not run yet), 0 off, 1 on. */
static atomic_int switch_state = -1;

__attribute__((constructor)) static void plumb_lib_load(void)
{
	atomic_store_explicit(&switch_state, gate_enabled() ? 1 : 0, memory_order_relaxed);
}

bool lib_switch_on(void)
{
	int s = atomic_load_explicit(&switch_state, memory_order_relaxed);
	if (__builtin_expect(s < 0, 0)) {
		s = gate_enabled() ? 1 : 0;
		atomic_store_explicit(&switch_state, s, memory_order_relaxed);
	}
	return s == 1;
}

#ifndef PLUMB_VERSION
#error "PLUMB_VERSION comes from the file VERSION (the Makefile passes it)"
#endif

const char *plumb_version(void)
{
	return PLUMB_VERSION;
}

const char *plumb_status_str(enum plumb_status status)
{
	switch (status) {
	case PLUMB_STATUS_OK: return "ok";
	case PLUMB_STATUS_OFF: return "switched off (PLUMB_DEBUG) or no output configured";
	case PLUMB_STATUS_INVALID: return "invalid argument";
	case PLUMB_STATUS_NOMEM: return "out of memory";
	case PLUMB_STATUS_IO: return "file could not be written";
	case PLUMB_STATUS_BUSY: return "target name announced by another live process";
	}
	return "unknown status";
}

/* ---- JSON lines ---- */

/* A JSON string literal through the one writer (base/sbuf.h); bytes >= 0x80 pass through (UTF-8 is the
 * caller's business). */
static void line_add_json(struct sbuf *l, const char *s)
{
	sbuf_add_json_str(l, s, strlen(s));
}

/* Appends the line with one write(2) to an O_APPEND file, so concurrent writers never interleave. */
static enum plumb_status line_append(struct sbuf *l, const char *path)
{
	sbuf_addch(l, '\n');
	if (l->oom) {
		sbuf_release(l);
		return PLUMB_STATUS_NOMEM;
	}
	enum plumb_status st = PLUMB_STATUS_OK;
	/* A path named as one of plumb's scratch files (record --stages, bench run) is plumb's to create: once plumb
	 * removed it (it ended, or was killed, while this program ran on), a line must not bring it back. */
	const char *base = strrchr(path, '/');
	pid_t owner;
	bool scratch = atomic_is_temp_name(base ? base + 1 : path, &owner);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | (scratch ? 0 : O_CREAT), 0600);
	if (fd < 0) {
		st = PLUMB_STATUS_IO;
	} else {
		ssize_t w;
		do
			w = write(fd, l->buf, l->len);
		while (w < 0 && errno == EINTR);
		if (w != (ssize_t)l->len)
			st = PLUMB_STATUS_IO;
		int saved = errno;
		close(fd);
		errno = saved;
	}
	sbuf_release(l);
	return st;
}

enum plumb_status plumb_sample_tags(const char *name, const char *kind, const char *unit, double value,
				    const char *const *tags, size_t ntags)
{
	if (!lib_switch_on())
		return PLUMB_STATUS_OFF;
	const char *path = getenv("PLUMB_SAMPLES");
	if (!path || !*path)
		return PLUMB_STATUS_OFF;
	if (!name || !kind || !unit || !isfinite(value) || (ntags && !tags))
		return PLUMB_STATUS_INVALID;
	for (size_t i = 0; i < 2 * ntags; i++)
		if (!tags[i])
			return PLUMB_STATUS_INVALID;
	struct sbuf l = SBUF_INIT;
	sbuf_addstr(&l, "{\"name\": ");
	line_add_json(&l, name);
	sbuf_addstr(&l, ", \"kind\": ");
	line_add_json(&l, kind);
	sbuf_addstr(&l, ", \"unit\": ");
	line_add_json(&l, unit);
	sbuf_addf(&l, ", \"value\": %.17g, \"tags\": {", value);
	for (size_t i = 0; i < ntags; i++) {
		if (i)
			sbuf_addstr(&l, ", ");
		line_add_json(&l, tags[2 * i]);
		sbuf_addstr(&l, ": ");
		line_add_json(&l, tags[2 * i + 1]);
	}
	sbuf_addstr(&l, "}}");
	return line_append(&l, path);
}

enum plumb_status plumb_sample(const char *name, const char *kind, const char *unit, double value)
{
	if (!lib_switch_on())
		return PLUMB_STATUS_OFF;
	return plumb_sample_tags(name, kind, unit, value, NULL, 0);
}

/* ---- stages ---- */

struct plumb_stage {
	uint64_t start_ns;
	char name[];
};

struct plumb_stage *plumb_stage_begin(const char *name)
{
	if (!lib_switch_on() || !name)
		return NULL;
	const char *path = getenv("PLUMB_STAGES");
	if (!path || !*path)
		return NULL;
	size_t n = strlen(name);
	struct plumb_stage *s = malloc(sizeof *s + n + 1);
	if (!s)
		return NULL;
	memcpy(s->name, name, n + 1);
	s->start_ns = mono_ns();
	return s;
}

enum plumb_status plumb_stage_end(struct plumb_stage *stage)
{
	if (!stage)
		return PLUMB_STATUS_OFF;
	uint64_t end = mono_ns();
	const char *path = getenv("PLUMB_STAGES");
	if (!path || !*path) {
		free(stage);
		return PLUMB_STATUS_OFF;
	}
	struct sbuf l = SBUF_INIT;
	sbuf_addstr(&l, "{\"name\": ");
	line_add_json(&l, stage->name);
	sbuf_addf(&l, ", \"start_ns\": %llu", (unsigned long long)stage->start_ns);
	sbuf_addf(&l, ", \"end_ns\": %llu", (unsigned long long)end);
	sbuf_addf(&l, ", \"pid\": %ld}", (long)getpid());
	free(stage);
	return line_append(&l, path);
}

/* ---- announcement ---- */

#define MAX_ANNOUNCED 8

static pthread_mutex_t announce_lock = PTHREAD_MUTEX_INITIALIZER;
static char announced[MAX_ANNOUNCED][4096]; /* lock paths this process wrote */
static pid_t announced_by[MAX_ANNOUNCED];
static bool atexit_done;
static bool metrics_started;

/* True when the lock at path names a live process other than this one. */
static bool lock_held_by_other(const char *path)
{
	struct announce a;
	return announce_read(path, &a) == ANNOUNCE_LIVE && a.pid != getpid();
}

static void remove_locks(void)
{
	pthread_mutex_lock(&announce_lock);
	for (int i = 0; i < MAX_ANNOUNCED; i++) {
		/* A forked child runs its parent's atexit handlers: it must not remove the parent's lock. */
		if (announced[i][0] && announced_by[i] == getpid())
			unlink(announced[i]);
		announced[i][0] = 0;
	}
	pthread_mutex_unlock(&announce_lock);
}

static void at_exit_cleanup(void)
{
	plumb_shutdown();
}

enum plumb_status plumb_announce(const char *name)
{
	if (!lib_switch_on())
		return PLUMB_STATUS_OFF;
	if (!name || !store_name_valid(name))
		return PLUMB_STATUS_INVALID;
	char path[4096], file[STORE_NAME_MAX + 16];
	struct perr e = PERR_INIT;
	/* the directory checked once; the lock is written in it, not by its path (docs/design.md §3.5) */
	int dfd = store_open_dir_for_write(&STORE_TARGETS, name, true, path, sizeof path, file, &e);
	if (dfd < 0)
		return e.code == PLUMB_EINVAL ? PLUMB_STATUS_INVALID : PLUMB_STATUS_IO;

	pthread_mutex_lock(&announce_lock);
	enum plumb_status st = PLUMB_STATUS_OK;
	int slot = -1;
	for (int i = 0; i < MAX_ANNOUNCED; i++) {
		if (announced[i][0] && announced_by[i] == getpid() && strcmp(announced[i], path) == 0)
			slot = i; /* announcing again rewrites the lock */
	}
	for (int i = 0; slot < 0 && i < MAX_ANNOUNCED; i++)
		if (!announced[i][0])
			slot = i;
	if (slot < 0) {
		st = PLUMB_STATUS_INVALID;
		goto out;
	}
	if (lock_held_by_other(path)) {
		st = PLUMB_STATUS_BUSY;
		goto out;
	}
	if (announce_write_at(dfd, file, path, getpid(), &e) != PLUMB_OK) {
		st = PLUMB_STATUS_IO;
		goto out;
	}
	snprintf(announced[slot], sizeof announced[slot], "%s", path);
	announced_by[slot] = getpid();
	if (!atexit_done) {
		atexit(at_exit_cleanup);
		atexit_done = true;
	}
out:
	pthread_mutex_unlock(&announce_lock);
	close(dfd);
	return st;
}

enum plumb_status plumb_init(const char *name)
{
	if (!lib_switch_on())
		return PLUMB_STATUS_OFF;
	enum plumb_status st = plumb_announce(name);
	if (st != PLUMB_STATUS_OK)
		return st;
	pthread_mutex_lock(&announce_lock);
	bool start = !metrics_started;
	metrics_started = true;
	pthread_mutex_unlock(&announce_lock);
	if (start && lib_metrics_start(name) != 0)
		return PLUMB_STATUS_IO;
	return PLUMB_STATUS_OK;
}

void plumb_shutdown(void)
{
	if (!lib_switch_on())
		return;
	pthread_mutex_lock(&announce_lock);
	bool stop = metrics_started;
	metrics_started = false;
	pthread_mutex_unlock(&announce_lock);
	if (stop)
		lib_metrics_stop();
	remove_locks();
}

__attribute__((destructor)) static void plumb_lib_unload(void)
{
	if (atomic_load_explicit(&switch_state, memory_order_relaxed) == 1)
		remove_locks();
}
