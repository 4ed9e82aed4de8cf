/* stats.c — percentiles, summaries and the Mann–Whitney U test. The exact null distribution of U is the
 * coefficient list of the Gaussian binomial [m+n choose m]_q, built one factor at a time (Harding 1984):
 * multiply by (1 - q^(n+i)), divide by (1 - q^i); only the lower half is read, so no cancellation matters. */
#include "bench/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_percentile(const double *sorted, size_t n, double p)
{
	if (n == 0)
		return NAN;
	if (p <= 0)
		return sorted[0];
	if (p >= 1)
		return sorted[n - 1];
	double h = (double)(n - 1) * p;
	size_t lo = (size_t)floor(h);
	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (h - (double)lo) * (sorted[lo + 1] - sorted[lo]);
}

bool bench_summarize(const double *values, size_t n, struct bench_summary *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (n == 0) {
		out->min = out->p50 = out->p95 = out->max = out->mean = NAN;
		return true;
	}
	double *s = malloc(n * sizeof *s);
	if (!s)
		return false;
	memcpy(s, values, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	out->min = s[0];
	out->max = s[n - 1];
	out->p50 = bench_percentile(s, n, 0.50);
	out->p95 = bench_percentile(s, n, 0.95);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->mean = sum / (double)n;
	if (n >= 2) {
		double ss = 0;
		for (size_t i = 0; i < n; i++)
			ss += (s[i] - out->mean) * (s[i] - out->mean);
		out->sd = sqrt(ss / (double)(n - 1));
		out->cv = out->mean != 0 ? out->sd / fabs(out->mean) : 0;
	}
	free(s);
	return true;
}

/* P(U <= u) under the null hypothesis for sample sizes m and n (no ties). */
static bool exact_cdf(size_t m, size_t n, double u, double *cdf)
{
	size_t deg = m * n;
	double *c = calloc(deg + 1, sizeof *c);
	if (!c)
		return false;
	c[0] = 1; /* [n choose 0]_q = 1 */
	size_t cur = 0; /* current degree: i * n after step i */
	for (size_t i = 1; i <= m; i++) {
		size_t k = n + i;
		size_t nd = cur + n;
		/* multiply by (1 - q^k): high to low so c[j - k] is still the old value */
		for (size_t j = nd; j >= k; j--) {
			c[j] -= c[j - k];
			if (j == k)
				break;
		}
		/* divide by (1 - q^i): a running sum with stride i */
		for (size_t j = i; j <= nd; j++)
			c[j] += c[j - i];
		cur = nd;
	}
	double total = 0, below = 0;
	/* total = C(m+n, m), computed in floating point, exact enough for a ratio */
	total = 1;
	for (size_t i = 1; i <= m; i++)
		total = total * (double)(n + i) / (double)i;
	for (size_t j = 0; j <= deg && (double)j <= u + 1e-9; j++)
		below += c[j];
	free(c);
	*cdf = below / total;
	return true;
}

double bench_utest_min_p(size_t nx, size_t ny)
{
	if (nx == 0 || ny == 0)
		return 1;
	double total = 1;
	for (size_t i = 1; i <= nx; i++)
		total = total * (double)(ny + i) / (double)i;
	double p = 2 / total;
	return p > 1 ? 1 : p;
}

struct ranked {
	double v;
	int side; /* 0: x, 1: y */
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

bool bench_mann_whitney(const double *x, size_t nx, const double *y, size_t ny, struct bench_utest *out)
{
	memset(out, 0, sizeof *out);
	if (nx == 0 || ny == 0)
		return false;
	size_t N = nx + ny;
	struct ranked *r = malloc(N * sizeof *r);
	if (!r)
		return false;
	for (size_t i = 0; i < nx; i++)
		r[i] = (struct ranked){ x[i], 0 };
	for (size_t i = 0; i < ny; i++)
		r[nx + i] = (struct ranked){ y[i], 1 };
	qsort(r, N, sizeof *r, cmp_ranked);
	/* midranks; rank sum of x; tie term sum(t^3 - t) */
	double rank_sum_x = 0, tie_term = 0;
	for (size_t i = 0; i < N;) {
		size_t j = i;
		while (j + 1 < N && r[j + 1].v == r[i].v)
			j++;
		double t = (double)(j - i + 1);
		double mid = ((double)i + (double)j) / 2 + 1;
		for (size_t k = i; k <= j; k++)
			if (r[k].side == 0)
				rank_sum_x += mid;
		if (t > 1)
			tie_term += t * t * t - t;
		i = j + 1;
	}
	free(r);
	double m = (double)nx, n = (double)ny;
	out->u = rank_sum_x - m * (m + 1) / 2;
	out->ties = tie_term > 0;
	double mean = m * n / 2;
	if (!out->ties && nx < BENCH_UTEST_EXACT_MAX && ny < BENCH_UTEST_EXACT_MAX) {
		/* the distribution is symmetric about mn/2: read the nearer tail */
		double tail_u = out->u <= mean ? out->u : m * n - out->u;
		double cdf;
		if (!exact_cdf(nx, ny, tail_u, &cdf))
			return false;
		out->exact = true;
		out->p = 2 * cdf;
	} else {
		double var = m * n / 12 * ((m + n + 1) - tie_term / ((m + n) * (m + n - 1)));
		if (var <= 0) { /* every value equal: no evidence of a difference */
			out->p = 1;
			return true;
		}
		double d = out->u - mean;
		double corr = d > 0 ? 0.5 : d < 0 ? -0.5 : 0;
		out->z = (d - corr) / sqrt(var);
		out->p = erfc(fabs(out->z) / sqrt(2.0)); /* 2 * P(Z > |z|) */
	}
	if (out->p > 1)
		out->p = 1;
	return true;
}

/* Puts the k-th smallest of v[0..n) at v[k], smaller or equal ones before it and larger or equal ones after
 * (Hoare's selection with a three-way partition around the middle element, so ties cost nothing). */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n; /* the range [lo, hi) holds position k */
	while (hi - lo > 1) {
		double pivot = v[lo + (hi - lo) / 2], t;
		size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < pivot, [lt,i) == pivot, [gt,hi) > pivot */
		while (i < gt) {
			if (v[i] < pivot) {
				t = v[i];
				v[i++] = v[lt];
				v[lt++] = t;
			} else if (v[i] > pivot) {
				t = v[i];
				v[i] = v[--gt];
				v[gt] = t;
			} else {
				i++;
			}
		}
		if (k < lt)
			hi = lt;
		else if (k >= gt)
			lo = gt;
		else
			return;
	}
}

double bench_median_inplace(double *v, size_t n)
{
	if (n == 0)
		return NAN;
	size_t k = (n - 1) / 2;
	select_kth(v, n, k);
	double m = v[k];
	if (n % 2)
		return m;
	double next = v[k + 1]; /* the upper middle: the smallest of those after k */
	for (size_t i = k + 2; i < n; i++)
		if (v[i] < next)
			next = v[i];
	return (m + next) / 2;
}

bool bench_robust_sd(const double *v, size_t n, double *out)
{
	*out = 0;
	if (n < 2)
		return true;
	double *d = malloc(n * sizeof *d);
	if (!d)
		return false;
	memcpy(d, v, n * sizeof *d);
	double med = bench_median_inplace(d, n);
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(v[i] - med);
	*out = 1.4826 * bench_median_inplace(d, n);
	free(d);
	return true;
}

static unsigned long long boot_next(unsigned long long *state)
{
	unsigned long long z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

bool bench_bootstrap_median_change(const double *x, size_t nx, const double *y, size_t ny, double conf, size_t rounds,
				   unsigned long long seed, double *lo, double *hi)
{
	*lo = *hi = NAN;
	if (nx < 2 || ny < 2 || rounds < 10)
		return true;
	double *bx = malloc(nx * sizeof *bx), *by = malloc(ny * sizeof *by), *ch = malloc(rounds * sizeof *ch);
	if (!bx || !by || !ch) {
		free(bx);
		free(by);
		free(ch);
		return false;
	}
	unsigned long long st = seed;
	size_t k = 0;
	for (size_t r = 0; r < rounds; r++) {
		for (size_t i = 0; i < nx; i++)
			bx[i] = x[boot_next(&st) % nx];
		for (size_t i = 0; i < ny; i++)
			by[i] = y[boot_next(&st) % ny];
		double mx = bench_median_inplace(bx, nx), my = bench_median_inplace(by, ny);
		if (mx != 0)
			ch[k++] = (my - mx) / fabs(mx) * 100;
	}
	if (k >= 10) {
		qsort(ch, k, sizeof *ch, cmp_double);
		*lo = bench_percentile(ch, k, (1 - conf) / 2);
		*hi = bench_percentile(ch, k, 1 - (1 - conf) / 2);
	}
	free(bx);
	free(by);
	free(ch);
	return true;
}
