/* fuzz_bench_ini.c — libFuzzer target for the suite and catalog INI readers, the PLUMB_SAMPLES line parser, and
 * a whole PLUMB_SAMPLES file through the capped line reader (base/lines.h) with small caps (the input is tried as
 * all four). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/lines.h"
#include "bench/config.h"
#include "bench/evidence.h"
#include "bench/runner.h"

static int samples_fd = -1;
static char samples_path[64];

static void remove_samples(void)
{
	unlink(samples_path);
}

static bool sample_line(void *ctx, const char *line, size_t len)
{
	(void)bench_parse_sample_line(ctx, "case", 1, line, len);
	return true;
}

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
	/* as a PLUMB_SAMPLES file: every line through the capped line reader (small caps, so they are hit) */
	if (samples_fd < 0) {
		snprintf(samples_path, sizeof samples_path, "/tmp/fuzz-bench-samples-%ld", (long)getpid());
		samples_fd = open(samples_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (samples_fd < 0)
			abort();
		atexit(remove_samples);
	}
	if (ftruncate(samples_fd, 0) != 0 || pwrite(samples_fd, data, size, 0) != (ssize_t)size ||
	    lseek(samples_fd, 0, SEEK_SET) != 0)
		abort();
	struct lines_stats st;
	if (lines_read_fd(samples_fd, 256, 4096, sample_line, &ev, &st) != 0 || st.lines + st.too_long > size + 1)
		abort();
	bench_evidence_release(&ev);
	free(text);
	return 0;
}
