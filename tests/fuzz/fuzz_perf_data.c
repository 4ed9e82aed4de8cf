/* fuzz_perf_data.c — libFuzzer target for the perf.data reader (file and pipe mode), then every writer and the
 * hot tables on what it reads. The first byte picks the event read (--sample-index); the rest is the recording.
 * Any input must give a profile or a clean error: no crash, no leak, no read past the buffer, no file opened that
 * is not a regular file. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
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
	if (!size || !devnull)
		return 0;
	char *buf = malloc(size);
	if (!buf)
		return 0;
	memcpy(buf, data + 1, size - 1); /* an exact-size copy: nothing may be read past it */
	static const char *const index[] = { NULL, "0", "1", "cpu-clock", "context-switches", "9" };
	struct fmt_read_opts o = { 0 };
	o.sample_index = index[data[0] % 6];
	o.keep_timeline = data[0] & 16;
	o.warn = quiet;
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	if (fmt_read_buf(buf, size - 1, FMT_PERF_DATA, &o, &p, &e) == PLUMB_OK) {
		struct fmt_write_opts wo = { 0 };
		wo.threads = data[0] & 8;
		fmt_folded_write(p, devnull, &wo, &e);
		fmt_pprof_write(p, devnull, &wo, &e);
		fmt_speedscope_write(p, devnull, &wo, &e);
		fmt_gecko_write(p, devnull, &wo, &e);
		struct hot_opts ho = HOT_OPTS_INIT;
		struct hot_summary *s = NULL;
		if (hot_analyze(p, &ho, &s, &e) == PLUMB_OK)
			hot_summary_free(s);
		profile_free(p);
	}
	free(buf);
	return 0;
}
