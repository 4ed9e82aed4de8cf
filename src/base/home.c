/* home.c — the plumb home directory; reads the environment only. */
#include "base/home.h"

#include <stdio.h>
#include <stdlib.h>

/* 1 written, 0 no variable set, -1 too long */
static int home_dir(char *buf, size_t n)
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

bool plumb_home_dir(char *buf, size_t n)
{
	return home_dir(buf, n) == 1;
}

enum plumb_err plumb_home(char *buf, size_t n, struct perr *e)
{
	int r = home_dir(buf, n);
	if (r == 1)
		return PLUMB_OK;
	if (r == 0)
		return perr_set(e, PLUMB_ENOENT, "cannot tell where plumb keeps its files: set PLUMB_HOME or HOME");
	return perr_set(e, PLUMB_EINVAL, "the plumb home directory path is too long");
}
