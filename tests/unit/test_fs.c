/* test_fs.c — base/fs's trust rules (docs/design.md §3.5): which files fs_open_trusted / fs_read_trusted accept
 * (a regular file of the expected owner or root, not writable by others, within its cap) and which they refuse
 * without following, blocking or opening (a symbolic link, a FIFO, a device, a directory, another user's file);
 * and which directories fs_open_private_dir accepts; and base/lines.h's capped line reader. The owner cases chown
 * to nobody when run as root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/fs.h"
#include "base/lines.h"

#define NOBODY 65534

static char dir[] = "/tmp/plumb-fs-XXXXXX";

static char *at(const char *name)
{
	static char buf[4][PATH_MAX];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

static void put(const char *name, const char *text, mode_t mode)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(chmod(at(name), mode), 0);
}

static enum plumb_err read_code(const char *path, uid_t owner, size_t max, struct perr *e)
{
	char *data = NULL;
	size_t len = 0;
	*e = (struct perr)PERR_INIT;
	enum plumb_err rc = fs_read_trusted(AT_FDCWD, path, owner, max, &data, &len, e);
	if (rc)
		assert_null(data);
	free(data);
	return rc;
}

static void test_fs__accepts_own_regular_files(void **state)
{
	(void)state;
	put("ok.map", "1000 10 jit_a\n", 0644);
	char *data;
	size_t len;
	struct perr e = PERR_INIT;
	assert_int_equal(fs_read_trusted(AT_FDCWD, at("ok.map"), geteuid(), 1 << 20, &data, &len, &e), PLUMB_OK);
	assert_int_equal(len, 14);
	assert_string_equal(data, "1000 10 jit_a\n");
	free(data);
	/* relative to a directory descriptor */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	struct stat st;
	int fd = fs_open_trusted(dfd, "ok.map", geteuid(), &st, &e);
	assert_true(fd >= 0);
	assert_int_equal(st.st_size, 14);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	close(dfd);
	/* the caller-buffer form */
	char buf[64];
	assert_int_equal(fs_read_trusted_buf(AT_FDCWD, at("ok.map"), geteuid(), buf, sizeof buf, &len, &e), PLUMB_OK);
	assert_string_equal(buf, "1000 10 jit_a\n");
	/* missing: ENOENT, nothing else */
	assert_int_equal(read_code(at("absent"), geteuid(), 100, &e), PLUMB_ENOENT);
}

static void test_fs__caps(void **state)
{
	(void)state;
	struct perr e;
	put("ten", "0123456789", 0600);
	assert_int_equal(read_code(at("ten"), geteuid(), 10, &e), PLUMB_OK);
	assert_int_equal(read_code(at("ten"), geteuid(), 9, &e), PLUMB_EFORMAT);
	assert_non_null(strstr(e.msg, "larger than the cap of 9 bytes"));
	char buf[11];
	size_t len = 99;
	assert_int_equal(fs_read_trusted_buf(AT_FDCWD, at("ten"), geteuid(), buf, sizeof buf, &len, &e), PLUMB_OK);
	assert_int_equal(len, 10);
	assert_int_equal(fs_read_trusted_buf(AT_FDCWD, at("ten"), geteuid(), buf, 10, &len, &e), PLUMB_EFORMAT);
	assert_int_equal(len, 0);
	assert_string_equal(buf, "");
	put("empty", "", 0600);
	assert_int_equal(read_code(at("empty"), geteuid(), 0, &e), PLUMB_OK);
}

