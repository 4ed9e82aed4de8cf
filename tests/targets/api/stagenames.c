/* stagenames.c — one stage per argument, named by it, each burning a little CPU: a program whose stage names
 * carry whatever the test gives (secret shapes, for the redaction test, docs/design.md §3.6).
 * Usage: stagenames NAME... */
#include <stdint.h>
#include <stdio.h>

#include "plumb.h"

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

NOINLINE uint64_t stage_work(uint64_t rounds)
{
	uint64_t x = 7;
	for (uint64_t r = 0; r < rounds; r++)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct plumb_stage *s = plumb_stage_begin(argv[i]);
		sink += stage_work(2000);
		plumb_stage_end(s);
	}
	printf("done\n");
	return 0;
}
