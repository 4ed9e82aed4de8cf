/* disasm.c — a function's instructions from its ELF file (disasm.h): libdw for the symbol, the line table and the
 * file's bytes, the unwind tables for a stripped function's range, capstone to decode. The file is opened once per
 * call and only when it is a regular file outside /proc, /sys and /dev (a profile names it: untrusted). */
#include "symbol/disasm.h"

#include <capstone/capstone.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "symbol/debuginfod.h"
#include "symbol/funcstart.h"
#include "symbol/module.h"

#define DISASM_MAX_BYTES (4u << 20) /* a function longer than this is cut (generated code) */

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = sym_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static bool forbidden(const char *path)
{
	static const char *const dirs[] = { "/proc/", "/sys/", "/dev/" };
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return false;
}

static int open_regular(const char *path, struct perr *e)
{
	struct stat st;
	if (path[0] != '/' || forbidden(path))
		return perr_set(e, PLUMB_EINVAL, "%s: not a file plumb reads code from", path), -1;
	if (stat(path, &st) != 0)
		return perr_set(e, errno == ENOENT ? PLUMB_ENOENT : PLUMB_EIO, "%s: %s", path, strerror(errno)), -1;
	if (!S_ISREG(st.st_mode))
		return perr_set(e, PLUMB_EINVAL, "%s: not a regular file", path), -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return perr_set(e, PLUMB_EIO, "%s: %s", path, strerror(errno)), -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return perr_set(e, PLUMB_EINVAL, "%s: not a regular file", path), -1;
	}
	return fd;
}

/* The bytes of [start, end) from the executable section holding start; *n how many (cut at the section's end). */
static const uint8_t *code_bytes(Elf *elf, uint64_t start, uint64_t end, size_t *n)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		if (start < sh.sh_addr || start >= sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size < sh.sh_size)
			return NULL;
		uint64_t stop = end < sh.sh_addr + sh.sh_size ? end : sh.sh_addr + sh.sh_size;
		*n = (size_t)(stop - start);
		return (const uint8_t *)d->d_buf + (start - sh.sh_addr);
	}
	return NULL;
}

/* The function's range: its symbol's when one covers vaddr with a size, else its FDE's. */
static bool function_range(Dwfl_Module *mod, Elf *elf, Dwarf_Addr bias, uint64_t vaddr, struct sym_code *c)
{
	GElf_Sym sym;
	GElf_Off off;
	const char *name = dwfl_module_addrinfo(mod, vaddr + bias, &off, &sym, NULL, NULL, NULL);
	if (name && sym.st_size > 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
		c->start = vaddr - off;
		c->end = c->start + sym.st_size;
		char *d = sym_module_demangle(name);
		c->name = d ? d : strdup(name);
		return c->name != NULL;
	}
	struct funcstarts *fs = funcstarts_load(elf);
	bool ok = fs && funcstarts_find_range(fs, vaddr, &c->start, &c->end);
	funcstarts_free(fs);
	c->from_unwind = ok;
	return ok;
}

static void set_kind(csh cs, const cs_insn *in, struct sym_insn *out)
{
	const cs_detail *d = in->detail;
	if (!d)
		return;
	for (uint8_t g = 0; g < d->groups_count; g++) {
		out->call = out->call || d->groups[g] == CS_GRP_CALL;
		out->jump = out->jump || d->groups[g] == CS_GRP_JUMP;
		out->ret = out->ret || d->groups[g] == CS_GRP_RET;
	}
	if (!out->call && !out->jump)
		return;
#if defined(__x86_64__)
	if (d->x86.op_count == 1 && d->x86.operands[0].type == X86_OP_IMM)
		out->target = (uint64_t)d->x86.operands[0].imm;
#elif defined(__aarch64__)
	for (uint8_t i = 0; i < d->arm64.op_count; i++)
		if (d->arm64.operands[i].type == ARM64_OP_IMM)
			out->target = (uint64_t)d->arm64.operands[i].imm;
#endif
	(void)cs;
}

