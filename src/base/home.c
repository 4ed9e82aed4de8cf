/* home.c — the plumb home directory; reads the environment only. */
#include "base/home.h"

#include <stdio.h>
#include <stdlib.h>

bool plumb_home_dir(char *buf, size_t n)
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
		return false;
	return w >= 0 && (size_t)w < n;
}
