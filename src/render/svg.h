/* svg.h — inside render/: the SVG document of a flame graph, from laid-out boxes: the frame rectangles with their
 * titles (samples, share, and the change in a differential graph), their text in a colour that reads on the fill,
 * and the script that zooms and searches. Boxes are already pruned and placed: x and w in weight units, depth in
 * rows from the base (or from the top when inverted). */
#ifndef PLUMB_RENDER_SVG_H
#define PLUMB_RENDER_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "render/flame.h"
#include "render/tree.h"

struct box {
	uint64_t x, w, wb;    /* position and width in weight units; wb: the before side's weight (differential) */
	uint32_t depth, label; /* label FTREE_NO_LABEL: the root ("all") */
};

struct boxes {
	struct box *v;
	size_t n, cap;
	uint32_t max_depth;
};

/* What the document says about its boxes. */
struct svg_doc {
	const struct flame_opts *o;
	const struct flabels *labels;
	const struct boxes *boxes;
	uint64_t total, total_b;  /* weight of after and of before */
	const char *unit;         /* what a weight counts: "samples", ... */
	const char *title, *subtitle;
};

/* Writes the whole SVG document to out (errors show in ferror(out)). */
void svg_write(FILE *out, const struct svg_doc *d);

#endif
