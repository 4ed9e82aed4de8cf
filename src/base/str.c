/* str.c — see str.h. */
#include "base/str.h"

#include <string.h>

bool str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool mem_ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

bool str_ends_with(const char *s, const char *suffix)
{
	return mem_ends_with(s, strlen(s), suffix);
}

char *str_dup_or_null(const char *s, bool *oom)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}
