/* diff_folded_stub.c — placeholder for `plumb diff A B --folded` (differential folded output, issue 6); the
 * helper who owns that issue replaces this file. */
#include "analyze/analyze.h"

#include "base/err.h"

int diff_folded_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return plumb_fail(EXIT_MISSING, "diff --folded: differential folded output is not available yet");
}
