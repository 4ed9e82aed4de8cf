/* baseline.c — the bench baseline store on os/store.h. A baseline is an artifact written whole under its name;
 * "is there one" means a file of that name is there (as for the store's own no-overwrite check). */
#include "bench/baseline.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/store.h"

enum bench_baseline_status bench_baseline_path(const char *name, char *path, size_t cap)
{
	struct perr e = PERR_INIT;
	if (!store_name_valid(name))
		return BENCH_BASELINE_BAD_NAME;
	enum plumb_err rc = store_path(&STORE_BENCH_BASELINES, name, path, cap, &e);
	if (rc == PLUMB_EIO) /* the store breaks the trust rule: reading it (bench_baseline_read) says why */
		return BENCH_BASELINE_OK;
	if (rc != PLUMB_OK)
		return BENCH_BASELINE_NO_HOME;
	struct stat st;
	return lstat(path, &st) == 0 ? BENCH_BASELINE_OK : BENCH_BASELINE_MISSING;
}

enum plumb_err bench_baseline_read(const char *name, struct bench_evidence *ev, struct perr *e)
{
	char path[PATH_MAX], *text;
	size_t len;
	bench_evidence_init(ev);
	enum plumb_err rc = store_path(&STORE_BENCH_BASELINES, name, path, sizeof path, e);
	if (!rc)
		rc = store_load(&STORE_BENCH_BASELINES, name, &text, &len, e);
	if (rc)
		return rc;
	rc = bench_evidence_parse(text, len, path, ev, e);
	free(text);
	return rc;
}

enum bench_baseline_status bench_baseline_save(const struct bench_evidence *ev, const char *name, bool force,
					       char *path, size_t cap, const char **harness_case, struct perr *e)
{
	*harness_case = NULL;
	if (ev->trust && strcmp(ev->trust, BENCH_TRUST_HARNESS) == 0) {
		for (size_t i = 0; i < ev->ncases; i++)
			if (ev->cases[i].trust && strcmp(ev->cases[i].trust, BENCH_TRUST_HARNESS) == 0)
				*harness_case = ev->cases[i].name;
		return BENCH_BASELINE_HARNESS;
	}
	struct atomic_file af;
	enum plumb_err rc = store_open_write(&STORE_BENCH_BASELINES, name, force, &af, path, cap, e);
	if (rc == PLUMB_ENOENT)
		return BENCH_BASELINE_NO_HOME;
	if (rc == PLUMB_EINVAL && !force && store_exists(&STORE_BENCH_BASELINES, name))
		return BENCH_BASELINE_EXISTS;
	if (rc == PLUMB_OK)
		rc = bench_evidence_write_to(ev, &af, e);
	if (rc == PLUMB_EINVAL && !force) /* saved by another run since the check: the commit did not replace it */
		return BENCH_BASELINE_EXISTS;
	return rc == PLUMB_OK ? BENCH_BASELINE_OK : BENCH_BASELINE_ERROR;
}

/* Reads baseline s->name for its summary; an artifact that cannot be read gets the reason instead. */
static bool summarize(struct bench_baseline_summary *s)
{
	struct bench_evidence ev;
	struct perr e = PERR_INIT;
	if (bench_baseline_read(s->name, &ev, &e) != PLUMB_OK)
		return (s->unreadable = strdup(e.msg)) != NULL;
	s->suite = ev.suite;
	s->created = ev.created;
	s->git_commit = ev.git_commit;
	s->trust = ev.trust;
	s->nsamples = ev.nsamples;
	ev.suite = ev.created = ev.git_commit = ev.trust = NULL; /* now the summary's */
	bench_evidence_release(&ev);
	return true;
}

enum bench_baseline_status bench_baseline_list(struct bench_baseline_summary **list, size_t *n, struct perr *e)
{
	char **names = NULL;
	size_t count = 0;
	*list = NULL;
	*n = 0;
	enum plumb_err rc = store_list(&STORE_BENCH_BASELINES, &names, &count, e);
	if (rc == PLUMB_ENOENT)
		return BENCH_BASELINE_NO_HOME;
	if (rc)
		return BENCH_BASELINE_ERROR;
	struct bench_baseline_summary *out = count ? calloc(count, sizeof *out) : NULL;
	if (count && !out) {
		store_list_free(names, count);
		perr_set(e, PLUMB_ENOMEM, "out of memory");
		return BENCH_BASELINE_ERROR;
	}
	bool ok = true;
	for (size_t i = 0; i < count; i++) {
		out[i].name = names[i]; /* taken over */
		ok = ok && summarize(&out[i]);
	}
	free(names);
	if (!ok) {
		bench_baseline_list_free(out, count);
		perr_set(e, PLUMB_ENOMEM, "out of memory");
		return BENCH_BASELINE_ERROR;
	}
	*list = out;
	*n = count;
	return BENCH_BASELINE_OK;
}

void bench_baseline_list_free(struct bench_baseline_summary *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].name);
		free(list[i].suite);
		free(list[i].created);
		free(list[i].git_commit);
		free(list[i].trust);
		free(list[i].unreadable);
	}
	free(list);
}

enum bench_baseline_status bench_baseline_remove(const char *name, struct perr *e)
{
	char path[PATH_MAX];
	enum bench_baseline_status st = bench_baseline_path(name, path, sizeof path);
	if (st != BENCH_BASELINE_OK)
		return st;
	if (store_remove(&STORE_BENCH_BASELINES, name, e) == PLUMB_OK)
		return BENCH_BASELINE_OK;
	perr_set(e, e->code, "cannot remove '%s': %s", name, strerror(errno));
	return BENCH_BASELINE_ERROR;
}
