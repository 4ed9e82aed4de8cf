/* fuzz_metrics_path.c — libFuzzer target for a metrics recording read by its path (metrics_doc_read_file: the
 * input rule, then the plumb.metrics.v1 reader), as `plumb metrics --path FILE` reads it, with the raw text kept
 * as `--json` does: read or refused with PLUMB_EFORMAT / PLUMB_ENOMEM, never a crash; what is read feeds the
 * report's window peaks and per-process rows, and the raw text is the file's. */
#include <string.h>

#include "fuzz_file.h"
#include "metrics/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct metrics_doc doc;
	struct perr e = PERR_INIT;
	char *raw = NULL;
	size_t raw_len = 0;
	enum plumb_err rc = metrics_doc_read_file(fuzz_file(data, size, "metrics-path"), &doc, &raw, &raw_len, &e);
	if (rc != PLUMB_OK) {
		if (rc != PLUMB_EFORMAT && rc != PLUMB_ENOMEM)
			abort();
		free(raw);
		return 0;
	}
	if (raw && (raw_len != size || memcmp(raw, data, size) != 0))
		abort();
	struct metrics_peak cpu, mem;
	metrics_doc_window_peaks(&doc, &cpu, &mem);
	struct metrics_proc_window *rows;
	size_t nrows;
	if (metrics_doc_processes(&doc, &rows, &nrows, &e) == PLUMB_OK)
		free(rows);
	metrics_doc_release(&doc);
	free(raw);
	return 0;
}
