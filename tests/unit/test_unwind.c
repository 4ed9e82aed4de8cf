/* test_unwind.c — the DWARF unwinder on real stacks: the test captures its own registers and a copy of its
 * stack at a known depth of functions compiled without frame pointers, and checks the unwound chain against
 * the return addresses each function recorded on entry (__builtin_return_address(0)). */
#pragma GCC optimize("omit-frame-pointer")
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sys/mman.h>
#include <sys/user.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol/maps.h"
#include "unwind/unwind.h"


#define MAXD 128
#define STACK_COPY (64 * 1024)

/* What one capture saw. */
struct snap {
	struct unwind_regs regs;
	uint8_t *stack;
	size_t len;
	uint64_t ra[MAXD]; /* ra[d]: return address recorded by the function at depth d (0 = capture) */
};

static struct snap snap;
static uint64_t recorded[MAXD];
static uint64_t stack_top; /* end of the current thread's stack */

/* Copies registers and the stack from rsp upwards to stack_top (at most STACK_COPY bytes). The copy reads
 * other frames' bytes on purpose, so AddressSanitizer must not check it (and memcpy would be intercepted). */
__attribute__((noipa, no_sanitize_address)) static int capture(void)
{
	uint64_t r[8];
	recorded[0] = (uint64_t)__builtin_return_address(0);
	__asm__ volatile("lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, 0(%0)\n\t"
			 "mov %%rsp, 8(%0)\n\t"
			 "mov %%rbp, 16(%0)\n\t"
			 "mov %%rbx, 24(%0)\n\t"
			 "mov %%r12, 32(%0)\n\t"
			 "mov %%r13, 40(%0)\n\t"
			 "mov %%r14, 48(%0)\n\t"
			 "mov %%r15, 56(%0)\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	memset(&snap.regs, 0, sizeof(snap.regs));
	snap.regs.r[UREG_IP] = r[0];
	snap.regs.r[UREG_SP] = r[1];
	snap.regs.r[UREG_BP] = r[2];
	snap.regs.r[UREG_BX] = r[3];
	snap.regs.r[UREG_R12] = r[4];
	snap.regs.r[UREG_R13] = r[5];
	snap.regs.r[UREG_R14] = r[6];
	snap.regs.r[UREG_R15] = r[7];
	size_t len = stack_top - r[1];
	if (len > STACK_COPY)
		len = STACK_COPY;
	snap.len = len;
	for (size_t i = 0; i < len; i++)
		snap.stack[i] = ((const volatile uint8_t *)r[1])[i];
	return (int)(len & 1);
}

__attribute__((noipa)) static int level3(int x)
{
	recorded[1] = (uint64_t)__builtin_return_address(0);
	int r = capture();
	return r * 3 + x;
}

__attribute__((noipa)) static int level2(int x)
{
	recorded[2] = (uint64_t)__builtin_return_address(0);
	int r = level3(x + 1);
	return r ^ x;
}

__attribute__((noipa)) static int level1(int x)
{
	recorded[3] = (uint64_t)__builtin_return_address(0);
	int r = level2(x + 2);
	return r * 7 - x;
}

static int rec_depth;
__attribute__((noipa)) static int recurse(int n)
{
	recorded[1 + n] = (uint64_t)__builtin_return_address(0);
	int r = n > 0 ? recurse(n - 1) : capture();
	return r ^ n;
}

static uint64_t find_stack_top(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t top = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && sp >= lo && sp < hi)
			top = hi;
	}
	if (f)
		fclose(f);
	return top;
}

static size_t unwind_snap(pid_t pid, uint64_t *ips, size_t max, bool poison_bp)
{
	struct maps *m = maps_new();
	assert_non_null(m);
	assert_true(maps_load_proc(m, pid));
	struct unwinder *u = unwinder_new(m);
	assert_non_null(u);
	struct unwind_regs regs = snap.regs;
	if (poison_bp)
		regs.r[UREG_BP] = 0x1234; /* frame pointers cannot help: only CFI can get this right */
	size_t n = unwind_dwarf(u, pid, &regs, snap.stack, snap.len, ips, max);
	unwinder_free(u);
	maps_free(m);
	return n;
}

static int setup(void **state)
{
	snap.stack = malloc(STACK_COPY);
	uint64_t here = (uint64_t)__builtin_frame_address(0);
	stack_top = find_stack_top(here);
	return snap.stack && stack_top ? 0 : -1;
}

static int teardown(void **state)
{
	free(snap.stack);
	return 0;
}

static void test_unwind__chain_without_frame_pointers(void **state)
{
	level1(5);
	uint64_t ips[MAXD];
	size_t n = unwind_snap(getpid(), ips, MAXD, true);
	assert_true(n >= 5);
	assert_int_equal(ips[0], snap.regs.r[UREG_IP]);
	for (int d = 0; d < 4; d++)
		assert_int_equal(ips[1 + d], recorded[d]);
	/* The frame-pointer walk cannot get past the leaf on the same data. */
	struct unwind_regs regs = snap.regs;
	regs.r[UREG_BP] = 0x1234;
	size_t nfp = unwind_fp(&regs, snap.stack, snap.len, ips, MAXD);
	assert_true(nfp < 3);
}

