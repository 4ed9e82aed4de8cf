/* unit_skip.h — a unit test may skip only when an optional tool it needs is not installed (docs/design.md §12).
 * skip_missing_tool("python3.11") prints the reason, which tests/run-all reports with the test's name, then skips;
 * the runner counts a skip without such a reason as a failure. Include after <cmocka.h>. */
#ifndef PLUMB_TESTS_UNIT_SKIP_H
#define PLUMB_TESTS_UNIT_SKIP_H

#define skip_missing_tool(tool)                                                         \
	do {                                                                            \
		print_message("[ SKIP-WHY ] %s: %s not installed\n", __func__, (tool)); \
		skip();                                                                 \
	} while (0)

#endif