static enum plumb_err decode(Dwfl_Module *mod, Dwarf_Addr bias, const uint8_t *code, size_t n, struct sym_code *c,
			     struct perr *e)
{
	csh cs;
#if defined(__x86_64__)
	cs_err ce = cs_open(CS_ARCH_X86, CS_MODE_64, &cs);
#elif defined(__aarch64__)
	cs_err ce = cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &cs);
#else
	cs_err ce = CS_ERR_ARCH;
#endif
	if (ce != CS_ERR_OK)
		return perr_set(e, PLUMB_EUNSUPPORTED, "capstone cannot decode this machine's code: %s", cs_strerror(ce));
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_insn *in = cs_malloc(cs);
	size_t cap = 0;
	enum plumb_err rc = PLUMB_OK;
	const uint8_t *p = code;
	uint64_t addr = c->start;
	while (in && n > 0) {
		if (!cs_disasm_iter(cs, &p, &n, &addr, in)) { /* undecodable: one byte as data, then go on */
			if (!ALLOC_GROW(c->insns, c->n + 1, cap)) {
				rc = PLUMB_ENOMEM;
				break;
			}
			struct sym_insn *o = &c->insns[c->n++];
			memset(o, 0, sizeof *o);
			o->addr = addr;
			o->size = 1;
			snprintf(o->text, sizeof o->text, ".byte 0x%02x", *p);
			p++, n--, addr++;
			continue;
		}
		if (!ALLOC_GROW(c->insns, c->n + 1, cap)) {
			rc = PLUMB_ENOMEM;
			break;
		}
		struct sym_insn *o = &c->insns[c->n++];
		memset(o, 0, sizeof *o);
		o->addr = in->address;
		o->size = in->size;
		snprintf(o->text, sizeof o->text, "%s%s%s", in->mnemonic, in->op_str[0] ? " " : "", in->op_str);
		set_kind(cs, in, o);
		Dwfl_Line *l = dwfl_module_getsrc(mod, in->address + bias);
		int line = 0;
		const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
		o->line = line > 0 ? (uint32_t)line : 0;
		o->file = file ? strdup(file) : NULL;
	}
	if (!in)
		rc = PLUMB_ENOMEM;
	cs_free(in, 1);
	cs_close(&cs);
	return rc == PLUMB_ENOMEM ? perr_set(e, rc, "out of memory disassembling") : rc;
}

enum plumb_err sym_disasm_function(const char *path, uint64_t vaddr, struct sym_code *out, struct perr *e)
{
	memset(out, 0, sizeof *out);
	int fd = open_regular(path, e);
	if (fd < 0)
		return e->code;
	Dwfl *dwfl = dwfl_begin(&callbacks);
	if (!dwfl) {
		close(fd);
		return perr_set(e, PLUMB_ENOMEM, "out of memory opening %s", path);
	}
	Dwfl_Module *mod = dwfl_report_offline(dwfl, path, path, fd); /* takes fd */
	dwfl_report_end(dwfl, NULL, NULL);
	Dwarf_Addr bias = 0;
	Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	enum plumb_err rc = PLUMB_OK;
	const uint8_t *code = NULL;
	size_t n = 0;
	if (!elf)
		rc = perr_set(e, PLUMB_EFORMAT, "%s: not an ELF file libdw reads", path);
	else if (!function_range(mod, elf, bias, vaddr, out))
		rc = perr_set(e, PLUMB_EFORMAT, "%s: no function at 0x%llx (no symbol and no unwind entry covers it)", path,
			      (unsigned long long)vaddr);
	else if (!(code = code_bytes(elf, out->start, out->end, &n)) || n == 0)
		rc = perr_set(e, PLUMB_EFORMAT, "%s: no code at 0x%llx", path, (unsigned long long)out->start);
	if (!rc)
		rc = decode(mod, bias, code, n < DISASM_MAX_BYTES ? n : DISASM_MAX_BYTES, out, e);
	dwfl_end(dwfl);
	if (rc)
		sym_code_release(out);
	return rc;
}

void sym_code_release(struct sym_code *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->insns[i].file);
	free(c->insns);
	free(c->name);
	memset(c, 0, sizeof *c);
}
