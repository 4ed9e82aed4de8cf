/* allocs — allocation patterns with a known truth, for `plumb record --mode alloc` (tests/e2e/test_alloc.py).
 *   allocs split       three call sites allocate 60 / 30 / 10% of the bytes: site_once (4 KiB blocks, each freed at
 *                      once), site_later (64 KiB blocks, freed at the end), site_leak (512-byte blocks, never freed)
 *   allocs threads     4 threads allocate blocks that the next thread frees; each leaks 8 MiB (in 16 KiB blocks)
 *   allocs forkexec    leaks 16 MiB, forks a child that allocates 8 MiB and execs `allocs leak 24`
 *   allocs leak MIB    allocates MIB MiB in 1 KiB..8 KiB blocks and never frees them
 *   allocs realloc     100 chains grow by realloc from 1 KiB to 1 MiB (doubling); the last block is kept
 *   allocs mmap        maps 32 anonymous 4 MiB regions, unmaps 16 of them
 *   allocs churn GIB   the benchmark: GIB GiB allocated and freed in rounds of 64 MiB of mixed block sizes
 * Each prints its truth to stderr ("truth alloc BYTES inuse BYTES"). Functions are noinline and use their
 * callees' results, so every caller keeps its frame. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB (1024L * 1024L)
#define NOINLINE __attribute__((noinline, noipa))

static volatile unsigned long sink;

static NOINLINE void *site_once(size_t n)
{
	char *p = malloc(n);
	p[0] = 1;
	sink += (unsigned long)p[0];
	return p;
}

static NOINLINE void *site_later(size_t n)
{
	char *p = malloc(n);
	p[0] = 2;
	sink += (unsigned long)p[0];
	return p;
}

static NOINLINE void *site_leak(size_t n)
{
	char *p = malloc(n);
	p[0] = 3;
	sink += (unsigned long)p[0];
	return p;
}

static NOINLINE int run_split(void)
{
	const long total = 512 * MIB;
	long once = total * 6 / 10, later = total * 3 / 10, leak = total / 10;
	long nlater = later / (64 * 1024);
	void **held = calloc((size_t)nlater + 1, sizeof *held);
	long o = 0, l = 0, k = 0, nh = 0;
	/* interleaved, so that every site sees the same stretch of the run */
	while (o < once || l < later || k < leak) {
		for (int i = 0; i < 16 && o < once; i++, o += 4096)
			free(site_once(4096));
		if (l < later) {
			held[nh++] = site_later(64 * 1024);
			l += 64 * 1024;
		}
		for (int i = 0; i < 16 && k < leak; i++, k += 512)
			site_leak(512);
	}
	for (long i = 0; i < nh; i++)
		free(held[i]);
	free(held);
	fprintf(stderr, "truth alloc %ld inuse %ld\n", once + later + leak, leak);
	return (int)(sink & 0);
}

/* ---- threads ---- */

#define NTHREADS 4
#define PER_THREAD (64 * MIB)
#define QLEN 256

struct queue {
	pthread_mutex_t lock;
	void *slot[QLEN];
	int n;
	int done;
};
static struct queue queues[NTHREADS];

static NOINLINE void *thread_alloc(size_t n)
{
	char *p = malloc(n);
	p[0] = 4;
	return p;
}

static NOINLINE void *thread_leak(size_t n)
{
	char *p = malloc(n);
	p[0] = 5;
	return p;
}

static void drain_queue(struct queue *q, int all)
{
	pthread_mutex_lock(&q->lock);
	while (q->n > (all ? 0 : QLEN / 2))
		free(q->slot[--q->n]);
	pthread_mutex_unlock(&q->lock);
}

/* Each block goes into the next thread's queue; a full queue is drained (freed) by whoever finds it full, so no
 * thread ever waits for another, and most blocks are freed by a thread that did not allocate them. */
static void *worker(void *arg)
{
	long me = (long)arg;
	struct queue *mine = &queues[me], *next = &queues[(me + 1) % NTHREADS];
	for (long done = 0; done < PER_THREAD; done += 8192) {
		void *p = thread_alloc(8192);
		pthread_mutex_lock(&next->lock);
		while (next->n >= QLEN)
			free(next->slot[--next->n]);
		next->slot[next->n++] = p;
		pthread_mutex_unlock(&next->lock);
		if ((done >> 13) % 64 == 0)
			drain_queue(mine, 0);
	}
	for (long k = 0; k < 8 * MIB; k += 16384)
		thread_leak(16384);
	return NULL;
}

