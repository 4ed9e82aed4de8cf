/* unwind_cost.c — cost of one DWARF unwind of a real stack (a 48-deep recursion of no-frame-pointer functions
 * under main) with plumb's per-address rule cache against asking libdw's CFI for every frame; printed as
 * microseconds per sample and frames per sample. Built and run by bench/unwind.sh. */
#pragma GCC optimize("omit-frame-pointer")
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbol/maps.h"
#include "unwind/unwind.h"

#define DEPTH 48
#define COPY (16 * 1024)

static struct unwind_regs regs;
static uint8_t stack[COPY];
static size_t stack_len;
static uint64_t stack_top;

__attribute__((noipa)) static int capture(void)
{
	uint64_t r[8];
	__asm__ volatile("lea 0(%%rip), %%rax\n\tmov %%rax, 0(%0)\n\tmov %%rsp, 8(%0)\n\tmov %%rbp, 16(%0)\n\t"
			 "mov %%rbx, 24(%0)\n\tmov %%r12, 32(%0)\n\tmov %%r13, 40(%0)\n\tmov %%r14, 48(%0)\n\t"
			 "mov %%r15, 56(%0)\n\t" : : "r"(r) : "rax", "memory");
	regs.r[UREG_IP] = r[0], regs.r[UREG_SP] = r[1], regs.r[UREG_BP] = r[2], regs.r[UREG_BX] = r[3];
	regs.r[UREG_R12] = r[4], regs.r[UREG_R13] = r[5], regs.r[UREG_R14] = r[6], regs.r[UREG_R15] = r[7];
	stack_len = stack_top - r[1] < COPY ? stack_top - r[1] : COPY;
	memcpy(stack, (void *)r[1], stack_len);
	return (int)(stack_len & 1);
}

__attribute__((noipa)) static int recurse(int n)
{
	int r = n > 0 ? recurse(n - 1) : capture();
	return r ^ n;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double per_sample_us(struct unwinder *u, size_t iters, size_t *frames)
{
	uint64_t ips[256];
	double t0 = now();
	for (size_t i = 0; i < iters; i++)
		*frames = unwind_dwarf(u, getpid(), &regs, stack, stack_len, ips, 256);
	return (now() - t0) / iters * 1e6;
}

int main(void)
{
	char line[512];
	volatile char here = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uint64_t)&here >= lo && (uint64_t)&here < hi)
			stack_top = hi;
	}
	if (f)
		fclose(f);
	recurse(DEPTH - 1 + here);
	struct maps *m = maps_new();
	if (!m || !maps_load_proc(m, getpid()))
		return 1;
	struct unwinder *u = unwinder_new(m);
	size_t frames = 0;
	per_sample_us(u, 10, &frames); /* open the modules */
	double cached = per_sample_us(u, 200000, &frames);
	unwinder_set_cache(u, false);
	double uncached = per_sample_us(u, 20000, &frames);
	printf("frames_per_sample %zu\ncached_us_per_sample %.3f\nlibdw_us_per_sample %.3f\n", frames, cached,
	       uncached);
	unwinder_free(u);
	maps_free(m);
	return frames >= DEPTH ? 0 : 1;
}
