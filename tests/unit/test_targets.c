/* test_targets.c — announced targets from lock files; stale locks (dead or reused pids) are ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/procfs.h"
#include "sample/targets.h"

static char dir[] = "/tmp/plumb-targets-XXXXXX";

static unsigned long long my_start(void)
{
	return (unsigned long long)procfs_start_time(getpid());
}

static void lock(const char *name, const char *content)
{
	char path[512];
	snprintf(path, sizeof path, "%s/targets/%s.lock", dir, name);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void test_targets__live_stale_and_reused(void **state)
{
	(void)state;
	char line[128], list[512];
	pid_t pid = 0;
	assert_int_equal(targets_find(NULL, &pid, list, sizeof list), 0);
	assert_string_equal(list, "");

	snprintf(line, sizeof line, "%ld %llu\n", (long)getpid(), my_start());
	lock("alive", line);
	lock("dead", "999999999 5\n");
	snprintf(line, sizeof line, "%ld %llu\n", (long)getpid(), my_start() + 1); /* pid reused since */
	lock("reused", line);
	lock("garbage", "not a pid\n");

	assert_int_equal(targets_find(NULL, &pid, list, sizeof list), 1);
	assert_int_equal(pid, getpid());
	char want[128];
	snprintf(want, sizeof want, "alive (pid %ld)", (long)getpid());
	assert_string_equal(list, want);
	assert_int_equal(targets_find("alive", &pid, NULL, 0), 1);
	assert_int_equal(targets_find("dead", &pid, list, sizeof list), 0);
	assert_string_equal(list, want);
	assert_int_equal(targets_find("aliv", &pid, NULL, 0), 0);

	snprintf(line, sizeof line, "%ld\n", (long)getppid());
	lock("second", line);
	pid = 1234;
	assert_int_equal(targets_find(NULL, &pid, list, sizeof list), 2);
	assert_int_equal(pid, 0);
	assert_non_null(strstr(list, "second (pid"));
	assert_non_null(strstr(list, want));
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	char sub[512];
	snprintf(sub, sizeof sub, "%s/targets", dir);
	mkdir(sub, 0700);
	setenv("PLUMB_HOME", dir, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_targets__live_stale_and_reused),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
