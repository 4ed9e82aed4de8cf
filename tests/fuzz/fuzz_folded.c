/* fuzz_folded.c — libFuzzer target for the folded reader, followed by the hot tables (which parse labels back
 * into function, file and module) under every grouping. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "format/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* NUL-terminated, though the stream hands the reader its own window (a line at the very end with no NUL
	 * after it is printed with %.60s) */
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	if (fmt_read_buf(buf, size, FMT_FOLDED, NULL, &p, &e) == PLUMB_OK) {
		struct hot_opts o = HOT_OPTS_INIT;
		o.group_by = (enum hot_group)(size % 4);
		o.collapse_generics = size & 4;
		o.module_depth = 1 + (int)(size % 3);
		struct hot_summary *s = NULL;
		if (hot_analyze(p, &o, &s, &e) == PLUMB_OK)
			hot_summary_free(s);
		profile_free(p);
	}
	free(buf);
	return 0;
}
