/* flame.h — the flame graph renderer (docs/design.md §6.4): a self-contained interactive SVG (hover for samples and
 * share, click to zoom, reset, search with the matched share), the kind flamegraph.pl draws. The same profile
 * and options always give the same bytes: colours come from a hash of the frame label.
 *
 * Ownership: the renderer only reads the profiles; the caller owns them and the options. */
#ifndef PLUMB_RENDER_FLAME_H
#define PLUMB_RENDER_FLAME_H

#include <stdbool.h>
#include <stdio.h>

#include "base/err.h"
#include "profile/profile.h"

struct flame_opts {
	const char *title;        /* NULL: "Flame Graph" ("Icicle Graph", "Flame Chart", "Differential ...") */
	unsigned width;           /* image width in pixels; 0: 1200 */
	double min_width;         /* boxes narrower than this many pixels are left out; < 0: 0.1 */
	bool reverse;             /* icicle: the root at the top, callees below */
	bool flamechart;          /* time order (the profile's timeline when it has one, else input order) */
	const char *colors;       /* palette name; NULL: "hot" (see flame_palette_valid) */
	const struct profile *before; /* differential: colour by the change from this profile, width by `after` */
	unsigned label_flags;     /* enum label_flags */
};

/* True when `name` is a palette the renderer knows; `list` (may be NULL) gets the names for a message. */
bool flame_palette_valid(const char *name, const char **list);

/* Writes the SVG of `after` to out. PLUMB_ENOMEM / PLUMB_EOUTPUT on failure. */
enum plumb_err flame_write_svg(const struct profile *after, FILE *out, const struct flame_opts *o, struct perr *e);

#endif
