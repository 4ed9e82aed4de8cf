/* store.c — see store.h. Every path goes through store_check_name first, so nothing built here can name a file
 * outside $PLUMB_HOME/<kind>/. Paths live in caller buffers: the libplumb recorder and announcer use this too. */
#include "base/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/fs.h"
#include "base/grow.h"
#include "base/home.h"
#include "base/readall.h"
#include "base/str.h"

const struct store_kind STORE_PROFILE_BASELINES = { "baselines/profiles", ".json", "profile baseline" };
const struct store_kind STORE_BENCH_BASELINES = { "baselines/evidence", ".json", "baseline" };
const struct store_kind STORE_METRICS = { "metrics", ".json", "recording" };
const struct store_kind STORE_TARGETS = { "targets", ".lock", "target" };

#define STRINGIFY(x) #x
#define STRING_OF(x) STRINGIFY(x)
#define RULE "letters, digits, '.', '_', '-'; not starting with '.' or '-'; at most " STRING_OF(STORE_NAME_MAX)

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
	       c == '-';
}

bool store_name_valid(const char *name)
{
	size_t n = 0;
	for (; name[n]; n++)
		if (n >= STORE_NAME_MAX || !name_char(name[n]))
			return false;
	return n > 0 && name[0] != '.' && name[0] != '-';
}

void store_name_from(const char *text, char *buf, size_t cap)
{
	size_t n = 0;
	for (const char *s = text; *s && n + 1 < cap && n < STORE_NAME_MAX; s++)
		buf[n++] = name_char(*s) ? *s : '-';
	buf[n] = '\0';
	if (!store_name_valid(buf))
		snprintf(buf, cap, "process");
}

enum plumb_err store_check_name(const struct store_kind *k, const char *name, struct perr *e)
{
	if (store_name_valid(name))
		return PLUMB_OK;
	return perr_set(e, PLUMB_EINVAL, "'%.200s' is not a valid %s name (" RULE ")", name, k->what);
}

enum plumb_err store_dir(const struct store_kind *k, char *buf, size_t cap, struct perr *e)
{
	enum plumb_err rc = plumb_home(buf, cap, e);
	if (rc)
		return rc;
	size_t n = strlen(buf);
	int w = snprintf(buf + n, cap - n, "/%s", k->dir);
	if (w < 0 || (size_t)w >= cap - n)
		return perr_set(e, PLUMB_EINVAL, "the plumb home directory path is too long");
	return PLUMB_OK;
}

enum plumb_err store_path(const struct store_kind *k, const char *name, char *buf, size_t cap, struct perr *e)
{
	enum plumb_err rc = store_check_name(k, name, e);
	if (!rc)
		rc = store_dir(k, buf, cap, e);
	if (rc)
		return rc;
	size_t n = strlen(buf);
	int w = snprintf(buf + n, cap - n, "/%s%s", name, k->ext);
	if (w < 0 || (size_t)w >= cap - n)
		return perr_set(e, PLUMB_EINVAL, "the %s path is too long", k->what);
	return PLUMB_OK;
}

bool store_exists(const struct store_kind *k, const char *name)
{
	char path[PATH_MAX];
	struct perr e = PERR_INIT;
	struct stat st;
	return store_path(k, name, path, sizeof path, &e) == PLUMB_OK && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static enum plumb_err exists_error(const struct store_kind *k, const char *name, struct perr *e)
{
	return perr_set(e, PLUMB_EINVAL, "a %s named '%s' exists (replacing it must be asked for)", k->what, name);
}

/* store_path, with the directory created. */
static enum plumb_err prepare(const struct store_kind *k, const char *name, char *buf, size_t cap, struct perr *e)
{
	char dir[PATH_MAX];
	enum plumb_err rc = store_path(k, name, buf, cap, e);
	if (!rc)
		rc = store_dir(k, dir, sizeof dir, e);
	if (!rc)
		rc = fs_mkdirs(dir, 0700, e);
	return rc;
}

enum plumb_err store_path_for_write(const struct store_kind *k, const char *name, bool force, char *buf, size_t cap,
				    struct perr *e)
{
	enum plumb_err rc = prepare(k, name, buf, cap, e);
	if (rc)
		return rc;
	if (!force && access(buf, F_OK) == 0)
		return exists_error(k, name, e);
	return PLUMB_OK;
}

enum plumb_err store_save(const struct store_kind *k, const char *name, const void *data, size_t len, bool force,
			  struct perr *e)
{
	char path[PATH_MAX];
	enum plumb_err rc = prepare(k, name, path, sizeof path, e);
	if (rc)
		return rc;
	if (force)
		return atomic_write_file(path, data, len, e);
	rc = atomic_write_file_excl(path, data, len, e);
	return rc == PLUMB_EINVAL ? exists_error(k, name, e) : rc;
}

enum plumb_err store_load(const struct store_kind *k, const char *name, char **data, size_t *len, struct perr *e)
{
	char path[PATH_MAX];
	*data = NULL;
	*len = 0;
	enum plumb_err rc = store_path(k, name, path, sizeof path, e);
	if (rc)
		return rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		if (err == ENOENT)
			return perr_set(e, PLUMB_ENOENT, "no %s named '%s'", k->what, name);
		return perr_set(e, PLUMB_EIO, "cannot read %s: %s", path, strerror(err));
	}
	struct stat st;
	size_t hint = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	int err = read_fd_whole(fd, hint, 0, data, len);
	close(fd);
	if (err)
		return perr_set(e, err == ENOMEM ? PLUMB_ENOMEM : PLUMB_EIO, "cannot read %s: %s", path, strerror(err));
	return PLUMB_OK;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

enum plumb_err store_list(const struct store_kind *k, char ***names, size_t *n, struct perr *e)
{
	char dir[PATH_MAX];
	*names = NULL;
	*n = 0;
	enum plumb_err rc = store_dir(k, dir, sizeof dir, e);
	if (rc)
		return rc;
	DIR *d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return PLUMB_OK;
		return perr_set(e, PLUMB_EIO, "cannot list %s: %s", dir, strerror(errno));
	}
	char **out = NULL;
	size_t cnt = 0, cap = 0;
	size_t elen = strlen(k->ext);
	struct dirent *de;
	rc = PLUMB_OK;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len <= elen || !str_ends_with(de->d_name, k->ext))
			continue;
		char *name = strndup(de->d_name, len - elen);
		if (!name) {
			rc = PLUMB_ENOMEM;
			break;
		}
		if (!store_name_valid(name)) { /* a temporary file, or one no command could have saved */
			free(name);
			continue;
		}
		if (!ALLOC_GROW(out, cnt + 1, cap)) {
			free(name);
			rc = PLUMB_ENOMEM;
			break;
		}
		out[cnt++] = name;
	}
	closedir(d);
	if (rc) {
		store_list_free(out, cnt);
		return perr_set(e, rc, "out of memory");
	}
	if (cnt)
		qsort(out, cnt, sizeof *out, cmp_name);
	*names = out;
	*n = cnt;
	return PLUMB_OK;
}

void store_list_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

enum plumb_err store_remove(const struct store_kind *k, const char *name, struct perr *e)
{
	char path[PATH_MAX];
	enum plumb_err rc = store_path(k, name, path, sizeof path, e);
	if (rc)
		return rc;
	if (unlink(path) == 0)
		return PLUMB_OK;
	int err = errno;
	rc = err == ENOENT ? perr_set(e, PLUMB_ENOENT, "no %s named '%s'", k->what, name)
			   : perr_set(e, PLUMB_EOUTPUT, "cannot remove %s: %s", path, strerror(err));
	errno = err;
	return rc;
}
