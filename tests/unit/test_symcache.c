/* test_symcache.c — the symbol cache (symbol/cache.h): what is put comes back after a save and a reopen, only
 * while the source file keeps its size and mtime; strings that could not be read back are not stored; another
 * build-id is another file; a torn or foreign file is not trusted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "base/settings.h"
#include "symbol/cache.h"

static const unsigned char ID1[] = { 0xde, 0xad, 0xbe, 0xef, 0x01 };
static const unsigned char ID2[] = { 0xde, 0xad, 0xbe, 0xef, 0x02 };

struct fixture {
	char home[64];
	char source[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	snprintf(f->home, sizeof f->home, "/tmp/plumb-test-symcache-XXXXXX");
	assert_non_null(mkdtemp(f->home));
	snprintf(f->source, sizeof f->source, "%s/source.debug", f->home);
	FILE *fp = fopen(f->source, "w");
	assert_non_null(fp);
	fputs("debug information", fp);
	fclose(fp);
	setenv("PLUMB_HOME", f->home, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->home);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void put_two(struct sym_cache *c)
{
	struct sym_resolved chain[2] = { { "inner", NULL, "a.c", 12 }, { "outer", NULL, "b.c", 34 } };
	sym_cache_put(c, 0x1234, true, chain, 2);
	struct sym_resolved one = { "start", NULL, NULL, 0 };
	sym_cache_put(c, 0x40, false, &one, 1);
	struct sym_resolved bad = { "tab\there", NULL, "x.c", 1 };
	sym_cache_put(c, 0x50, false, &bad, 1);
}

static void test_symcache__round_trip(void **state)
{
	struct fixture *f = *state;
	struct sym_cache *c = sym_cache_open(ID1, sizeof ID1);
	assert_non_null(c);
	put_two(c);
	assert_true(sym_cache_dirty(c));
	sym_cache_save(c, f->source);
	sym_cache_close(c);

	c = sym_cache_open(ID1, sizeof ID1);
	struct sym_resolved out[4];
	size_t n = 0;
	assert_true(sym_cache_get(c, 0x1234, true, out, 4, &n));
	assert_int_equal(n, 2);
	assert_string_equal(out[0].func, "inner");
	assert_string_equal(out[0].file, "a.c");
	assert_int_equal(out[0].line, 12);
	assert_string_equal(out[1].func, "outer");
	assert_int_equal(out[1].line, 34);
	assert_false(sym_cache_get(c, 0x1234, false, out, 4, &n)); /* a return address is another key */
	assert_true(sym_cache_get(c, 0x40, false, out, 4, &n));
	assert_int_equal(n, 1);
	assert_null(out[0].file);
	assert_false(sym_cache_get(c, 0x50, false, out, 4, &n)); /* a tab could not be read back */
	assert_false(sym_cache_dirty(c));
	sym_cache_close(c);

	c = sym_cache_open(ID2, sizeof ID2); /* another build-id */
	assert_false(sym_cache_get(c, 0x40, false, out, 4, &n));
	sym_cache_close(c);
}

static void test_symcache__changed_source_is_not_trusted(void **state)
{
	struct fixture *f = *state;
	struct sym_cache *c = sym_cache_open(ID1, sizeof ID1);
	put_two(c);
	sym_cache_save(c, f->source);
	sym_cache_close(c);
	struct timeval tv[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	assert_int_equal(utimes(f->source, tv), 0); /* the debug package was reinstalled */
	c = sym_cache_open(ID1, sizeof ID1);
	struct sym_resolved out[4];
	size_t n;
	assert_false(sym_cache_get(c, 0x40, false, out, 4, &n));
	sym_cache_close(c);
}

static void test_symcache__torn_file_keeps_whole_lines_only(void **state)
{
	struct fixture *f = *state;
	struct sym_cache *c = sym_cache_open(ID1, sizeof ID1);
	put_two(c);
	sym_cache_save(c, f->source);
	sym_cache_close(c);
	char path[160];
	snprintf(path, sizeof path, "%s/symbols/deadbeef01", f->home);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(truncate(path, sb.st_size - 3), 0); /* the last line loses its end */
	c = sym_cache_open(ID1, sizeof ID1);
	struct sym_resolved out[4];
	size_t n, found = 0;
	found += sym_cache_get(c, 0x1234, true, out, 4, &n);
	found += sym_cache_get(c, 0x40, false, out, 4, &n);
	assert_int_equal(found, 1);
	sym_cache_close(c);
}

static void test_symcache__off(void **state)
{
	(void)state;
	struct settings off = SETTINGS_DEFAULT;
	off.symbol_cache = false;
	settings_set(&off);
	assert_null(sym_cache_open(ID1, sizeof ID1));
	settings_set(&(struct settings)SETTINGS_DEFAULT);
	assert_null(sym_cache_open(ID1, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_symcache__round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symcache__changed_source_is_not_trusted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symcache__torn_file_keeps_whole_lines_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_symcache__off, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
