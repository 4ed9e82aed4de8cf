/* dwarf.c — unwinding of copied user stacks with DWARF CFI (.eh_frame, then .debug_frame) from each module,
 * falling back to frame pointers per frame where a module has no CFI for an address.
 * Invariants: memory is only ever read from the copied stack (never from the live process); every step must
 * move the stack pointer up, so a walk always ends; per-address rules are cached in a fixed-size table, so
 * the unwinder's memory is bounded by the number of modules, not by the number of samples. */
#include "unwind/unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/clock.h"
#include "base/hashmap.h"
#include "base/intern.h"

/* DWARF register numbers on x86_64 (System V psABI). */
enum { DW_RAX = 0, DW_RDX, DW_RCX, DW_RBX, DW_RSI, DW_RDI, DW_RBP, DW_RSP, DW_R8, DW_R9, DW_R10, DW_R11,
       DW_R12, DW_R13, DW_R14, DW_R15, DW_RA, DW_NREGS };

/* perf register index of each DWARF register. */
static const uint8_t dw_to_ureg[DW_NREGS] = {
	UREG_AX, UREG_DX, UREG_CX, UREG_BX, UREG_SI, UREG_DI, UREG_BP, UREG_SP,
	UREG_R8, UREG_R9, UREG_R10, UREG_R11, UREG_R12, UREG_R13, UREG_R14, UREG_R15, UREG_IP,
};

/* The registers a compiled (fast) rule tracks: the callee-saved ones and the return address. The stack
 * pointer of the caller is always the CFA on x86_64. */
enum { T_RBX, T_RBP, T_R12, T_R13, T_R14, T_R15, T_RA, T_COUNT };
static const uint8_t track_dw[T_COUNT] = { DW_RBX, DW_RBP, DW_R12, DW_R13, DW_R14, DW_R15, DW_RA };

enum rule_kind {
	RK_SAME = 0,   /* unchanged from the callee */
	RK_UNDEF,      /* not recoverable (for RA: the end of the stack) */
	RK_AT_CFA,     /* saved at CFA + off */
	RK_VAL_CFA,    /* value is CFA + off */
	RK_REG,        /* value of another DWARF register (off holds its number) */
};

/* What is known about one address. */
enum {
	RF_VALID = 1,   /* the slot holds a rule for key */
	RF_NOCFI = 2,   /* no module CFI covers the address: use frame pointers */
	RF_COMPLEX = 4, /* CFI needs expressions: evaluate through libdw each time */
	RF_SIGNAL = 8,  /* a signal trampoline frame: the caller's address is exact */
};

struct rule {
	uint64_t key;
	int32_t cfa_off;
	int32_t off[T_COUNT];
	uint8_t cfa_reg;
	uint8_t flags;
	uint8_t kind[T_COUNT];
};

#define RULE_CACHE_BITS 14 /* 16384 rules, about 800 KiB */

struct module {
	const char *path;   /* held by the unwinder's path interner */
	int fd;
	Elf *elf;
	Dwarf_CFI *eh;  /* .eh_frame, owned (dwarf_cfi_end) */
	Dwarf *dw;      /* for .debug_frame; its CFI is owned by dw */
	Dwarf_CFI *dbg;
	uint64_t vdso_load; /* [vdso]: vaddr of the image start (the image is ours: same kernel) */
	bool is_vdso;
};

struct unwinder {
	struct maps *maps;
	struct module **mods;
	size_t nmods, capmods;
	struct interner mod_paths; /* every module path seen; its id indexes mods */
	struct hmap mod_by_ptr;  /* the maps' path pointer (stable while the maps live) -> index + 1 */
	struct rule *cache;      /* direct-mapped, 1 << RULE_CACHE_BITS */
	struct unwind_stats stats;
	bool no_cache;
	struct hmap reloaded; /* pid -> CLOCK_MONOTONIC seconds of the last /proc/PID/maps reload */
};

static bool elf_version_done;

