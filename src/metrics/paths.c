/* paths.c — where recordings live: $PLUMB_HOME/metrics/NAME.json, PLUMB_HOME defaulting to
 * ${XDG_STATE_HOME:-$HOME/.local/state}/plumb. Names are file names, so they are checked, never trusted. */
#include "metrics/metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/home.h"

enum plumb_err metrics_home(char *buf, size_t cap, struct perr *e)
{
	if (plumb_home_dir(buf, cap))
		return PLUMB_OK;
	if (!getenv("PLUMB_HOME") && !getenv("XDG_STATE_HOME") && !getenv("HOME"))
		return perr_set(e, PLUMB_ENOENT, "cannot tell where recordings live: set PLUMB_HOME or HOME");
	return perr_set(e, PLUMB_EINVAL, "the plumb home directory path is too long");
}

enum plumb_err metrics_dir(char *buf, size_t cap, struct perr *e)
{
	enum plumb_err rc = metrics_home(buf, cap, e);
	if (rc)
		return rc;
	size_t n = strlen(buf);
	if (n + sizeof "/metrics" > cap)
		return perr_set(e, PLUMB_EINVAL, "the plumb home directory path is too long");
	memcpy(buf + n, "/metrics", sizeof "/metrics");
	return PLUMB_OK;
}

bool metrics_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n >= METRICS_NAME_MAX || name[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

void metrics_name_from(const char *text, char *buf, size_t cap)
{
	size_t n = 0;
	for (const char *s = text; *s && n + 1 < cap && n + 1 < METRICS_NAME_MAX; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			  c == '_' || c == '-';
		buf[n++] = ok ? c : '-';
	}
	buf[n] = '\0';
	if (n == 0 || buf[0] == '.')
		snprintf(buf, cap, "process");
}

enum plumb_err metrics_path_for(const char *name, char *buf, size_t cap, struct perr *e)
{
	if (!metrics_name_valid(name))
		return perr_set(e, PLUMB_EINVAL,
				"'%s' is not a recording name (letters, digits, '.', '_', '-'; not starting with '.')",
				name);
	enum plumb_err rc = metrics_dir(buf, cap, e);
	if (rc)
		return rc;
	size_t n = strlen(buf);
	int m = snprintf(buf + n, cap - n, "/%s.json", name);
	if (m < 0 || (size_t)m >= cap - n)
		return perr_set(e, PLUMB_EINVAL, "the recording path is too long");
	return PLUMB_OK;
}

enum plumb_err metrics_mkdirs(const char *dir, struct perr *e)
{
	char path[4096];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof path)
		return perr_set(e, PLUMB_EOUTPUT, "cannot create directory '%s': bad path", dir);
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		char saved = path[i];
		path[i] = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			int err = errno;
			return perr_set(e, PLUMB_EOUTPUT, "cannot create directory %s: %s", path, strerror(err));
		}
		path[i] = saved;
	}
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return perr_set(e, PLUMB_EOUTPUT, "cannot create directory %s: not a directory", dir);
	return PLUMB_OK;
}
