/* fuzz_input.c — libFuzzer target for an input as plumb opens it: the bounded stream (gzip recognised and
 * inflated on the way), the format sniffed from the content, whichever reader that picks, and the writers of
 * every format on what it reads (writing back what was read must work for every profile any reader builds).
 * Any input must give a profile or a clean error: no crash, no leak, no read past the buffer. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (!devnull)
		return 0;
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	struct fmt_read_opts o = { 0 };
	o.keep_timeline = size & 1;
	o.lenient = size & 2;
	o.kernel = o.jit = size & 4;
	o.warn = quiet;
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	if (fmt_read_buf(buf, size, FMT_UNKNOWN, &o, &p, &e) == PLUMB_OK) {
		struct fmt_write_opts wo = { 0 };
		wo.threads = size & 8;
		wo.label_flags = (size >> 4) & 3;
		fmt_folded_write(p, devnull, &wo, &e);
		fmt_pprof_write(p, devnull, &wo, &e);
		fmt_speedscope_write(p, devnull, &wo, &e);
		fmt_gecko_write(p, devnull, &wo, &e);
		profile_free(p);
	}
	free(buf);
	return 0;
}
