/* test_render.c — render/output.c, the one call that writes a profile in any output kind: the flame graph is
 * drawn in render/, the format writers refuse it, and every other kind passes through to fmt_write_file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "profile/profile.h"
#include "render/output.h"

static struct profile *small_profile(void)
{
	const char *in = "main;work;leaf 7\nmain;idle 3\n";
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_read_buf(in, strlen(in), FMT_FOLDED, NULL, &p, &e), PLUMB_OK);
	return p;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0;
	FILE *mem = open_memstream(&buf, &cap);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, n, mem);
	fclose(f);
	fclose(mem);
	*len = cap;
	return buf;
}

static void test_render__svg_is_drawn_here_not_by_format(void **state)
{
	(void)state;
	struct profile *p = small_profile();
	char path[] = "/tmp/plumb-test-render-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);
	struct perr e = PERR_INIT;
	/* the format layer refuses the flame graph and names the right call; nothing is written */
	assert_int_equal(fmt_write_file(p, path, FMT_SVG, NULL, &e), PLUMB_EUNSUPPORTED);
	assert_non_null(strstr(e.msg, "render_write_file"));
	assert_int_not_equal(access(path, F_OK), 0);
	/* render_write_file draws it: the same bytes flame_write_svg gives with the renderer's defaults */
	assert_int_equal(render_write_file(p, path, FMT_SVG, NULL, NULL, &e), PLUMB_OK);
	size_t len = 0, want_len = 0;
	char *got = slurp(path, &len), *want = NULL;
	assert_non_null(got);
	FILE *mem = open_memstream(&want, &want_len);
	struct flame_opts fo = { .min_width = -1 };
	assert_int_equal(flame_write_svg(p, mem, &fo, &e), PLUMB_OK);
	fclose(mem);
	assert_int_equal(len, want_len);
	assert_memory_equal(got, want, len);
	assert_non_null(strstr(got, "<svg"));
	free(got);
	free(want);
	/* given options are the renderer's */
	fo.title = "A title of its own";
	assert_int_equal(render_write_file(p, path, FMT_SVG, NULL, &fo, &e), PLUMB_OK);
	got = slurp(path, &len);
	assert_non_null(strstr(got, "A title of its own"));
	free(got);
	unlink(path);
	profile_free(p);
}

static void test_render__other_kinds_go_through_the_format_writers(void **state)
{
	(void)state;
	struct profile *p = small_profile();
	char path[] = "/tmp/plumb-test-render-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	struct perr e = PERR_INIT;
	assert_int_equal(render_write_file(p, path, FMT_FOLDED, NULL, NULL, &e), PLUMB_OK);
	size_t len = 0;
	char *got = slurp(path, &len);
	assert_non_null(got);
	assert_string_equal(got, "main;work;leaf 7\nmain;idle 3\n");
	free(got);
	/* a kind no writer has is the format layer's error */
	assert_int_equal(render_write_file(p, path, FMT_PERF_SCRIPT, NULL, NULL, &e), PLUMB_EINVAL);
	assert_non_null(strstr(e.msg, "perf-script"));
	unlink(path);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_render__svg_is_drawn_here_not_by_format),
		cmocka_unit_test(test_render__other_kinds_go_through_the_format_writers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
