/* fuzz_bench_catalog.c — libFuzzer target for the metric catalog reader by its path (bench_catalog_load: the input
 * rule, then the INI parser), as `plumb bench owners --catalog FILE` and the gate read it: loaded or refused with
 * PLUMB_EFORMAT / PLUMB_ENOMEM, never a crash; what is loaded answers lookups of any metric name. */
#include "bench/config.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bench_catalog c;
	struct perr e = PERR_INIT;
	enum plumb_err rc = bench_catalog_load(fuzz_file(data, size, "bench-catalog"), &c, &e);
	if (rc != PLUMB_OK) {
		if (rc != PLUMB_EFORMAT && rc != PLUMB_ENOMEM && rc != PLUMB_EINVAL)
			abort();
		return 0;
	}
	const char *names[] = { "case.wall_ms", "x.y", "", "a.b.c", "*" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		(void)bench_catalog_find(&c, names[i]);
		if (bench_metric_min_samples(&c, names[i]) < 0)
			abort();
	}
	bench_catalog_release(&c);
	return 0;
}
