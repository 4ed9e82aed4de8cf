/* test_store.c — base/store (the name rule, paths, save with and without force, load, list, remove), base/fs's
 * mkdir -p and PATH search (fs_which), and base/announce (the target-announcement file, live, stale and reused). */
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

#include "os/announce.h"
#include "os/fs.h"
#include "os/procfs.h"
#include "os/store.h"

static char home[] = "/tmp/plumb-store-XXXXXX";

static void test_store__name_rule(void **state)
{
	(void)state;
	char longest[STORE_NAME_MAX + 2];
	memset(longest, 'a', STORE_NAME_MAX);
	longest[STORE_NAME_MAX] = '\0';
	static const struct {
		const char *name;
		bool ok;
	} cases[] = {
		{ "app", true },       { "my-app_2.0", true }, { "A.b", true },     { "x-", true },     { "0", true },
		{ "a..b", true },      { "", false },          { ".", false },      { "..", false },    { ".hidden", false },
		{ "-x", false },       { "--force", false },   { "a/b", false },    { "../x", false },  { "a b", false },
		{ "caf\xc3\xa9", false }, { "a\n", false },    { "a:b", false },    { "a*", false },    { "~x", false },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		assert_int_equal(store_name_valid(cases[i].name), cases[i].ok);
	assert_true(store_name_valid(longest));
	longest[STORE_NAME_MAX] = 'a';
	longest[STORE_NAME_MAX + 1] = '\0';
	assert_false(store_name_valid(longest));

	struct perr e = PERR_INIT;
	assert_int_equal(store_check_name(&STORE_BENCH_BASELINES, "-x", &e), PLUMB_EINVAL);
	assert_string_equal(e.msg, "'-x' is not a valid baseline name (letters, digits, '.', '_', '-'; not starting "
				   "with '.' or '-'; at most 100)");

	static const struct {
		const char *text, *want;
	} from[] = {
		{ "my app/../x", "my-app-..-x" }, { ".bashrc", "process" }, { "-bash", "process" },
		{ "", "process" },                { "python3.11", "python3.11" }, { "caf\xc3\xa9", "caf--" },
	};
	char buf[STORE_NAME_MAX + 1];
	for (size_t i = 0; i < sizeof from / sizeof from[0]; i++) {
		store_name_from(from[i].text, buf, sizeof buf);
		assert_string_equal(buf, from[i].want);
		assert_true(store_name_valid(buf));
	}
	char big[300];
	memset(big, 'b', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	store_name_from(big, buf, sizeof buf);
	assert_int_equal(strlen(buf), STORE_NAME_MAX);
	char small[4];
	store_name_from("abcdef", small, sizeof small);
	assert_string_equal(small, "abc");
}

static void test_store__paths(void **state)
{
	(void)state;
	char buf[PATH_MAX];
	struct perr e = PERR_INIT;
	setenv("PLUMB_HOME", "/ph", 1);
	assert_int_equal(store_path(&STORE_METRICS, "app", buf, sizeof buf, &e), PLUMB_OK);
	assert_string_equal(buf, "/ph/metrics/app.json");
	assert_int_equal(store_path(&STORE_TARGETS, "svc", buf, sizeof buf, &e), PLUMB_OK);
	assert_string_equal(buf, "/ph/targets/svc.lock");
	assert_int_equal(store_dir(&STORE_PROFILE_BASELINES, buf, sizeof buf, &e), PLUMB_OK);
	assert_string_equal(buf, "/ph/baselines/profiles");
	assert_int_equal(store_path(&STORE_METRICS, "../etc/passwd", buf, sizeof buf, &e), PLUMB_EINVAL);
	assert_int_equal(store_path(&STORE_METRICS, "app", buf, 16, &e), PLUMB_EINVAL); /* does not fit */
	unsetenv("PLUMB_HOME");
	setenv("HOME", "/home/u", 1);
	unsetenv("XDG_STATE_HOME");
	assert_int_equal(store_path(&STORE_BENCH_BASELINES, "b", buf, sizeof buf, &e), PLUMB_OK);
	assert_string_equal(buf, "/home/u/.local/state/plumb/baselines/evidence/b.json");
	setenv("XDG_STATE_HOME", "/xdg", 1);
	assert_int_equal(store_dir(&STORE_METRICS, buf, sizeof buf, &e), PLUMB_OK);
	assert_string_equal(buf, "/xdg/plumb/metrics");
	unsetenv("XDG_STATE_HOME");
	unsetenv("HOME");
	assert_int_equal(store_dir(&STORE_METRICS, buf, sizeof buf, &e), PLUMB_ENOENT);
	setenv("PLUMB_HOME", home, 1);
}

static void read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
}

static void test_store__save_force_list_remove(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	const struct store_kind *k = &STORE_PROFILE_BASELINES;
	char **names;
	size_t n;
	assert_int_equal(store_list(k, &names, &n, &e), PLUMB_OK); /* no directory yet: nothing */
	assert_int_equal(n, 0);
	assert_null(names);

	assert_int_equal(store_save(k, "b", "one", 3, false, &e), PLUMB_OK);
	char path[PATH_MAX], dir[PATH_MAX], buf[64];
	assert_int_equal(store_path(k, "b", path, sizeof path, &e), PLUMB_OK);
	assert_int_equal(store_dir(k, dir, sizeof dir, &e), PLUMB_OK);
	struct stat st;
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(buf, sizeof buf, "%s/baselines", home);
	assert_int_equal(stat(buf, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(store_exists(k, "b"));
	assert_false(store_exists(k, "c"));

	/* saving over a name fails clearly and leaves the old one, unless forced */
	assert_int_equal(store_save(k, "b", "two", 3, false, &e), PLUMB_EINVAL);
	assert_string_equal(e.msg, "a profile baseline named 'b' exists (replacing it must be asked for)");
	read_file(path, buf, sizeof buf);
	assert_string_equal(buf, "one");
	assert_int_equal(store_save(k, "b", "three", 5, true, &e), PLUMB_OK);
	char *data;
	size_t len;
	assert_int_equal(store_load(k, "b", &data, &len, &e), PLUMB_OK);
	assert_int_equal(len, 5);
	assert_string_equal(data, "three");
	free(data);
	assert_int_equal(store_load(k, "nope", &data, &len, &e), PLUMB_ENOENT);
	assert_null(data);
	assert_int_equal(store_save(k, "../evil", "x", 1, true, &e), PLUMB_EINVAL);

	/* the write path for writers with their own atomic file */
	char wpath[PATH_MAX];
	assert_int_equal(store_path_for_write(&STORE_METRICS, "rec", false, wpath, sizeof wpath, &e), PLUMB_OK);
	snprintf(buf, sizeof buf, "%s/metrics", home);
	assert_int_equal(stat(buf, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	int fd = open(wpath, O_WRONLY | O_CREAT, 0600);
	close(fd);
	assert_int_equal(store_path_for_write(&STORE_METRICS, "rec", false, wpath, sizeof wpath, &e), PLUMB_EINVAL);
	assert_int_equal(store_path_for_write(&STORE_METRICS, "rec", true, wpath, sizeof wpath, &e), PLUMB_OK);

	/* list: sorted, only valid names with the kind's extension */
	assert_int_equal(store_save(k, "a", "x", 1, false, &e), PLUMB_OK);
	assert_int_equal(store_save(k, "Z9", "x", 1, false, &e), PLUMB_OK);
	static const char *const junk[] = { ".hidden.json", "-opt.json", "c.txt", "b.json.tmp.AbC123", ".json" };
	for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, junk[i]);
		fd = open(path, O_WRONLY | O_CREAT, 0600);
		assert_true(fd >= 0);
		close(fd);
	}
	assert_int_equal(store_list(k, &names, &n, &e), PLUMB_OK);
	assert_int_equal(n, 3);
	assert_string_equal(names[0], "Z9");
	assert_string_equal(names[1], "a");
	assert_string_equal(names[2], "b");
	store_list_free(names, n);

	assert_int_equal(store_remove(k, "a", &e), PLUMB_OK);
	assert_int_equal(store_remove(k, "a", &e), PLUMB_ENOENT);
	assert_string_equal(e.msg, "no profile baseline named 'a'");
	assert_int_equal(store_remove(k, "../a", &e), PLUMB_EINVAL);
	assert_int_equal(store_list(k, &names, &n, &e), PLUMB_OK);
	assert_int_equal(n, 2);
	store_list_free(names, n);
}

static void test_store__mkdirs(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	char path[PATH_MAX], deep[PATH_MAX];
	snprintf(deep, sizeof deep, "%s/m/n//o/", home);
	assert_int_equal(fs_mkdirs(deep, 0700, &e), PLUMB_OK);
	assert_int_equal(fs_mkdirs(deep, 0700, &e), PLUMB_OK); /* exists: fine */
	struct stat st;
	snprintf(path, sizeof path, "%s/m/n/o", home);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(path, sizeof path, "%s/file", home);
	int fd = open(path, O_WRONLY | O_CREAT, 0600);
	close(fd);
	assert_int_equal(fs_mkdirs(path, 0700, &e), PLUMB_EOUTPUT);
	assert_non_null(strstr(e.msg, "not a directory"));
	snprintf(deep, sizeof deep, "%s/file/sub", home);
	assert_int_equal(fs_mkdirs(deep, 0700, &e), PLUMB_EOUTPUT);
	assert_int_equal(fs_mkdirs("", 0700, &e), PLUMB_EINVAL);
}

/* fs_which: a name with a '/' is itself, others are searched on PATH as executable regular files (a directory
 * or a file without the x bit is passed over), an empty PATH entry is the current directory. */
static void test_store__which(void **state)
{
	(void)state;
	char dir_a[PATH_MAX], dir_b[PATH_MAX], path[PATH_MAX], got[PATH_MAX];
	snprintf(dir_a, sizeof dir_a, "%s/which-a", home);
	snprintf(dir_b, sizeof dir_b, "%s/which-b", home);
	assert_int_equal(mkdir(dir_a, 0700), 0);
	assert_int_equal(mkdir(dir_b, 0700), 0);
	snprintf(path, sizeof path, "%s/tool", dir_a); /* a directory named like the command */
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof path, "%s/plain", dir_a); /* not executable */
	close(open(path, O_WRONLY | O_CREAT, 0600));
	snprintf(path, sizeof path, "%s/tool", dir_b);
	close(open(path, O_WRONLY | O_CREAT, 0700));
	char *old = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	char env[2 * PATH_MAX + 2];
	snprintf(env, sizeof env, "%s:%s", dir_a, dir_b);
	setenv("PATH", env, 1);
	assert_true(fs_which("tool", got, sizeof got));
	assert_string_equal(got, path);
	assert_false(fs_which("plain", got, sizeof got));
	assert_false(fs_which("absent", got, sizeof got));
	assert_false(fs_which("", got, sizeof got));
	assert_true(fs_which(path, got, sizeof got)); /* a path is itself */
	assert_string_equal(got, path);
	assert_false(fs_which("tool", got, 8)); /* does not fit */
	char cwd[PATH_MAX];
	assert_non_null(getcwd(cwd, sizeof cwd));
	assert_int_equal(chdir(dir_b), 0);
	setenv("PATH", ":/nonexistent", 1); /* the empty entry: the current directory */
	assert_true(fs_which("tool", got, sizeof got));
	assert_string_equal(got, "./tool");
	assert_int_equal(chdir(cwd), 0);
	if (old)
		setenv("PATH", old, 1);
	else
		unsetenv("PATH");
	free(old);
}

static void test_store__announce(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		bool ok;
		long pid;
		unsigned long long start;
	} cases[] = {
		{ "42 7\n", true, 42, 7 }, { "42\n", true, 42, 0 }, { "  42   99  \r\n", true, 42, 99 },
		{ "", false, 0, 0 },        { "x 1\n", false, 0, 0 }, { "0 5\n", false, 0, 0 },
		{ "42 7 9\n", false, 0, 0 }, { "-3 1", false, 0, 0 }, { "99999999999 1", false, 0, 0 },
		{ "42 7 junk", false, 0, 0 },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct announce a;
		assert_int_equal(announce_parse(cases[i].text, strlen(cases[i].text), &a), cases[i].ok);
		if (cases[i].ok) {
			assert_int_equal(a.pid, cases[i].pid);
			assert_int_equal(a.start, cases[i].start);
		}
	}
	char buf[64];
	struct announce a = { 1234, 5678 };
	assert_int_equal(announce_format(buf, sizeof buf, &a), 10);
	assert_string_equal(buf, "1234 5678\n");
	assert_int_equal(announce_format(buf, 4, &a), -1);

	char path[PATH_MAX];
	struct perr e = PERR_INIT;
	assert_int_equal(store_path_for_write(&STORE_TARGETS, "me", true, path, sizeof path, &e), PLUMB_OK);
	assert_int_equal(announce_read(path, &a), ANNOUNCE_NONE);
	assert_int_equal(announce_write(path, getpid(), &e), PLUMB_OK);
	assert_int_equal(announce_read(path, &a), ANNOUNCE_LIVE);
	assert_int_equal(a.pid, getpid());
	assert_int_equal(a.start, procfs_start_time(getpid()));
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	static const struct {
		const char *fmt;
		enum announce_state want;
	} locks[] = {
		{ "%d %llu\n", ANNOUNCE_LIVE },       /* ours */
		{ "%d %llu1\n", ANNOUNCE_STALE },     /* our pid, another start time: reused */
		{ "%d\n", ANNOUNCE_LIVE },            /* no start time: the pid alone decides */
		{ "999999999 5\n", ANNOUNCE_STALE },  /* gone */
		{ "not a pid\n", ANNOUNCE_NONE },
	};
	for (size_t i = 0; i < sizeof locks / sizeof locks[0]; i++) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, locks[i].fmt, (int)getpid(), (unsigned long long)procfs_start_time(getpid()));
		fclose(f);
		assert_int_equal(announce_read(path, &a), locks[i].want);
	}
	unlink(path);
}

int main(void)
{
	if (!mkdtemp(home))
		return 1;
	setenv("PLUMB_HOME", home, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_store__name_rule),
		cmocka_unit_test(test_store__paths),
		cmocka_unit_test(test_store__save_force_list_remove),
		cmocka_unit_test(test_store__mkdirs),
		cmocka_unit_test(test_store__which),
		cmocka_unit_test(test_store__announce),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", home);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
