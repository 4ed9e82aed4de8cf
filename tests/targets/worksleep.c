/* worksleep.c — alternates 5 ms of CPU work (under work_path) and 5 ms of sleep (under sleep_path), so a
 * wall-clock profile shows about half its samples in each and a CPU profile nearly all in work_path.
 * On a loaded machine a preemption inside work_path stretches it past 5 ms, so the target measures the truth
 * itself: with TRUTH=FILE in the environment it writes "WORK_SECONDS SLEEP_SECONDS" (wall clock) there at exit.
 * Usage: worksleep [SECONDS]   (default 2; wall-clock seconds) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Burns 5 ms of wall time on the CPU. */
__attribute__((noipa)) unsigned long work_path(void)
{
	unsigned long x = 1;
	double end = now(CLOCK_MONOTONIC) + 0.005;
	do {
		for (int i = 0; i < 2000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	} while (now(CLOCK_MONOTONIC) < end);
	return x;
}

__attribute__((noipa)) unsigned long sleep_path(void)
{
	struct timespec ts = { 0, 5000000 };
	while (nanosleep(&ts, &ts) != 0)
		;
	return 1;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	double end = now(CLOCK_MONOTONIC) + seconds;
	unsigned long acc = 0;
	double work = 0, sleep = 0, t0 = now(CLOCK_MONOTONIC), t1, t2;
	while (t0 < end) {
		acc += work_path();
		t1 = now(CLOCK_MONOTONIC);
		acc += sleep_path();
		t2 = now(CLOCK_MONOTONIC);
		work += t1 - t0;
		sleep += t2 - t1;
		t0 = t2;
	}
	sink = acc;
	printf("%lu\n", sink & 1);
	const char *truth = getenv("TRUTH");
	if (truth) {
		FILE *f = fopen(truth, "w");
		if (f) {
			fprintf(f, "%.6f %.6f\n", work, sleep);
			fclose(f);
		}
	}
	return 0;
}
