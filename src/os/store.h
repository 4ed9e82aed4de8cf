/* store.h — the one store of named things under $PLUMB_HOME/<kind>/NAME<ext>: profile baselines, bench
 * baselines, metrics recordings and announced targets. One name rule for all of them, so a name can never step
 * out of its directory nor read as an option; directories are created 0700, files written whole (temp + rename,
 * 0600) and, unless forced, never over an existing name. The trust rule (docs/design.md §3.5) holds for every
 * call: a home or directory another user owns or can write is refused (PLUMB_EIO for a reader, PLUMB_EOUTPUT
 * for a writer, with one line saying why and what to do); a stored name that is a symbolic link or a special
 * file is neither read, listed nor written through; a stored file is read only when it is the user's (or
 * root's) and within its kind's cap.
 *
 * Ownership: paths are written into caller buffers (PATH_MAX is enough); store_load's data and store_list's
 * names are malloc'd and belong to the caller (store_list_free). Library code: nothing is printed. */
#ifndef PLUMB_OS_STORE_H
#define PLUMB_OS_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "os/atomic.h"

/* A kind of stored thing: its directory under $PLUMB_HOME, its file extension, and what a message calls one. */
struct store_kind {
	const char *dir;    /* "baselines/profiles" */
	const char *ext;    /* ".json" */
	const char *what;   /* "profile baseline" */
	size_t max_bytes;   /* the cap on a stored file store_load reads (docs/design.md §3.5) */
};

extern const struct store_kind STORE_PROFILE_BASELINES; /* baselines/profiles/NAME.json (plumb.hot.v1) */
extern const struct store_kind STORE_BENCH_BASELINES;   /* baselines/evidence/NAME.json (bench evidence) */
extern const struct store_kind STORE_METRICS;           /* metrics/NAME.json (plumb.metrics.v1) */
extern const struct store_kind STORE_TARGETS;           /* targets/NAME.lock (os/announce.h) */

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

/* $PLUMB_HOME/<dir> into buf, after checking what of it exists against the trust rule. PLUMB_ENOENT when no
 * home is known, PLUMB_EINVAL when it does not fit, PLUMB_EIO when the rule refuses it. */
enum plumb_err store_dir(const struct store_kind *k, char *buf, size_t cap, struct perr *e);
/* $PLUMB_HOME/<dir>/NAME<ext> into buf, after store_check_name and store_dir's check (when that check refuses the
 * directory, PLUMB_EIO comes back with buf still filled, for messages). A reader that opens the path itself must
 * still use os/fs.h's fs_open_trusted (or store_load): the path alone proves nothing of the file. */
enum plumb_err store_path(const struct store_kind *k, const char *name, char *buf, size_t cap, struct perr *e);
/* True when NAME is stored (a regular file). */
bool store_exists(const struct store_kind *k, const char *name);

/* For a writer with its own atomic file (one rewritten at every sample, or streamed): store_path, creating the
 * directory (0700), and — unless `force` — PLUMB_EINVAL when the name is taken ("... exists"). PLUMB_EOUTPUT
 * when the name is a symbolic link or a special file. */
enum plumb_err store_path_for_write(const struct store_kind *k, const char *name, bool force, char *buf, size_t cap,
				    struct perr *e);
/* For a writer that streams: store_path_for_write, then af opened with os/atomic.h's atomic_open_at in the
 * directory checked by this call (nothing is looked up again by path: a home re-pointed meanwhile cannot move
 * the write). Without `force`, the commit never replaces a NAME saved meanwhile (PLUMB_EINVAL). The caller
 * writes af->fp and commits or aborts. buf gets the path, for messages. */
enum plumb_err store_open_write(const struct store_kind *k, const char *name, bool force, struct atomic_file *af,
				char *buf, size_t cap, struct perr *e);
/* For a writer that rewrites NAME many times (a metrics recording): the checks of store_path_for_write, and
 * the kind's directory open (the descriptor is returned; the caller closes it; -1 with e set), with NAME's
 * entry in file (STORE_NAME_MAX + 16 bytes) for atomic_open_at. */
int store_open_dir_for_write(const struct store_kind *k, const char *name, bool force, char *buf, size_t cap,
			     char *file, struct perr *e);
/* Saves len bytes as NAME: directory created 0700, file written whole (os/atomic.h, 0600). Without `force`
 * an existing NAME is left untouched and the result is PLUMB_EINVAL ("a <what> named 'NAME' exists"); the
 * check and the rename are one step (no race with another saver). */
enum plumb_err store_save(const struct store_kind *k, const char *name, const void *data, size_t len, bool force,
			  struct perr *e);
/* Reads NAME whole into *data (NUL-terminated, malloc'd; the caller frees it) with fs_read_trusted: PLUMB_ENOENT
 * when it is not stored, PLUMB_EFORMAT past the kind's max_bytes, PLUMB_EIO when it cannot be read or breaks the
 * rule (a link, not regular, another user's). */
enum plumb_err store_load(const struct store_kind *k, const char *name, char **data, size_t *len, struct perr *e);
/* For a reader that opens NAME by its path (store_path) itself: whether NAME is there and passes the rule that
 * store_load applies (regular, the user's or root's, not through a link, within the cap). The directory is the
 * user's own and writable by no one else, so the file cannot be swapped by another user between this check
 * and the open. Codes as store_load's. */
enum plumb_err store_check_file(const struct store_kind *k, const char *name, struct perr *e);
/* The stored names (valid names with the kind's extension, the extension cut), sorted; *names malloc'd (NULL
 * and 0 when none, or when the directory does not exist yet). PLUMB_EIO when it cannot be listed. */
enum plumb_err store_list(const struct store_kind *k, char ***names, size_t *n, struct perr *e);
void store_list_free(char **names, size_t n);
/* Removes NAME. PLUMB_ENOENT when it is not stored, PLUMB_EOUTPUT when it cannot be removed (errno kept). */
enum plumb_err store_remove(const struct store_kind *k, const char *name, struct perr *e);

#endif
