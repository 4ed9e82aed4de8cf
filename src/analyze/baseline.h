/* baseline.h — named profile baselines: hot summaries kept under
 * $PLUMB_HOME/baselines/profiles/NAME.json (PLUMB_HOME defaults to ${XDG_STATE_HOME:-~/.local/state}/plumb).
 * `plumb record --save-baseline NAME` saves one; `plumb diff` takes a NAME in place of a path. */
#ifndef PLUMB_ANALYZE_BASELINE_H
#define PLUMB_ANALYZE_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* Names follow the store's rule (store_name_valid in os/store.h). */

/* The path of baseline NAME (whether or not it exists); malloc'd, caller frees. PLUMB_EINVAL for a bad
 * name, PLUMB_ENOENT when no home directory can be found. */
enum plumb_err baseline_profile_path(const char *name, char **path, struct perr *e);

/* Saves a plumb.hot.v1 document as baseline NAME (directories created 0700, file written atomically, 0600) and
 * puts where it went into path (cap bytes, PATH_MAX is enough). An existing NAME is replaced only when `force`:
 * otherwise PLUMB_EINVAL, "a profile baseline named 'NAME' exists (--force replaces it)", and it is untouched. */
enum plumb_err baseline_profile_save(const char *name, const char *summary_json, size_t len, bool force, char *path,
				     size_t cap, struct perr *e);

/* Finds baseline NAME: *path is malloc'd. PLUMB_ENOENT (exit 3) when there is none; the message lists the
 * saved baselines. */
enum plumb_err baseline_profile_lookup(const char *name, char **path, struct perr *e);

#endif
