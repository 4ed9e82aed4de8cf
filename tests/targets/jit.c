/* jit.c — generates machine code at run time (a counted loop) into an executable mapping, describes it in
 * /tmp/perf-PID.map as "jit_hot_loop" the way JITs do for perf, and runs it for about SECONDS of CPU.
 * A profile must name the generated code from the map, with the _[j] suffix. --no-map writes no map (a test plants
 * its own there); --wait prints "jit pid N" and waits for a line on standard input before it writes the map and
 * runs. Usage: jit [SECONDS] [--no-map] [--wait]. x86_64. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

typedef uint64_t (*loop_fn)(uint64_t);

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE uint64_t run_jit(loop_fn fn, double seconds)
{
	uint64_t acc = 0;
	double end = cpu_seconds() + seconds;
	while (cpu_seconds() < end)
		acc += fn(2000000);
	return acc;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	int write_map = 1;
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--no-map") == 0) {
			write_map = 0;
		} else if (strcmp(argv[i], "--wait") == 0) {
			char line[16];
			printf("jit pid %d\n", (int)getpid());
			fflush(stdout);
			if (!fgets(line, sizeof line, stdin))
				return 1;
		}
	}
	/* mov rcx, rdi; 1: dec rcx; jnz 1b; mov rax, rcx; ret */
	static const unsigned char code[] = { 0x48, 0x89, 0xf9, 0x48, 0xff, 0xc9, 0x75, 0xfb, 0x48, 0x89, 0xc8, 0xc3 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *mem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, code, sizeof code);
	if (mprotect(mem, page, PROT_READ | PROT_EXEC) != 0)
		return 1;
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = write_map ? fopen(path, "w") : NULL;
	if (write_map && !f)
		return 1;
	if (f) {
		fprintf(f, "%lx %zx jit_hot_loop\n", (unsigned long)(uintptr_t)mem, sizeof code);
		fclose(f);
	}
	uint64_t r = run_jit((loop_fn)(void *)mem, seconds);
	printf("jit pid %d result %llu\n", (int)getpid(), (unsigned long long)r);
	return 0;
}
