/* fuzz_diff_folded.c — libFuzzer target for the differential folded readers: the input read as two-column
 * text into two profiles (format/diff_folded.c), and split in half as the two one-column inputs of `plumb diff
 * --folded` (analyze/diff_folded.c, with --normalize and --strip-hex by the input's size); both split their
 * lines with format/folded_line.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/diff_folded.h"
#include "format/diff_folded.h"
#include "format/stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perr e = PERR_INIT;
	struct profile *before = NULL, *after = NULL;
	(void)fmt_diff_folded_is_two_column((const char *)data, size);
	if (fmt_diff_folded_read((const char *)data, size, NULL, &before, &after, &e) == PLUMB_OK) {
		profile_free(before);
		profile_free(after);
	}
	struct fmt_stream st[2];
	size_t half = size / 2;
	if (fmt_stream_mem(&st[0], data, half, "a", &e) || fmt_stream_mem(&st[1], data + half, size - half, "b", &e))
		return 0;
	struct diff_folded_opts o = DIFF_FOLDED_OPTS_INIT;
	o.normalize = size & 1;
	o.strip_hex = size & 2;
	const struct diff_folded_input in[2] = { { "a", &st[0] }, { "b", &st[1] } };
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (out) {
		(void)diff_folded_from_readers(&o, &in[0], &in[1], out, &e);
		fclose(out);
		free(text);
	}
	fmt_stream_close(&st[0]);
	fmt_stream_close(&st[1]);
	return 0;
}
