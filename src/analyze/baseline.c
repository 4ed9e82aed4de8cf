/* baseline.c — the profile-baseline store: one hot summary per name, kept in the store of named things
 * (os/store.h, STORE_PROFILE_BASELINES). The store checks names, so a name can never step out of its
 * directory. */
#include "analyze/baseline.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/sbuf.h"
#include "os/store.h"

enum plumb_err baseline_profile_path(const char *name, char **path, struct perr *e)
{
	char buf[PATH_MAX];
	*path = NULL;
	enum plumb_err rc = store_path(&STORE_PROFILE_BASELINES, name, buf, sizeof buf, e);
	if (rc)
		return rc;
	*path = strdup(buf);
	return *path ? PLUMB_OK : perr_set(e, PLUMB_ENOMEM, "out of memory");
}

enum plumb_err baseline_profile_save(const char *name, const char *summary_json, size_t len, bool force, char *path,
				     size_t cap, struct perr *e)
{
	enum plumb_err rc = store_path(&STORE_PROFILE_BASELINES, name, path, cap, e);
	if (path[0] && (rc == PLUMB_EIO || rc == PLUMB_ENOENT)) /* a home that cannot be used, or refused */
		e->code = rc = PLUMB_EOUTPUT;
	if (rc)
		return rc;
	rc = store_save(&STORE_PROFILE_BASELINES, name, summary_json, len, force, e);
	if (rc == PLUMB_EINVAL && store_exists(&STORE_PROFILE_BASELINES, name)) /* the name is taken */
		return perr_set(e, PLUMB_EINVAL, "a profile baseline named '%s' exists (--force replaces it)", name);
	return rc;
}

enum plumb_err baseline_profile_lookup(const char *name, char **path, struct perr *e)
{
	enum plumb_err rc = baseline_profile_path(name, path, e);
	if (rc)
		return rc;
	rc = store_check_file(&STORE_PROFILE_BASELINES, name, e);
	if (rc != PLUMB_ENOENT) { /* there (and trusted), or there and refused: either is the answer */
		if (rc) {
			free(*path);
			*path = NULL;
		}
		return rc;
	}
	/* not there: say which ones are */
	char dir[PATH_MAX] = "";
	char **names = NULL;
	size_t n = 0;
	struct perr le = PERR_INIT;
	store_dir(&STORE_PROFILE_BASELINES, dir, sizeof dir, &le);
	store_list(&STORE_PROFILE_BASELINES, &names, &n, &le);
	struct sbuf list = SBUF_INIT;
	for (size_t i = 0; i < n && i < 20; i++)
		sbuf_addf(&list, "%s%s", i ? ", " : "", names[i]);
	rc = perr_set(e, PLUMB_ENOENT, "no profile baseline named '%s' in %s (%s%s)", name, dir,
		      n ? "saved: " : "none saved yet; `plumb record --save-baseline NAME` keeps one", n ? list.buf : "");
	sbuf_release(&list);
	store_list_free(names, n);
	free(*path);
	*path = NULL;
	return rc;
}
