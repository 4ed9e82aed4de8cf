/* fuzz_stage_file.c — libFuzzer target for the stage file reader through its path (fmt_stages_load: the input
 * rule, then the plumb.stages.v1 parser), as `plumb hot --stages FILE` and `plumb baseline save --stages FILE` read
 * it: read or refused with PLUMB_EFORMAT / PLUMB_ENOMEM, never a crash; every stage read has a name and an end not
 * before its start, and writes out and reads back the same. */
#include <string.h>

#include "base/sbuf.h"
#include "format/stages.h"
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fmt_stage *stages = NULL;
	size_t n = 0;
	struct perr e = PERR_INIT;
	enum plumb_err rc = fmt_stages_load(fuzz_file(data, size, "stage-file"), &stages, &n, &e);
	if (rc != PLUMB_OK) {
		if (rc != PLUMB_EFORMAT && rc != PLUMB_ENOMEM)
			abort();
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (!stages[i].name || !(stages[i].end_ms >= stages[i].start_ms))
			abort();
	struct sbuf out = SBUF_INIT;
	fmt_stages_write(&out, stages, n);
	if (!out.oom) {
		struct fmt_stage *back = NULL;
		size_t m = 0;
		if (fmt_stages_read(out.buf, out.len, "written", &back, &m, &e) != PLUMB_OK || m != n)
			abort();
		for (size_t i = 0; i < n; i++)
			if (strcmp(back[i].name, stages[i].name) != 0)
				abort();
		fmt_stages_free(back, m);
	}
	sbuf_release(&out);
	fmt_stages_free(stages, n);
	return 0;
}
