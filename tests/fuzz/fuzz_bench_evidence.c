/* fuzz_bench_evidence.c — libFuzzer target for the plumb.evidence.v1 reader and what reads its result: the
 * per-metric summaries and a compare of the artifact with itself. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/compare.h"
#include "bench/evidence.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bench_evidence ev;
	struct perr e = PERR_INIT;
	if (bench_evidence_parse((const char *)data, size, "fuzz", &ev, &e) != PLUMB_OK)
		return 0;
	struct bench_cmp cmp;
	if (bench_compare(&ev, &ev, NULL, 5, 0.05, BENCH_RANK_BOTTLENECKS, &cmp))
		bench_cmp_release(&cmp);
	for (size_t i = 0; i < ev.nsamples && i < 64; i++)
		(void)bench_evidence_case_of(&ev, ev.samples[i].name);
	bench_evidence_release(&ev);
	return 0;
}
