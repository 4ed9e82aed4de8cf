/* str.c — see str.h. */
#include "base/str.h"

#include <stdio.h>
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

void str_commas(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
	size_t j = 0;
	for (int i = 0; i < n && j + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
}
