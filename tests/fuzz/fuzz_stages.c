/* fuzz_stages.c — libFuzzer target for the stage-lines reader (the JSON lines a target writes to PLUMB_STAGES,
 * which `plumb record --stages` turns into a plumb.stages.v1 file) and for the plumb.stages.v1 reader (what
 * `plumb hot --stages` reads): any input is either read or refused with an error, never a crash, and a document
 * the reader accepts writes out and reads back to the same stages. The lines go through a file in /tmp (read under
 * the trust rule and the line caps); the output goes to standard output ("-": no fsync per run), which is sent
 * to /dev/null. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/stages.h"
#include "sample/stages.h"

static int in_fd = -1;
static char in_path[64];

static void remove_input(void)
{
	unlink(in_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (in_fd < 0) {
		/* a real file of ours, as record's scratch file is (the reader refuses a /proc/self/fd link) */
		snprintf(in_path, sizeof in_path, "/tmp/fuzz-stages-%ld", (long)getpid());
		in_fd = open(in_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (in_fd < 0 || !freopen("/dev/null", "w", stdout))
			abort();
		atexit(remove_input);
	}
	if (ftruncate(in_fd, 0) != 0 || pwrite(in_fd, data, size, 0) != (ssize_t)size)
		abort();
	uint64_t origin = size > 8 ? (uint64_t)data[0] << 32 | data[1] : 1000;
	struct perr e = PERR_INIT;
	stages_write(in_path, origin, origin + 5000000, "-", &e);

	struct fmt_stage *st = NULL, *back = NULL;
	size_t n = 0, nback = 0;
	if (fmt_stages_read((const char *)data, size, "fuzz", &st, &n, &e) != PLUMB_OK)
		return 0;
	struct sbuf sb = SBUF_INIT;
	fmt_stages_write(&sb, st, n);
	/* the writer keeps three decimals, so times may move by rounding; names and the count may not */
	if (!sb.oom) {
		if (fmt_stages_read(sb.buf, sb.len, "fuzz", &back, &nback, &e) != PLUMB_OK || nback != n)
			abort();
		for (size_t i = 0; i < n; i++)
			if (strcmp(st[i].name, back[i].name) != 0)
				abort();
	}
	sbuf_release(&sb);
	fmt_stages_free(st, n);
	fmt_stages_free(back, nback);
	return 0;
}
