/* stages2.c — two stages marked through plumb.h: "parse" burns CPU in parse_work, then "render" burns about
 * as long in render_work. Each stage's hot function is known, so slicing a recording by the stage file must
 * put it at the top of that stage's table. Usage: stages2 [SCALE] (default 1, ~0.5 s of CPU per stage). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "plumb.h"

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

NOINLINE uint64_t parse_work(uint64_t rounds)
{
	uint64_t x = 7;
	for (uint64_t r = 0; r < rounds; r++)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

NOINLINE uint64_t render_work(uint64_t rounds)
{
	uint64_t x = 11;
	for (uint64_t r = 0; r < rounds; r++)
		for (int i = 0; i < 10000; i++)
			x = x * 2862933555777941757ULL + 3037000493ULL;
	return x;
}

int main(int argc, char **argv)
{
	uint64_t rounds = (uint64_t)((argc > 1 ? atof(argv[1]) : 1.0) * 40000);
	struct plumb_stage *s = plumb_stage_begin("parse");
	sink = parse_work(rounds);
	plumb_stage_end(s);
	s = plumb_stage_begin("render");
	sink += render_work(rounds);
	plumb_stage_end(s);
	printf("done\n");
	return 0;
}
