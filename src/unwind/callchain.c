/* callchain.c — a recorded perf sample's stack as addresses (unwind.h: unwind_sample_stack). The callchain comes
 * innermost first, [PERF_CONTEXT_KERNEL, k0, ..., PERF_CONTEXT_USER, u0, ...]; entries under other contexts
 * (guest, hypervisor) are dropped. */
#include <linux/perf_event.h>

#include "unwind/unwind.h"

void unwind_sample_stack(struct unwinder *u, const struct unwind_sample *s, uint64_t *kern, size_t *nkern,
			 uint64_t *user, size_t *nuser, size_t max)
{
	size_t nk = 0, nu = 0;
	uint64_t ctx = 0;
	for (uint64_t i = 0; s->chain && i < s->nr; i++) {
		uint64_t a = s->chain[i];
		if (a >= (uint64_t)PERF_CONTEXT_MAX)
			ctx = a;
		else if (ctx == (uint64_t)PERF_CONTEXT_KERNEL && nk < max)
			kern[nk++] = a;
		else if (ctx == (uint64_t)PERF_CONTEXT_USER && nu < max)
			user[nu++] = a;
	}
	if (u && s->regs)
		nu = unwind_dwarf(u, s->pid, s->regs, s->stack, s->stack ? s->stack_len : 0, user, max);
	else if (u && nk == 0 && nu == 0 && s->ip && max)
		user[nu++] = s->ip; /* no user registers (kernel thread or exiting task): keep the IP */
	*nkern = nk;
	*nuser = nu;
}
