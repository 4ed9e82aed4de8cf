/* live.h — the tables of a profile that grows while it is read (plumb top, docs/design.md §13). The raw profile
 * a backend fills is symbolized as it grows — each new frame once, by one symbolizer kept for the session — into
 * the session profile, and each live_update() closes a window: what was sampled since the update before. Views
 * of the last window or of the session, of every process or of one, are profiles that hot_analyze() reads.
 * Work per update grows with what is new (frames, stacks) and with the distinct stacks, not with the samples.
 *
 * Ownership: live_new() / live_free(). The raw profile stays the backend's and is only read, inside
 * live_update(). The session and its metadata belong to the live state; views the caller gets as `owned` are
 * the caller's to free (profile_free). */
#ifndef PLUMB_ANALYZE_LIVE_H
#define PLUMB_ANALYZE_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "profile/profile.h"
#include "symbol/symbol.h"

struct live;

/* A live state symbolizing with opts (copied); NULL when out of memory. live_free() accepts NULL. */
struct live *live_new(const struct sym_opts *opts);
void live_free(struct live *l);

/* Takes in what raw gained since the last update (its frames, stacks, threads and the growth of its counts)
 * and makes that the last window. PLUMB_ENOMEM when out of memory (the session keeps what it had). */
enum plumb_err live_update(struct live *l, const struct profile *raw, struct perr *e);

/* The symbolized session: every sample so far. Valid until the next update. */
const struct profile *live_session(const struct live *l);
/* The session, for the caller to fill its metadata (command, backend, interval, ...) before writing it: it
 * may intern strings in it and set its metadata, never add samples. */
struct profile *live_session_edit(struct live *l);
/* The weight of the last window, of every process. */
uint64_t live_window_total(const struct live *l);

/* A profile of the last window (window) or of the whole session, of process pid only (0: every process).
 * *view is what to read; when it had to be built, *owned is the same profile and the caller frees it, else
 * *owned is NULL and *view is the session itself. PLUMB_ENOMEM when out of memory. */
enum plumb_err live_view(const struct live *l, bool window, uint32_t pid, const struct profile **view,
			 struct profile **owned, struct perr *e);

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
