/* benchwork.c — a target for plumb bench's tests: deterministic CPU work whose amount a test controls.
 *   benchwork spin UNITS           UNITS million dependent multiply-adds, times $BENCH_SCALE (default 1) or
 *                                  the number in the file named by $BENCH_SCALE_FILE
 *   benchwork emit UNITS           the same, and writes its own latency samples as JSON lines to $PLUMB_SAMPLES
 *   benchwork alloc-once FILE MIB  when FILE does not exist: create it and touch MIB MiB; else a little work
 *   benchwork sleep SECONDS        sleeps SECONDS times the scale (a wall-bound case; timeouts)
 *   benchwork fail                 says why on stderr and exits 3 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The number in the file named by $BENCH_SCALE_FILE, else $BENCH_SCALE, else 1. */
static double scale_of(void)
{
	double scale = 1;
	const char *s = getenv("BENCH_SCALE");
	if (s && *s)
		scale = atof(s);
	const char *file = getenv("BENCH_SCALE_FILE");
	FILE *f = file && *file ? fopen(file, "r") : NULL;
	if (f) {
		if (fscanf(f, "%lf", &scale) != 1)
			scale = 1;
		fclose(f);
	}
	return scale;
}

__attribute__((noinline)) static uint64_t work(double units)
{
	double scale = scale_of();
	uint64_t n = (uint64_t)(units * scale * 1e6), x = 88172645463325252ull;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* One JSON line per sample, as libplumb's plumb_sample() writes them. */
static void emit(const char *name, const char *kind, const char *unit, double value, const char *stage)
{
	const char *path = getenv("PLUMB_SAMPLES");
	if (!path || !*path)
		return;
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "{\"name\": \"%s\", \"kind\": \"%s\", \"unit\": \"%s\", \"value\": %.6f, \"tags\": {\"stage\": \"%s\"}}\n",
		name, kind, unit, value, stage);
	fclose(f);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "spin") == 0) {
		printf("%llu\n", (unsigned long long)work(atof(argv[2])));
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "emit") == 0) {
		double t0 = now_ms();
		uint64_t a = work(atof(argv[2]) / 2);
		double t1 = now_ms();
		uint64_t b = work(atof(argv[2]) / 2);
		double t2 = now_ms();
		emit("app.ready_ms", "latency", "ms", t1 - t0, "ready");
		emit("app.serve_ms", "latency", "ms", t2 - t1, "serve");
		printf("%llu\n", (unsigned long long)(a ^ b));
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "alloc-once") == 0) {
		if (access(argv[2], F_OK) != 0) {
			FILE *f = fopen(argv[2], "w");
			if (!f)
				return 2;
			fclose(f);
			size_t n = (size_t)atol(argv[3]) << 20;
			char *p = malloc(n);
			if (!p)
				return 2;
			memset(p, 1, n);
			printf("%d\n", p[n / 2]);
			free(p);
		} else {
			printf("%llu\n", (unsigned long long)work(1));
		}
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "sleep") == 0) {
		double s = atof(argv[2]) * scale_of();
		struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
		nanosleep(&ts, NULL);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "fail") == 0) {
		fprintf(stderr, "benchwork: failing on purpose\n");
		return 3;
	}
	fprintf(stderr, "usage: benchwork spin|emit UNITS | alloc-once FILE MIB | sleep S | fail\n");
	return 2;
}
