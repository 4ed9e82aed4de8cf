/* settings.h — what plumb's own environment variables say, for the code below the faces (docs/design.md §10).
 * A face reads the environment once (src/main.c for the CLI) and sets them here; readers and services ask
 * settings() and never getenv(). Code that runs without a face (the unit tests, the fuzzers) gets the defaults
 * below. What stays read where it is used are the conventions every program keeps: PATH, TMPDIR, the environment
 * a child inherits, the switch (base/gate.h, which libplumb reads for itself) and plumb's home (os/home.h,
 * libplumb's too). */
#ifndef PLUMB_BASE_SETTINGS_H
#define PLUMB_BASE_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

struct settings {
	bool symbol_cache;           /* PLUMB_SYMBOL_CACHE is not 0/off/no: keep names by build ID (symbol/cache.h) */
	bool debuginfod;             /* DEBUGINFOD_URLS names a server (libdebuginfod reads the list itself) */
	double debuginfod_timeout_s; /* PLUMB_DEBUGINFOD_TIMEOUT when it is a number of seconds in (0, 3600), else 0 */
	const char *preload;         /* PLUMB_PRELOAD: the in-process sampler library to use, or NULL */
	const char *home;            /* HOME when it is an absolute path, else NULL: perf's ~/.debug, ~/.cargo/bin */
};
#define SETTINGS_DEFAULT { true, false, 0, NULL, NULL }

/* The settings in force: the last settings_set(), or SETTINGS_DEFAULT. */
const struct settings *settings(void);

/* Replaces them; the strings are not copied (a face passes strings of its environment, which live on). */
void settings_set(const struct settings *s);

#endif
