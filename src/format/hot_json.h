/* hot_json.h — the plumb.hot.v1 summary document (docs/hot-json.md): the reader and writer of the summary model
 * (profile/summary.h). `plumb hot --json` writes it, `plumb diff` reads it back in place of a raw profile. The
 * writer emits deterministic JSON; the reader refuses other schemas (PLUMB_EFORMAT). */
#ifndef PLUMB_FORMAT_HOT_JSON_H
#define PLUMB_FORMAT_HOT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/sbuf.h"

#define HOT_JSON_SCHEMA "plumb.hot.v1"

#include "profile/summary.h"

/* Appends the summary as one JSON document (with a trailing newline). `top` > 0 keeps that many rows per
 * table; 0 keeps every row. */
void fmt_hot_json_write(struct sbuf *out, const struct hot_summary *s, size_t top);

/* Parses a summary; the caller frees it with hot_summary_free(). */
enum plumb_err fmt_hot_json_read(const char *buf, size_t len, struct hot_summary **out, struct perr *e);

#endif
