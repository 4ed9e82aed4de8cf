/* store.h — the one store of named things under $PLUMB_HOME/<kind>/NAME<ext>: profile baselines, bench
 * baselines, metrics recordings and announced targets. One name rule for all of them, so a name can never step
 * out of its directory nor read as an option; directories are created 0700, files written whole (temp + rename,
 * 0600) and, unless forced, never over an existing name.
 *
 * Ownership: paths are written into caller buffers (PATH_MAX is enough); store_load's data and store_list's
 * names are malloc'd and belong to the caller (store_list_free). Library code: nothing is printed. */
#ifndef PLUMB_BASE_STORE_H
#define PLUMB_BASE_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* A kind of stored thing: its directory under $PLUMB_HOME, its file extension, and what a message calls one. */
struct store_kind {
	const char *dir;    /* "baselines/profiles" */
	const char *ext;    /* ".json" */
	const char *what;   /* "profile baseline" */
};

extern const struct store_kind STORE_PROFILE_BASELINES; /* baselines/profiles/NAME.json (plumb.hot.v1) */
extern const struct store_kind STORE_BENCH_BASELINES;   /* baselines/evidence/NAME.json (bench evidence) */
extern const struct store_kind STORE_METRICS;           /* metrics/NAME.json (plumb.metrics.v1) */
extern const struct store_kind STORE_TARGETS;           /* targets/NAME.lock (base/announce.h) */

#define STORE_NAME_MAX 100 /* bytes of a name, not counting the NUL */

/* The name rule: 1..STORE_NAME_MAX bytes of [A-Za-z0-9._-], not starting with '.' (no hidden files, no "..")
 * nor '-' (it would read as an option where a command takes a NAME). */
bool store_name_valid(const char *name);
/* Turns any text (a command's basename) into a valid name in buf (cap >= 2): bytes outside the rule's set
 * become '-', the text is cut to STORE_NAME_MAX; "process" when what is left starts with '.' or '-' or is
 * empty. */
void store_name_from(const char *text, char *buf, size_t cap);
/* PLUMB_EINVAL naming the kind and stating the rule when name breaks it. */
enum plumb_err store_check_name(const struct store_kind *k, const char *name, struct perr *e);

/* $PLUMB_HOME/<dir> into buf. PLUMB_ENOENT when no home is known, PLUMB_EINVAL when it does not fit. */
enum plumb_err store_dir(const struct store_kind *k, char *buf, size_t cap, struct perr *e);
/* $PLUMB_HOME/<dir>/NAME<ext> into buf, after store_check_name. */
enum plumb_err store_path(const struct store_kind *k, const char *name, char *buf, size_t cap, struct perr *e);
/* True when NAME is stored (a regular file). */
bool store_exists(const struct store_kind *k, const char *name);

/* For a writer with its own atomic file (one rewritten at every sample, or streamed): store_path, creating the
 * directory (0700), and — unless `force` — PLUMB_EINVAL when the name is taken ("... exists"). */
enum plumb_err store_path_for_write(const struct store_kind *k, const char *name, bool force, char *buf, size_t cap,
				    struct perr *e);
/* Saves len bytes as NAME: directory created 0700, file written whole (base/atomic.h, 0600). Without `force`
 * an existing NAME is left untouched and the result is PLUMB_EINVAL ("a <what> named 'NAME' exists"); the
 * check and the rename are one step (no race with another saver). */
enum plumb_err store_save(const struct store_kind *k, const char *name, const void *data, size_t len, bool force,
			  struct perr *e);
/* Reads NAME whole into *data (NUL-terminated, malloc'd; the caller frees it). PLUMB_ENOENT when it is not
 * stored, PLUMB_EIO when it cannot be read. */
enum plumb_err store_load(const struct store_kind *k, const char *name, char **data, size_t *len, struct perr *e);
/* The stored names (valid names with the kind's extension, the extension cut), sorted; *names malloc'd (NULL
 * and 0 when none, or when the directory does not exist yet). PLUMB_EIO when it cannot be listed. */
enum plumb_err store_list(const struct store_kind *k, char ***names, size_t *n, struct perr *e);
void store_list_free(char **names, size_t n);
/* Removes NAME. PLUMB_ENOENT when it is not stored, PLUMB_EOUTPUT when it cannot be removed (errno kept). */
enum plumb_err store_remove(const struct store_kind *k, const char *name, struct perr *e);

#endif
