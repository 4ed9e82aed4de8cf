/* str.h — small string helpers every layer wrote for itself: prefix and suffix checks on C strings and on
 * length-delimited bytes, a copy that records running out of memory and a count with thousands separators. No
 * state. */
#ifndef PLUMB_BASE_STR_H
#define PLUMB_BASE_STR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when s begins with prefix ("" is a prefix of everything). */
bool str_starts_with(const char *s, const char *prefix);
/* True when s ends with suffix ("" is a suffix of everything). */
bool str_ends_with(const char *s, const char *suffix);
/* The same on the n bytes at s (not NUL-terminated). */
bool mem_ends_with(const char *s, size_t n, const char *suffix);

/* A malloc'd copy of s (NULL for NULL); on out of memory NULL, and *oom is set (it is never cleared). */
char *str_dup_or_null(const char *s, bool *oom);
/* v with thousands separated by commas ("1,234,567") into buf (cut short to fit size, always terminated). */
void str_commas(char *buf, size_t size, uint64_t v);

#endif
