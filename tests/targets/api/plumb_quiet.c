/* plumb_quiet.c — calls every plumb.h function between two marker system calls (close(-1001) once main has
 * started, close(-1002) after the last call), for tests/e2e/test_libplumb.py's strace check: with the switch off,
 * nothing may happen between the markers, and after main this program must make the same system calls as its
 * bare build (-DPLUMB_QUIET_BARE: the same markers, no plumb call, not linked with libplumb). */
#include <unistd.h>

#ifndef PLUMB_QUIET_BARE
#include "plumb.h"
#endif

static volatile unsigned long sink;

int main(void)
{
	close(-1001);
#ifndef PLUMB_QUIET_BARE
	sink += (unsigned long)plumb_init("quiet");
	sink += (unsigned long)plumb_announce("quiet2");
	sink += (unsigned long)plumb_sample("parse", "latency", "ms", 12.5);
	const char *tags[] = { "input", "big" };
	sink += (unsigned long)plumb_sample_tags("parse", "throughput", "MB/s", 300.25, tags, 1);
	sink += (unsigned long)plumb_stage_end(plumb_stage_begin("work"));
	sink += (unsigned long)plumb_status_str(PLUMB_STATUS_OK)[0] + (unsigned long)plumb_version()[0];
	plumb_shutdown();
#endif
	close(-1002);
	return 0;
}
