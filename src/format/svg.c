/* svg.c — the FMT_SVG writer: a flame graph (src/render/flame.c) with the renderer's options from
 * fmt_write_opts.render, or its defaults. */
#include "format/format.h"

#include "render/flame.h"

enum plumb_err fmt_svg_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts, struct perr *e)
{
	struct flame_opts fo = { 0 };
	fo.min_width = -1;
	if (opts->render)
		fo = *(const struct flame_opts *)opts->render;
	if (opts->title)
		fo.title = opts->title;
	if (!opts->render)
		fo.label_flags = opts->label_flags;
	return flame_write_svg(p, out, &fo, e);
}
