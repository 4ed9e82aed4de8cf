/* test_bench_stats.c — percentiles, summaries and the Mann–Whitney U test against hand-checked references. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "bench/stats.h"

#define NEAR(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void test_bench_stats__percentile_type7(void **state)
{
	(void)state;
	const double v[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
	/* R: quantile(1:10, c(0, .5, .95, 1)) = 1, 5.5, 9.55, 10 (type 7: h = (n-1)p) */
	NEAR(bench_percentile(v, 10, 0), 1, 1e-12);
	NEAR(bench_percentile(v, 10, 0.5), 5.5, 1e-12);
	NEAR(bench_percentile(v, 10, 0.95), 9.55, 1e-12);
	NEAR(bench_percentile(v, 10, 1), 10, 1e-12);
	const double one[] = { 42 };
	NEAR(bench_percentile(one, 1, 0.95), 42, 1e-12);
	assert_true(isnan(bench_percentile(v, 0, 0.5)));
	/* R: quantile(c(10, 20, 40), .25) = 15 */
	const double three[] = { 10, 20, 40 };
	NEAR(bench_percentile(three, 3, 0.25), 15, 1e-12);
}

static void test_bench_stats__summary_and_cv(void **state)
{
	(void)state;
	/* unsorted on purpose; mean 5, sample sd of {2,4,4,4,5,5,7,9} = sqrt(32/7) = 2.13809 */
	const double v[] = { 9, 2, 4, 5, 4, 7, 4, 5 };
	struct bench_summary s;
	assert_true(bench_summarize(v, 8, &s));
	assert_int_equal(s.n, 8);
	NEAR(s.min, 2, 1e-12);
	NEAR(s.max, 9, 1e-12);
	NEAR(s.mean, 5, 1e-12);
	NEAR(s.p50, 4.5, 1e-12);
	NEAR(s.sd, sqrt(32.0 / 7.0), 1e-12);
	NEAR(s.cv, sqrt(32.0 / 7.0) / 5, 1e-12);
	/* p95 of the sorted {2,4,4,4,5,5,7,9}: h = 6.65 -> 7 + 0.65 * 2 = 8.3 */
	NEAR(s.p95, 8.3, 1e-12);
	assert_int_equal(v[0], 9); /* input untouched */
	const double single[] = { 3 };
	assert_true(bench_summarize(single, 1, &s));
	NEAR(s.cv, 0, 0);
	NEAR(s.sd, 0, 0);
}