/* The walk goes through main, __libc_start_main and ends at _start (its return address rule is undefined),
 * not in garbage beyond it. */
extern char _start[];
static void test_unwind__ends_at_start(void **state)
{
	level1(1);
	uint64_t ips[MAXD];
	size_t n = unwind_snap(getpid(), ips, MAXD, false);
	assert_true(n < MAXD);
	uint64_t last = ips[n - 1] - 1;
	assert_true(last >= (uint64_t)_start && last < (uint64_t)_start + 64);
}

static void test_unwind__deep_recursion(void **state)
{
	rec_depth = 60;
	recurse(rec_depth);
	uint64_t ips[MAXD];
	size_t n = unwind_snap(getpid(), ips, MAXD, true);
	assert_true(n >= (size_t)rec_depth + 3);
	for (int d = 0; d <= rec_depth + 1; d++)
		assert_int_equal(ips[1 + d], recorded[d]);
}

/* A stack that is cut short (the kernel copies a bounded amount) ends the walk without reading past it. */
static void test_unwind__truncated_copy(void **state)
{
	rec_depth = 60;
	recurse(rec_depth);
	snap.len = 512;
	uint64_t ips[MAXD];
	size_t n = unwind_snap(getpid(), ips, MAXD, true);
	assert_true(n > 3 && n < (size_t)rec_depth);
	for (size_t d = 1; d < n; d++)
		assert_int_equal(ips[d], recorded[d - 1]);
}

/* Through a signal frame: the handler captures; the walk must pass __restore_rt back into raise's caller. */
static uint64_t sig_recorded_outer;
static void on_signal(int sig)
{
	capture();
}

__attribute__((noipa)) static int signal_level(int x)
{
	sig_recorded_outer = (uint64_t)__builtin_return_address(0);
	raise(SIGUSR1);
	return x + 1;
}

static void test_unwind__through_signal_frame(void **state)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	int r = signal_level(3);
	assert_int_equal(r, 4);
	uint64_t ips[MAXD];
	size_t n = unwind_snap(getpid(), ips, MAXD, true);
	bool found = false;
	for (size_t i = 0; i < n; i++)
		found |= ips[i] == sig_recorded_outer;
	assert_true(found);
	uint64_t last = ips[n - 1] - 1;
	assert_true(last >= (uint64_t)_start && last < (uint64_t)_start + 64);
}

/* A thread's stack ends in clone3/start_thread: the walk stops cleanly there. */
static void *thread_main(void *arg)
{
	volatile char here = 0;
	stack_top = find_stack_top((uint64_t)&here);
	level1(2 + here);
	return NULL;
}

static void test_unwind__thread_ends_cleanly(void **state)
{
	uint64_t main_top = stack_top;
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, thread_main, NULL), 0);
	pthread_join(t, NULL);
	stack_top = main_top;
	uint64_t ips[MAXD];
	size_t n = unwind_snap(getpid(), ips, MAXD, true);
	assert_true(n >= 6 && n < 16);
	for (int d = 0; d < 4; d++)
		assert_int_equal(ips[1 + d], recorded[d]);
}

static uint64_t rnd_state = 42;
static uint64_t RND(void)
{
	rnd_state = rnd_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return rnd_state >> 11;
}

/* A leaf caught on the first instruction of a function (nothing pushed yet, the return address at sp): built
 * from a real capture by moving the state back to the moment level2 called level3. */
static void test_unwind__leaf_at_function_entry(void **state)
{
	level1(7);
	uint64_t at = 0;
	for (size_t off = 0; off + 8 <= snap.len; off += 8) {
		uint64_t v;
		memcpy(&v, snap.stack + off, 8);
		if (v == recorded[1]) {
			at = snap.regs.r[UREG_SP] + off;
			break;
		}
	}
	assert_true(at != 0);
	struct snap saved = snap;
	size_t skip = at - snap.regs.r[UREG_SP];
	snap.stack += skip;
	snap.len -= skip;
	snap.regs.r[UREG_SP] = at;
	snap.regs.r[UREG_IP] = (uint64_t)level3;
	uint64_t ips[MAXD];
	size_t n = unwind_snap(getpid(), ips, MAXD, true);
	snap = saved;
	assert_true(n >= 4);
	assert_int_equal(ips[0], (uint64_t)level3);
	for (int d = 1; d < 4; d++)
		assert_int_equal(ips[d], recorded[d]);
}

/* Code without CFI (JIT-like, in an anonymous executable mapping) that keeps frame pointers: the walk crosses
 * it with the frame-pointer fallback and goes on with CFI in its caller. */
typedef int (*jit_fn)(void);
static jit_fn jit_code;

__attribute__((noipa)) static int jit_caller(int x)
{
	recorded[2] = (uint64_t)__builtin_return_address(0);
	int r = jit_code();
	return r + x;
}

