/* summary.c — the hot summary model: names of groupings and tables, where a summary's profile came from, its
 * stage slices, table lookup and freeing. Every string in a summary is its own copy. */
#include "profile/summary.h"

#include <stdlib.h>
#include <string.h>

#include "base/redact.h"

static const char *const group_names[] = { "function", "file", "module", "library" };

bool hot_group_from_name(const char *name, enum hot_group *out)
{
	for (size_t i = 0; i < sizeof group_names / sizeof group_names[0]; i++)
		if (strcmp(name, group_names[i]) == 0) {
			*out = (enum hot_group)i;
			return true;
		}
	return false;
}

const char *hot_group_name(enum hot_group g)
{
	return (unsigned)g < 4 ? group_names[g] : "function";
}

static const char *const table_names[] = { "leaf", "inclusive", "grouped_leaf", "grouped_inclusive" };

bool hot_table_from_name(const char *name, enum hot_table_kind *out)
{
	char tmp[32];
	size_t n = strlen(name);
	if (n >= sizeof tmp)
		return false;
	for (size_t i = 0; i <= n; i++)
		tmp[i] = name[i] == '-' ? '_' : name[i];
	for (size_t i = 0; i < HOT_NTABLES; i++)
		if (strcmp(tmp, table_names[i]) == 0) {
			*out = (enum hot_table_kind)i;
			return true;
		}
	return false;
}

const char *hot_table_name(enum hot_table_kind k)
{
	return (unsigned)k < HOT_NTABLES ? table_names[k] : "leaf";
}

static void table_release(struct hot_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].name);
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}

static void slice_release(struct hot_slice *sl)
{
	free(sl->name);
	for (int k = 0; k < HOT_NTABLES; k++)
		table_release(&sl->tables[k]);
}

void hot_summary_free(struct hot_summary *s)
{
	if (!s)
		return;
	free(s->source);
	free(s->format);
	free(s->weight_unit);
	for (size_t i = 0; i < s->nthreads; i++)
		free(s->threads[i].name);
	free(s->threads);
	slice_release(&s->all);
	for (size_t i = 0; i < s->nstages; i++)
		slice_release(&s->stages[i]);
	free(s->stages);
	free(s);
}

const struct hot_table *hot_summary_table(const struct hot_summary *s, const struct hot_slice *slice,
					  enum hot_table_kind k)
{
	if (!slice)
		slice = &s->all;
	if ((k == HOT_GROUPED_LEAF || k == HOT_GROUPED_INCLUSIVE) && !s->has_grouped) {
		if (s->group_by != HOT_GROUP_FUNCTION)
			return NULL;
		k = k == HOT_GROUPED_LEAF ? HOT_LEAF : HOT_INCLUSIVE;
	}
	return &slice->tables[k];
}

struct hot_summary *hot_summary_new(void)
{
	return calloc(1, sizeof(struct hot_summary));
}

bool hot_summary_set_origin(struct hot_summary *s, const char *source, const char *format)
{
	char *src = NULL, *fmt = NULL;
	if (source && !(src = strcmp(source, "-") == 0 ? strdup("-") : redact_dup(source)))
		return false;
	if (format && !(fmt = strdup(format))) {
		free(src);
		return false;
	}
	if (source) {
		free(s->source);
		s->source = src;
	}
	if (format) {
		free(s->format);
		s->format = fmt;
	}
	return true;
}

bool hot_summary_alloc_stages(struct hot_summary *s, size_t n)
{
	if (s->stages)
		return false;
	s->stages = calloc(n + 1, sizeof *s->stages);
	s->nstages = 0;
	return s->stages != NULL;
}
