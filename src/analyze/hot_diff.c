/* hot_diff.c — the rows of `plumb diff`: two hot tables joined on row name, each row's share of its side's
 * total and the change in points and in count, biggest change first. Names are borrowed from the tables. */
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
	}
	qsort(rows, n, sizeof *rows, diff_cmp);
	*rows_out = rows;
	*n_out = n;
	return PLUMB_OK;
}
