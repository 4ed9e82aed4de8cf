/* bench.c — `plumb bench`. Not built yet: it says so and exits 3 (see the open issue for this command). */
#include "cmd/cmd.h"

#include "base/err.h"

int cmd_bench(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return plumb_fail(EXIT_MISSING, "bench: this command is not available in this build yet");
}