struct unwinder *unwinder_new(struct maps *maps)
{
	struct unwinder *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->cache = calloc((size_t)1 << RULE_CACHE_BITS, sizeof(*u->cache));
	if (!u->cache) {
		free(u);
		return NULL;
	}
	u->maps = maps;
	if (!elf_version_done) {
		elf_version(EV_CURRENT);
		elf_version_done = true;
	}
	return u;
}

static void module_free(struct module *m)
{
	if (!m)
		return;
	if (m->eh)
		dwarf_cfi_end(m->eh);
	if (m->dw)
		dwarf_end(m->dw);
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	free(m);
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nmods; i++)
		module_free(u->mods[i]);
	free(u->mods);
	interner_release(&u->mod_paths);
	hmap_release(&u->mod_by_ptr);
	hmap_release(&u->reloaded);
	free(u->cache);
	free(u);
}

void unwinder_set_cache(struct unwinder *u, bool on)
{
	u->no_cache = !on;
	memset(u->cache, 0, sizeof(*u->cache) << RULE_CACHE_BITS);
}

void unwinder_stats(const struct unwinder *u, struct unwind_stats *out)
{
	*out = u->stats;
}

static void module_open(struct module *m)
{
	m->fd = -1;
	if (strcmp(m->path, "[vdso]") == 0) {
		size_t size = 0;
		const void *base = maps_vdso_image(&size, &m->vdso_load);
		if (!base)
			return;
		m->is_vdso = true;
		m->elf = elf_memory((char *)base, size);
	} else {
		if (m->path[0] != '/')
			return; /* [anon], [heap], JIT code: no CFI */
		m->fd = open(m->path, O_RDONLY | O_CLOEXEC);
		if (m->fd < 0)
			return;
		m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	}
	if (!m->elf)
		return;
	m->eh = dwarf_getcfi_elf(m->elf);
	/* .debug_frame lives in the file itself for objects built with -fno-asynchronous-unwind-tables -g. */
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	if (elf_getshdrstrndx(m->elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(m->elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(m->elf, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".debug_frame") == 0 && sh.sh_type != SHT_NOBITS) {
			m->dw = dwarf_begin_elf(m->elf, DWARF_C_READ, NULL);
			if (m->dw)
				m->dbg = dwarf_getcfi(m->dw);
			break;
		}
	}
}

/* The module for a mapped path, opened on first use; index + 1, or 0 when it cannot be tracked. */
static uint32_t module_get(struct unwinder *u, const char *path)
{
	uint32_t id = intern(&u->mod_paths, path, strlen(path), NULL);
	if (id == INTERN_NOMEM)
		return 0;
	if (id >= u->nmods && !ALLOC_GROW(u->mods, (size_t)id + 1, u->capmods))
		return 0;
	while (u->nmods <= id) { /* new (or left over by an allocation that failed) */
		struct module *m = calloc(1, sizeof(*m));
		if (!m)
			return 0;
		m->path = intern_str(&u->mod_paths, (uint32_t)u->nmods);
		module_open(m);
		u->mods[u->nmods++] = m;
	}
	return id + 1;
}

/* An address in no known mapping: a library mapped after the maps were read whose mmap record is still in
 * another CPU's ring, or garbage. Re-reads /proc/PID/maps, at most once a second per process, so garbage
 * cannot make every sample pay for it. */
static const struct map_entry *find_reloading(struct unwinder *u, pid_t pid, uint64_t addr)
{
	const struct map_entry *e = maps_find(u->maps, pid, addr);
	if (e)
		return e;
	uint32_t now_s = (uint32_t)(mono_ns() / 1000000000ULL);
	uint32_t last;
	if (hmap_get(&u->reloaded, (uint64_t)pid, &last) && now_s - last < 1)
		return NULL;
	hmap_put(&u->reloaded, (uint64_t)pid, now_s);
	u->stats.maps_reloads++;
	if (!maps_load_proc(u->maps, pid))
		return NULL;
	return maps_find(u->maps, pid, addr);
}

/* ---- the register state of one frame ---- */

struct state {
	uint64_t r[DW_NREGS];
	uint32_t valid; /* bit per DWARF register */
	const uint8_t *stack;
	uint64_t stack_lo, stack_hi; /* the copied stack covers [lo, hi) */
};

static inline bool mem_read(const struct state *s, uint64_t addr, uint64_t *out)
{
	if (addr < s->stack_lo || addr > s->stack_hi - 8 || s->stack_hi - s->stack_lo < 8)
		return false;
	memcpy(out, s->stack + (addr - s->stack_lo), 8);
	return true;
}

static inline bool reg_get(const struct state *s, unsigned dw, uint64_t *out)
{
	if (dw >= DW_NREGS || !(s->valid & (1u << dw)))
		return false;
	*out = s->r[dw];
	return true;
}

/* ---- generic evaluation through libdw (expressions: PLT entries, signal frames) ---- */

/* Evaluates a DWARF expression. Returns false when it uses something unsupported or unavailable.
 * *is_loc tells whether the result is an address to read (a location) or a value. */
static bool eval_ops(const struct state *s, const Dwarf_Op *ops, size_t nops, uint64_t cfa, bool have_cfa,
		     uint64_t *result, bool *is_loc, int *reg_loc)
{
	uint64_t st[16];
	int sp = 0;
	*is_loc = true;
	*reg_loc = -1;
#define PUSH(v) do { if (sp >= 16) return false; st[sp++] = (v); } while (0)
#define NEED(n) do { if (sp < (n)) return false; } while (0)
	for (size_t i = 0; i < nops; i++) {
		uint8_t a = ops[i].atom;
		uint64_t v, w;
		if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			PUSH((uint64_t)(a - DW_OP_lit0));
		} else if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
			if (!reg_get(s, a - DW_OP_breg0, &v))
				return false;
			PUSH(v + ops[i].number);
		} else if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
			if (nops != 1)
				return false;
			*reg_loc = a - DW_OP_reg0;
			return true;
		} else {
			switch (a) {
			case DW_OP_regx:
				if (nops != 1)
					return false;
				*reg_loc = (int)ops[i].number;
				return true;
			case DW_OP_bregx:
				if (!reg_get(s, (unsigned)ops[i].number, &v))
					return false;
				PUSH(v + ops[i].number2);
				break;
			case DW_OP_call_frame_cfa:
				if (!have_cfa)
					return false;
				PUSH(cfa);
				break;
			case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u: case DW_OP_const2s:
			case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u: case DW_OP_const8s:
			case DW_OP_constu: case DW_OP_consts:
				PUSH(ops[i].number);
				break;
			case DW_OP_deref:
				NEED(1);
				if (!mem_read(s, st[sp - 1], &v))
					return false;
				st[sp - 1] = v;
				break;
			case DW_OP_dup: NEED(1); v = st[sp - 1]; PUSH(v); break;
			case DW_OP_drop: NEED(1); sp--; break;
			case DW_OP_swap: NEED(2); v = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = v; break;
			case DW_OP_plus_uconst: NEED(1); st[sp - 1] += ops[i].number; break;
			case DW_OP_stack_value: *is_loc = false; i = nops; break;
			default:
				NEED(2);
				w = st[--sp];
				v = st[sp - 1];
				switch (a) {
				case DW_OP_plus: v += w; break;
				case DW_OP_minus: v -= w; break;
				case DW_OP_mul: v *= w; break;
				case DW_OP_and: v &= w; break;
				case DW_OP_or: v |= w; break;
				case DW_OP_xor: v ^= w; break;
				case DW_OP_shl: v = w < 64 ? v << w : 0; break;
				case DW_OP_shr: v = w < 64 ? v >> w : 0; break;
				case DW_OP_ge: v = (int64_t)v >= (int64_t)w; break;
				case DW_OP_gt: v = (int64_t)v > (int64_t)w; break;
				case DW_OP_le: v = (int64_t)v <= (int64_t)w; break;
				case DW_OP_lt: v = (int64_t)v < (int64_t)w; break;
				case DW_OP_eq: v = v == w; break;
				case DW_OP_ne: v = v != w; break;
				default: return false;
				}
				st[sp - 1] = v;
			}
		}
	}
