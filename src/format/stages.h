/* stages.h — the plumb.stages.v1 document (docs/design.md §9.2), both directions: named time ranges in
 * milliseconds from the profile's start. `plumb record --stages` writes one (sample/stages.c collects the ranges),
 * `plumb hot --stages` reads one to slice samples by time (analyze/).
 *
 * Ownership: the reader returns an array the caller frees with fmt_stages_free(); every name in it is owned by
 * the array. The writer only borrows what it is given. */
#ifndef PLUMB_FORMAT_STAGES_H
#define PLUMB_FORMAT_STAGES_H

#include <stddef.h>

#include "base/err.h"
#include "base/sbuf.h"

#define STAGES_SCHEMA "plumb.stages.v1"

struct fmt_stage {
	char *name;
	double start_ms, end_ms; /* [start_ms, end_ms), ms from time_origin */
};

/* Appends the document (time_unit "ms", time_origin "profile_start"), one stage per line in the order given,
 * times with three decimals. Check out->oom (or sbuf_done) afterwards. */
void fmt_stages_write(struct sbuf *out, const struct fmt_stage *stages, size_t n);

/* Parses a document from buf[0..len); `name` names it in messages. A "schema" other than *stages.v1, a
 * time_unit other than "ms", no "stages" array, or a stage without a name, start_ms and end_ms >= start_ms is
 * PLUMB_EFORMAT. On success *stages (n + 1 entries, the last zeroed) and *n are set. */
enum plumb_err fmt_stages_read(const char *buf, size_t len, const char *name, struct fmt_stage **stages, size_t *n,
			       struct perr *e);

#define FMT_STAGES_MAX ((size_t)64 << 20) /* bytes of a stage file (docs/design.md §3.5) */
/* The same for the file at path, read under base/readall.h's input rule (at most FMT_STAGES_MAX bytes; a device
 * refused unopened, a FIFO waited on 5 s at most): its codes and messages when it cannot be read. */
enum plumb_err fmt_stages_load(const char *path, struct fmt_stage **stages, size_t *n, struct perr *e);

/* Frees what the reader returned (NULL is fine). */
void fmt_stages_free(struct fmt_stage *stages, size_t n);

#endif
