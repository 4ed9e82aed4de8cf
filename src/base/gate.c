/* gate.c — reads PLUMB_DEBUG; the only place that decides whether the switch is on. */
#include "base/gate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool is_one_of(const char *value, size_t n, const char *const *words, size_t nwords)
{
	for (size_t i = 0; i < nwords; i++)
		if (strlen(words[i]) == n && strncasecmp(value, words[i], n) == 0)
			return true;
	return false;
}

enum gate_reading gate_value_read(const char *value)
{
	if (!value)
		return GATE_OFF;
	while (isspace((unsigned char)*value))
		value++;
	size_t n = strlen(value);
	while (n > 0 && isspace((unsigned char)value[n - 1]))
		n--;
	static const char *const off[] = { "", "0", "false", "no", "off" };
	static const char *const on[] = { "1", "true", "yes", "on" };
	if (is_one_of(value, n, off, sizeof off / sizeof off[0]))
		return GATE_OFF;
	if (is_one_of(value, n, on, sizeof on / sizeof on[0]))
		return GATE_ON;
	return GATE_UNKNOWN;
}

bool gate_value_enabled(const char *value)
{
	return gate_value_read(value) == GATE_ON;
}

bool gate_enabled(void)
{
	return gate_value_enabled(getenv("PLUMB_DEBUG"));
}
