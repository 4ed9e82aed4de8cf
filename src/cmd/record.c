/* record.c — `plumb record`. Not built yet. */
#include "cmd/cmd.h"

#include "base/err.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return plumb_fail(EXIT_MISSING, "record: not available in this build yet");
}
