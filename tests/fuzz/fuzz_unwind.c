/* fuzz_unwind.c — the DWARF unwinder on hostile stack copies: the input becomes the registers and the copied
 * stack of a sample of this very process (so CFI of real modules is consulted). Words are steered toward
 * plausible values (code addresses of this binary and libc, addresses inside the copy) so the walk gets past
 * the first frame. The walk must end within max frames and never read outside the copy (ASan). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol/maps.h"
#include "unwind/unwind.h"

static struct maps *maps;
static struct unwinder *unwinder;

static uint64_t steer(uint64_t w, uint64_t sp, size_t len)
{
	static const uint64_t code[] = { (uint64_t)(uintptr_t)&unwind_dwarf, (uint64_t)(uintptr_t)&memcpy,
					 (uint64_t)(uintptr_t)&maps_find, (uint64_t)(uintptr_t)&getpid };
	switch (w & 3) {
	case 0:
		return code[(w >> 2) & 3] + ((w >> 4) & 0xfff);
	case 1:
		return sp + ((w >> 2) % (len + 64));
	default:
		return w;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!unwinder) {
		maps = maps_new();
		if (!maps || !maps_load_proc(maps, getpid()))
			abort();
		unwinder = unwinder_new(maps);
		if (!unwinder)
			abort();
	}
	struct unwind_regs regs;
	memset(&regs, 0, sizeof(regs));
	size_t nregs = size / 8 < UREG_COUNT ? size / 8 : UREG_COUNT;
	const uint64_t sp = 0x7ffd12340000ULL;
	size_t stack_len = size - nregs * 8;
	for (size_t r = 0; r < nregs; r++) {
		uint64_t w;
		memcpy(&w, data + r * 8, 8);
		regs.r[r] = steer(w, sp, stack_len);
	}
	regs.r[UREG_SP] = sp;
	uint8_t *stack = malloc(stack_len ? stack_len : 1);
	if (!stack)
		return 0;
	for (size_t i = 0; i < stack_len; i++)
		stack[i] = data[nregs * 8 + i];
	for (size_t i = 0; i + 8 <= stack_len; i += 8) {
		uint64_t w;
		memcpy(&w, stack + i, 8);
		w = steer(w, sp, stack_len);
		memcpy(stack + i, &w, 8);
	}
	uint64_t ips[128];
	size_t n = unwind_dwarf(unwinder, getpid(), &regs, stack, stack_len, ips, 128);
	if (n < 1 || n > 128)
		abort();
	n = unwind_fp(&regs, stack, stack_len, ips, 128);
	if (n < 1 || n > 128)
		abort();
	free(stack);
	return 0;
}