static const double a123[] = { 1, 2, 3 }, a456[] = { 4, 5, 6 };
static const double a135[] = { 1, 3, 5 }, a246[] = { 2, 4, 6 };
static const double a1_4[] = { 1, 2, 3, 4 }, a5_8[] = { 5, 6, 7, 8 };
static const double a1_5[] = { 1, 2, 3, 4, 5 }, a6_10[] = { 6, 7, 8, 9, 10 };
static const double a1_10[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
static const double a11_20[] = { 11, 12, 13, 14, 15, 16, 17, 18, 19, 20 };
static const double males[] = { 19, 22, 16, 29, 24 }, females[] = { 20, 11, 17, 12 };
static const double tx[] = { 1, 2, 3, 4, 5 }, ty[] = { 3, 4, 5, 6, 7 };
static double odds60[60], evens60[60];

static const struct utest_case {
	const char *what;
	const double *x;
	size_t nx;
	const double *y;
	size_t ny;
	double u, p;
	int exact;
	const char *source;
} utest_cases[] = {
	/* Separated samples: U = 0 is the single most extreme of C(6,3) = 20 splits; two-sided p = 2/20.
	 * R: wilcox.test(1:3, 4:6) gives W = 0, p-value = 0.1. */
	{ "1:3 vs 4:6", a123, 3, a456, 3, 0, 0.1, 1, "2/C(6,3); R wilcox.test(1:3, 4:6)" },
	/* R: wilcox.test(1:4, 5:8): W = 0, p-value = 0.02857 = 2/C(8,4) = 2/70. */
	{ "1:4 vs 5:8", a1_4, 4, a5_8, 4, 0, 2.0 / 70, 1, "2/C(8,4); R wilcox.test(1:4, 5:8)" },
	/* R: wilcox.test(1:5, 6:10): W = 0, p-value = 0.007937 = 2/252. */
	{ "1:5 vs 6:10", a1_5, 5, a6_10, 5, 0, 2.0 / 252, 1, "2/C(10,5); R wilcox.test(1:5, 6:10)" },
	/* Interleaved: U = 3 (3>2, 5>2, 5>4). The null distribution of U for m = n = 3 has counts
	 * 1,1,2,3,3,3,3,2,1,1 over u = 0..9 (enumerating all 20 splits), so P(U <= 3) = 7/20 and p = 0.7.
	 * R: wilcox.test(c(1,3,5), c(2,4,6)) gives W = 3, p-value = 0.7. */
	{ "135 vs 246", a135, 3, a246, 3, 3, 0.7, 1, "enumeration of 20 splits; R" },
	/* scipy.stats.mannwhitneyu documentation example (males vs females, method='exact'):
	 * statistic 17.0, pvalue 0.1111111111111111 (= 2 * 7/126: P(U >= 17) = P(U <= 3) = 7/126 for 5,4). */
	{ "scipy males/females", males, 5, females, 4, 17, 2.0 * 7 / 126, 1, "scipy mannwhitneyu docs, exact" },
	/* R: wilcox.test(1:10, 11:20): W = 0, p-value = 1.083e-05 = 2/C(20,10) = 2/184756. */
	{ "1:10 vs 11:20", a1_10, 10, a11_20, 10, 0, 2.0 / 184756, 1, "2/C(20,10); R" },
	/* Ties force the normal approximation. Pooled midranks: 1, 2, 3.5 3.5, 5.5 5.5, 7.5 7.5, 9, 10;
	 * x's rank sum 19.5, so W = 19.5 - 15 = 4.5; mean 12.5; three tie groups of 2: sum(t^3-t) = 18;
	 * var = 25/12 * (11 - 18/90) = 22.5; z = (4.5 - 12.5 + 0.5)/sqrt(22.5) = -1.5811388;
	 * p = 2 * pnorm(-1.5811388) = 0.1138463. R: wilcox.test(1:5, 3:7) gives W = 4.5, p-value = 0.1138
	 * (with the warning "cannot compute exact p-value with ties"). */
	{ "1:5 vs 3:7 (ties)", tx, 5, ty, 5, 4.5, 0.11384629800665812, 0, "hand computation; R with ties" },
	/* n >= 50 uses the normal approximation without ties: odds 1..119 vs evens 2..120, U = 0+1+...+59 = 1770,
	 * mean 1800, var = 60*60/12 * 121 = 36300, z = (1770 - 1800 + 0.5)/sqrt(36300) = -0.1548348,
	 * p = 0.8769515 (R: wilcox.test(seq(1,119,2), seq(2,120,2)), exact = FALSE). */
	{ "odds vs evens, n = 60", odds60, 60, evens60, 60, 1770, 0.8769515201868247, 0, "hand computation" },
};

static void test_bench_stats__mann_whitney_references(void **state)
{
	(void)state;
	for (int i = 0; i < 60; i++) {
		odds60[i] = 2 * i + 1;
		evens60[i] = 2 * i + 2;
	}
	for (size_t i = 0; i < sizeof utest_cases / sizeof utest_cases[0]; i++) {
		const struct utest_case *c = &utest_cases[i];
		struct bench_utest t;
		assert_true(bench_mann_whitney(c->x, c->nx, c->y, c->ny, &t));
		if (fabs(t.u - c->u) > 1e-9 || fabs(t.p - c->p) > 1e-9 * (c->p > 1e-3 ? 1 : c->p * 1e3) + 1e-12 ||
		    (int)t.exact != c->exact)
			fail_msg("%s (%s): got U=%g p=%.12g exact=%d, want U=%g p=%.12g exact=%d", c->what, c->source, t.u,
				 t.p, t.exact, c->u, c->p, c->exact);
		/* swapping the samples mirrors U and keeps p */
		struct bench_utest s;
		assert_true(bench_mann_whitney(c->y, c->ny, c->x, c->nx, &s));
		NEAR(s.u, (double)(c->nx * c->ny) - c->u, 1e-9);
		NEAR(s.p, t.p, 1e-12);
	}
}

static void test_bench_stats__mann_whitney_edges(void **state)
{
	(void)state;
	struct bench_utest t;
	const double same[] = { 5, 5, 5 };
	assert_true(bench_mann_whitney(same, 3, same, 3, &t));
	NEAR(t.p, 1, 0);
	assert_false(bench_mann_whitney(same, 0, same, 3, &t));
	/* the smallest reachable p: 2 / C(nx + ny, nx) */
	NEAR(bench_utest_min_p(4, 4), 2.0 / 70, 1e-15);
	NEAR(bench_utest_min_p(3, 3), 0.1, 1e-15);
	assert_true(bench_utest_min_p(10, 10) < 1e-4);
}

/* The quickselect median against the sorted-array definition, on random data with and without ties. */
static void test_bench_stats__median_and_robust_sd(void **state)
{
	(void)state;
	uint64_t x = 12345;
	for (size_t n = 1; n <= 41; n++)
		for (int ties = 0; ties < 2; ties++) {
			double v[41], sorted[41];
			for (size_t i = 0; i < n; i++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				v[i] = ties ? (double)((x >> 33) % 4) : (double)(x >> 11) / 9007199254740992.0;
				sorted[i] = v[i];
			}
			for (size_t i = 1; i < n; i++) /* insertion sort: the reference */
				for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
					double t = sorted[j];
					sorted[j] = sorted[j - 1];
					sorted[j - 1] = t;
				}
			double want = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
			NEAR(bench_median_inplace(v, n), want, 0);
		}
	/* 1.4826 * MAD: of 1..9 the MAD is 2 (|x - 5| = 4 3 2 1 0 1 2 3 4); one wild value changes nothing */
	const double a[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 }, b[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9000 };
	double sd;
	assert_true(bench_robust_sd(a, 9, &sd));
	NEAR(sd, 2 * 1.4826, 1e-12);
	assert_true(bench_robust_sd(b, 9, &sd));
	NEAR(sd, 2 * 1.4826, 1e-12);
}

