/* fmt_unit.h — what the readers' unit tests share: a document read from an exact-size copy (a reader must not
 * rely on a NUL after its input) and a profile's folded text. */
#ifndef PLUMB_TESTS_FMT_UNIT_H
#define PLUMB_TESTS_FMT_UNIT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "profile/profile.h"

static struct profile *unit_read_doc(const char *doc, enum fmt_kind kind, bool timeline, enum plumb_err want,
				     struct perr *e)
{
	struct fmt_read_opts o = { 0 };
	o.keep_timeline = timeline;
	struct profile *p = NULL;
	size_t n = strlen(doc);
	char *buf = malloc(n ? n : 1);
	memcpy(buf, doc, n);
	assert_int_equal(fmt_read_buf(buf, n, kind, &o, &p, e), want);
	free(buf);
	return p;
}

/* What a writer of the format module writes for p, as text; the caller frees it. */
typedef enum plumb_err (*unit_writer)(const struct profile *, FILE *, const struct fmt_write_opts *, struct perr *);
static char *unit_written(const struct profile *p, unit_writer write)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct perr e = PERR_INIT;
	struct fmt_write_opts wo = { 0 };
	assert_int_equal(write(p, f, &wo, &e), PLUMB_OK);
	fclose(f);
	return text;
}

/* The folded text of p, one "stack count" per line (outermost first); the caller frees it. */
static inline char *unit_folded(const struct profile *p)
{
	return unit_written(p, fmt_folded_write);
}

#endif
