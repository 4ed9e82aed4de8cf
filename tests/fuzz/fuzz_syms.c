/* fuzz_syms.c — libFuzzer target for the --syms symbol file reader (a samply sidecar, format/gecko_syms.h) through
 * its path, as `plumb hot P.json --syms FILE` reads it: any input is read or refused (PLUMB_EFORMAT, PLUMB_ENOMEM),
 * never a crash; what is read answers every lookup, and an answer lies inside the table it came from. */
#include <string.h>

#include "format/gecko_syms.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sidecar *s = NULL;
	struct perr e = PERR_INIT;
	enum plumb_err rc = sidecar_load(fuzz_file(data, size, "syms"), &s, &e);
	if (rc != PLUMB_OK) {
		if (rc != PLUMB_EFORMAT && rc != PLUMB_ENOMEM)
			abort();
		return 0;
	}
	const char *names[] = { "", "libc.so.6", "a", "ls", "firefox" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const struct sym_lib *L = sidecar_lib(s, names[i], names[i], names[i], names[i]);
		if (!L)
			continue;
		uint64_t probes[] = { 0, 1, 0x1000, 0x7fffffff, UINT64_MAX };
		for (size_t k = 0; k < L->nentries && k < 64; k++) {
			const struct sym_entry *E = sidecar_lookup(L, L->entries[k].rva);
			if (E && (E < L->entries || E >= L->entries + L->nentries))
				abort();
		}
		for (size_t k = 0; k < sizeof probes / sizeof probes[0]; k++) {
			const struct sym_entry *E = sidecar_lookup(L, probes[k]);
			if (E && (E < L->entries || E >= L->entries + L->nentries))
				abort();
			if (E && E->symbol)
				(void)strlen(E->symbol);
		}
	}
	sidecar_free(s);
	return 0;
}
