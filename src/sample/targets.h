/* targets.h — processes that announced themselves with plumb_announce()/plumb_init() (docs/design.md §5.1, §9.3):
 * lock files $PLUMB_HOME/targets/NAME.lock holding "PID STARTTIME". A lock whose process is gone, or whose pid
 * now belongs to a process with another start time, is stale and ignored. */
#ifndef PLUMB_SAMPLE_TARGETS_H
#define PLUMB_SAMPLE_TARGETS_H

#include <stddef.h>
#include <sys/types.h>

/* Looks up live announced targets: the one called `name`, or every one when name is NULL. Returns how many
 * matched; when exactly one matched, *pid is its pid. `list` (may be NULL) receives every live announced target
 * as "NAME (pid N), ..." — "" when there is none — for the message that lists them. -1 when the store cannot be
 * used (the trust rule of os/store.h refuses it): `list` then holds the reason. */
int targets_find(const char *name, pid_t *pid, char *list, size_t n);

#endif
