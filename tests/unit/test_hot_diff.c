/* test_hot_diff.c — the significance marks of `plumb diff` (analyze/hot_diff.c): the two-proportion test against
 * the Yates-corrected chi-square of a 2x2 table worked by hand, Holm's correction on a known set, and the marks
 * the issue names: a 2-point move on 300 samples is noise, a 30-point move on 700 is real. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"

static void test_hot_diff__two_proportion_matches_yates_chi_square(void **state)
{
	(void)state;
	/* 15 of 50 against 25 of 50: chi-square with Yates' correction N(|ad-bc|-N/2)^2 / (r1 r2 c1 c2)
	 * = 100 * 450^2 / (50 * 50 * 40 * 60) = 3.375, one degree of freedom: p = erfc(sqrt(3.375 / 2)) */
	double p = hot_two_proportion_p(15, 50, 25, 50);
	assert_true(fabs(p - erfc(sqrt(3.375 / 2))) < 1e-12);
	assert_true(fabs(p - 0.06619) < 1e-4);
	/* symmetric in the two sides */
	assert_true(fabs(p - hot_two_proportion_p(25, 50, 15, 50)) < 1e-15);
	/* equal shares, empty sides and proportions of 0 or 1 on both sides cannot differ */
	assert_true(hot_two_proportion_p(30, 100, 60, 200) == 1.0);
	assert_true(hot_two_proportion_p(0, 0, 5, 10) == 1.0);
	assert_true(hot_two_proportion_p(100, 100, 300, 300) == 1.0);
	assert_true(hot_two_proportion_p(0, 100, 0, 300) == 1.0);
	/* a few samples against none is not evidence: Fisher's exact test gives 0.062 for 0 vs 5 of 1,000 */
	assert_true(hot_two_proportion_p(0, 1000, 5, 1000) > 0.05);
}

static void test_hot_diff__holm(void **state)
{
	(void)state;
	/* sorted: 0.001 * 4, 0.01 * 3, 0.02 * 2 (0.04), 0.04 * 1 (0.04 again) */
	const double p[] = { 0.04, 0.001, 0.02, 0.01 };
	double adj[4];
	struct perr e = PERR_INIT;
	assert_int_equal(hot_holm(p, adj, 4, &e), PLUMB_OK);
	assert_true(fabs(adj[1] - 0.004) < 1e-12);
	assert_true(fabs(adj[3] - 0.03) < 1e-12);
	assert_true(fabs(adj[2] - 0.04) < 1e-12);
	assert_true(fabs(adj[0] - 0.04) < 1e-12);
	/* never above 1, and never below an earlier (smaller) p-value's adjusted value */
	const double q[] = { 0.5, 0.3, 0.9 };
	assert_int_equal(hot_holm(q, adj, 3, &e), PLUMB_OK);
	assert_true(fabs(adj[1] - 0.9) < 1e-12 && adj[0] == 1.0 && adj[2] == 1.0);
	assert_int_equal(hot_holm(q, adj, 0, &e), PLUMB_OK);
}

/* Diffs one before/after table of two rows and tests it. */
static struct hot_diff_row *two_rows(uint64_t a0, uint64_t b0, uint64_t a1, uint64_t b1, size_t *n)
{
	struct hot_row br[] = { { (char *)"a", a0 }, { (char *)"b", b0 } };
	struct hot_row ar[] = { { (char *)"a", a1 }, { (char *)"b", b1 } };
	struct hot_table before = { br, 2 }, after = { ar, 2 };
	struct hot_diff_row *rows;
	struct perr e = PERR_INIT;
	assert_int_equal(hot_diff(&before, a0 + b0, &after, a1 + b1, &rows, n, &e), PLUMB_OK);
	assert_true(isnan(rows[0].p_value) && !rows[0].significant); /* untested until asked */
	uint64_t total[2] = { a0 + b0, a1 + b1 };
	assert_int_equal(hot_diff_test(rows, *n, total, total, HOT_DIFF_ALPHA, &e), PLUMB_OK);
	/* names point into the tables on this stack frame: keep only what the caller checks */
	for (size_t i = 0; i < *n; i++)
		rows[i].name = NULL;
	return rows;
}