/* What others could plant: each refused with PLUMB_EPERM and a reason, none followed, none blocking. */
static void test_fs__refuses_what_others_could_plant(void **state)
{
	(void)state;
	struct perr e;
	put("victim", "secret\n", 0600);
	assert_int_equal(symlink(at("victim"), at("link.map")), 0);
	assert_int_equal(read_code(at("link.map"), geteuid(), 100, &e), PLUMB_EPERM);
	assert_non_null(strstr(e.msg, "symbolic link"));
	assert_int_equal(symlink("/dev/zero", at("zero.map")), 0);
	assert_int_equal(read_code(at("zero.map"), geteuid(), 100, &e), PLUMB_EPERM);
	assert_int_equal(read_code("/dev/zero", geteuid(), 100, &e), PLUMB_EPERM);
	assert_non_null(strstr(e.msg, "a device"));
	/* a FIFO with no writer: an open for reading would block forever without O_NONBLOCK */
	assert_int_equal(mkfifo(at("fifo.map"), 0600), 0);
	assert_int_equal(read_code(at("fifo.map"), geteuid(), 100, &e), PLUMB_EPERM);
	assert_non_null(strstr(e.msg, "a FIFO"));
	assert_int_equal(mkdir(at("sub"), 0700), 0);
	assert_int_equal(read_code(at("sub"), geteuid(), 100, &e), PLUMB_EPERM);
	put("everyone.map", "x\n", 0644);
	assert_int_equal(chmod(at("everyone.map"), 0666), 0);
	assert_int_equal(read_code(at("everyone.map"), geteuid(), 100, &e), PLUMB_EPERM);
	assert_non_null(strstr(e.msg, "writable by every user"));
	/* the owner rule: another user's file is refused, root's is accepted for any owner */
	put("mine.map", "x\n", 0644);
	assert_int_equal(read_code(at("mine.map"), geteuid() + 1, 100, &e), geteuid() == 0 ? PLUMB_OK : PLUMB_EPERM);
	if (geteuid() == 0) {
		assert_int_equal(chown(at("mine.map"), NOBODY, NOBODY), 0);
		assert_int_equal(read_code(at("mine.map"), 0, 100, &e), PLUMB_EPERM);
		assert_non_null(strstr(e.msg, "belongs to uid 65534"));
		assert_int_equal(read_code(at("mine.map"), NOBODY, 100, &e), PLUMB_OK);
	}
}

static void test_fs__private_dirs(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(fs_open_private_dir(dfd, "home", "H", false, &e), -1);
	assert_int_equal(e.code, PLUMB_ENOENT);
	int fd = fs_open_private_dir(dfd, "home", "H", true, &e);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	close(fd);
	assert_int_equal(chmod(at("home"), 0775), 0);
	assert_int_equal(fs_open_private_dir(dfd, "home", "H", true, &e), -1);
	assert_int_equal(e.code, PLUMB_EPERM);
	assert_non_null(strstr(e.msg, "writable by its group"));
	assert_int_equal(chmod(at("home"), 0757), 0);
	assert_int_equal(fs_open_private_dir(dfd, "home", "H", true, &e), -1);
	assert_non_null(strstr(e.msg, "writable by every user"));
	assert_int_equal(chmod(at("home"), 0755), 0);
	fd = fs_open_private_dir(dfd, "home", "H", false, &e);
	assert_true(fd >= 0);
	close(fd);
	/* a link to a good directory is still a link: refused, not followed */
	assert_int_equal(symlink("home", at("linked")), 0);
	assert_int_equal(fs_open_private_dir(dfd, "linked", "L", true, &e), -1);
	assert_int_equal(e.code, PLUMB_EPERM);
	assert_non_null(strstr(e.msg, "symbolic link"));
	put("file", "x", 0600);
	assert_int_equal(fs_open_private_dir(dfd, "file", "F", true, &e), -1);
	assert_int_equal(e.code, PLUMB_EPERM);
	assert_non_null(strstr(e.msg, "not a directory"));
	if (geteuid() == 0) {
		assert_int_equal(chown(at("home"), NOBODY, NOBODY), 0);
		assert_int_equal(fs_open_private_dir(dfd, "home", "H", true, &e), -1);
		assert_int_equal(e.code, PLUMB_EPERM);
		assert_non_null(strstr(e.msg, "belongs to uid 65534"));
	}
	close(dfd);
}

/* ---- base/lines.h: a file of lines within caps ---- */

