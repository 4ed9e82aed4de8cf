/* gate.c — reads PLUMB_DEBUG; the only place that decides whether the switch is on. */
#include "base/gate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool gate_value_enabled(const char *value)
{
	if (!value)
		return false;
	while (isspace((unsigned char)*value))
		value++;
	size_t n = strlen(value);
	while (n > 0 && isspace((unsigned char)value[n - 1]))
		n--;
	if (n == 0)
		return false;
	static const char *const off[] = { "0", "false", "no", "off" };
	for (size_t i = 0; i < sizeof off / sizeof off[0]; i++)
		if (strlen(off[i]) == n && strncasecmp(value, off[i], n) == 0)
			return false;
	return true;
}

bool gate_enabled(void)
{
	return gate_value_enabled(getenv("PLUMB_DEBUG"));
}
