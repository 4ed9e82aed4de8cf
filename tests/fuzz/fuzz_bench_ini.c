/* fuzz_bench_ini.c — libFuzzer target for the suite and catalog INI readers and the PLUMB_SAMPLES line
 * parser (the input is tried as all three). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/config.h"
#include "bench/evidence.h"
#include "bench/runner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct perr e = PERR_INIT;
	struct bench_suite s;
	if (bench_suite_parse(text, "/fuzz/suite.ini", &s, &e) == PLUMB_OK)
		bench_suite_release(&s);
	struct bench_catalog c;
	if (bench_catalog_parse(text, "/fuzz/catalog.ini", &c, &e) == PLUMB_OK) {
		(void)bench_catalog_find(&c, "case.wall_ms");
		(void)bench_metric_min_samples(&c, "x.y");
		bench_catalog_release(&c);
	}
	struct bench_evidence ev;
	bench_evidence_init(&ev);
	(void)bench_parse_sample_line(&ev, "case", 0, (const char *)data, size);
	bench_evidence_release(&ev);
	free(text);
	return 0;
}
