/* fuzz_reader.h — the body of a libFuzzer target for one profile reader, and the hot tables built from what it
 * reads: any input must give a profile or a clean error — no crash, no leak, no read past the buffer. A target
 * is its comment and LLVMFuzzerTestOneInput calling fuzz_reader_one with its format. */
#ifndef PLUMB_FUZZ_READER_H
#define PLUMB_FUZZ_READER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "format/format.h"

static int fuzz_reader_one(const uint8_t *data, size_t size, enum fmt_kind kind)
{
	/* the reader must not depend on a NUL after the input: hand it an exact-size copy */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct fmt_read_opts opts = { 0 };
	opts.keep_timeline = size & 1;
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	if (fmt_read_buf(buf, size, kind, &opts, &p, &e) == PLUMB_OK) {
		struct hot_opts o = HOT_OPTS_INIT;
		o.group_by = (enum hot_group)(size % 4);
		struct hot_summary *s = NULL;
		if (hot_analyze(p, &o, &s, &e) == PLUMB_OK) {
			struct fmt_stage st = { (char *)"s", 0.0, 5.0 };
			if (opts.keep_timeline)
				hot_analyze_stages(p, &o, &st, 1, s, &e);
			hot_summary_free(s);
		}
		profile_free(p);
	}
	free(buf);
	return 0;
}

#endif
