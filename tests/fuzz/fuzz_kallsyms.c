/* fuzz_kallsyms.c — libFuzzer target for the /proc/kallsyms parser and lookups in what it builds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct kallsyms *k = kallsyms_parse(text, size);
	if (!k)
		return 0;
	/* lookups at addresses taken from the input itself, and at the edges */
	uint64_t probes[4] = { 0, UINT64_MAX, 0, 0 };
	if (size >= 16) {
		memcpy(&probes[2], data, 8);
		memcpy(&probes[3], data + size - 8, 8);
	}
	for (int i = 0; i < 4; i++) {
		const char *name = kallsyms_lookup(k, probes[i]);
		if (name)
			(void)strlen(name);
	}
	kallsyms_free(k);
	return 0;
}