#undef PUSH
#undef NEED
	if (sp < 1)
		return false;
	*result = st[sp - 1];
	return true;
}

/* One step with a libdw frame: fills next from s. Returns false when the CFA cannot be computed. */
static bool step_frame(const struct state *s, Dwarf_Frame *fr, struct state *next, bool *ra_undef)
{
	Dwarf_Op *ops;
	size_t nops;
	uint64_t cfa;
	bool is_loc;
	int reg_loc;
	*ra_undef = false;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops == 0)
		return false;
	if (!eval_ops(s, ops, nops, 0, false, &cfa, &is_loc, &reg_loc) || reg_loc >= 0)
		return false;
	next->valid = 0;
	for (unsigned dw = 0; dw < DW_NREGS; dw++) {
		Dwarf_Op mem[3];
		if (dw == DW_RSP)
			continue;
		if (dwarf_frame_register(fr, (int)dw, mem, &ops, &nops) != 0)
			continue;
		if (nops == 0) {
			if (ops == NULL && (s->valid & (1u << dw))) { /* same value */
				next->r[dw] = s->r[dw];
				next->valid |= 1u << dw;
			} else if (ops != NULL && dw == DW_RA) {
				*ra_undef = true;
			}
			continue;
		}
		uint64_t v;
		if (!eval_ops(s, ops, nops, cfa, true, &v, &is_loc, &reg_loc))
			continue;
		if (reg_loc >= 0) {
			if (!reg_get(s, (unsigned)reg_loc, &v))
				continue;
		} else if (is_loc && !mem_read(s, v, &v)) {
			continue;
		}
		next->r[dw] = v;
		next->valid |= 1u << dw;
	}
	next->r[DW_RSP] = cfa;
	next->valid |= 1u << DW_RSP;
	return true;
}

