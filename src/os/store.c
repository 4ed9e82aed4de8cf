/* store.c — see store.h. Every path goes through store_check_name first, so nothing built here can name a file
 * outside $PLUMB_HOME/<kind>/, and every directory through home_open (os/home.h), so none is used that
 * another user controls. Files are read with the trust rule of os/fs.h; the store never follows a final link.
 * Paths live in caller buffers: the libplumb recorder and announcer use this too. */
#include "os/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/atomic.h"
#include "os/fs.h"
#include "base/grow.h"
#include "os/home.h"
#include "base/str.h"

const struct store_kind STORE_PROFILE_BASELINES = { "baselines/profiles", ".json", "profile baseline", 256u << 20 };
const struct store_kind STORE_BENCH_BASELINES = { "baselines/evidence", ".json", "baseline", 1024u << 20 };
const struct store_kind STORE_METRICS = { "metrics", ".json", "recording", 512u << 20 };
const struct store_kind STORE_TARGETS = { "targets", ".lock", "target", 128 };

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

/* The kind's directory, opened under the trust rule (created when `create`): *dfd, or -1 when it does not exist
 * yet and !create (PLUMB_OK then). A refusal comes back as `refused` (PLUMB_EIO for a reader, PLUMB_EOUTPUT for
 * a writer), with the rule's one line. */
static enum plumb_err open_dir(const struct store_kind *k, bool create, enum plumb_err refused, char *buf, size_t cap,
			       int *dfd, struct perr *e)
{
	buf[0] = '\0';
	enum plumb_err rc = home_open(k->dir, create, buf, cap, dfd, e);
	if (rc == PLUMB_ENOENT && !create && buf[0]) /* a home is named, the directory is just not made yet */
		return PLUMB_OK;
	/* a writer that cannot use the directory (refused, or the home is a file) has an output problem */
	if (rc == PLUMB_EPERM || (create && buf[0] && (rc == PLUMB_EIO || rc == PLUMB_ENOENT)))
		e->code = rc = refused;
	return rc;
}

