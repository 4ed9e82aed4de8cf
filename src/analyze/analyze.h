/* analyze.h — hot tables (docs/design.md §6.2): leaf (self) and inclusive counts per function, the same rolled up by
 * source file, module or library, frame filters, thread selection, stage slicing, and diffs of two tables. The
 * result is the plumb.hot.v1 document model (struct hot_summary, format/hot_json.h).
 *
 * Ownership: hot_analyze() returns a summary the caller frees with hot_summary_free(); every string in it is
 * owned by the summary. Row names are redacted labels (they go to outputs as they are). */
#ifndef PLUMB_ANALYZE_ANALYZE_H
#define PLUMB_ANALYZE_ANALYZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/progress.h"
#include "base/sbuf.h"
#include "format/stages.h"
#include "profile/profile.h"
#include "profile/summary.h"

struct hot_opts {
	enum hot_group group_by;
	int module_depth;          /* components kept by --group-by module (default 2) */
	bool collapse_generics;    /* fold <...> so monomorphized copies are one row */
	const char *const *include; /* POSIX extended regexes on frame labels: keep frames matching any */
	int ninclude;
	const char *const *exclude; /* drop frames matching any */
	int nexclude;
	bool repo_only;            /* keep frames whose source file is under root */
	const char *root;          /* required with repo_only; also makes file/module keys repo-relative */
	const char *thread_re;     /* keep threads whose name (or "name (tid)") matches */
	int top_threads;           /* keep the N threads with the most samples (after thread_re); 0: all */
	unsigned label_flags;      /* enum label_flags for the labels filters see */
	/* called once per thing the tables cannot show as asked (e.g. --group-by library on a profile that names no
	 * library); may be NULL */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	struct progress *progress; /* the face's progress line (base/progress.h), told how far the tables are; NULL */
};
#define HOT_OPTS_INIT { HOT_GROUP_FUNCTION, 2, false, NULL, 0, NULL, 0, false, NULL, NULL, 0, 0, NULL, NULL, NULL }

/* Builds the summary of the whole profile. PLUMB_EINVAL for a bad regular expression (message names it). */
enum plumb_err hot_analyze(const struct profile *p, const struct hot_opts *o, struct hot_summary **out,
			   struct perr *e);

/* The same over a window of p's samples: `counts` (aggregated (stack, thread) weights of p's stacks and threads,
 * e.g. the last second's, borrowed) in place of p's own; threads are ranked by their weight in the window.
 * `plumb top` draws its live tables with it. */
enum plumb_err hot_analyze_counts(const struct profile *p, const struct hot_opts *o, const struct profile_count *counts,
				  size_t ncounts, struct hot_summary **out, struct perr *e);

/* Adds one slice per stage to s, slicing p's timeline by time relative to meta.clock_origin_ns. The profile
 * must have a timeline (PLUMB_EINVAL otherwise). */
enum plumb_err hot_analyze_stages(const struct profile *p, const struct hot_opts *o, const struct fmt_stage *stages,
				  size_t n, struct hot_summary *s, struct perr *e);

/* ---- diff -------------------------------------------------------------------------------------------- */

struct hot_diff_row {
	const char *name;          /* points into one of the input tables */
	uint64_t before, after;
	double before_share, after_share; /* percent of each side's total */
	double delta_points;       /* after_share - before_share */
	int64_t delta_count;
	/* hot_diff_test: is the change beyond what sampling alone would give? NAN / false until tested */
	double p_value;            /* two-sided, this row alone */
	double p_adjusted;         /* Holm-adjusted over every row compared */
	bool significant;          /* p_adjusted <= alpha */
};

/* Names one function alike on both sides when one side knows less of it: a row "f" (or "f_[k]") on one side and
 * "f (dir/file.c)" or "f (libx.so)_[k]" on the other, each the only row of that function on its side, both take
 * the fuller name — `perf script` text names the function alone where plumb's own profiles add its file. Rows
 * of two known, different files stay apart. False when out of memory. */
bool hot_diff_unify_names(struct hot_table *before, struct hot_table *after);

/* Rows for the union of names, sorted by |delta_points| (largest first), then |delta_count|, then name.
 * The caller frees *rows (names are not copied: keep the tables alive). */
enum plumb_err hot_diff(const struct hot_table *before, uint64_t before_total, const struct hot_table *after,
			uint64_t after_total, struct hot_diff_row **rows, size_t *n, struct perr *e);

/* The family-wise error rate `plumb diff` marks changes at unless told otherwise (docs/diff.md). */
#define HOT_DIFF_ALPHA 0.01

/* Two-sided p-value of the two-proportion z-test (pooled, with a continuity correction) that x1 of n1 and x2
 * of n2 samples come from one proportion. 1 when n1 or n2 is 0 or the proportions cannot differ. */
double hot_two_proportion_p(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2);

/* Holm's step-down correction of n p-values into adjusted[] (the k-th smallest times n - k + 1, never below an
 * earlier one, at most 1): an adjusted value <= alpha keeps the chance of any false mark among the n at most
 * alpha, whatever the dependence between them. */
enum plumb_err hot_holm(const double *p, double *adjusted, size_t n, struct perr *e);

/* Tests every row's change against sampling noise (docs/diff.md): the row's counts become sample counts
 * (count * samples / total on each side, exact when weights are samples), hot_two_proportion_p gives its
 * p-value, and Holm's step-down correction over all n rows gives p_adjusted; `significant` is p_adjusted <=
 * alpha. totals are the sides' totals in weight units, samples their numbers of samples. */
enum plumb_err hot_diff_test(struct hot_diff_row *rows, size_t n, const uint64_t total[2], const uint64_t samples[2],
			     double alpha, struct perr *e);

/* ---- generics ---------------------------------------------------------------------------------------- */

/* Appends name with every balanced <...> folded to "<...>" (operator< and -> are left alone). */
void hot_collapse_generics(struct sbuf *out, const char *name, size_t len);

/* ---- loading ------------------------------------------------------------------------------------------ */

struct hot_load_opts {
	const char *syms_path;     /* samply sidecar (--syms) */
	const char *stages_path;   /* slice by stages (--stages) */
	size_t top;                /* rows kept when printing; informational */
	const char *sample_index;  /* pprof input: the sample type to read (--sample-index) */
};

/* Reads PATH — any profile plumb reads, or a plumb.hot.v1 summary — into a summary built with `o` (a summary
 * is taken as it is). With stages_path the profile must carry sample times: PLUMB_EINVAL with a message that
 * says so otherwise. */
enum plumb_err hot_summary_from_file(const char *path, const struct hot_load_opts *lo, const struct hot_opts *o,
				     struct hot_summary **out, struct perr *e);

/* The git top level of the current directory (the nearest ancestor holding .git), malloc'd; NULL when none. */
char *hot_git_toplevel(void);

#endif
