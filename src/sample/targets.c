/* targets.c — finds processes announced through plumb.h lock files; stale locks (dead pid, or a reused pid
 * with another start time) are ignored, never trusted. */
#include "sample/targets.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/home.h"

int targets_home(char *buf, size_t n)
{
	return plumb_home_dir(buf, n) ? 0 : -1;
}

static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t len = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[len] = 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* The pid a lock names when that process is alive and is the one that wrote it; 0 otherwise. */
static pid_t lock_live_pid(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	long pid = 0;
	unsigned long long start = 0;
	int got = fscanf(f, "%ld %llu", &pid, &start);
	fclose(f);
	if (got < 1 || pid <= 0 || pid > 0x7fffffffL)
		return 0;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return 0;
	if (got == 2 && start != 0 && start_time((pid_t)pid) != start)
		return 0;
	return (pid_t)pid;
}

int targets_find(const char *name, pid_t *pid, char *list, size_t n)
{
	if (list && n)
		list[0] = 0;
	char dir[4096];
	if (targets_home(dir, sizeof dir - 16) != 0)
		return 0;
	strcat(dir, "/targets");
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int matched = 0;
	size_t used = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len <= 5 || strcmp(de->d_name + len - 5, ".lock") != 0 || de->d_name[0] == '.')
			continue;
		char path[8192];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		pid_t p = lock_live_pid(path);
		if (!p)
			continue;
		int nlen = (int)(len - 5);
		if (list && n > used) {
			int w = snprintf(list + used, n - used, "%s%.*s (pid %ld)", used ? ", " : "", nlen, de->d_name,
					 (long)p);
			if (w > 0)
				used = used + (size_t)w < n ? used + (size_t)w : n - 1;
		}
		if (name && (strlen(name) != (size_t)nlen || strncmp(name, de->d_name, (size_t)nlen) != 0))
			continue;
		matched++;
		if (pid)
			*pid = matched == 1 ? p : 0;
	}
	closedir(d);
	return matched;
}
