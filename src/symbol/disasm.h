/* disasm.h — one function's machine code as instructions (docs/design.md §6.8, `plumb annotate --asm`): read from
 * the ELF file of its module at the ELF vaddrs samples carry, its range from the symbol table or, in a stripped
 * file, from the unwind tables (symbol/funcstart.h); disassembled by capstone; each instruction with the source
 * line the DWARF line table gives it (the innermost inlined function's line, as perf and objdump show it).
 *
 * Ownership: sym_disasm_function() fills a struct sym_code the caller releases with sym_code_release() (also on
 * a zeroed one); every string in it is owned by it. */
#ifndef PLUMB_SYMBOL_DISASM_H
#define PLUMB_SYMBOL_DISASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct sym_insn {
	uint64_t addr;      /* ELF vaddr */
	uint32_t size;      /* bytes */
	uint32_t line;      /* source line from the line table, 0 when none */
	char *file;         /* its source file, NULL when none */
	char text[112];     /* "imul rbx, rcx" (capstone's Intel syntax) */
	uint64_t target;    /* a direct jump's or call's target, 0 when none or indirect */
	bool call, jump, ret;
};

struct sym_code {
	uint64_t start, end;   /* the function's range [start, end) */
	char *name;            /* its symbol (demangled), NULL in a stripped file */
	bool from_unwind;      /* the range came from the unwind tables (no symbol covers it) */
	struct sym_insn *insns;
	size_t n;
};

/* Disassembles the function of the ELF file `path` holding vaddr. Refuses (PLUMB_EINVAL) a path that is not a
 * regular file or lies under /proc, /sys or /dev; PLUMB_ENOENT when the file is absent; PLUMB_EFORMAT when it
 * is no ELF, has no function at vaddr or no code there; PLUMB_EUNSUPPORTED for a machine capstone is not set up
 * for here (x86_64 and aarch64 are). */
enum plumb_err sym_disasm_function(const char *path, uint64_t vaddr, struct sym_code *out, struct perr *e);
void sym_code_release(struct sym_code *c);

#endif
