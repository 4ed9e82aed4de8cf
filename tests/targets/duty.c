/* duty.c — a burner with a known CPU use, for the whole-machine views: duty_burn() spins PERCENT% of every
 * period of 15 to 25 ms, random (called from duty_loop()), and the process sleeps the rest. It prints "ready" once
 * its loop runs. The period varies because a fixed one locks onto a sampler's fixed interval: at 20 ms against
 * 5 ms ticks, every burst of 6 ms caught exactly one tick, and a 30% burner read as 25%.
 * Usage: duty PERCENT [SECONDS]   (default 30 wall-clock seconds, then it exits) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noipa))
#define PERIOD_NS 20000000LL

static volatile uint64_t sink;

static int64_t now_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A rare call, so the hot loop is not a leaf function (frame-pointer unwinding, docs/design.md §12). */
NOINLINE uint64_t duty_mix(uint64_t x)
{
	return x ^ (x >> 17);
}

/* Spins until this thread has run `ns` more nanoseconds of CPU (so a loaded machine stretches it, but the CPU
 * it takes per period stays the asked share whenever it can get it). */
NOINLINE uint64_t duty_burn(int64_t ns)
{
	int64_t until = now_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	uint64_t x = (uint64_t)ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < until) {
		for (int k = 0; k < 2000; k++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		x = duty_mix(x);
	}
	return x;
}

NOINLINE uint64_t duty_loop(int percent, double seconds)
{
	int64_t end = now_ns(CLOCK_MONOTONIC) + (int64_t)(seconds * 1e9), next = now_ns(CLOCK_MONOTONIC);
	uint64_t acc = 0;
	uint64_t rng = (uint64_t)next | 1;
	while (now_ns(CLOCK_MONOTONIC) < end) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17; /* xorshift64 */
		int64_t period = PERIOD_NS / 4 * 3 + (int64_t)(rng % (uint64_t)(PERIOD_NS / 2)); /* 15..25 ms */
		acc += duty_burn(period * percent / 100);
		next += period;
		int64_t left = next - now_ns(CLOCK_MONOTONIC);
		if (left > 0) {
			struct timespec ts = { (time_t)(left / 1000000000LL), (long)(left % 1000000000LL) };
			nanosleep(&ts, NULL);
		} else {
			next = now_ns(CLOCK_MONOTONIC);
		}
	}
	return acc;
}

int main(int argc, char **argv)
{
	int percent = argc > 1 ? atoi(argv[1]) : 50;
	double seconds = argc > 2 ? atof(argv[2]) : 30.0;
	if (percent < 1 || percent > 100) {
		fprintf(stderr, "usage: duty PERCENT(1-100) [SECONDS]\n");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	sink = duty_loop(percent, seconds);
	return 0;
}