static void test_hot_diff__noise_and_signal(void **state)
{
	(void)state;
	size_t n;
	/* 2 points on 300 samples: 150/150 -> 156/144 */
	struct hot_diff_row *rows = two_rows(150, 150, 156, 144, &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_false(rows[i].significant);
		assert_true(rows[i].p_adjusted > 0.5);
	}
	free(rows);
	/* 30 points on 700 samples: 350/350 -> 140/560 */
	rows = two_rows(350, 350, 140, 560, &n);
	for (size_t i = 0; i < n; i++) {
		assert_true(rows[i].significant);
		assert_true(rows[i].p_adjusted < 1e-20);
		assert_true(rows[i].p_adjusted >= rows[i].p_value);
	}
	free(rows);
}

static void test_hot_diff__weights_scaled_to_samples(void **state)
{
	(void)state;
	/* 100 samples of 1 ms each, weights in ns: the same verdicts as the sample counts */
	struct hot_row br[] = { { (char *)"a", 50000000 }, { (char *)"b", 50000000 } };
	struct hot_row ar[] = { { (char *)"a", 20000000 }, { (char *)"b", 80000000 } };
	struct hot_table before = { br, 2 }, after = { ar, 2 };
	struct hot_diff_row *rows;
	size_t n;
	struct perr e = PERR_INIT;
	assert_int_equal(hot_diff(&before, 100000000, &after, 100000000, &rows, &n, &e), PLUMB_OK);
	uint64_t total[2] = { 100000000, 100000000 }, samples[2] = { 100, 100 };
	assert_int_equal(hot_diff_test(rows, n, total, samples, HOT_DIFF_ALPHA, &e), PLUMB_OK);
	double expect = hot_two_proportion_p(50, 100, 20, 100);
	for (size_t i = 0; i < n; i++)
		assert_true(fabs(rows[i].p_value - expect) < 1e-12);
	free(rows);
}

static struct hot_table table_of(const char *const *names, size_t n)
{
	struct hot_table t = { calloc(n, sizeof(struct hot_row)), n };
	for (size_t i = 0; i < n; i++) {
		t.rows[i].name = strdup(names[i]);
		t.rows[i].count = 10;
	}
	return t;
}

static void table_free(struct hot_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].name);
	free(t->rows);
}

static void test_hot_diff__unify_names(void **state)
{
	(void)state;
	/* perf script names functions alone; plumb's own profiles add the file or module and _[k] */
	const char *perf[] = { "burn", "spin", "schedule", "dup", "only_perf", "static_fn (a.c)" };
	const char *own[] = { "burn (targets/split.c)", "spin (libspin.so)", "schedule_[k]", "dup (x.c)", "dup (y.c)",
			      "static_fn (b.c)" };
	struct hot_table a = table_of(perf, 6), b = table_of(own, 6);
	assert_true(hot_diff_unify_names(&a, &b));
	assert_string_equal(a.rows[0].name, "burn (targets/split.c)");
	assert_string_equal(a.rows[1].name, "spin (libspin.so)");
	assert_string_equal(a.rows[2].name, "schedule_[k]");
	/* two rows of one function on a side: which one it is cannot be told */
	assert_string_equal(a.rows[3].name, "dup");
	assert_string_equal(a.rows[4].name, "only_perf");
	/* two known, different files are two functions */
	assert_string_equal(a.rows[5].name, "static_fn (a.c)");
	assert_string_equal(b.rows[5].name, "static_fn (b.c)");
	assert_string_equal(b.rows[0].name, "burn (targets/split.c)");
	table_free(&a);
	table_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hot_diff__two_proportion_matches_yates_chi_square),
		cmocka_unit_test(test_hot_diff__holm),
		cmocka_unit_test(test_hot_diff__noise_and_signal),
		cmocka_unit_test(test_hot_diff__weights_scaled_to_samples),
		cmocka_unit_test(test_hot_diff__unify_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
