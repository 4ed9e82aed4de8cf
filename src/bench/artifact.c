/* artifact.c — finding an artifact and its catalog from what a command line names. */
#include "bench/artifact.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sbuf.h"
#include "os/store.h"
#include "base/str.h"

enum bench_baseline_status bench_artifact_locate(const char *arg, bool may_be_baseline, char **path)
{
	struct stat st;
	char buf[PATH_MAX];
	*path = NULL;
	if (stat(arg, &st) == 0 || strchr(arg, '/') || !may_be_baseline || (strlen(arg) > 5 && str_ends_with(arg, ".json")))
		return (*path = strdup(arg)) ? BENCH_BASELINE_OK : BENCH_BASELINE_ERROR;
	enum bench_baseline_status rc = bench_baseline_path(arg, buf, sizeof buf);
	if (rc != BENCH_BASELINE_OK && rc != BENCH_BASELINE_MISSING)
		return rc;
	return (*path = strdup(buf)) ? rc : BENCH_BASELINE_ERROR;
}

enum plumb_err bench_artifact_read(const char *path, struct bench_evidence *ev, struct perr *e)
{
	char dir[PATH_MAX], name[STORE_NAME_MAX + 1];
	struct perr de = PERR_INIT;
	enum plumb_err rc = store_dir(&STORE_BENCH_BASELINES, dir, sizeof dir, &de);
	size_t n = strlen(dir), plen = strlen(path);
	/* a file of the baseline store, however it was named: read under the store's rule */
	if ((rc == PLUMB_OK || rc == PLUMB_EIO) && n && plen > n + 1 + 5 && strncmp(path, dir, n) == 0 &&
	    path[n] == '/' && !strchr(path + n + 1, '/') && str_ends_with(path, ".json") &&
	    plen - n - 1 - 5 <= STORE_NAME_MAX) {
		snprintf(name, sizeof name, "%.*s", (int)(plen - n - 1 - 5), path + n + 1);
		if (store_name_valid(name))
			return bench_baseline_read(name, ev, e);
	}
	return bench_evidence_read(path, ev, e);
}

/* Where an artifact's catalog_path is: the path as written, which is redacted like every path in an artifact.
 * The runner only stores absolute paths, so a relative one is one whose home-directory prefix the redactor
 * dropped: it is looked for under $HOME again. Malloc'd, or NULL when out of memory. */
static char *artifact_catalog_path(const char *stored)
{
	const char *home = getenv("HOME");
	if (stored[0] == '/' || !home || home[0] != '/')
		return strdup(stored);
	struct sbuf sb = SBUF_INIT;
	sbuf_addf(&sb, "%s%s%s", home, home[strlen(home) - 1] == '/' ? "" : "/", stored);
	return sbuf_detach(&sb, NULL);
}

enum plumb_err bench_catalog_for(const char *opt_path, const struct bench_evidence *ev, struct bench_catalog *cat,
				 enum bench_catalog_source *src, struct perr *e)
{
	*src = BENCH_CATALOG_NONE;
	if (!opt_path && !(ev && ev->catalog_path))
		return PLUMB_OK;
	char *path = opt_path ? strdup(opt_path) : artifact_catalog_path(ev->catalog_path);
	if (!path)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	enum plumb_err rc = PLUMB_OK;
	if (!opt_path && access(path, R_OK) != 0)
		*src = BENCH_CATALOG_GONE;
	else if ((rc = bench_catalog_load(path, cat, e)) == PLUMB_OK)
		*src = opt_path ? BENCH_CATALOG_GIVEN : BENCH_CATALOG_SUITES;
	free(path);
	return rc;
}
