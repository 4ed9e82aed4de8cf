/* baseline.c — the profile-baseline store: one hot summary per name, under PLUMB_HOME. Names are checked so
 * a name can never step out of the store's directory. */
#include "analyze/baseline.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic.h"
#include "base/home.h"
#include "base/sbuf.h"

#define PROFILES_DIR "baselines/profiles"

bool baseline_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 100 || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

static enum plumb_err profiles_dir(struct sbuf *dir, struct perr *e)
{
	char home[4096];
	if (!plumb_home_dir(home, sizeof home))
		return perr_set(e, PLUMB_ENOENT, "no home directory: set PLUMB_HOME");
	sbuf_addstr(dir, home);
	sbuf_addstr(dir, "/" PROFILES_DIR);
	return sbuf_done(dir, e);
}

enum plumb_err baseline_profile_path(const char *name, char **path, struct perr *e)
{
	if (!baseline_name_valid(name))
		return perr_set(e, PLUMB_EINVAL,
				"'%s' is not a valid baseline name (letters, digits, '.', '_' and '-'; at most 100)", name);
	struct sbuf p = SBUF_INIT;
	enum plumb_err rc = profiles_dir(&p, e);
	if (rc) {
		sbuf_release(&p);
		return rc;
	}
	sbuf_addf(&p, "/%s.json", name);
	*path = sbuf_detach(&p, NULL);
	return *path ? PLUMB_OK : perr_set(e, PLUMB_ENOMEM, "out of memory");
}

/* mkdir -p with mode 0700 for the parts it creates. */
static enum plumb_err make_dirs(const char *dir, struct perr *e)
{
	char *tmp = strdup(dir);
	if (!tmp)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (char *s = tmp + 1;; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(tmp, 0700) != 0 && errno != EEXIST) {
				int err = errno;
				enum plumb_err rc = perr_set(e, PLUMB_EOUTPUT, "cannot create %s: %s", tmp, strerror(err));
				free(tmp);
				return rc;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(tmp);
	return PLUMB_OK;
}

enum plumb_err baseline_profile_save(const char *name, const char *summary_json, size_t len, struct perr *e)
{
	char *path;
	enum plumb_err rc = baseline_profile_path(name, &path, e);
	if (rc)
		return rc;
	struct sbuf dir = SBUF_INIT;
	rc = profiles_dir(&dir, e);
	if (!rc)
		rc = make_dirs(dir.buf, e);
	if (!rc)
		rc = atomic_write_file(path, summary_json, len, e);
	sbuf_release(&dir);
	free(path);
	return rc;
}

enum plumb_err baseline_profile_lookup(const char *name, char **path, struct perr *e)
{
	enum plumb_err rc = baseline_profile_path(name, path, e);
	if (rc)
		return rc;
	struct stat st;
	if (stat(*path, &st) == 0 && S_ISREG(st.st_mode))
		return PLUMB_OK;
	/* not there: say which ones are */
	struct sbuf dir = SBUF_INIT, names = SBUF_INIT;
	profiles_dir(&dir, e);
	DIR *d = opendir(dir.buf);
	int count = 0;
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			size_t n = strlen(de->d_name);
			if (de->d_name[0] == '.' || n < 6 || strcmp(de->d_name + n - 5, ".json") != 0)
				continue;
			if (count++ < 20)
				sbuf_addf(&names, "%s%.*s", count > 1 ? ", " : "", (int)(n - 5), de->d_name);
		}
		closedir(d);
	}
	rc = perr_set(e, PLUMB_ENOENT, "no profile baseline named '%s' in %s (%s%s)", name, dir.buf,
		      count ? "saved: " : "none saved yet; `plumb record --save-baseline NAME` keeps one",
		      count ? names.buf : "");
	sbuf_release(&dir);
	sbuf_release(&names);
	free(*path);
	*path = NULL;
	return rc;
}
