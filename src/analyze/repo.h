/* repo.h — inside analyze/: the repository `--repo-only` keeps frames of. Its top level (the nearest ancestor
 * holding .git) and the set of its files, each by its repo-relative path and by every tail of its absolute path
 * that has at least two components ("w/hot.c", "x/w/hot.c" of /tmp/x/w/hot.c under the root /tmp/x/w), so a
 * frame whose file is known only by a shortened path (a folded label keeps two components, which may include the
 * root's own name) is found in it, whatever the shortening. */
#ifndef PLUMB_ANALYZE_REPO_H
#define PLUMB_ANALYZE_REPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/intern.h"

/* At most this many paths are kept; a walk that reaches it stops there. */
#define HOT_REPO_MAX_PATHS 2000000

struct hot_repo_files {
	struct interner paths; /* repo-relative paths and the tails of the absolute paths */
	uint32_t *rel;         /* per entry of paths: the entry of its file's repo-relative path (first file seen) */
	size_t rel_cap;
};
#define HOT_REPO_FILES_INIT { INTERNER_INIT, NULL, 0 }

/* Walks root (symbolic links not followed, directories whose name starts with '.' skipped, unreadable ones
 * passed over) and adds every file that is not a directory or a link. Out of memory, or at HOT_REPO_MAX_PATHS,
 * it keeps what it has and returns false. */
bool hot_repo_files_load(struct hot_repo_files *rf, const char *root);

/* True when s[0..len) is one of the repository's paths or tails. */
bool hot_repo_files_has(const struct hot_repo_files *rf, const char *s, size_t len);

/* The repo-relative path of the file a path or tail names (the first one walked, when several share a tail);
 * NULL when it names none. The string is the set's, valid until release. */
const char *hot_repo_files_rel(const struct hot_repo_files *rf, const char *s, size_t len);

void hot_repo_files_release(struct hot_repo_files *rf);

#endif
