/* secrets.c — a process whose names carry secret shapes, for the redaction test (docs/design.md §3.6): its name
 * is "pw=hunter2COMM", a worker thread is "tok=ghp_THRD01", generated code is described in /tmp/perf-PID.map as
 * "tok=ghp_JITFN1" (a JIT name), and a function is named ghp_kept_fn (a symbol: code, kept as it is). The test
 * compiles it inside a directory named "token=ghp_DIR0001", so its source path and module path carry a secret
 * too. Each thread burns CPU for SECONDS (default 0.5). x86_64 (the generated code). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

typedef uint64_t (*loop_fn)(uint64_t);

static double seconds = 0.5;
static loop_fn jit_code;
static volatile uint64_t sink;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE uint64_t ghp_kept_fn(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

/* The worker: half in the symbol ghp_kept_fn, half in the generated code. */
NOINLINE void *worker(void *arg)
{
	(void)arg;
	uint64_t x = 1;
	double end = thread_cpu() + seconds;
	while (thread_cpu() < end) {
		x = ghp_kept_fn(x);
		x += jit_code(200000);
	}
	sink += x;
	return NULL;
}

NOINLINE uint64_t main_burn(void)
{
	uint64_t x = 3;
	double end = thread_cpu() + seconds;
	while (thread_cpu() < end)
		x = ghp_kept_fn(x);
	return x;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		seconds = atof(argv[1]);
	prctl(PR_SET_NAME, "pw=hunter2COMM");
	/* mov rcx, rdi; 1: dec rcx; jnz 1b; mov rax, rcx; ret */
	static const unsigned char code[] = { 0x48, 0x89, 0xf9, 0x48, 0xff, 0xc9, 0x75, 0xfb, 0x48, 0x89, 0xc8, 0xc3 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *mem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof code);
	if (mprotect(mem, page, PROT_READ | PROT_EXEC) != 0)
		return 1;
	jit_code = (loop_fn)(void *)mem;
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx tok=ghp_JITFN1\n", (unsigned long)(uintptr_t)mem, sizeof code);
	fclose(f);
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	pthread_setname_np(t, "tok=ghp_THRD01");
	sink += main_burn();
	pthread_join(t, NULL);
	printf("secrets pid %d\n", (int)getpid());
	return 0;
}
