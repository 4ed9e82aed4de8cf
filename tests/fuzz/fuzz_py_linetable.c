/* fuzz_py_linetable.c — CPython line tables as the Python reader decodes them (python/code.c): 3.11+ location
 * tables, 3.10's PEP 626 co_linetable and 3.8/3.9's co_lnotab, each given the same bytes: a table read from a running process may be anything, so every input and every
 * instruction offset must decode without reading past the table. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "python/python.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	int first;
	memcpy(&first, data, sizeof first);
	/* an exact-size copy so that AddressSanitizer sees any read past the end */
	uint8_t *table = malloc(size - 4 ? size - 4 : 1);
	if (!table)
		return 0;
	memcpy(table, data + 4, size - 4);
	/* 64 offsets spread over (and past) the range the table can describe: up to 16 bytes of code per byte */
	int span = (int)(size < 65536 ? size : 65536) * 16;
	for (int k = -1; k < 63; k++) {
		int addrq = k < 0 ? -2 : (int)((int64_t)span * k / 62) & ~1;
		(void)py_linetable_line(table, size - 4, first, addrq);
		(void)py_pep626_line(table, size - 4, first, addrq);
		(void)py_lnotab_line(table, size - 4, first, addrq);
	}
	free(table);
	return 0;
}
