/* stages.c — collects the stage ranges a target wrote to PLUMB_STAGES (JSON lines with CLOCK_MONOTONIC
 * nanoseconds, from plumb.h) and hands them to the plumb.stages.v1 writer (format/stages.c) for
 * `plumb record --stages` (docs/design.md §9.2). Times become milliseconds from profile_start (the origin). */
#include "sample/stages.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/grow.h"
#include "base/json_tree.h"
#include "base/sbuf.h"
#include "format/stages.h"

static int stage_cmp(const void *a, const void *b)
{
	const struct fmt_stage *x = a, *y = b;
	if (x->start_ms != y->start_ms)
		return x->start_ms < y->start_ms ? -1 : 1;
	return x->end_ms < y->end_ms ? -1 : x->end_ms > y->end_ms;
}

static double ms_from(uint64_t t, uint64_t origin)
{
	return t >= origin ? (double)(t - origin) / 1e6 : -(double)(origin - t) / 1e6;
}

/* Appends the stage of one line to *v when it is a well-formed range that ended at or after the origin. */
static bool add_line(const char *line, size_t len, uint64_t origin_ns, struct fmt_stage **v, size_t *nv,
		     size_t *cap)
{
	json_t *o = jr_parse(line, len, JR_TREE_FIRST_VALUE, NULL);
	json_t *name = o ? json_object_get(o, "name") : NULL;
	json_t *js = o ? json_object_get(o, "start_ns") : NULL, *je = o ? json_object_get(o, "end_ns") : NULL;
	bool ok = true;
	if (json_is_string(name) && json_is_integer(js) && json_is_integer(je) && json_integer_value(js) >= 0 &&
	    json_integer_value(je) >= json_integer_value(js)) {
		uint64_t s = (uint64_t)json_integer_value(js), en = (uint64_t)json_integer_value(je);
		if (en >= origin_ns) {
			if (!ALLOC_GROW(*v, *nv + 1, *cap)) {
				ok = false;
			} else {
				struct fmt_stage *st = &(*v)[*nv];
				st->name = strdup(json_string_value(name));
				st->start_ms = s >= origin_ns ? ms_from(s, origin_ns) : 0.0;
				st->end_ms = ms_from(en, origin_ns);
				if (st->name)
					(*nv)++;
			}
		}
	}
	json_decref(o);
	return ok;
}

enum plumb_err stages_write(const char *lines_path, uint64_t origin_ns, uint64_t end_ns, const char *out_path,
			    struct perr *e)
{
	/* v[0] is the coarse "command" stage; the emitted ones follow, sorted by start */
	struct fmt_stage *v = NULL;
	size_t nv = 0, cap = 0;
	enum plumb_err rc = PLUMB_OK;
	FILE *f = lines_path ? fopen(lines_path, "re") : NULL;
	if (!f && lines_path && errno != ENOENT)
		return perr_set(e, PLUMB_EIO, "cannot read the stage lines %s: %s", lines_path, strerror(errno));
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	if (!ALLOC_GROW(v, 1, cap)) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory reading stages");
		goto out;
	}
	v[0] = (struct fmt_stage){ (char *)"command", 0.0, end_ns > origin_ns ? ms_from(end_ns, origin_ns) : 0.0 };
	nv = 1;
	while (f && (len = getline(&line, &lcap, f)) > 0) {
		if (!add_line(line, (size_t)len, origin_ns, &v, &nv, &cap)) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory reading stages");
			goto out;
		}
	}
	if (nv > 2)
		qsort(v + 1, nv - 1, sizeof *v, stage_cmp);
	struct sbuf sb = SBUF_INIT;
	fmt_stages_write(&sb, v, nv);
	rc = sbuf_done(&sb, e);
	if (!rc)
		rc = atomic_write_file(out_path, sb.buf, sb.len, e);
	sbuf_release(&sb);
out:
	for (size_t i = 1; i < nv; i++)
		free(v[i].name);
	free(v);
	free(line);
	if (f)
		fclose(f);
	return rc;
}
