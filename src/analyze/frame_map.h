/* frame_map.h — inside analyze/: every frame of a profile mapped once to its function row and its group row (or
 * to "filtered out"), so the tables are counted by walking stacks with no per-sample string work. Also the
 * regular-expression lists the filters use.
 *
 * Ownership: the map owns its arrays and row names; hot_frame_map_release() frees them (also after a failed
 * build, and on a zeroed map). */
#ifndef PLUMB_ANALYZE_FRAME_MAP_H
#define PLUMB_ANALYZE_FRAME_MAP_H

#include <regex.h>
#include <stdint.h>

#include "analyze/analyze.h"
#include "base/intern.h"

#define HOT_ROW_NONE UINT32_MAX /* a frame the filters dropped */

struct hot_frame_map {
	uint32_t *func_row;            /* per frame id: the row in funcs, or HOT_ROW_NONE */
	uint32_t *group_row;           /* per frame id: the row in groups (in funcs when grouping by function) */
	struct interner funcs, groups; /* row names, redacted; groups is empty when grouping by function */
	size_t user_frames;            /* kept frames that are not the kernel's */
	size_t user_frames_in_library; /* of those, the ones whose module (ELF object) is known */
};

/* Maps every frame of p under o's filters and grouping. PLUMB_EINVAL for a bad --include/--exclude. */
enum plumb_err hot_frame_map_build(const struct profile *p, const struct hot_opts *o, struct hot_frame_map *fm,
				   struct perr *e);
void hot_frame_map_release(struct hot_frame_map *fm);

/* Compiles n POSIX extended expressions (no subexpressions) into *out (NULL when n is 0). On a bad one,
 * PLUMB_EINVAL: "WHAT 'RE' is not a valid regular expression: ...". Free with hot_regex_free(). */
enum plumb_err hot_regex_compile(const char *const *res, int n, regex_t **out, const char *what, struct perr *e);
void hot_regex_free(regex_t *r, int n);

#endif
