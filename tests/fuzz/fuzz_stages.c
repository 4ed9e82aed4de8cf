/* fuzz_stages.c — libFuzzer target for the stage-lines reader (the JSON lines a target writes to PLUMB_STAGES,
 * which `plumb record --stages` turns into a plumb.stages.v1 file): any input is either converted or
 * refused with an error, never a crash. The input goes through a memfd; the output goes to standard output
 * ("-": no fsync per run), which is sent to /dev/null. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sample/stages.h"

static int in_fd = -1;
static char in_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (in_fd < 0) {
		in_fd = memfd_create("fuzz-stages", 0);
		if (in_fd < 0 || !freopen("/dev/null", "w", stdout))
			abort();
		snprintf(in_path, sizeof in_path, "/proc/self/fd/%d", in_fd);
	}
	if (ftruncate(in_fd, 0) != 0 || pwrite(in_fd, data, size, 0) != (ssize_t)size)
		abort();
	uint64_t origin = size > 8 ? (uint64_t)data[0] << 32 | data[1] : 1000;
	struct perr e = PERR_INIT;
	stages_write(in_path, origin, origin + 5000000, "-", &e);
	return 0;
}