/* Compiles a libdw frame into a fast rule when it is only "register + offset" rules; else RF_COMPLEX. */
static void compile_rule(Dwarf_Frame *fr, struct rule *r)
{
	Dwarf_Op *ops;
	size_t nops;
	bool signalp = false;
	dwarf_frame_info(fr, NULL, NULL, &signalp);
	if (signalp)
		r->flags |= RF_SIGNAL;
	if (dwarf_frame_cfa(fr, &ops, &nops) != 0 || nops != 1 || ops[0].atom != DW_OP_bregx ||
	    ops[0].number >= DW_NREGS || (int64_t)ops[0].number2 != (int32_t)ops[0].number2) {
		r->flags |= RF_COMPLEX;
		return;
	}
	r->cfa_reg = (uint8_t)ops[0].number;
	r->cfa_off = (int32_t)ops[0].number2;
	for (unsigned dw = 0; dw < DW_NREGS; dw++) {
		Dwarf_Op mem[3];
		if (dw == DW_RSP)
			continue;
		int t = -1;
		for (int k = 0; k < T_COUNT; k++)
			if (track_dw[k] == dw)
				t = k;
		if (dwarf_frame_register(fr, (int)dw, mem, &ops, &nops) != 0) {
			r->flags |= RF_COMPLEX;
			return;
		}
		if (t < 0) {
			/* A caller-saved register: fine when the CFI leaves it alone. */
			if (nops != 0)
				r->flags |= RF_COMPLEX;
			continue;
		}
		if (nops == 0) {
			r->kind[t] = ops == NULL ? RK_SAME : RK_UNDEF;
			continue;
		}
		bool val = nops >= 2 && ops[nops - 1].atom == DW_OP_stack_value;
		size_t n = val ? nops - 1 : nops;
		if (ops[0].atom == DW_OP_call_frame_cfa && n == 1) {
			r->kind[t] = val ? RK_VAL_CFA : RK_AT_CFA;
			r->off[t] = 0;
		} else if (ops[0].atom == DW_OP_call_frame_cfa && n == 2 && ops[1].atom == DW_OP_plus_uconst &&
			   (int64_t)ops[1].number == (int32_t)ops[1].number) {
			r->kind[t] = val ? RK_VAL_CFA : RK_AT_CFA;
			r->off[t] = (int32_t)ops[1].number;
		} else if (!val && n == 1 && ops[0].atom == DW_OP_regx && ops[0].number < DW_NREGS) {
			r->kind[t] = RK_REG;
			r->off[t] = (int32_t)ops[0].number;
		} else {
			r->flags |= RF_COMPLEX;
			return;
		}
	}
}

