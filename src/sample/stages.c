/* stages.c — turns the JSON lines a target wrote to PLUMB_STAGES into the plumb.stages.v1 file of
 * `plumb record --stages` (DESIGN §7). Times become milliseconds from profile_start (the origin). */
#include "sample/stages.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/grow.h"
#include "base/json_tree.h"
#include "base/sbuf.h"

struct stage {
	char *name;
	double start_ms, end_ms;
};

static int stage_cmp(const void *a, const void *b)
{
	const struct stage *x = a, *y = b;
	if (x->start_ms != y->start_ms)
		return x->start_ms < y->start_ms ? -1 : 1;
	return x->end_ms < y->end_ms ? -1 : x->end_ms > y->end_ms;
}

static double ms_from(uint64_t t, uint64_t origin)
{
	return t >= origin ? (double)(t - origin) / 1e6 : -(double)(origin - t) / 1e6;
}

enum plumb_err stages_write(const char *lines_path, uint64_t origin_ns, uint64_t end_ns, const char *out_path,
			    struct perr *e)
{
	struct stage *v = NULL;
	size_t nv = 0, cap = 0;
	enum plumb_err rc = PLUMB_OK;
	FILE *f = lines_path ? fopen(lines_path, "re") : NULL;
	if (!f && lines_path && errno != ENOENT)
		return perr_set(e, PLUMB_EIO, "cannot read the stage lines %s: %s", lines_path, strerror(errno));
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	while (f && (len = getline(&line, &lcap, f)) > 0) {
		json_t *o = jr_parse(line, (size_t)len, JR_TREE_FIRST_VALUE, NULL);
		json_t *name = o ? json_object_get(o, "name") : NULL;
		json_t *js = o ? json_object_get(o, "start_ns") : NULL, *je = o ? json_object_get(o, "end_ns") : NULL;
		if (json_is_string(name) && json_is_integer(js) && json_is_integer(je) &&
		    json_integer_value(js) >= 0 && json_integer_value(je) >= json_integer_value(js)) {
			uint64_t s = (uint64_t)json_integer_value(js), en = (uint64_t)json_integer_value(je);
			if (en >= origin_ns) {
				if (!ALLOC_GROW(v, nv + 1, cap)) {
					json_decref(o);
					rc = perr_set(e, PLUMB_ENOMEM, "out of memory reading stages");
					goto out;
				}
				v[nv].name = strdup(json_string_value(name));
				v[nv].start_ms = s >= origin_ns ? ms_from(s, origin_ns) : 0.0;
				v[nv].end_ms = ms_from(en, origin_ns);
				if (v[nv].name)
					nv++;
			}
		}
		json_decref(o);
	}
	if (nv > 1)
		qsort(v, nv, sizeof *v, stage_cmp);

	struct sbuf sb = SBUF_INIT;
	sbuf_addstr(&sb, "{\"schema\": \"plumb.stages.v1\", \"time_unit\": \"ms\", \"time_origin\": \"profile_start\", "
			 "\"stages\": [\n");
	sbuf_addf(&sb, "  {\"name\": \"command\", \"start_ms\": 0.0, \"end_ms\": %.3f}",
		  end_ns > origin_ns ? ms_from(end_ns, origin_ns) : 0.0);
	for (size_t i = 0; i < nv; i++) {
		sbuf_addstr(&sb, ",\n  {\"name\": ");
		sbuf_add_json_str(&sb, v[i].name, strlen(v[i].name));
		sbuf_addf(&sb, ", \"start_ms\": %.3f, \"end_ms\": %.3f}", v[i].start_ms, v[i].end_ms);
	}
	sbuf_addstr(&sb, "\n]}\n");
	rc = sbuf_done(&sb, e);
	if (!rc)
		rc = atomic_write_file(out_path, sb.buf, sb.len, e);
	sbuf_release(&sb);
out:
	for (size_t i = 0; i < nv; i++)
		free(v[i].name);
	free(v);
	free(line);
	if (f)
		fclose(f);
	return rc;
}
