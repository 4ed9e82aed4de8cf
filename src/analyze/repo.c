/* repo.c — the repository of `--repo-only`: its git top level, and its files walked with an explicit stack of
 * directories (no nftw: it gives its callback no context, which forced a file-scope global). The set is
 * membership only; the order of the walk does not matter. */
#include "analyze/repo.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "base/grow.h"
#include "base/sbuf.h"

char *hot_git_toplevel(void)
{
	char dir[PATH_MAX];
	if (!getcwd(dir, sizeof dir))
		return NULL;
	for (;;) {
		char probe[PATH_MAX + 8];
		struct stat st;
		snprintf(probe, sizeof probe, "%s/.git", dir);
		if (stat(probe, &st) == 0)
			return strdup(dir);
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return NULL;
		*slash = '\0';
	}
}

/* The walk: directories still to read (malloc'd paths) and where paths become repo-relative. */
struct walk {
	struct hot_repo_files *rf;
	size_t root_len;
	char **dirs;
	size_t ndirs, cap;
	struct sbuf path;
};

/* Adds one name of a file: `rel_id` is the entry of its repo-relative path (UINT32_MAX: this is it). */
static bool add_name(struct hot_repo_files *rf, const char *s, size_t len, uint32_t *rel_id)
{
	bool added;
	uint32_t id = intern(&rf->paths, s, len, &added);
	if (id == INTERN_NOMEM || (added && !ALLOC_GROW(rf->rel, (size_t)id + 1, rf->rel_cap)))
		return false;
	if (*rel_id == UINT32_MAX)
		*rel_id = id;
	if (added)
		rf->rel[id] = *rel_id;
	return true;
}

/* Adds a file's repo-relative path and every tail of its absolute path with at least two components. */
static bool add_file(struct walk *w)
{
	if (intern_count(&w->rf->paths) > HOT_REPO_MAX_PATHS)
		return false;
	const char *abs = w->path.buf, *rel = abs + w->root_len;
	while (*rel == '/')
		rel++;
	uint32_t rel_id = UINT32_MAX;
	if (!add_name(w->rf, rel, strlen(rel), &rel_id))
		return false;
	/* tails start after a '/' that has another '/' after it */
	const char *last = strrchr(abs, '/');
	for (const char *s = abs; s < last; s++)
		if (*s == '/' && s + 1 < last && !add_name(w->rf, s + 1, strlen(s + 1), &rel_id))
			return false;
	return true;
}

static bool push_dir(struct walk *w)
{
	char *copy = strdup(w->path.buf);
	if (!copy || !ALLOC_GROW(w->dirs, w->ndirs + 1, w->cap)) {
		free(copy);
		return false;
	}
	w->dirs[w->ndirs++] = copy;
	return true;
}

/* Reads one directory: files are added, subdirectories pushed. Returns false to stop the walk. */
static bool read_dir(struct walk *w, const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return true; /* unreadable: passed over */
	bool go_on = true;
	struct dirent *de;
	while (go_on && (de = readdir(d))) {
		const char *name = de->d_name;
		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
			continue;
		sbuf_reset(&w->path);
		sbuf_addstr(&w->path, dir);
		sbuf_addch(&w->path, '/');
		sbuf_addstr(&w->path, name);
		if (w->path.oom) {
			go_on = false;
			break;
		}
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;
			if (lstat(w->path.buf, &st) != 0)
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		}
		if (type == DT_DIR)
			go_on = name[0] == '.' || push_dir(w);
		else if (type != DT_LNK)
			go_on = add_file(w);
	}
	closedir(d);
	return go_on;
}

bool hot_repo_files_load(struct hot_repo_files *rf, const char *root)
{
	struct walk w = { rf, strlen(root), NULL, 0, 0, SBUF_INIT };
	sbuf_addstr(&w.path, root);
	bool ok = !w.path.oom && push_dir(&w);
	while (ok && w.ndirs > 0) {
		char *dir = w.dirs[--w.ndirs];
		ok = read_dir(&w, dir);
		free(dir);
	}
	for (size_t i = 0; i < w.ndirs; i++)
		free(w.dirs[i]);
	free(w.dirs);
	sbuf_release(&w.path);
	return ok;
}

bool hot_repo_files_has(const struct hot_repo_files *rf, const char *s, size_t len)
{
	return intern_find(&rf->paths, s, len) != IDTAB_NONE;
}

const char *hot_repo_files_rel(const struct hot_repo_files *rf, const char *s, size_t len)
{
	uint32_t id = intern_find(&rf->paths, s, len);
	return id == IDTAB_NONE ? NULL : intern_str(&rf->paths, rf->rel[id]);
}

void hot_repo_files_release(struct hot_repo_files *rf)
{
	interner_release(&rf->paths);
	free(rf->rel);
	rf->rel = NULL;
	rf->rel_cap = 0;
}
