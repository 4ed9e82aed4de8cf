/* unwind.h — unwinding of user stacks copied by the kernel at each sample (PERF_SAMPLE_REGS_USER |
 * PERF_SAMPLE_STACK_USER). The DWARF unwinder reads CFI from .eh_frame/.debug_frame of each module and
 * falls back to frame pointers per frame where there is no CFI. Lookups are cached per module.
 *
 * Ownership: unwinder_new() / unwinder_free(); the unwinder borrows the maps it is given. */
#ifndef PLUMB_UNWIND_UNWIND_H
#define PLUMB_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbol/maps.h"

/* x86_64 registers as perf_event delivers them (perf_regs.h order); the sample mask is UNWIND_REGS_MASK. */
enum unwind_reg {
	UREG_AX = 0, UREG_BX = 1, UREG_CX = 2, UREG_DX = 3, UREG_SI = 4, UREG_DI = 5, UREG_BP = 6, UREG_SP = 7,
	UREG_IP = 8, UREG_FLAGS = 9, UREG_CS = 10, UREG_SS = 11, UREG_DS = 12, UREG_ES = 13, UREG_FS = 14,
	UREG_GS = 15, UREG_R8 = 16, UREG_R9 = 17, UREG_R10 = 18, UREG_R11 = 19, UREG_R12 = 20, UREG_R13 = 21,
	UREG_R14 = 22, UREG_R15 = 23, UREG_COUNT = 24,
};
/* All general registers except segment registers (which perf refuses on x86_64). */
#define UNWIND_REGS_MASK 0xff0fffULL

/* The registers of one sample, indexed by enum unwind_reg (only those in the mask are meaningful). */
struct unwind_regs {
	uint64_t r[UREG_COUNT];
};

struct user_regs_struct;
/* The registers of a ptrace(PTRACE_GETREGS) set (sys/user.h, x86_64) in the unwinder's order; the segment
 * registers stay 0 (regs.c). */
void unwind_regs_from_user(struct unwind_regs *out, const struct user_regs_struct *r);

struct unwinder;

struct unwinder *unwinder_new(struct maps *maps);
void unwinder_free(struct unwinder *u);

/* Unwinds one sample of process pid: regs at the sample, `stack` is a copy of `stack_len` bytes starting at
 * regs->r[UREG_SP]. Writes return addresses (ips[0] = the sampled IP, then callers) and returns how many.
 * Stops at max, at the end of the copied stack, or when no rule applies. */
size_t unwind_dwarf(struct unwinder *u, pid_t pid, const struct unwind_regs *regs, const uint8_t *stack,
		    size_t stack_len, uint64_t *ips, size_t max);
/* The same walk with frame pointers only (the fallback, and --unwind fp over a copied stack). */
size_t unwind_fp(const struct unwind_regs *regs, const uint8_t *stack, size_t stack_len, uint64_t *ips, size_t max);

/* One sample's stack as perf_event records it (live or in a perf.data file): the callchain, innermost first, with
 * PERF_CONTEXT_* markers before its kernel and user parts, and for DWARF the user registers and stack copy. */
struct unwind_sample {
	pid_t pid;                      /* the process whose maps u looks addresses up in */
	uint64_t ip;                    /* the sampled IP (kept when there are no user registers) */
	const uint64_t *chain;          /* nr entries, or NULL */
	uint64_t nr;
	const struct unwind_regs *regs; /* NULL: no user registers (kernel thread, exiting task, frame pointers) */
	const uint8_t *stack;           /* the copied user stack, stack_len valid bytes */
	size_t stack_len;
};
/* Splits s into its kernel addresses (kern, innermost first, *nkern of them) and its user addresses (user,
 * innermost first, *nuser): the callchain's user part as recorded, or with u (DWARF) the stack unwound from the
 * registers over the copy; at most max of each. The one place the live backends and the perf.data reader turn
 * a recorded sample into addresses. */
void unwind_sample_stack(struct unwinder *u, const struct unwind_sample *s, uint64_t *kern, size_t *nkern,
			 uint64_t *user, size_t *nuser, size_t max);

/* Counters of one unwinder (for benchmarks and tests). */
struct unwind_stats {
	uint64_t samples;       /* unwind_dwarf calls */
	uint64_t cache_hits;    /* frames whose rule came from the per-address cache */
	uint64_t cache_misses;  /* frames whose rule was looked up in the module's CFI (libdw) */
	uint64_t complex_steps; /* frames evaluated through libdw every time (CFI expressions: PLT, signal frames) */
	uint64_t fp_steps;      /* frames unwound with frame pointers (no CFI for the address) */
	uint64_t maps_reloads;  /* /proc/PID/maps re-read for an address in no known mapping */
};
void unwinder_stats(const struct unwinder *u, struct unwind_stats *out);
/* Turns the per-address rule cache off (every frame asks libdw) or on; for benchmarks. */
void unwinder_set_cache(struct unwinder *u, bool on);

#endif
