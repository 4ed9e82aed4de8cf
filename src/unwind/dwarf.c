/* dwarf.c — placeholder unwinder over the copied user stack: frame pointers only, until the DWARF CFI
 * unwinder (issue 3) replaces this file. It keeps the interface of unwind.h so the perf_event backend's
 * dwarf path runs end to end. */
#include "unwind/unwind.h"

#include <stdlib.h>
#include <string.h>

struct unwinder {
	struct maps *maps;
};

struct unwinder *unwinder_new(struct maps *maps)
{
	struct unwinder *u = calloc(1, sizeof *u);
	if (u)
		u->maps = maps;
	return u;
}

void unwinder_free(struct unwinder *u)
{
	free(u);
}

size_t unwind_fp(const struct unwind_regs *regs, const uint8_t *stack, size_t stack_len, uint64_t *ips, size_t max)
{
	size_t n = 0;
	uint64_t sp = regs->r[UREG_SP], bp = regs->r[UREG_BP];
	if (max == 0)
		return 0;
	ips[n++] = regs->r[UREG_IP];
	while (n < max && bp >= sp && bp + 16 <= sp + stack_len && (bp & 7) == 0) {
		uint64_t next_bp, ret;
		memcpy(&next_bp, stack + (bp - sp), 8);
		memcpy(&ret, stack + (bp - sp) + 8, 8);
		if (ret == 0)
			break;
		ips[n++] = ret;
		if (next_bp <= bp)
			break;
		bp = next_bp;
	}
	return n;
}

size_t unwind_dwarf(struct unwinder *u, pid_t pid, const struct unwind_regs *regs, const uint8_t *stack,
		    size_t stack_len, uint64_t *ips, size_t max)
{
	(void)u;
	(void)pid;
	return unwind_fp(regs, stack, stack_len, ips, max);
}
