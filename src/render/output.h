/* output.h — writes a profile to a file in any output kind, one layer above the format writers: the flame graph
 * (FMT_SVG) is drawn here by render/flame.c, every other kind goes through fmt_write_file (format/format.h).
 * Every command that writes a profile (record, convert, flame) calls render_write_file; format/ never calls up.
 *
 * Ownership: only reads the profile and the options; the caller owns them. */
#ifndef PLUMB_RENDER_OUTPUT_H
#define PLUMB_RENDER_OUTPUT_H

#include "base/err.h"
#include "format/format.h"
#include "profile/profile.h"
#include "render/flame.h"

/* Writes p atomically to path ("-" stdout) as `kind`. `wo` (may be NULL) holds the format writers' options;
 * `fo` (may be NULL) the flame graph's for FMT_SVG: NULL draws with the renderer's defaults and wo's label
 * flags. Errors as fmt_write_file / flame_write_svg (PLUMB_EINVAL for a kind nothing writes). */
enum plumb_err render_write_file(const struct profile *p, const char *path, enum fmt_kind kind,
				 const struct fmt_write_opts *wo, const struct flame_opts *fo, struct perr *e);

#endif
