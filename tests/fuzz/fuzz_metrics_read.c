/* fuzz_metrics_read.c — the plumb.metrics.v1 reader on arbitrary bytes: it must return PLUMB_OK or
 * PLUMB_EFORMAT (never crash, leak or read out of bounds), and whatever it accepts must be usable by the report
 * (window peaks and per-process rows over every sample, time differences that cannot wrap). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "metrics/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct metrics_doc doc;
	struct perr e = PERR_INIT;
	enum plumb_err rc = metrics_doc_parse((const char *)data, size, &doc, &e);
	if (rc == PLUMB_OK) {
		struct metrics_peak cpu, mem;
		metrics_doc_window_peaks(&doc, &cpu, &mem);
		if (doc.nsamples > doc.keep)
			abort();
		for (size_t i = 0; i < doc.nsamples; i++)
			for (size_t j = 0; j < doc.samples[i].nprocs; j++)
				if (doc.samples[i].procs[j].pid <= 0)
					abort();
		/* the times the report subtracts are bounded so that no difference can wrap */
		int64_t d;
		if (__builtin_sub_overflow(doc.updated_ms, doc.started_ms, &d) ||
		    (doc.nsamples && __builtin_sub_overflow(doc.samples[doc.nsamples - 1].t_ms, doc.samples[0].t_ms, &d)))
			abort();
		struct metrics_proc_window *rows;
		size_t nrows;
		if (metrics_doc_processes(&doc, &rows, &nrows, &e) == PLUMB_OK)
			free(rows);
		metrics_doc_release(&doc);
	} else if (rc != PLUMB_EFORMAT && rc != PLUMB_ENOMEM) {
		abort();
	}
	return 0;
}
