/* rand.h — the random sampling intervals every backend draws (docs/design.md §5.2): a small generator
 * (splitmix64) and intervals of half the mean plus an exponential draw of half the mean, so sample times form a
 * renewal process no rhythm of the target can lock onto (its intervals are spread over [mean/2, ...) with no
 * lattice), whose samples are never closer than half the interval: a perf event repeats its last period until
 * the reader gives it a new one, and a short draw repeated while the reader is late would burst. Header-only and
 * free of libm, errno and locks: the in-process sampler draws its next interval inside its signal handler.
 * Invariant: an interval lies in [mean/2, RAND_MAX_FACTOR means] and never below RAND_MIN_INTERVAL_NS. */
#ifndef PLUMB_BASE_RAND_H
#define PLUMB_BASE_RAND_H

#include <stdint.h>
#include <string.h>

#define RAND_MIN_INTERVAL_NS 10000ull /* 10 us: perf clamps a cpu-clock period below this to it anyway */
#define RAND_MAX_FACTOR 20            /* exp(-20) of the draws would be longer: cut, ~2e-9 of the mass */

struct rand64 {
	uint64_t state;
};

/* Seeds r from any bits (a time, a tid): equal seeds give equal sequences (tests), different ones unrelated. */
static inline void rand64_seed(struct rand64 *r, uint64_t seed)
{
	r->state = seed ^ 0x9e3779b97f4a7c15ull;
}

/* The next 64 random bits (splitmix64: passes BigCrush, one add and three multiply-xorshifts). */
static inline uint64_t rand64_next(struct rand64 *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* -ln(u) for u in (0, 1], without libm: u = m * 2^e with m in [1, 2), ln m = 2 atanh((m-1)/(m+1)) by its series
 * (|s| < 1/3: five terms leave a relative error below 2e-7, far under any sampling noise). */
static inline double rand64_neg_log(double u)
{
	uint64_t bits;
	memcpy(&bits, &u, sizeof bits);
	int e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
	double m;
	memcpy(&m, &bits, sizeof m);
	double s = (m - 1.0) / (m + 1.0), s2 = s * s;
	double ln_m = 2.0 * s * (1.0 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9)))));
	return -((double)e * 0.6931471805599453 + ln_m);
}

/* A uniform draw in (0, 1] (53 bits; never 0, so its logarithm is finite). */
static inline double rand64_unit(struct rand64 *r)
{
	return (double)((rand64_next(r) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

/* mean_ns/2 plus an exponential draw of mean mean_ns/2: mean mean_ns, standard deviation mean_ns/2, within
 * [mean_ns/2, RAND_MAX_FACTOR * mean_ns] (the cut at the top moves the mean by e^-39 of it). */
static inline uint64_t rand64_interval_ns(struct rand64 *r, uint64_t mean_ns)
{
	double x = (double)mean_ns * 0.5 * (1.0 + rand64_neg_log(rand64_unit(r)));
	double hi = (double)mean_ns * RAND_MAX_FACTOR;
	if (x > hi)
		x = hi;
	uint64_t ns = (uint64_t)x;
	return ns < RAND_MIN_INTERVAL_NS ? RAND_MIN_INTERVAL_NS : ns;
}

#endif