static NOINLINE int run_threads(void)
{
	pthread_t t[NTHREADS];
	for (int i = 0; i < NTHREADS; i++)
		pthread_mutex_init(&queues[i].lock, NULL);
	for (long i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NTHREADS; i++)
		drain_queue(&queues[i], 1);
	fprintf(stderr, "truth alloc %ld inuse %ld\n", NTHREADS * (PER_THREAD + 8 * MIB), NTHREADS * 8 * MIB);
	return 0;
}

/* ---- leak, fork + exec ---- */

static NOINLINE void *leak_block(size_t n)
{
	char *p = malloc(n);
	p[0] = 6;
	return p;
}

static NOINLINE long run_leak(long mib)
{
	long total = 0;
	for (size_t n = 1024; total < mib * MIB; n = n >= 8192 ? 1024 : n * 2) {
		leak_block(n);
		total += (long)n;
	}
	return total;
}

static NOINLINE void *child_block(size_t n)
{
	char *p = malloc(n);
	p[0] = 7;
	return p;
}

static NOINLINE int run_forkexec(const char *self)
{
	long parent = run_leak(16);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		for (long k = 0; k < 8 * MIB; k += 4096)
			child_block(4096);
		execl(self, self, "leak", "24", (char *)NULL);
		_exit(127);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	fprintf(stderr, "truth parent %ld child %ld exec %ld\n", parent, 8 * MIB, 24 * MIB);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* ---- realloc chains ---- */

static NOINLINE void *grow(void *p, size_t n)
{
	char *q = realloc(p, n);
	q[0] = 8;
	return q;
}

static NOINLINE int run_realloc(void)
{
	long total = 0, kept = 0;
	for (int c = 0; c < 100; c++) {
		void *p = NULL;
		size_t n;
		for (n = 1024; n <= MIB; n *= 2) {
			p = grow(p, n);
			total += (long)n;
		}
		kept += (long)(n / 2);
		sink += (unsigned long)(uintptr_t)p & 1;
	}
	fprintf(stderr, "truth alloc %ld inuse %ld\n", total, kept);
	return 0;
}

/* ---- anonymous mappings ---- */

static NOINLINE void *map_region(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static NOINLINE int run_mmap(void)
{
	void *r[32];
	for (int i = 0; i < 32; i++)
		r[i] = map_region(4 * MIB);
	for (int i = 0; i < 16; i++)
		munmap(r[i], 4 * MIB);
	fprintf(stderr, "truth alloc %ld inuse %ld\n", 32 * 4 * MIB, 16 * 4 * MIB);
	return 0;
}

/* ---- the benchmark's churn ---- */

static NOINLINE void *churn_block(size_t n)
{
	char *p = malloc(n);
	p[0] = 9;
	return p;
}

static NOINLINE int run_churn(long gib)
{
	enum { HELD = 4096 };
	static void *held[HELD];
	long total = 0, goal = gib * 1024 * MIB;
	unsigned x = 12345;
	size_t i = 0;
	while (total < goal) {
		x = x * 1103515245u + 12345u;
		size_t n = 64u << ((x >> 16) % 10); /* 64 B .. 32 KiB */
		if (held[i])
			free(held[i]);
		held[i] = churn_block(n);
		total += (long)n;
		i = (i + 1) % HELD;
	}
	for (i = 0; i < HELD; i++)
		free(held[i]);
	fprintf(stderr, "truth alloc %ld inuse 0\n", total);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "split";
	if (!strcmp(what, "split"))
		return run_split();
	if (!strcmp(what, "threads"))
		return run_threads();
	if (!strcmp(what, "forkexec"))
		return run_forkexec(argv[0]);
	if (!strcmp(what, "leak")) {
		long mib = argc > 2 ? atol(argv[2]) : 64;
		long total = run_leak(mib);
		fprintf(stderr, "truth alloc %ld inuse %ld\n", total, total);
		return 0;
	}
	if (!strcmp(what, "realloc"))
		return run_realloc();
	if (!strcmp(what, "mmap"))
		return run_mmap();
	if (!strcmp(what, "churn"))
		return run_churn(argc > 2 ? atol(argv[2]) : 5);
	fprintf(stderr, "allocs: unknown pattern '%s'\n", what);
	return 2;
}