/* The libdw frame for vaddr in module m, or NULL. The caller frees it. */
static Dwarf_Frame *module_frame(struct module *m, uint64_t vaddr)
{
	Dwarf_Frame *fr = NULL;
	if (m->eh && dwarf_cfi_addrframe(m->eh, vaddr, &fr) == 0)
		return fr;
	if (m->dbg && dwarf_cfi_addrframe(m->dbg, vaddr, &fr) == 0)
		return fr;
	return NULL;
}

/* Applies a compiled rule. */
static bool step_rule(const struct state *s, const struct rule *r, struct state *next, bool *ra_undef)
{
	uint64_t base, cfa;
	*ra_undef = false;
	if (!reg_get(s, r->cfa_reg, &base))
		return false;
	cfa = base + (int64_t)r->cfa_off;
	next->valid = 1u << DW_RSP;
	next->r[DW_RSP] = cfa;
	for (int t = 0; t < T_COUNT; t++) {
		unsigned dw = track_dw[t];
		uint64_t v;
		switch (r->kind[t]) {
		case RK_SAME:
			if (!reg_get(s, dw, &v))
				continue;
			break;
		case RK_UNDEF:
			if (dw == DW_RA)
				*ra_undef = true;
			continue;
		case RK_AT_CFA:
			if (!mem_read(s, cfa + (int64_t)r->off[t], &v))
				continue;
			break;
		case RK_VAL_CFA:
			v = cfa + (int64_t)r->off[t];
			break;
		case RK_REG:
			if (!reg_get(s, (unsigned)r->off[t], &v))
				continue;
			break;
		default:
			continue;
		}
		next->r[dw] = v;
		next->valid |= 1u << dw;
	}
	return true;
}

/* Frame-pointer step: CFA = rbp + 16, RA at rbp + 8, caller's rbp at rbp. For the leaf, when rbp does
 * not point into the stack, assume the function has not pushed anything yet (RA at sp). */
static bool step_fp(const struct state *s, struct state *next, bool leaf)
{
	uint64_t bp, sp, ra, nbp;
	if (!reg_get(s, DW_RSP, &sp))
		return false;
	next->valid = 0;
	if (reg_get(s, DW_RBP, &bp) && bp >= sp && mem_read(s, bp + 8, &ra) && mem_read(s, bp, &nbp)) {
		next->r[DW_RSP] = bp + 16;
		next->r[DW_RBP] = nbp;
		next->r[DW_RA] = ra;
		next->valid = (1u << DW_RSP) | (1u << DW_RBP) | (1u << DW_RA);
		return true;
	}
	if (leaf && mem_read(s, sp, &ra)) {
		next->r[DW_RSP] = sp + 8;
		next->r[DW_RA] = ra;
		next->valid = (1u << DW_RSP) | (1u << DW_RA);
		if (s->valid & (1u << DW_RBP)) {
			next->r[DW_RBP] = s->r[DW_RBP];
			next->valid |= 1u << DW_RBP;
		}
		return true;
	}
	return false;
}

/* The cached rule for vaddr in module mod (index + 1), computing it on a miss. */
static const struct rule *rule_for(struct unwinder *u, uint32_t mod, uint64_t vaddr)
{
	uint64_t key = ((uint64_t)mod << 48) ^ vaddr;
	struct rule *r = &u->cache[hash_u64(key) & (((size_t)1 << RULE_CACHE_BITS) - 1)];
	if ((r->flags & RF_VALID) && r->key == key && !u->no_cache) {
		u->stats.cache_hits++;
		return r;
	}
	u->stats.cache_misses++;
	memset(r, 0, sizeof(*r));
	r->key = key;
	r->flags = RF_VALID;
	Dwarf_Frame *fr = module_frame(u->mods[mod - 1], vaddr);
	if (!fr) {
		r->flags |= RF_NOCFI;
		return r;
	}
	compile_rule(fr, r);
	free(fr);
	return r;
}