static void test_unwind__frame_pointer_fallback_without_cfi(void **state)
{
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	/* push %rbp; mov %rsp,%rbp; movabs $capture,%rax; call *%rax; pop %rbp; ret */
	uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xd0, 0x5d, 0xc3 };
	uint64_t target = (uint64_t)capture;
	memcpy(code + 6, &target, 8);
	memcpy(page, code, sizeof(code));
	jit_code = (jit_fn)(void *)page;
	jit_caller(1);
	uint64_t ips[MAXD];
	size_t n = unwind_snap(getpid(), ips, MAXD, false);
	assert_true(n >= 5);
	assert_int_equal(ips[1], recorded[0]);                      /* in the JIT code */
	assert_int_equal(ips[1], (uint64_t)page + 16);
	assert_true(ips[2] > (uint64_t)jit_caller && ips[2] < (uint64_t)jit_caller + 256); /* the fallback step */
	assert_int_equal(ips[3], recorded[2]);                      /* and CFI again */
	uint64_t last = ips[n - 1] - 1;
	assert_true(last >= (uint64_t)_start && last < (uint64_t)_start + 64);
	munmap(page, 4096);
}

/* Garbage in (random registers, a stack of random words, pointers into the stack and into code): every walk
 * ends within max frames and reads nothing outside the copy (ASan checks the latter under make asan). */
static void test_unwind__garbage_terminates(void **state)
{
	struct maps *m = maps_new();
	assert_non_null(m);
	assert_true(maps_load_proc(m, getpid()));
	struct unwinder *u = unwinder_new(m);
	assert_non_null(u);
	uint64_t code[] = { (uint64_t)level1, (uint64_t)level2, (uint64_t)recurse, (uint64_t)memcpy,
			    (uint64_t)capture };
	size_t len = 4096;
	uint8_t *stack = malloc(len);
	assert_non_null(stack);
	for (int iter = 0; iter < 3000; iter++) {
		struct unwind_regs regs;
		uint64_t sp = 0x7ffd00000000ULL + (RND() & 0xfff0);
		for (int r = 0; r < UREG_COUNT; r++)
			regs.r[r] = RND() % 3 == 0 ? sp + (RND() % (len + 64)) : RND();
		regs.r[UREG_SP] = sp;
		regs.r[UREG_IP] = code[RND() % 5] + RND() % 64;
		for (size_t i = 0; i + 8 <= len; i += 8) {
			uint64_t v, k = RND() % 4;
			v = k == 0 ? RND() : k == 1 ? sp + (RND() % (len + 64)) : code[RND() % 5] + RND() % 128;
			memcpy(stack + i, &v, 8);
		}
		size_t cut = (size_t)(RND() % (len + 1));
		uint64_t ips[64];
		size_t n = unwind_dwarf(u, getpid(), &regs, stack, cut, ips, 64);
		assert_true(n >= 1 && n <= 64);
		n = unwind_fp(&regs, stack, cut, ips, 64);
		assert_true(n >= 1 && n <= 64);
	}
	free(stack);
	unwinder_free(u);
	maps_free(m);
}

/* A PTRACE_GETREGS set lands in the unwinder's order: every general register in its slot, the segment
 * registers 0. */
static void test_unwind__regs_from_user(void **state)
{
	(void)state;
	struct user_regs_struct u;
	memset(&u, 0xee, sizeof u); /* segment and other fields the unwinder does not take */
	u.rax = 1, u.rbx = 2, u.rcx = 3, u.rdx = 4, u.rsi = 5, u.rdi = 6, u.rbp = 7, u.rsp = 8, u.rip = 9;
	u.eflags = 10, u.r8 = 11, u.r9 = 12, u.r10 = 13, u.r11 = 14, u.r12 = 15, u.r13 = 16, u.r14 = 17, u.r15 = 18;
	struct unwind_regs r;
	memset(&r, 0x55, sizeof r);
	unwind_regs_from_user(&r, &u);
	static const int order[] = { UREG_AX, UREG_BX, UREG_CX, UREG_DX, UREG_SI,  UREG_DI,  UREG_BP,  UREG_SP,  UREG_IP,
				     UREG_FLAGS, UREG_R8, UREG_R9, UREG_R10, UREG_R11, UREG_R12, UREG_R13, UREG_R14, UREG_R15 };
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		assert_int_equal(r.r[order[i]], i + 1);
	static const int segs[] = { UREG_CS, UREG_SS, UREG_DS, UREG_ES, UREG_FS, UREG_GS };
	for (size_t i = 0; i < sizeof segs / sizeof segs[0]; i++)
		assert_int_equal(r.r[segs[i]], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unwind__chain_without_frame_pointers),
		cmocka_unit_test(test_unwind__ends_at_start),
		cmocka_unit_test(test_unwind__deep_recursion),
		cmocka_unit_test(test_unwind__truncated_copy),
		cmocka_unit_test(test_unwind__through_signal_frame),
		cmocka_unit_test(test_unwind__thread_ends_cleanly),
		cmocka_unit_test(test_unwind__leaf_at_function_entry),
		cmocka_unit_test(test_unwind__frame_pointer_fallback_without_cfi),
		cmocka_unit_test(test_unwind__garbage_terminates),
		cmocka_unit_test(test_unwind__regs_from_user),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
