/* repo.h — inside analyze/: the repository `--repo-only` keeps frames of. Its top level (the nearest ancestor
 * holding .git) and the set of its files, each by repo-relative path and by its last two components (what a
 * label shows), so a frame whose label carries a short path can be found in it. */
#ifndef PLUMB_ANALYZE_REPO_H
#define PLUMB_ANALYZE_REPO_H

#include <stdbool.h>
#include <stddef.h>

#include "base/intern.h"

/* At most this many paths are kept; a walk that reaches it stops there. */
#define HOT_REPO_MAX_PATHS 2000000

struct hot_repo_files {
	struct interner paths; /* repo-relative paths and their last-two-component suffixes */
};
#define HOT_REPO_FILES_INIT { INTERNER_INIT }

/* Walks root (symbolic links not followed, directories whose name starts with '.' skipped, unreadable ones
 * passed over) and adds every file that is not a directory or a link. Out of memory, or at HOT_REPO_MAX_PATHS,
 * it keeps what it has and returns false. */
bool hot_repo_files_load(struct hot_repo_files *rf, const char *root);

/* True when s[0..len) is one of the repository's paths or short paths. */
bool hot_repo_files_has(const struct hot_repo_files *rf, const char *s, size_t len);

void hot_repo_files_release(struct hot_repo_files *rf);

#endif
