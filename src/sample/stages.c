/* stages.c — collects the stage ranges a target wrote to PLUMB_STAGES (JSON lines with CLOCK_MONOTONIC
 * nanoseconds, from plumb.h) and hands them to the plumb.stages.v1 writer (format/stages.c) for
 * `plumb record --stages` (docs/design.md §9.2). Times become milliseconds from profile_start (the origin). */
#include "sample/stages.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/atomic.h"
#include "os/fs.h"
#include "base/grow.h"
#include "base/json_tree.h"
#include "base/lines.h"
#include "base/redact.h"
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

/* What add_line works on. */
struct stage_lines {
	uint64_t origin_ns;
	struct fmt_stage *v;
	size_t n, cap;
	bool oom;
};

/* Appends the stage of one line when it is a well-formed range that ended at or after the origin (and there is
 * room under STAGES_MAX); false (stop) when out of memory. */
static bool add_line(void *ctx, const char *line, size_t len)
{
	struct stage_lines *sl = ctx;
	if (sl->n >= STAGES_MAX)
		return true;
	json_t *o = jr_parse(line, len, JR_TREE_FIRST_VALUE, NULL);
	json_t *name = o ? json_object_get(o, "name") : NULL;
	json_t *js = o ? json_object_get(o, "start_ns") : NULL, *je = o ? json_object_get(o, "end_ns") : NULL;
	if (json_is_string(name) && json_is_integer(js) && json_is_integer(je) && json_integer_value(js) >= 0 &&
	    json_integer_value(je) >= json_integer_value(js)) {
		uint64_t s = (uint64_t)json_integer_value(js), en = (uint64_t)json_integer_value(je);
		if (en >= sl->origin_ns) {
			if (!ALLOC_GROW(sl->v, sl->n + 1, sl->cap)) {
				sl->oom = true;
			} else {
				struct fmt_stage *st = &sl->v[sl->n];
				st->name = redact_dup(json_string_value(name)); /* a stage name is the program's text (§3.6) */
				st->start_ms = s >= sl->origin_ns ? ms_from(s, sl->origin_ns) : 0.0;
				st->end_ms = ms_from(en, sl->origin_ns);
				if (st->name)
					sl->n++;
				else
					sl->oom = true;
			}
		}
	}
	json_decref(o);
	return !sl->oom;
}

/* Opens the stage lines the target wrote: plumb's own scratch file, reopened by path under the trust rule (the
 * target could have replaced it with a link or a FIFO). -1 with errno ENOENT when there is none. */
static int open_lines(const char *path, struct perr *e)
{
	struct perr fe = PERR_INIT;
	int fd = fs_open_trusted(AT_FDCWD, path, geteuid(), NULL, &fe);
	if (fd < 0 && fe.code == PLUMB_ENOENT)
		errno = ENOENT;
	else if (fd < 0)
		perr_set(e, PLUMB_EIO, "the stage lines: %s", fe.msg);
	return fd;
}

enum plumb_err stages_write(const char *lines_path, uint64_t origin_ns, uint64_t end_ns, const char *out_path,
			    struct perr *e)
{
	/* v[0] is the coarse "command" stage; the emitted ones follow, sorted by start */
	struct stage_lines sl = { origin_ns, NULL, 0, 0, false };
	enum plumb_err rc = PLUMB_OK;
	int fd = -1;
	if (lines_path && (fd = open_lines(lines_path, e)) < 0 && errno != ENOENT)
		return e->code;
	if (!ALLOC_GROW(sl.v, 1, sl.cap)) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory reading stages");
		goto out;
	}
	sl.v[0] = (struct fmt_stage){ (char *)"command", 0.0, end_ns > origin_ns ? ms_from(end_ns, origin_ns) : 0.0 };
	sl.n = 1;
	struct lines_stats st;
	int err = fd >= 0 ? lines_read_fd(fd, STAGES_LINE_MAX, STAGES_FILE_MAX, add_line, &sl, &st) : 0;
	if (err == ENOMEM || sl.oom) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory reading stages");
		goto out;
	}
	if (err) {
		rc = perr_set(e, PLUMB_EIO, "cannot read the stage lines %s: %s", lines_path, strerror(err));
		goto out;
	}
	if (sl.n > 2)
		qsort(sl.v + 1, sl.n - 1, sizeof *sl.v, stage_cmp);
	struct sbuf sb = SBUF_INIT;
	fmt_stages_write(&sb, sl.v, sl.n);
	rc = sbuf_done(&sb, e);
	if (!rc)
		rc = atomic_write_file(out_path, sb.buf, sb.len, e);
	sbuf_release(&sb);
out:
	for (size_t i = 1; i < sl.n; i++)
		free(sl.v[i].name);
	free(sl.v);
	if (fd >= 0)
		close(fd);
	return rc;
}
