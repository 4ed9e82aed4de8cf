/* home.c — the plumb home directory: where it is (the environment decides), and opening it and its parts under
 * the trust rule of os/fs.h. Each part is opened relative to the one above it, so what is checked is what is
 * used: no path is looked up twice. */
#include "os/home.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/fs.h"

/* 1 written, 0 no variable set, -1 too long */
static int home_locate(char *buf, size_t n)
{
	const char *h = getenv("PLUMB_HOME");
	const char *x = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int w;
	if (h && *h)
		w = snprintf(buf, n, "%s", h);
	else if (x && *x)
		w = snprintf(buf, n, "%s/plumb", x);
	else if (home && *home)
		w = snprintf(buf, n, "%s/.local/state/plumb", home);
	else
		return 0;
	return w >= 0 && (size_t)w < n ? 1 : -1;
}

bool home_dir(char *buf, size_t n)
{
	return home_locate(buf, n) == 1;
}

enum plumb_err home_path(char *buf, size_t n, struct perr *e)
{
	int r = home_locate(buf, n);
	if (r == 1)
		return PLUMB_OK;
	if (r == 0)
		return perr_set(e, PLUMB_ENOENT, "cannot tell where plumb keeps its files: set PLUMB_HOME or HOME");
	return perr_set(e, PLUMB_EINVAL, "the plumb home directory path is too long");
}

enum plumb_err home_open(const char *sub, bool create, char *path, size_t cap, int *dfd, struct perr *e)
{
	*dfd = -1;
	enum plumb_err rc = home_path(path, cap, e);
	if (rc)
		return rc;
	size_t hlen = strlen(path);
	if (sub[0] && (size_t)snprintf(path + hlen, cap - hlen, "/%s", sub) >= cap - hlen)
		return perr_set(e, PLUMB_EINVAL, "the plumb home directory path is too long");
	/* the home as the user named it (a link there is the user's own choice): created, then checked */
	char saved = path[hlen];
	path[hlen] = '\0';
	if (create && (rc = fs_mkdirs(path, 0700, e)) != PLUMB_OK) {
		path[hlen] = saved;
		return rc;
	}
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		rc = perr_set(e, err == ENOENT ? PLUMB_ENOENT : PLUMB_EIO, "cannot use %s: %s", path, strerror(err));
	} else if ((rc = fs_check_private_dir(fd, path, e)) != PLUMB_OK) {
		close(fd);
		fd = -1;
	}
	path[hlen] = saved;
	/* each part below it, opened in the one above: never a symbolic link */
	for (size_t at = hlen + 1; fd >= 0 && at < strlen(path);) {
		size_t end = at;
		while (path[end] && path[end] != '/')
			end++;
		char keep = path[end];
		path[end] = '\0';
		int next = end > at ? fs_open_private_dir(fd, path + at, path, create, e) : dup(fd); /* "a//b" */
		if (next < 0)
			rc = end > at ? e->code : perr_set(e, PLUMB_EIO, "cannot use %s: %s", path, strerror(errno));
		path[end] = keep;
		close(fd);
		fd = next;
		at = end + 1;
	}
	*dfd = fd;
	return fd >= 0 ? PLUMB_OK : rc;
}
