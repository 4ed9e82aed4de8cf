/* hot_diff.c — the rows of `plumb diff`: two hot tables joined on row name, each row's share of its side's
 * total and the change in points and in count, biggest change first, and whether each change is beyond what
 * sampling alone would give (a two-proportion test, Holm-corrected: docs/diff.md). Names are borrowed from the
 * tables. */
#include "analyze/analyze.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"

static int diff_cmp(const void *a, const void *b)
{
	const struct hot_diff_row *x = a, *y = b;
	double dx = fabs(x->delta_points), dy = fabs(y->delta_points);
	if (fabs(dx - dy) > 1e-9)
		return dx > dy ? -1 : 1;
	uint64_t cx = (uint64_t)llabs(x->delta_count), cy = (uint64_t)llabs(y->delta_count);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The function of a row name: without its "_[k]"/"_[j]" suffix and its " (file or module)". */
static size_t bare_len(const char *name, bool *has_where)
{
	size_t n = strlen(name);
	if (n >= 4 && name[n - 4] == '_' && name[n - 3] == '[' && name[n - 1] == ']')
		n -= 4;
	*has_where = false;
	if (n && name[n - 1] == ')') {
		for (size_t i = n - 1; i > 0; i--)
			if (name[i] == '(' && name[i - 1] == ' ') {
				*has_where = true;
				return i - 1;
			}
	}
	return n;
}

struct bare_ent {
	const char *name;
	size_t len;
	bool where;
	int side;
	size_t idx;
};

static int bare_cmp(const void *a, const void *b)
{
	const struct bare_ent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->side != y->side ? x->side - y->side : (x->idx > y->idx) - (x->idx < y->idx);
}

bool hot_diff_unify_names(struct hot_table *before, struct hot_table *after)
{
	struct hot_table *t[2] = { before, after };
	size_t n = before->n + after->n;
	struct bare_ent *v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		return false;
	size_t k = 0;
	for (int side = 0; side < 2; side++)
		for (size_t i = 0; i < t[side]->n; i++) {
			struct bare_ent *b = &v[k++];
			b->name = t[side]->rows[i].name;
			b->len = bare_len(b->name, &b->where);
			b->side = side;
			b->idx = i;
		}
	qsort(v, n, sizeof *v, bare_cmp);
	bool ok = true;
	for (size_t i = 0; ok && i < n;) {
		size_t j = i;
		while (j < n && v[j].len == v[i].len && memcmp(v[j].name, v[i].name, v[i].len) == 0)
			j++;
		/* exactly one row on each side, their names differ and one of them has no file or module */
		if (j - i == 2 && v[i].side == 0 && v[i + 1].side == 1 && strcmp(v[i].name, v[i + 1].name) != 0 &&
		    (!v[i].where || !v[i + 1].where)) {
			struct bare_ent *poor = strlen(v[i].name) < strlen(v[i + 1].name) ? &v[i] : &v[i + 1];
			struct bare_ent *rich = poor == &v[i] ? &v[i + 1] : &v[i];
			char *copy = strdup(rich->name);
			if (!copy) {
				ok = false;
				break;
			}
			free(t[poor->side]->rows[poor->idx].name);
			t[poor->side]->rows[poor->idx].name = copy;
		}
		i = j;
	}
	free(v);
	return ok;
}

enum plumb_err hot_diff(const struct hot_table *before, uint64_t before_total, const struct hot_table *after,
			uint64_t after_total, struct hot_diff_row **rows_out, size_t *n_out, struct perr *e)
{
	size_t cap = before->n + after->n + 1;
	struct hot_diff_row *rows = calloc(cap, sizeof *rows);
	struct interner index = INTERNER_BORROW_INIT; /* row names -> rows; the tables' names outlive it */
	size_t n = 0;
	if (!rows)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (int side = 0; side < 2; side++) {
		const struct hot_table *t = side ? after : before;
		for (size_t i = 0; i < t->n; i++) {
			const char *name = t->rows[i].name;
			bool added;
			uint32_t idx = intern(&index, name, strlen(name), &added);
			if (idx == INTERN_NOMEM) {
				free(rows);
				interner_release(&index);
				return perr_set(e, PLUMB_ENOMEM, "out of memory");
			}
			if (added) {
				rows[idx].name = name;
				n++;
			}
			if (side)
				rows[idx].after += t->rows[i].count;
			else
				rows[idx].before += t->rows[i].count;
		}
	}
	interner_release(&index);
	for (size_t i = 0; i < n; i++) {
		struct hot_diff_row *r = &rows[i];
		r->before_share = before_total ? 100.0 * (double)r->before / (double)before_total : 0;
		r->after_share = after_total ? 100.0 * (double)r->after / (double)after_total : 0;
		r->delta_points = r->after_share - r->before_share;
		r->delta_count = (int64_t)r->after - (int64_t)r->before;
		r->p_value = r->p_adjusted = NAN;
		r->significant = false;
	}
	qsort(rows, n, sizeof *rows, diff_cmp);
	*rows_out = rows;
	*n_out = n;
	return PLUMB_OK;
}

/* ---- significance ------------------------------------------------------------------------------------ */

double hot_two_proportion_p(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2)
{
	if (!n1 || !n2)
		return 1.0;
	double a = (double)(x1 < n1 ? x1 : n1), b = (double)(x2 < n2 ? x2 : n2);
	double m1 = (double)n1, m2 = (double)n2;
	double pooled = (a + b) / (m1 + m2);
	double se = sqrt(pooled * (1 - pooled) * (1 / m1 + 1 / m2));
	/* Yates' continuity correction: counts are whole samples, and without it the normal approximation calls
	 * 0 against 5 of 1,000 significant where Fisher's exact test does not */
	double diff = fabs(a / m1 - b / m2) - 0.5 * (1 / m1 + 1 / m2);
	if (se <= 0 || diff <= 0)
		return 1.0;
	return erfc(diff / se / M_SQRT2);
}

/* Indexes by p-value, smallest first, ties by index (ctx: the p-values). */
static int by_p(const void *a, const void *b, void *ctx)
{
	const double *p = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (p[i] != p[j])
		return p[i] < p[j] ? -1 : 1;
	return i < j ? -1 : 1;
}

enum plumb_err hot_holm(const double *p, double *adjusted, size_t n, struct perr *e)
{
	if (!n)
		return PLUMB_OK;
	size_t *order = malloc(n * sizeof *order);
	if (!order)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof *order, by_p, (void *)p);
	/* the k-th smallest p-value (k from 0) is multiplied by n - k; adjusted values never decrease */
	double running = 0;
	for (size_t k = 0; k < n; k++) {
		double adj = p[order[k]] * (double)(n - k);
		if (adj > 1)
			adj = 1;
		if (adj < running)
			adj = running;
		running = adj;
		adjusted[order[k]] = adj;
	}
	free(order);
	return PLUMB_OK;
}

/* A count in weight units as a number of samples on a side with `samples` samples of weight `total`. */
static uint64_t as_samples(uint64_t count, uint64_t total, uint64_t samples)
{
	if (total == samples || !total)
		return count;
	return (uint64_t)llround((double)count * (double)samples / (double)total);
}

enum plumb_err hot_diff_test(struct hot_diff_row *rows, size_t n, const uint64_t total[2], const uint64_t samples[2],
			     double alpha, struct perr *e)
{
	if (!n)
		return PLUMB_OK;
	double *p = malloc(n * sizeof *p), *adj = malloc(n * sizeof *adj);
	enum plumb_err rc = PLUMB_OK;
	if (!p || !adj) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		p[i] = hot_two_proportion_p(as_samples(rows[i].before, total[0], samples[0]), samples[0],
					    as_samples(rows[i].after, total[1], samples[1]), samples[1]);
	if ((rc = hot_holm(p, adj, n, e)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		rows[i].p_value = p[i];
		rows[i].p_adjusted = adj[i];
		rows[i].significant = adj[i] <= alpha;
	}
out:
	free(p);
	free(adj);
	return rc;
}
