/* regs.c — the unwinder's registers (enum unwind_reg) from the register sets other sources give. */
#include <string.h>
#include <sys/user.h>

#include "unwind/unwind.h"

void unwind_regs_from_user(struct unwind_regs *out, const struct user_regs_struct *r)
{
	uint64_t *g = out->r;
	memset(g, 0, sizeof out->r);
	g[UREG_AX] = r->rax, g[UREG_BX] = r->rbx, g[UREG_CX] = r->rcx, g[UREG_DX] = r->rdx;
	g[UREG_SI] = r->rsi, g[UREG_DI] = r->rdi, g[UREG_BP] = r->rbp, g[UREG_SP] = r->rsp;
	g[UREG_IP] = r->rip, g[UREG_FLAGS] = r->eflags;
	g[UREG_R8] = r->r8, g[UREG_R9] = r->r9, g[UREG_R10] = r->r10, g[UREG_R11] = r->r11;
	g[UREG_R12] = r->r12, g[UREG_R13] = r->r13, g[UREG_R14] = r->r14, g[UREG_R15] = r->r15;
}
