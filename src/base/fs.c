/* fs.c — see fs.h. mkdir -p walks the path once, creating each missing component; EEXIST is not an error
 * (another process may create a part at the same time), the final stat says whether a directory is there.
 * fs_which follows execvp's search, so that what plumb probes is what it then runs. */
#include "base/fs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum plumb_err fs_mkdirs(const char *dir, mode_t mode, struct perr *e)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof path)
		return perr_set(e, PLUMB_EINVAL, "cannot create directory '%.200s': %s", dir,
				n ? "the path is too long" : "empty path");
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (path[i - 1] == '/') /* "a//b" or a trailing slash */
			continue;
		char saved = path[i];
		path[i] = '\0';
		if (mkdir(path, mode) != 0 && errno != EEXIST) {
			int err = errno;
			return perr_set(e, PLUMB_EOUTPUT, "cannot create directory %s: %s", path, strerror(err));
		}
		path[i] = saved;
	}
	struct stat st;
	if (stat(dir, &st) != 0)
		return perr_set(e, PLUMB_EOUTPUT, "cannot create directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return perr_set(e, PLUMB_EOUTPUT, "cannot create directory %s: not a directory", dir);
	return PLUMB_OK;
}

static bool is_exec_file(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

bool fs_which(const char *name, char *out, size_t n)
{
	if (!name || !*name)
		return false;
	if (strchr(name, '/'))
		return (size_t)snprintf(out, n, "%s", name) < n && access(out, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (;;) {
		size_t len = strcspn(path, ":");
		int w = snprintf(out, n, "%.*s/%s", (int)(len ? len : 1), len ? path : ".", name);
		if (w > 0 && (size_t)w < n && is_exec_file(out))
			return true;
		if (!path[len])
			return false;
		path += len + 1;
	}
}
