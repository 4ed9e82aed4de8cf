/* fuzz_cpuprofile.c — libFuzzer target for the .cpuprofile reader (V8's CPU profiles: nodes, samples,
 * timeDeltas, the old head form) (and the hot tables built from what it reads).
 * Any input must give a profile or a clean error: no crash, no leak, no read past the buffer. */
#include "fuzz_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_reader_one(data, size, FMT_CPUPROFILE);
}
