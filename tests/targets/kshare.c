/* kshare.c — a known split between user and kernel time, for the kernel-share question (docs/unwinding.md):
 * user_work() spins in user space, kernel_work() reads /dev/zero into a 256 KiB buffer READS times (the kernel
 * clears it: system time). Runs until it has used SECONDS of CPU, then prints on stderr what its own getrusage
 * says and the share of its CPU time spent in kernel_work, from its thread CPU clock (exact, where getrusage's
 * split of user and system time is itself sampled at the scheduler tick):
 * "utime U stime S kernel_share P kernel_work_share Q". Usage: kshare [SECONDS [READS]] (default 2 s, 8). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static char buf[1 << 18];

/* A round's lengths vary at random around their means: a round of fixed length is a period that a fixed
 * sampling interval can lock onto (every sample at the same phase), which biases the shares by several points. */
static uint64_t rng = 88172645463325252ULL;

static unsigned around(unsigned mean)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return mean / 2 + (unsigned)(rng % (mean + 1)); /* uniform in [mean/2, 3*mean/2] */
}

__attribute__((noinline)) void user_work(void)
{
	uint64_t x = sink;
	for (unsigned i = 0, n = around(200000); i < n; i++)
		x = x * 6364136223846793005ULL + 1;
	sink = x;
}

__attribute__((noinline)) void kernel_work(int fd, int reads)
{
	for (unsigned i = 0, n = around((unsigned)reads); i < n; i++)
		if (read(fd, buf, sizeof buf) < 0)
			abort();
}

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double seconds(struct timeval t)
{
	return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	int reads = argc > 2 ? atoi(argv[2]) : 8;
	int fd = open("/dev/zero", O_RDONLY);
	rng ^= (uint64_t)getpid() << 20 ^ (uint64_t)time(NULL);
	if (fd < 0)
		return 1;
	double start = thread_cpu(), in_kernel_work = 0, now = start;
	while (now - start < secs) {
		user_work();
		double before = thread_cpu();
		kernel_work(fd, reads);
		now = thread_cpu();
		in_kernel_work += now - before;
	}
	struct rusage r;
	getrusage(RUSAGE_SELF, &r);
	double u = seconds(r.ru_utime), s = seconds(r.ru_stime);
	fprintf(stderr, "utime %.3f stime %.3f kernel_share %.1f kernel_work_share %.1f\n", u, s, 100.0 * s / (u + s),
		100.0 * in_kernel_work / (now - start));
	return 0;
}
