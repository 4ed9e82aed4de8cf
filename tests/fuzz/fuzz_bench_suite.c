/* fuzz_bench_suite.c — libFuzzer target for the INI suite reader by its path (bench_suite_load: the input rule,
 * the INI parser, the case checks and the `params` expansion), as `plumb bench run SUITE` reads it: loaded or
 * refused with PLUMB_EFORMAT / PLUMB_ENOMEM (a file the rule refuses is PLUMB_EFORMAT too), never a crash; every
 * case loaded has a valid, distinct name. */
#include <string.h>

#include "bench/config.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bench_suite s;
	struct perr e = PERR_INIT;
	enum plumb_err rc = bench_suite_load(fuzz_file(data, size, "bench-suite"), &s, &e);
	if (rc != PLUMB_OK) {
		if (rc != PLUMB_EFORMAT && rc != PLUMB_ENOMEM && rc != PLUMB_EINVAL)
			abort();
		return 0;
	}
	for (size_t i = 0; i < s.ncases; i++) {
		if (!bench_case_name_valid(s.cases[i].name))
			abort();
		for (size_t j = 0; j < i && j < 64; j++)
			if (strcmp(s.cases[i].name, s.cases[j].name) == 0)
				abort();
	}
	bench_suite_release(&s);
	return 0;
}
