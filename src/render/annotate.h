/* annotate.h — the views of an annotation (analyze/annotate.h, docs/design.md §6.8): a terminal view that fits a
 * width (80 columns and up) with the hottest lines and instructions marked, the plumb.annotate.v1 JSON document
 * (docs/annotate.schema.json), and a self-contained HTML page. Text from the profile, the sources and the
 * disassembler is untrusted: made safe for the terminal (render/term.h), escaped in JSON and HTML.
 *
 * Ownership: each appends to the caller's buffer (check its oom once). */
#ifndef PLUMB_RENDER_ANNOTATE_H
#define PLUMB_RENDER_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/annotate.h"
#include "base/sbuf.h"

#define RENDER_ANNOT_HOT 3 /* the lines (and instructions) marked hottest, per function */

void render_annot_text(struct sbuf *out, const struct annot_result *r, size_t width);
void render_annot_json(struct sbuf *out, const struct annot_result *r);
void render_annot_html(struct sbuf *out, const struct annot_result *r, const char *title);

#endif