/* The bootstrap interval of the median's change: a clean +25% shift lies inside it and 0 outside; equal
 * samples give an interval around 0; the same seed gives the same interval. */
static void test_bench_stats__bootstrap_median_change(void **state)
{
	(void)state;
	double base[12], slow[12], lo, hi, lo2, hi2;
	for (int i = 0; i < 12; i++) {
		base[i] = 100 + (i % 4) - 1.5; /* 98.5 .. 101.5 */
		slow[i] = base[i] * 1.25;
	}
	assert_true(bench_bootstrap_median_change(base, 12, slow, 12, 0.95, 2000, 7, &lo, &hi));
	assert_true(lo > 20 && lo <= 25 && hi >= 25 && hi < 30);
	assert_true(bench_bootstrap_median_change(base, 12, base, 12, 0.95, 2000, 7, &lo, &hi));
	assert_true(lo < 0 && hi > 0 && lo > -5 && hi < 5);
	assert_true(bench_bootstrap_median_change(base, 12, base, 12, 0.95, 2000, 7, &lo2, &hi2));
	NEAR(lo, lo2, 0);
	NEAR(hi, hi2, 0);
	assert_true(bench_bootstrap_median_change(base, 1, slow, 12, 0.95, 2000, 7, &lo, &hi));
	assert_true(isnan(lo) && isnan(hi));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bench_stats__percentile_type7),
		cmocka_unit_test(test_bench_stats__summary_and_cv),
		cmocka_unit_test(test_bench_stats__mann_whitney_references),
		cmocka_unit_test(test_bench_stats__mann_whitney_edges),
		cmocka_unit_test(test_bench_stats__median_and_robust_sd),
		cmocka_unit_test(test_bench_stats__bootstrap_median_change),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
