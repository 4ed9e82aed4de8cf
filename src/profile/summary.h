/* summary.h — the hot summary model (docs/hot-json.md): what `plumb hot` computes from a profile (analyze/
 * makes it), what plumb.hot.v1 documents hold (format/hot_json.h reads and writes it) and what `plumb diff`
 * compares: tables of rows per slice (the whole profile and each stage), the threads, and where the profile
 * came from. Its names keep the hot_ prefix of the document they describe.
 *
 * Ownership: a summary owns every string and array in it; hot_summary_free() releases it all. */
#ifndef PLUMB_PROFILE_SUMMARY_H
#define PLUMB_PROFILE_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How the grouped tables roll frames up. */
enum hot_group { HOT_GROUP_FUNCTION = 0, HOT_GROUP_FILE, HOT_GROUP_MODULE, HOT_GROUP_LIBRARY };

/* "function", "file", "module", "library"; returns false for anything else. */
bool hot_group_from_name(const char *name, enum hot_group *out);
const char *hot_group_name(enum hot_group g);

struct hot_row {
	char *name;
	uint64_t count;
};

/* Rows sorted by count (largest first), then by name. */
struct hot_table {
	struct hot_row *rows;
	size_t n;
};

enum hot_table_kind { HOT_LEAF = 0, HOT_INCLUSIVE, HOT_GROUPED_LEAF, HOT_GROUPED_INCLUSIVE, HOT_NTABLES };
/* "leaf", "inclusive", "grouped-leaf", "grouped-inclusive" (underscores accepted). */
bool hot_table_from_name(const char *name, enum hot_table_kind *out);
const char *hot_table_name(enum hot_table_kind k); /* JSON key: "leaf", ..., "grouped_inclusive" */

/* One slice of samples: the whole profile, or one stage. `total` is the weight of every sample of the
 * selected threads in the slice, whether or not a frame passed the filters (shares are of this total). A
 * sample's leaf is its innermost frame that passes the filters; inclusive counts each row once per sample. */
struct hot_slice {
	char *name;              /* stage name; NULL for the whole profile */
	double start_ms, end_ms; /* stage range */
	uint64_t total;
	uint64_t samples;        /* the samples `total` weighs (equal to it when the unit is samples; 0: unknown) */
	uint64_t attributed;     /* weight of samples with at least one frame that passed the filters */
	struct hot_table tables[HOT_NTABLES];
};

struct hot_thread_row {
	char *name;
	uint32_t pid, tid;
	uint64_t count;
};

struct hot_summary {
	char *source;      /* the profile's path (redacted), may be NULL */
	char *format;      /* format it was read from */
	char *weight_unit; /* "samples", ... */
	uint64_t interval_ns; /* the sampling period when known, else 0 */
	enum hot_group group_by;
	int module_depth;
	bool has_grouped;  /* grouped tables present (always for a fresh analysis) */
	struct hot_thread_row *threads; /* selected threads, most samples first */
	size_t nthreads;
	struct hot_slice all;
	struct hot_slice *stages;
	size_t nstages;
};

/* A new, empty summary (NULL when out of memory); hot_summary_free() releases it and all it holds (NULL is
 * fine). */
struct hot_summary *hot_summary_new(void);
void hot_summary_free(struct hot_summary *s);

/* Says where the summary's profile came from: source, a path shown redacted (base/redact.h; "-" as is), and
 * format, the name of the format it was read from or saved as. A NULL argument leaves that field alone. False
 * when out of memory (the fields are unchanged then). */
bool hot_summary_set_origin(struct hot_summary *s, const char *source, const char *format);

/* Room for n stage slices (zeroed, nstages 0: the caller fills them in order and counts them). False when out
 * of memory or when the summary has stages already. */
bool hot_summary_alloc_stages(struct hot_summary *s, size_t n);

/* The table of a summary; grouped tables fall back to the function tables when the summary was grouped by
 * function. NULL when the summary lacks it. */
const struct hot_table *hot_summary_table(const struct hot_summary *s, const struct hot_slice *slice,
					  enum hot_table_kind k);

#endif
