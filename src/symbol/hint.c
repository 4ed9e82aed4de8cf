/* hint.c — the summary's hint for modules without names (hint.h). The package is found the way `dpkg -S`
 * finds it, by reading the lists of installed files, and only when a hint is due (a few dozen milliseconds
 * once per run). */
#include "symbol/hint.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/readall.h"
#include "base/str.h"
#include "base/settings.h"

#define LIST_MAX ((size_t)64 << 20) /* no package lists 64 MiB of file names */

/* True when `text` holds `path` as a whole line. */
static bool lists_path(const char *text, size_t len, const char *path)
{
	size_t n = strlen(path);
	for (const char *p = text; (p = memmem(p, len - (size_t)(p - text), path, n)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* The same path as a merged-/usr system's dpkg lists it ("/usr/bin/x" -> "/bin/x"), or "" when none. */
static void unmerged(const char *path, char *out, size_t n)
{
	static const char *const dirs[] = { "/usr/bin/", "/usr/sbin/", "/usr/lib/", "/usr/lib64/" };
	out[0] = '\0';
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (str_starts_with(path, dirs[i]) && strlen(path) - 4 < n) {
			snprintf(out, n, "%s", path + 4);
			return;
		}
}

bool sym_hint_package(const char *path, const char *dpkg_info, char *pkg, size_t n)
{
	const char *dir = dpkg_info ? dpkg_info : "/var/lib/dpkg/info";
	char alt[4096];
	unmerged(path, alt, sizeof alt);
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	for (struct dirent *de; !found && (de = readdir(d)) != NULL;) {
		size_t len = strlen(de->d_name);
		if (len <= 5 || strcmp(de->d_name + len - 5, ".list") != 0)
			continue;
		int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
		char *text = NULL;
		size_t tlen = 0;
		if (fd < 0)
			continue;
		if (read_fd_whole(fd, 65536, LIST_MAX, &text, &tlen) == 0 &&
		    (lists_path(text, tlen, path) || (alt[0] && lists_path(text, tlen, alt)))) {
			size_t name = strcspn(de->d_name, ":");
			if (name > len - 5)
				name = len - 5;
			snprintf(pkg, n, "%.*s", (int)name, de->d_name);
			found = true;
		}
		free(text);
		close(fd);
	}
	closedir(d);
	return found;
}

void sym_hint_module(struct sbuf *out, const char *path, uint64_t unnamed, uint64_t samples, uint64_t total,
		     const char *why)
{
	if (total < SYM_HINT_MIN_SAMPLES || samples * 100 < total * SYM_HINT_MIN_SHARE || unnamed * 2 < samples ||
	    path[0] != '/')
		return;
	const char *base = strrchr(path, '/') + 1;
	sbuf_addf(out, "hint: %.0f%% of the samples landed in %s code without function names (shown as %s+0xOFFSET)",
		  100.0 * (double)unnamed / (double)total, base, base);
	if (why && why[0])
		sbuf_addf(out, ": %s", why);
	char pkg[256];
	bool debuginfod = settings()->debuginfod;
	if (sym_hint_package(path, NULL, pkg, sizeof pkg))
		sbuf_addf(out, "; installing %s-dbgsym (Debian's debug archive) would name them", pkg);
	else
		sbuf_addf(out, "; its separate debug information (/usr/lib/debug/.build-id/) would name them");
	if (!debuginfod)
		sbuf_addstr(out, ", or set DEBUGINFOD_URLS (e.g. https://debuginfod.debian.net)");
	sbuf_addch(out, '\n');
}