enum plumb_err store_dir(const struct store_kind *k, char *buf, size_t cap, struct perr *e)
{
	int dfd;
	enum plumb_err rc = open_dir(k, false, PLUMB_EIO, buf, cap, &dfd, e);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

enum plumb_err store_path(const struct store_kind *k, const char *name, char *buf, size_t cap, struct perr *e)
{
	buf[0] = '\0';
	enum plumb_err rc = store_check_name(k, name, e);
	if (!rc)
		rc = store_dir(k, buf, cap, e);
	if (rc && (rc != PLUMB_EIO || !buf[0]))
		return rc;
	/* a refused directory still gets its full path, so that a caller can name the file in its message */
	size_t n = strlen(buf);
	int w = snprintf(buf + n, cap - n, "/%s%s", name, k->ext);
	if (w < 0 || (size_t)w >= cap - n)
		return perr_set(e, PLUMB_EINVAL, "the %s path is too long", k->what);
	return rc;
}

/* The name's file in the directory open on dfd. */
static void file_name(const struct store_kind *k, const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s%s", name, k->ext);
}

bool store_exists(const struct store_kind *k, const char *name)
{
	char path[PATH_MAX], file[STORE_NAME_MAX + 16];
	struct perr e = PERR_INIT;
	struct stat st;
	int dfd;
	if (store_check_name(k, name, &e) || open_dir(k, false, PLUMB_EIO, path, sizeof path, &dfd, &e) || dfd < 0)
		return false;
	file_name(k, name, file, sizeof file);
	bool there = fstatat(dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
	close(dfd);
	return there;
}

static enum plumb_err exists_error(const struct store_kind *k, const char *name, struct perr *e)
{
	return perr_set(e, PLUMB_EINVAL, "a %s named '%s' exists (replacing it must be asked for)", k->what, name);
}

/* store_path, with the directory created under the trust rule and left open on *dfd (the caller closes it):
 * every later step is relative to that descriptor, so a home that is a link someone re-points after the check
 * cannot move the write (docs/design.md §3.5). What is at the name already must be a regular file: the store
 * never writes through a link or into a special file (*taken says whether one is there). file gets the entry's
 * name (STORE_NAME_MAX + 16 bytes). */
static enum plumb_err prepare(const struct store_kind *k, const char *name, char *buf, size_t cap, int *dfd,
			      char *file, bool *taken, struct perr *e)
{
	*dfd = -1;
	enum plumb_err rc = store_check_name(k, name, e);
	if (!rc)
		rc = open_dir(k, true, PLUMB_EOUTPUT, buf, cap, dfd, e);
	if (rc)
		return rc;
	file_name(k, name, file, STORE_NAME_MAX + 16);
	size_t n = strlen(buf);
	if ((size_t)snprintf(buf + n, cap - n, "/%s", file) >= cap - n)
		rc = perr_set(e, PLUMB_EINVAL, "the %s path is too long", k->what);
	struct stat st;
	*taken = !rc && fstatat(*dfd, file, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (*taken && !S_ISREG(st.st_mode))
		rc = perr_set(e, PLUMB_EOUTPUT, "cannot write %s: it is %s, which plumb's store never writes through", buf,
			      S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
	if (rc) {
		close(*dfd);
		*dfd = -1;
	}
	return rc;
}

enum plumb_err store_path_for_write(const struct store_kind *k, const char *name, bool force, char *buf, size_t cap,
				    struct perr *e)
{
	char file[STORE_NAME_MAX + 16];
	bool taken;
	int dfd;
	enum plumb_err rc = prepare(k, name, buf, cap, &dfd, file, &taken, e);
	if (rc)
		return rc;
	close(dfd);
	if (!force && taken)
		return exists_error(k, name, e);
	return PLUMB_OK;
}

int store_open_dir_for_write(const struct store_kind *k, const char *name, bool force, char *buf, size_t cap,
			     char *file, struct perr *e)
{
	bool taken;
	int dfd;
	if (prepare(k, name, buf, cap, &dfd, file, &taken, e))
		return -1;
	if (!force && taken) {
		close(dfd);
		exists_error(k, name, e);
		return -1;
	}
	return dfd;
}

enum plumb_err store_open_write(const struct store_kind *k, const char *name, bool force, struct atomic_file *af,
				char *buf, size_t cap, struct perr *e)
{
	char file[STORE_NAME_MAX + 16];
	*af = (struct atomic_file)ATOMIC_FILE_INIT;
	int dfd = store_open_dir_for_write(k, name, force, buf, cap, file, e);
	if (dfd < 0)
		return e->code;
	enum plumb_err rc = atomic_open_at(af, dfd, file, buf, !force, e);
	close(dfd);
	return rc;
}

enum plumb_err store_save(const struct store_kind *k, const char *name, const void *data, size_t len, bool force,
			  struct perr *e)
{
	char path[PATH_MAX], file[STORE_NAME_MAX + 16];
	bool taken;
	int dfd;
	enum plumb_err rc = prepare(k, name, path, sizeof path, &dfd, file, &taken, e);
	if (rc)
		return rc;
	rc = atomic_write_file_at(dfd, file, path, data, len, !force, e);
	close(dfd);
	return rc == PLUMB_EINVAL && !force ? exists_error(k, name, e) : rc;
}

/* Opens the existing entry `name` of kind k under the trust rule: its descriptor, with its directory in path
 * and its file name in file (PATH_MAX and STORE_NAME_MAX + 16 bytes), or -1 with e set: PLUMB_ENOENT "no KIND
 * named NAME", or the rule's refusal as an input that cannot be used (exit 5), naming the whole path. */
static int open_entry(const struct store_kind *k, const char *name, char *path, char *file, struct stat *st,
		      struct perr *e)
{
	int dfd = -1;
	enum plumb_err rc = store_check_name(k, name, e);
	if (!rc)
		rc = open_dir(k, false, PLUMB_EIO, path, PATH_MAX, &dfd, e);
	if (rc)
		return -1;
	if (dfd < 0) {
		perr_set(e, PLUMB_ENOENT, "no %s named '%s'", k->what, name);
		return -1;
	}
	file_name(k, name, file, STORE_NAME_MAX + 16);
	struct perr fe = PERR_INIT;
	int fd = fs_open_trusted(dfd, file, geteuid(), st, &fe);
	close(dfd);
	if (fd < 0 && fe.code == PLUMB_ENOENT)
		perr_set(e, PLUMB_ENOENT, "no %s named '%s'", k->what, name);
	else if (fd < 0)
		perr_set(e, fe.code == PLUMB_EPERM ? PLUMB_EIO : fe.code, "%s/%s", path, fe.msg);
	return fd;
}

enum plumb_err store_load(const struct store_kind *k, const char *name, char **data, size_t *len, struct perr *e)
{
	char path[PATH_MAX], file[STORE_NAME_MAX + 16];
	*data = NULL;
	*len = 0;
	int fd = open_entry(k, name, path, file, NULL, e);
	if (fd < 0)
		return e->code;
	struct perr fe = PERR_INIT;
	enum plumb_err rc = fs_read_fd_capped(fd, file, k->max_bytes, data, len, &fe);
	close(fd);
	if (rc)
		return perr_set(e, rc, "%s/%s", path, fe.msg);
	return PLUMB_OK;
}

enum plumb_err store_check_file(const struct store_kind *k, const char *name, struct perr *e)
{
	char path[PATH_MAX], file[STORE_NAME_MAX + 16];
	struct stat st;
	int fd = open_entry(k, name, path, file, &st, e);
	if (fd < 0)
		return e->code;
	close(fd);
	if ((uint64_t)st.st_size > k->max_bytes)
		return perr_set(e, PLUMB_EFORMAT, "%s/%s is larger than the cap of %zu bytes for a %s", path, file,
				k->max_bytes, k->what);
	return PLUMB_OK;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

enum plumb_err store_list(const struct store_kind *k, char ***names, size_t *n, struct perr *e)
{
	char dir[PATH_MAX];
	int dfd;
	*names = NULL;
	*n = 0;
	enum plumb_err rc = open_dir(k, false, PLUMB_EIO, dir, sizeof dir, &dfd, e);
	if (rc || dfd < 0)
		return rc;
	DIR *d = fdopendir(dfd);
	if (!d) {
		int err = errno;
		close(dfd);
		return perr_set(e, PLUMB_EIO, "cannot list %s: %s", dir, strerror(err));
	}
	char **out = NULL;
	size_t cnt = 0, cap = 0;
	size_t elen = strlen(k->ext);
	struct dirent *de;
	rc = PLUMB_OK;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len <= elen || !str_ends_with(de->d_name, k->ext) || (de->d_type != DT_REG && de->d_type != DT_UNKNOWN))
			continue; /* a link or a special file is never one of ours */
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
	char path[PATH_MAX], dir[PATH_MAX], file[STORE_NAME_MAX + 16];
	int dfd = -1;
	enum plumb_err rc = store_path(k, name, path, sizeof path, e);
	if (!rc)
		rc = open_dir(k, false, PLUMB_EOUTPUT, dir, sizeof dir, &dfd, e);
	if (rc)
		return rc;
	file_name(k, name, file, sizeof file);
	if (dfd >= 0 && unlinkat(dfd, file, 0) == 0) {
		close(dfd);
		return PLUMB_OK;
	}
	int err = dfd >= 0 ? errno : ENOENT;
	if (dfd >= 0)
		close(dfd);
	rc = err == ENOENT ? perr_set(e, PLUMB_ENOENT, "no %s named '%s'", k->what, name)
			   : perr_set(e, PLUMB_EOUTPUT, "cannot remove %s: %s", path, strerror(err));
	errno = err;
	return rc;
}
