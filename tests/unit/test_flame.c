/* test_flame.c — the flame graph renderer's parts: the WCAG contrast of the text on every fill each palette and
 * the differential scale can produce (swept over their whole range), the contrast formula on known pairs, and the
 * tree: the profile's own when nothing merges, a trie when labels merge or stacks are reversed, and pruning. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "render/flame.h"
#include "render/tree.h"

static const int black[3] = { 0, 0, 0 }, white[3] = { 255, 255, 255 };

/* The contrast of the text renderer picks for fill. */
static double text_contrast(const int fill[3])
{
	return flame_contrast(fill, flame_text_white(fill) ? white : black);
}

static void test_flame__contrast_formula(void **state)
{
	(void)state;
	assert_true(fabs(flame_contrast(black, white) - 21.0) < 1e-9);
	assert_true(fabs(flame_contrast(white, white) - 1.0) < 1e-9);
	/* pure blue: luminance 0.0722, so (0.0722 + 0.05) / 0.05 against black */
	const int blue[3] = { 0, 0, 255 }, red[3] = { 255, 0, 0 };
	assert_true(fabs(flame_contrast(blue, black) - 2.444) < 1e-3);
	assert_true(fabs(flame_contrast(red, black) - 5.252) < 1e-3);
	assert_true(flame_text_white(blue));
	assert_false(flame_text_white(red));
}

static void test_flame__every_palette_fill_reads(void **state)
{
	(void)state;
	static const char *const pals[] = { "hot", "mem", "io", "wakeup", "chain", "red", "green", "blue", "aqua",
					    "yellow", "purple", "orange" };
	const int steps = 24;
	double worst = 99;
	for (size_t p = 0; p < sizeof pals / sizeof pals[0]; p++)
		for (int a = 0; a <= steps; a++)
			for (int b = 0; b <= steps; b++)
				for (int c = 0; c <= steps; c++) {
					int fill[3];
					/* the hash fractions run over [0, 1): the top end is 65535/65536 */
					flame_palette_rgb(pals[p], a * (65535.0 / 65536) / steps, b * (65535.0 / 65536) / steps,
							  c * (65535.0 / 65536) / steps, fill);
					double k = text_contrast(fill);
					if (k < worst)
						worst = k;
				}
	assert_true(worst >= FLAME_MIN_CONTRAST);
	/* the mixed palettes pick a base palette by kind and name */
	const char *names[] = { "do_syscall_64_[k]", "java/util/Map.get", "Foo::bar", "main", "x.pm" };
	const char *mixed[] = { "java", "js", "perl" };
	for (size_t m = 0; m < 3; m++)
		for (size_t i = 0; i < 5; i++)
			for (int kind = FRAME_USER; kind <= FRAME_JIT; kind++) {
				int fill[3];
				flame_frame_rgb(mixed[m], names[i], strlen(names[i]), (enum frame_kind)kind, fill);
				assert_true(text_contrast(fill) >= FLAME_MIN_CONTRAST);
			}
}

static void test_flame__differential_scale_reads(void **state)
{
	(void)state;
	for (int i = -2000; i <= 2000; i++) {
		int fill[3];
		flame_diff_rgb(i / 2000.0, fill);
		assert_true(text_contrast(fill) >= FLAME_MIN_CONTRAST);
		if (i > 0)
			assert_true(fill[0] == 255 && fill[2] < 255); /* red grew */
		else if (i < 0)
			assert_true(fill[2] == 255 && fill[0] < 255); /* blue shrank */
	}
	int full[3];
	flame_diff_rgb(-1, full);
	assert_true(full[0] == 0 && full[1] == 0 && full[2] == 255);
}

static struct profile *folded(const char *text)
{
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_read_buf(text, strlen(text), FMT_FOLDED, NULL, &p, &e), PLUMB_OK);
	return p;
}

/* The weight under the node reached by labels (outermost first) in a summed tree; 0 when there is none. */
static uint64_t weight_at(const struct ftree *T, const struct flabels *fl, const char *const *path, size_t n)
{
	uint32_t node = 0;
	for (size_t d = 0; d < n; d++) {
		uint32_t want = intern_find(&fl->L, path[d], strlen(path[d])), next = UINT32_MAX;
		for (uint32_t c = 1; c < T->n && next == UINT32_MAX; c++)
			if (ftree_parent(T, c) == node && ftree_label(T, c) == want)
				next = c;
		if (next == UINT32_MAX)
			return 0;
		node = next;
	}
	return T->tot[0][node];
}