size_t unwind_dwarf(struct unwinder *u, pid_t pid, const struct unwind_regs *regs, const uint8_t *stack,
		    size_t stack_len, uint64_t *ips, size_t max)
{
	struct state cur, next;
	size_t n = 0;
	if (max == 0)
		return 0;
	cur.valid = 0;
	for (unsigned dw = 0; dw < DW_NREGS; dw++) {
		cur.r[dw] = regs->r[dw_to_ureg[dw]];
		if ((UNWIND_REGS_MASK >> dw_to_ureg[dw]) & 1)
			cur.valid |= 1u << dw;
	}
	cur.stack = stack;
	cur.stack_lo = regs->r[UREG_SP];
	cur.stack_hi = cur.stack_lo + stack_len;
	next.stack = stack;
	next.stack_lo = cur.stack_lo;
	next.stack_hi = cur.stack_hi;
	u->stats.samples++;

	bool exact = true; /* the pc is exact (leaf, or interrupted by a signal), not a return address */
	for (;;) {
		uint64_t pc = cur.r[DW_RA];
		ips[n++] = pc;
		if (n >= max || pc == 0)
			break;
		/* A return address points after the call: look up the call instruction itself. */
		uint64_t lookup = exact ? pc : pc - 1;
		const struct map_entry *e = find_reloading(u, pid, lookup);
		if (!e)
			break;
		uint32_t mod;
		if (!hmap_get(&u->mod_by_ptr, (uint64_t)(uintptr_t)e->path, &mod)) {
			mod = module_get(u, e->path);
			hmap_put(&u->mod_by_ptr, (uint64_t)(uintptr_t)e->path, mod);
		}
		const struct rule *r = NULL;
		if (mod) {
			struct module *m = u->mods[mod - 1];
			uint64_t vaddr = m->is_vdso ? lookup - e->start + m->vdso_load : maps_vaddr(e, lookup);
			r = rule_for(u, mod, vaddr);
			if (r->flags & RF_COMPLEX) {
				Dwarf_Frame *fr = module_frame(m, vaddr);
				bool ok = false, ra_undef = false;
				if (fr) {
					ok = step_frame(&cur, fr, &next, &ra_undef);
					free(fr);
				}
				u->stats.complex_steps++;
				if (!ok || ra_undef)
					break;
				goto stepped;
			}
		}
		if (!r || (r->flags & RF_NOCFI)) {
			u->stats.fp_steps++;
			if (!step_fp(&cur, &next, n == 1))
				break;
		} else {
			bool ra_undef;
			if (!step_rule(&cur, r, &next, &ra_undef) || ra_undef)
				break;
		}
	stepped:
		if (!(next.valid & (1u << DW_RA)) || next.r[DW_RSP] <= cur.r[DW_RSP])
			break; /* no return address, or no progress: a loop or garbage */
		exact = r && (r->flags & RF_SIGNAL);
		cur = next;
	}
	return n;
}

size_t unwind_fp(const struct unwind_regs *regs, const uint8_t *stack, size_t stack_len, uint64_t *ips,
		 size_t max)
{
	size_t n = 0;
	if (max == 0)
		return 0;
	uint64_t lo = regs->r[UREG_SP], hi = lo + stack_len, bp = regs->r[UREG_BP], prev = lo;
	ips[n++] = regs->r[UREG_IP];
	while (n < max) {
		uint64_t ra, nbp;
		if (bp < prev || bp < lo || stack_len < 16 || bp > hi - 16)
			break;
		memcpy(&nbp, stack + (bp - lo), 8);
		memcpy(&ra, stack + (bp - lo) + 8, 8);
		if (ra == 0)
			break;
		ips[n++] = ra;
		if (nbp <= bp)
			break;
		prev = bp;
		bp = nbp;
	}
	return n;
}
