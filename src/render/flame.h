/* flame.h — the flame graph renderer (docs/design.md §6.4): a self-contained interactive SVG (hover for samples and
 * share, click to zoom, reset, search with the matched share), the kind flamegraph.pl draws, with its option
 * names and meanings: --inverted draws an icicle, --reverse merges reversed stacks from the leaf (the callers'
 * view), --flamechart keeps time order. The same profile and options always give the same bytes: colours come
 * from a hash of the frame label, and every text colour reads at FLAME_MIN_CONTRAST against its fill.
 *
 * Ownership: the renderer only reads the profiles; the caller owns them and the options. */
#ifndef PLUMB_RENDER_FLAME_H
#define PLUMB_RENDER_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/err.h"
#include "profile/profile.h"

struct flame_opts {
	const char *title;        /* NULL: "Flame Graph" ("Icicle Graph", "Flame Chart", "Differential ...") */
	unsigned width;           /* image width in pixels; 0: 1200 */
	double min_width;         /* boxes narrower than this many pixels are left out; < 0: 0.1 */
	bool inverted;            /* icicle: the root at the top, callees below */
	bool reverse;             /* stacks reversed, merged from the leaf: each leaf at the base, its callers above */
	bool flamechart;          /* time order (the profile's timeline when it has one, else input order) */
	const char *colors;       /* palette name; NULL: "hot" (see flame_palette_valid) */
	const struct profile *before; /* differential: colour by the change from this profile, width by `after` */
	unsigned label_flags;     /* enum label_flags */
	struct progress *progress; /* the face's progress line (base/progress.h), told how far the drawing is; NULL */
	/* flame --annotate-dir (docs/design.md §6.8): the page annotating a box's function (its label, as drawn), or
	 * NULL when it has none; a shift-click on the box opens it. NULL: no links. */
	const char *(*annotate_link)(void *ctx, const char *label, size_t len);
	void *annotate_ctx;
};

/* True when `name` is a palette the renderer knows; `list` (may be NULL) gets the names for a message. */
bool flame_palette_valid(const char *name, const char **list);

/* Writes the SVG of `after` to out. PLUMB_EINVAL for --reverse with --flamechart (a time order has no merged
 * leaves), PLUMB_ENOMEM / PLUMB_EOUTPUT on failure. */
enum plumb_err flame_write_svg(const struct profile *after, FILE *out, const struct flame_opts *o, struct perr *e);

/* ---- colours (render/colour.c) ----------------------------------------------------------------------- */

#define FLAME_MIN_CONTRAST 4.5 /* WCAG AA for normal text */

/* The fill of base palette `pal` (hot, mem, io, wakeup, chain, red, green, blue, aqua, yellow, purple, orange)
 * at the three hash fractions v1, v2, v3 in [0, 1): the whole range a palette can produce. */
void flame_palette_rgb(const char *pal, double v1, double v2, double v3, int rgb[3]);
/* The fill of a frame: palette `pal` (perl, java and js pick a base palette by kind and name) at the hash of
 * its label. */
void flame_frame_rgb(const char *pal, const char *label, size_t n, enum frame_kind kind, int rgb[3]);
/* The differential fill for a change scaled to [-1, 1] (1: the largest growth drawn): red for growth, blue for
 * a shrink, fading to pale with the size of the change; grey for none. */
void flame_diff_rgb(double change, int rgb[3]);
/* The WCAG 2 contrast ratio of two sRGB colours (1 to 21). */
double flame_contrast(const int a[3], const int b[3]);
/* Whether text on `fill` is white (else black): black unless it reads below FLAME_MIN_CONTRAST, where white
 * reads above it. */
bool flame_text_white(const int fill[3]);

#endif
