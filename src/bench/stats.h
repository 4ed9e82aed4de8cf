/* stats.h — the statistics plumb bench reports and tests with: percentiles, mean, coefficient of variation,
 * and the two-sided Mann–Whitney U test (exact null distribution for small samples without ties, normal
 * approximation with tie and continuity correction otherwise, as R's wilcox.test does). Pure functions. */
#ifndef PLUMB_BENCH_STATS_H
#define PLUMB_BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* The p-th quantile (p in [0,1]) of n ascending values by linear interpolation between closest ranks
 * (R's type 7, numpy's default). NAN when n == 0. */
double bench_percentile(const double *sorted, size_t n, double p);

struct bench_summary {
	size_t n;
	double min, p50, p95, max, mean;
	double sd;  /* sample standard deviation (n - 1); 0 when n < 2 */
	double cv;  /* sd / |mean|; 0 when n < 2 or mean == 0 */
};

/* Summarizes n values (not modified; a sorted copy is made). Returns false when out of memory. */
bool bench_summarize(const double *values, size_t n, struct bench_summary *out);

struct bench_utest {
	double u;      /* U of x: pairs with x > y, plus half the tied pairs (R's W for wilcox.test(x, y)) */
	double p;      /* two-sided p-value */
	double z;      /* the normal deviate when !exact, else 0 */
	bool exact;    /* p from the exact null distribution */
	bool ties;     /* the pooled sample has ties */
};

/* The largest sample sizes for which the exact distribution is used (both sides below it, no ties). */
#define BENCH_UTEST_EXACT_MAX 50

/* Two-sided Mann–Whitney U test of x against y. Returns false when either side is empty or out of memory. */
bool bench_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct bench_utest *out);

/* The smallest two-sided p-value the test can reach with these sample sizes (2 / C(nx+ny, nx)): when it is
 * above the significance level, no difference can be shown and a comparison is inconclusive. */
double bench_utest_min_p(size_t nx, size_t ny);

/* The median of n values, reordering them (quickselect: O(n)). NAN when n == 0. */
double bench_median_inplace(double *v, size_t n);

/* The robust spread of n values: 1.4826 * the median absolute deviation (the standard deviation for normal
 * data, untouched by a few outliers). 0 when n < 2. Returns false when out of memory. */
bool bench_robust_sd(const double *v, size_t n, double *out);

/* A percentile bootstrap confidence interval (level `conf`, e.g. 0.95) of the change of the median from x to y in
 * percent of x's median: resamples both sides with replacement `rounds` times from a generator seeded by `seed`
 * (so a comparison reads the same every time). *lo and *hi NAN when a side has fewer than 2 values or its
 * median is 0. Returns false when out of memory. */
bool bench_bootstrap_median_change(const double *x, size_t nx, const double *y, size_t ny, double conf, size_t rounds,
				   unsigned long long seed, double *lo, double *hi);

#endif
