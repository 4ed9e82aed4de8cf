/* live.h — the tables of a profile that grows while it is read (plumb top, docs/design.md §13). The raw profile
 * a backend fills is the session; each live_update() closes a window: what its counts gained since the update
 * before. Views of the last window or of the session, of every process or of one, are symbolized profiles that
 * hot_analyze() reads; symbolizing is lazy — a raw frame is resolved when a view first needs it, once for the
 * whole session, by one symbolizer kept for it. Work per update grows with the distinct stacks, not with the
 * samples; work per view with the stacks it shows.
 *
 * Ownership: live_new() / live_free(). The raw profile stays its owner's and is only read. Views are new
 * profiles the caller frees (profile_free). */
#ifndef PLUMB_ANALYZE_LIVE_H
#define PLUMB_ANALYZE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "profile/profile.h"
#include "symbol/symbol.h"

/* ---- a copy of the raw profile for another thread ---- */

/* The backend fills its raw profile in its own thread and must keep reading its rings while a live view
 * symbolizes (which can take seconds for a new binary): the backend's thread takes a copy of what is new, cheaply
 * and only when asked, and the view's thread reads the copy at leisure. The copy keeps the raw profile's ids
 * (frames, stacks, threads, counts), so it can be taken again and again. Ownership: live_copy_new() /
 * live_copy_free() (NULL is fine); the raw profile is only read. */
struct live_copy;
struct live_copy *live_copy_new(void);
void live_copy_free(struct live_copy *c);
/* Adds to the copy what raw gained since the last take. PLUMB_ENOMEM when out of memory. */
enum plumb_err live_copy_take(struct live_copy *c, const struct profile *raw, struct perr *e);
/* The copy, for live_update(). */
const struct profile *live_copy_profile(const struct live_copy *c);

/* ---- the session and its windows ---- */

struct live;

/* A live state symbolizing with opts (copied); NULL when out of memory. live_free() accepts NULL. */
struct live *live_new(const struct sym_opts *opts);
void live_free(struct live *l);

/* Takes in what raw (a growing raw profile: the backend's, or a live_copy) gained since the last update — the
 * growth of its counts — and makes that the last window. raw is kept (borrowed) until the next update: it must
 * not change in between. Nothing is symbolized here. PLUMB_ENOMEM when out of memory. */
enum plumb_err live_update(struct live *l, const struct profile *raw, struct perr *e);

/* The weight of the last window and of the session, of every process. */
uint64_t live_window_total(const struct live *l);
uint64_t live_session_total(const struct live *l);

/* A new symbolized profile of the last window (window) or of the whole session, of process pid only (0: every
 * process); the caller frees it. Only the frames it needs are symbolized, each once for the whole session (the
 * process view of a whole machine costs no symbolizing; opening one process symbolizes that one). Its metadata
 * is empty, for the caller to fill before writing it. PLUMB_ENOMEM when out of memory. */
enum plumb_err live_view(struct live *l, bool window, uint32_t pid, struct profile **out, struct perr *e);

/* How many raw frames have been symbolized so far (each is, once, when a view first needs it). */
size_t live_resolved(const struct live *l);

/* One process of the session. */
struct live_proc {
	uint32_t pid;
	const char *name;          /* its name (the thread whose tid is pid, else its first thread's); valid until the
				    * next update */
	uint64_t window, session;  /* its weight in the last window and in the session */
};

/* Every process with samples, most weight in the last window first, then most in the session, then by pid.
 * *out is the caller's to free. PLUMB_ENOMEM when out of memory. */
enum plumb_err live_processes(const struct live *l, struct live_proc **out, size_t *n, struct perr *e);

#endif
