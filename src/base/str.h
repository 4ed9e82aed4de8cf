/* str.h — small string tests every layer wrote for itself: prefix and suffix checks on C strings and on
 * length-delimited bytes. No allocation, no state. */
#ifndef PLUMB_BASE_STR_H
#define PLUMB_BASE_STR_H

#include <stdbool.h>
#include <stddef.h>

/* True when s begins with prefix ("" is a prefix of everything). */
bool str_starts_with(const char *s, const char *prefix);
/* True when s ends with suffix ("" is a suffix of everything). */
bool str_ends_with(const char *s, const char *suffix);
/* The same on the n bytes at s (not NUL-terminated). */
bool mem_ends_with(const char *s, size_t n, const char *suffix);

#endif
