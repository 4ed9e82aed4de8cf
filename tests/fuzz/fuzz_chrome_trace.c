/* fuzz_chrome_trace.c — libFuzzer target for the Chrome trace-event reader (Profile, ProfileChunk and
 * CpuProfile events) (and the hot tables built from what it reads).
 * Any input must give a profile or a clean error: no crash, no leak, no read past the buffer. */
#include "fuzz_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_reader_one(data, size, FMT_CHROME_TRACE);
}
