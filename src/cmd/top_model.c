/* top_model.c — what one redraw of `plumb top` shows (top.h): the hot tables of the last window and of the
 * session (hot_analyze on the live views, so top's tables are `plumb hot`'s), each row with the share its table
 * is about and the other one (own and total), and with --all the processes and the CPU each used. Built when
 * the data or the view changes, not at every redraw. */
#include "cmd/top.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/intern.h"
#include "base/redact.h"

void top_tables_release(struct top_tables *tt)
{
	for (int k = 0; k < 2; k++) {
		hot_summary_free(tt->sum[k]);
		free(tt->rows[k]);
	}
	for (size_t i = 0; tt->names && i < tt->nprocs; i++)
		free(tt->names[i]);
	free(tt->names);
	free(tt->procs);
	memset(tt, 0, sizeof *tt);
}

const char *top_table_title(const struct top_view_opts *vo, char *buf, size_t n)
{
	bool grouped = vo->table == HOT_GROUPED_LEAF || vo->table == HOT_GROUPED_INCLUSIVE;
	bool leaf = vo->table == HOT_LEAF || vo->table == HOT_GROUPED_LEAF;
	if (grouped && vo->group_by != HOT_GROUP_FUNCTION)
		snprintf(buf, n, "%s by %s", leaf ? "leaf" : "inclusive", hot_group_name(vo->group_by));
	else
		snprintf(buf, n, "%s", leaf ? "leaf" : "inclusive");
	return buf;
}

static int row_by_name(const void *a, const void *b)
{
	return strcmp(((const struct top_row *)a)->name, ((const struct top_row *)b)->name);
}

/* The rows of summary s for the table vo shows: its share and the other table's share of each row. */
static enum plumb_err rows_of(const struct hot_summary *s, const struct top_view_opts *vo, struct top_row **out,
			      size_t *n, struct perr *e)
{
	enum hot_table_kind other = vo->table == HOT_LEAF		? HOT_INCLUSIVE
				    : vo->table == HOT_INCLUSIVE	? HOT_LEAF
				    : vo->table == HOT_GROUPED_LEAF ? HOT_GROUPED_INCLUSIVE
								    : HOT_GROUPED_LEAF;
	const struct hot_table *t = hot_summary_table(s, &s->all, vo->table);
	const struct hot_table *o = hot_summary_table(s, &s->all, other);
	size_t nt = t ? t->n : 0;
	double total = s->all.total ? (double)s->all.total : 1.0;
	struct interner index = INTERNER_BORROW_INIT;
	uint64_t *other_count = NULL;
	struct top_row *rows = calloc(nt + 1, sizeof *rows);
	bool ok = rows != NULL;
	/* the other table's counts by name */
	if (ok && o && o->n) {
		other_count = calloc(o->n, sizeof *other_count);
		ok = other_count != NULL;
		for (size_t i = 0; ok && i < o->n; i++) {
			uint32_t id = intern(&index, o->rows[i].name, strlen(o->rows[i].name), NULL);
			ok = id != INTERN_NOMEM;
			if (ok)
				other_count[id] = o->rows[i].count;
		}
	}
	for (size_t i = 0; ok && i < nt; i++) {
		uint32_t id = intern_find(&index, t->rows[i].name, strlen(t->rows[i].name));
		rows[i].name = t->rows[i].name;
		rows[i].primary = 100.0 * (double)t->rows[i].count / total;
		rows[i].secondary = id != IDTAB_NONE && other_count ? 100.0 * (double)other_count[id] / total : 0;
	}
	interner_release(&index);
	free(other_count);
	if (!ok) {
		free(rows);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	if (vo->sort == TOP_SORT_NAME)
		qsort(rows, nt, sizeof *rows, row_by_name);
	*out = rows;
	*n = nt;
	return PLUMB_OK;
}

/* By name, then by pid, so the order is the same at every redraw. */
static int proc_by_name(const void *a, const void *b)
{
	const struct top_proc_row *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->pid < y->pid ? -1 : x->pid > y->pid;
}

static enum plumb_err build_processes(struct top_tables *tt, struct live *l, const struct top_view_opts *vo,
				      struct perr *e)
{
	struct live_proc *procs = NULL;
	size_t n = 0;
	enum plumb_err rc = live_processes(l, &procs, &n, e);
	if (rc)
		return rc;
	tt->procs = calloc(n + 1, sizeof *tt->procs);
	tt->names = calloc(n + 1, sizeof *tt->names);
	if (!tt->procs || !tt->names) {
		free(procs);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	regex_t re;
	int bad = vo->proc_filter ? regcomp(&re, vo->proc_filter, REG_EXTENDED | REG_NOSUB) : 0;
	if (bad) {
		char why[256];
		regerror(bad, &re, why, sizeof why);
		free(procs);
		return perr_set(e, PLUMB_EINVAL, "the filter '%s' is not a valid regular expression: %s",
				vo->proc_filter, why);
	}
	double per_sample = (double)vo->interval_ns * 100.0;
	for (size_t i = 0; i < n; i++) {
		char *name = redact_dup(procs[i].name);
		if (vo->proc_filter && (!name || regexec(&re, name, 0, NULL, 0) != 0)) {
			free(name);
			continue;
		}
		tt->names[tt->nprocs] = name;
		struct top_proc_row *r = &tt->procs[tt->nprocs++];
		r->pid = procs[i].pid;
		r->name = name ? name : "?";
		r->window = vo->window_ns ? per_sample * (double)procs[i].window / (double)vo->window_ns : 0;
		r->session = vo->session_ns ? per_sample * (double)procs[i].session / (double)vo->session_ns : 0;
	}
	free(procs);
	if (vo->proc_filter)
		regfree(&re);
	if (vo->sort == TOP_SORT_NAME)
		qsort(tt->procs, tt->nprocs, sizeof *tt->procs, proc_by_name);
	return PLUMB_OK;
}

enum plumb_err top_tables_build(struct top_tables *tt, struct live *l, const struct top_view_opts *vo,
				struct perr *e)
{
	top_tables_release(tt);
	struct hot_opts ho = HOT_OPTS_INIT;
	ho.group_by = vo->group_by;
	ho.label_flags = vo->label_flags;
	const char *include[1] = { vo->filter };
	if (vo->filter && vo->filter[0]) {
		ho.include = include;
		ho.ninclude = 1;
	}
	enum plumb_err rc = PLUMB_OK;
	for (int k = 0; k < 2 && !rc && !(vo->processes && vo->processes_only); k++) {
		struct profile *view = NULL;
		rc = live_view(l, k == 0, vo->processes ? 0 : vo->pid, &view, e);
		if (!rc)
			rc = hot_analyze(view, &ho, &tt->sum[k], e);
		profile_free(view);
		if (!rc)
			rc = rows_of(tt->sum[k], vo, &tt->rows[k], &tt->nrows[k], e);
	}
	if (!rc && vo->processes)
		rc = build_processes(tt, l, vo, e);
	if (rc)
		top_tables_release(tt);
	return rc;
}
