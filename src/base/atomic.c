/* atomic.c — temp + fsync + rename; the temp file is created 0600 with O_EXCL through mkstemp. */
#include "base/atomic.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void atomic_free(struct atomic_file *af)
{
	free(af->path);
	free(af->tmp_path);
	af->path = af->tmp_path = NULL;
	af->fp = NULL;
}

enum plumb_err atomic_open(struct atomic_file *af, const char *path, struct perr *e)
{
	*af = (struct atomic_file)ATOMIC_FILE_INIT;
	if (strcmp(path, "-") == 0) {
		af->fp = stdout;
		af->path = strdup(path);
		return af->path ? PLUMB_OK : perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	size_t n = strlen(path);
	af->path = strdup(path);
	af->tmp_path = malloc(n + 16);
	if (!af->path || !af->tmp_path) {
		atomic_free(af);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	snprintf(af->tmp_path, n + 16, "%s.tmp.XXXXXX", path);
	int fd = mkostemp(af->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		atomic_free(af);
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", path, strerror(err));
	}
	fchmod(fd, 0600);
	af->fp = fdopen(fd, "w");
	if (!af->fp) {
		int err = errno;
		close(fd);
		unlink(af->tmp_path);
		atomic_free(af);
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", path, strerror(err));
	}
	setvbuf(af->fp, NULL, _IOFBF, 1 << 16);
	return PLUMB_OK;
}

/* Puts the temporary file in place only when nothing is there: rename without replacing where the file system
 * supports it, else a hard link (which fails on an existing name too). */
static int rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (link(from, to) != 0)
		return -1;
	unlink(from);
	return 0;
}

/* Flushes (and with `sync`, fsyncs) the temporary file, then renames it over the target (or, with `excl`, to
 * the target only when it does not exist: PLUMB_EINVAL then). */
static enum plumb_err commit(struct atomic_file *af, bool sync, bool excl, struct perr *e)
{
	if (!af->fp)
		return perr_set(e, PLUMB_EOUTPUT, "output was not opened");
	if (!af->tmp_path) { /* stdout */
		int bad = fflush(af->fp) != 0 || ferror(af->fp);
		int err = errno;
		atomic_free(af);
		return bad ? perr_set(e, PLUMB_EOUTPUT, "cannot write to standard output: %s", strerror(err)) : PLUMB_OK;
	}
	int bad = ferror(af->fp) || fflush(af->fp) != 0 || (sync && fsync(fileno(af->fp)) != 0);
	int err = errno;
	if (fclose(af->fp) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	af->fp = NULL;
	if (!bad && (excl ? rename_noreplace(af->tmp_path, af->path) : rename(af->tmp_path, af->path)) != 0) {
		bad = 1;
		err = errno;
	}
	if (bad) {
		unlink(af->tmp_path);
		enum plumb_err code = excl && err == EEXIST ? PLUMB_EINVAL : PLUMB_EOUTPUT;
		perr_set(e, code, "cannot write %s: %s", af->path, strerror(err ? err : EIO));
		atomic_free(af);
		return code;
	}
	atomic_free(af);
	return PLUMB_OK;
}

enum plumb_err atomic_commit(struct atomic_file *af, struct perr *e)
{
	return commit(af, true, false, e);
}

void atomic_abort(struct atomic_file *af)
{
	if (af->fp && af->tmp_path) {
		fclose(af->fp);
		unlink(af->tmp_path);
	}
	atomic_free(af);
}

static enum plumb_err write_file(const char *path, const void *data, size_t len, bool excl, struct perr *e)
{
	struct atomic_file af;
	enum plumb_err rc = atomic_open(&af, path, e);
	if (rc)
		return rc;
	if (len && fwrite(data, 1, len, af.fp) != len) {
		int err = errno;
		atomic_abort(&af);
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", path, strerror(err));
	}
	return commit(&af, true, excl, e);
}

enum plumb_err atomic_write_file(const char *path, const void *data, size_t len, struct perr *e)
{
	return write_file(path, data, len, false, e);
}

enum plumb_err atomic_write_file_excl(const char *path, const void *data, size_t len, struct perr *e)
{
	return write_file(path, data, len, true, e);
}

enum plumb_err atomic_check_writable(const char *path, struct perr *e)
{
	if (strcmp(path, "-") == 0)
		return PLUMB_OK;
	struct atomic_file af;
	enum plumb_err rc = atomic_open(&af, path, e);
	if (rc)
		return rc;
	atomic_abort(&af);
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: it is a directory", path);
	return PLUMB_OK;
}

enum plumb_err atomic_commit_nosync(struct atomic_file *af, struct perr *e)
{
	return commit(af, false, false, e);
}