static void test_flame__trees(void **state)
{
	(void)state;
	struct profile *p = folded("main;a;burn 30\nmain;b;burn 10\nmain;b;idle 5\nmain;burn 5\n");
	struct flabels fl = FLABELS_INIT;
	assert_true(flabels_add(&fl, 0, p, 0));
	assert_true(flabels_unique(&fl, p));
	/* direct: the profile's own tree */
	struct ftree T, K;
	assert_true(ftree_direct(&T, p, fl.flab[0]));
	ftree_sum(&T, NULL);
	assert_null(T.parent);
	assert_int_equal(T.tot[0][0], 50);
	assert_int_equal(weight_at(&T, &fl, (const char *const[]){ "main", "b" }, 2), 15);
	assert_int_equal(weight_at(&T, &fl, (const char *const[]){ "main", "a", "burn" }, 3), 30);
	/* pruning at 10 keeps main, a, a;burn, b, b;burn and drops idle (5) and main;burn (5) */
	assert_true(ftree_prune(&T, 10, &K));
	assert_int_equal(K.n, 6);
	for (uint32_t n = 1; n < K.n; n++)
		assert_true(K.parent[n] < n && K.tot[0][n] >= 10);
	ftree_release(&K);
	ftree_release(&T);
	/* reversed: burn is one node at the base with its callers above */
	assert_true(ftree_trie(&T, false));
	assert_true(ftree_merge_reversed(&T, p, fl.flab[0], 0));
	ftree_sum(&T, NULL);
	assert_int_equal(weight_at(&T, &fl, (const char *const[]){ "burn" }, 1), 45);
	assert_int_equal(weight_at(&T, &fl, (const char *const[]){ "burn", "b", "main" }, 3), 10);
	assert_int_equal(weight_at(&T, &fl, (const char *const[]){ "burn", "main" }, 2), 5);
	assert_int_equal(weight_at(&T, &fl, (const char *const[]){ "idle", "b", "main" }, 3), 5);
	assert_int_equal(T.tot[0][0], 50);
	ftree_release(&T);
	flabels_release(&fl);
	profile_free(p);
}

/* A frame of function func in x.c at line. */
static uint32_t frame_at(struct profile *p, const char *func, uint32_t line)
{
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, func);
	f.file = profile_intern_cstr(p, "/src/x.c");
	f.line = line;
	return profile_frame(p, &f);
}

static void test_flame__merged_labels_and_two_sides(void **state)
{
	(void)state;
	/* with lines dropped, f (x.c:1) and f (x.c:2) are one label: the tree must merge them */
	struct profile *a = profile_new(), *b = profile_new();
	uint32_t t = profile_thread(a, 1, 1, "t");
	uint32_t m = frame_at(a, "main", 1), f1 = frame_at(a, "f", 1), f2 = frame_at(a, "f", 2);
	assert_true(profile_add_sample(a, profile_stack_from(a, (uint32_t[]){ m, f1 }, 2), t, 0, 3));
	assert_true(profile_add_sample(a, profile_stack_from(a, (uint32_t[]){ m, f2 }, 2), t, 0, 4));
	t = profile_thread(b, 1, 1, "t");
	m = frame_at(b, "main", 1);
	uint32_t f9 = frame_at(b, "f", 9);
	assert_true(profile_add_sample(b, profile_stack_from(b, (uint32_t[]){ m, f9 }, 2), t, 0, 2));
	struct flabels fl = FLABELS_INIT;
	assert_true(flabels_add(&fl, 0, a, LABEL_NO_LINES));
	assert_false(flabels_unique(&fl, a));
	assert_true(flabels_add(&fl, 1, b, LABEL_NO_LINES));
	struct ftree T;
	assert_true(ftree_trie(&T, true));
	assert_true(ftree_merge(&T, a, fl.flab[0], 0, NULL));
	assert_true(ftree_merge(&T, b, fl.flab[1], 1, NULL));
	ftree_sum(&T, NULL);
	assert_int_equal(T.n, 3); /* root, main, f */
	assert_int_equal(weight_at(&T, &fl, (const char *const[]){ "main (src/x.c)", "f (src/x.c)" }, 2), 7);
	assert_int_equal(T.tot[1][2], 2);
	ftree_release(&T);
	flabels_release(&fl);
	profile_free(a);
	profile_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flame__contrast_formula),
		cmocka_unit_test(test_flame__every_palette_fill_reads),
		cmocka_unit_test(test_flame__differential_scale_reads),
		cmocka_unit_test(test_flame__trees),
		cmocka_unit_test(test_flame__merged_labels_and_two_sides),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
