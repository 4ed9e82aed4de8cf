/* settings.c — see settings.h. */
#include "base/settings.h"

static struct settings current = SETTINGS_DEFAULT;

const struct settings *settings(void)
{
	return &current;
}

void settings_set(const struct settings *s)
{
	current = *s;
}
