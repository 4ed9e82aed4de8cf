/* fuzz_perf_script.c — libFuzzer target for the perf script reader (and, on what it reads, the folded and SVG
 * writers). The first byte picks the collapse options; the rest is the text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "render/flame.h"

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
	if (!size || !devnull)
		return 0;
	struct fmt_read_opts o = { 0 };
	o.pid = data[0] & 1;
	o.tid = data[0] & 2;
	o.kernel = data[0] & 4;
	o.jit = data[0] & 8;
	o.addrs = data[0] & 16;
	o.keep_timeline = data[0] & 32;
	o.warn = quiet;
	/* the reader gets a NUL-terminated copy (the stream reads it through its own window) */
	char *buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	(void)fmt_perf_script_sniff(buf, size - 1);
	struct profile *p = profile_new();
	struct perr e = PERR_INIT;
	if (p && fmt_perf_script_read(buf, size - 1, &o, p, &e) == PLUMB_OK) {
		struct fmt_write_opts wo = { 0 };
		wo.threads = data[0] & 128; /* a root per thread: the writer's general tree of label pieces */
		fmt_folded_write(p, devnull, &wo, &e);
		struct flame_opts fo = { 0 };
		fo.min_width = 0;
		fo.flamechart = data[0] & 64;
		flame_write_svg(p, devnull, &fo, &e);
	}
	profile_free(p);
	free(buf);
	return 0;
}
