/* strtab.h — a deduplicating string table: equal strings get one id, ids count up from 0 in first-seen order.
 * Writers whose formats carry a string table (Firefox Profiler, pprof) keep one each. The table owns copies of
 * the strings; str_table_release() frees them. */
#ifndef PLUMB_BASE_STRTAB_H
#define PLUMB_BASE_STRTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hashmap.h"

struct str_table {
	struct hmap index;
	char **s;
	size_t *len;
	size_t n, cap;
};
#define STR_TABLE_INIT { HMAP_INIT, NULL, NULL, 0, 0 }

/* The id of s[0..n); *added tells whether it was new. UINT32_MAX when out of memory. */
uint32_t str_table_intern(struct str_table *t, const char *s, size_t n, bool *added);
void str_table_release(struct str_table *t);

#endif
