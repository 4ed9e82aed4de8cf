/* baseline.h — named baselines of plumb bench: evidence artifacts kept in the store (os/store.h,
 * STORE_BENCH_BASELINES: $PLUMB_HOME/baselines/evidence/NAME.json), saved, listed, found and removed. Only
 * trusted evidence becomes a baseline: an artifact with a harness-only case never does (docs/design.md §8.2).
 * Library code: each call says what happened as a status (and a struct perr for the rest); the command words it. */
#ifndef PLUMB_BENCH_BASELINE_H
#define PLUMB_BENCH_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "bench/evidence.h"

enum bench_baseline_status {
	BENCH_BASELINE_OK,
	BENCH_BASELINE_BAD_NAME, /* the name breaks the store's rule */
	BENCH_BASELINE_NO_HOME,  /* no plumb home to keep baselines in (neither PLUMB_HOME nor HOME, or too long) */
	BENCH_BASELINE_MISSING,  /* no baseline of that name */
	BENCH_BASELINE_EXISTS,   /* saving: the name is taken and force was not given */
	BENCH_BASELINE_HARNESS,  /* saving: the artifact is harness-only */
	BENCH_BASELINE_ERROR,    /* the struct perr says what (out of memory, cannot write or remove) */
};

/* The file of baseline NAME into path (PATH_MAX is enough): OK when something is there, else BAD_NAME,
 * NO_HOME, or MISSING (path then names where it was looked for). A store the trust rule refuses (docs/design.md
 * §3.5) is OK here: reading it says why. */
enum bench_baseline_status bench_baseline_path(const char *name, char *path, size_t cap);
/* Reads baseline NAME under the store's trust rule (os/store.h store_load: never through a link, only the
 * user's own file, within the cap) and parses it. PLUMB_ENOENT when it is not saved; the parse's errors. */
enum plumb_err bench_baseline_read(const char *name, struct bench_evidence *ev, struct perr *e);

/* Keeps ev as baseline NAME (replacing one only when force). HARNESS, with *harness_case naming the (last)
 * harness-only case, when ev is harness-only; NO_HOME; EXISTS; ERROR (e) when the file cannot be written;
 * OK with the file written in path. */
enum bench_baseline_status bench_baseline_save(const struct bench_evidence *ev, const char *name, bool force,
					       char *path, size_t cap, const char **harness_case, struct perr *e);

/* One saved baseline as a listing shows it. The strings are malloc'd (NULL when the artifact lacks them). */
struct bench_baseline_summary {
	char *name;
	char *suite, *created, *git_commit, *trust;
	size_t nsamples;
	char *unreadable; /* why the artifact could not be read (the fields above are then NULL), or NULL */
};

/* Every saved baseline, sorted by name, each read for its summary (one that cannot be read is listed with the
 * reason). *list is malloc'd (NULL and 0 when there is none); free it with bench_baseline_list_free. NO_HOME,
 * ERROR (e: cannot list the directory, out of memory), OK. */
enum bench_baseline_status bench_baseline_list(struct bench_baseline_summary **list, size_t *n, struct perr *e);
void bench_baseline_list_free(struct bench_baseline_summary *list, size_t n);

/* Removes baseline NAME: BAD_NAME, NO_HOME, MISSING, ERROR (e: "cannot remove 'NAME': <errno text>"), OK. */
enum bench_baseline_status bench_baseline_remove(const char *name, struct perr *e);

#endif