struct collected {
	char text[256];
	size_t n;
};

static bool collect(void *ctx, const char *line, size_t len)
{
	struct collected *c = ctx;
	c->n += (size_t)snprintf(c->text + c->n, sizeof c->text - c->n, "[%.*s]", (int)len, line);
	return true;
}

static void test_fs__lines_within_caps(void **state)
{
	(void)state;
	put("lines", "one\n\nthree that is too long\nfour\nlast", 0600);
	int fd = open(at("lines"), O_RDONLY);
	assert_true(fd >= 0);
	struct collected c = { "", 0 };
	struct lines_stats st;
	assert_int_equal(lines_read_fd(fd, 8, 1 << 20, collect, &c, &st), 0);
	close(fd);
	assert_string_equal(c.text, "[one][][four][last]");
	assert_int_equal(st.lines, 4);
	assert_int_equal(st.too_long, 1);
	assert_false(st.truncated);
	/* the byte cap: what is past it is not read, a line it cuts is not passed on */
	fd = open(at("lines"), O_RDONLY);
	c = (struct collected){ "", 0 };
	assert_int_equal(lines_read_fd(fd, 64, 6, collect, &c, &st), 0);
	close(fd);
	assert_string_equal(c.text, "[one][]");
	assert_true(st.truncated);
	/* an endless line (/dev/zero): bounded by the caps, not by memory */
	fd = open("/dev/zero", O_RDONLY);
	assert_true(fd >= 0);
	c = (struct collected){ "", 0 };
	assert_int_equal(lines_read_fd(fd, 1024, 4 << 20, collect, &c, &st), 0);
	close(fd);
	assert_int_equal(st.lines, 0);
	assert_true(st.truncated);
}

/* The same rule inside another process's root (its perf maps): a root-relative path stays inside that root, and
 * the plain and the in-root opens say the same of each file. */
static void test_fs__open_trusted_in_root(void **state)
{
	(void)state;
	assert_int_equal(mkdir(at("root"), 0700), 0);
	int dfd = open(at("root"), O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	put("root/ok.map", "1000 10 f\n", 0600);
	put("root/other.map", "1000 10 f\n", 0600);
	assert_int_equal(chown(at("root/other.map"), NOBODY, NOBODY), 0);
	put("root/open.map", "1000 10 f\n", 0666);
	assert_int_equal(mkfifo(at("root/fifo.map"), 0600), 0);
	assert_int_equal(symlink("/dev/zero", at("root/zero.map")), 0);
	assert_int_equal(symlink("/etc/passwd", at("root/escape.map")), 0);
	static const struct { const char *name; const char *why; } cases[] = {
		{ "ok.map", NULL },
		{ "other.map", "uid 65534" },
		{ "open.map", "writable by every user" },
		{ "fifo.map", "FIFO" },
		{ "zero.map", "symbolic link" },
		{ "escape.map", "symbolic link" },
		{ "missing.map", "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		for (int in_root = 0; in_root < 2; in_root++) {
			struct perr e = PERR_INIT;
			int fd = in_root ? fs_open_trusted_in_root(dfd, cases[i].name, geteuid(), NULL, &e)
					 : fs_open_trusted(dfd, cases[i].name, geteuid(), NULL, &e);
			if (!cases[i].why) {
				if (fd < 0)
					fail_msg("%s refused: %s", cases[i].name, e.msg);
				close(fd);
			} else {
				assert_true(fd < 0);
				if (!strstr(e.msg, cases[i].why))
					fail_msg("%s: '%s', want '%s'", cases[i].name, e.msg, cases[i].why);
			}
		}
	}
	close(dfd);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fs__accepts_own_regular_files),
		cmocka_unit_test(test_fs__caps),
		cmocka_unit_test(test_fs__refuses_what_others_could_plant),
		cmocka_unit_test(test_fs__private_dirs),
		cmocka_unit_test(test_fs__lines_within_caps),
		cmocka_unit_test(test_fs__open_trusted_in_root),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
