/* targets.c — finds processes announced through plumb.h lock files (os/announce.h, in the store's
 * STORE_TARGETS); stale locks (dead pid, or a reused pid with another start time) are ignored, never trusted. */
#include "sample/targets.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "os/announce.h"
#include "os/store.h"

int targets_find(const char *name, pid_t *pid, char *list, size_t n)
{
	if (list && n)
		list[0] = 0;
	char **names = NULL;
	size_t count = 0;
	struct perr e = PERR_INIT;
	if (store_list(&STORE_TARGETS, &names, &count, &e) != PLUMB_OK) {
		if (list && n) /* the store cannot be used (another user's, writable by others): say why */
			snprintf(list, n, "%s", e.msg);
		return -1;
	}
	int matched = 0;
	size_t used = 0;
	for (size_t i = 0; i < count; i++) {
		char path[PATH_MAX];
		struct announce a;
		if (store_path(&STORE_TARGETS, names[i], path, sizeof path, &e) != PLUMB_OK ||
		    announce_read(path, &a) != ANNOUNCE_LIVE)
			continue;
		if (list && n > used) {
			int w = snprintf(list + used, n - used, "%s%s (pid %ld)", used ? ", " : "", names[i], (long)a.pid);
			if (w > 0)
				used = used + (size_t)w < n ? used + (size_t)w : n - 1;
		}
		if (name && strcmp(name, names[i]) != 0)
			continue;
		matched++;
		if (pid)
			*pid = matched == 1 ? a.pid : 0;
	}
	store_list_free(names, count);
	return matched;
}
