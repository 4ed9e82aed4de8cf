/* plt.c — PLT stub names from the relocation tables (plt.h). Two passes over the file: the GOT slots that
 * relocations name (slot vaddr -> symbol), then every stub of the PLT sections, named by the slot its
 * `jmp *disp32(%rip)` reads. The table is sorted by stub start, so a lookup is one binary search. */
#include "symbol/plt.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/sbuf.h"

struct plt_slot {
	uint64_t slot;
	uint32_t name; /* offset into names */
};

struct plt_stub {
	uint64_t start, end;
	uint32_t name; /* offset into names of "X@plt" */
};

struct plt_stubs {
	struct plt_stub *v;
	size_t n, cap;
	struct sbuf names;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct plt_slot *x = a, *y = b;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int stub_cmp(const void *a, const void *b)
{
	const struct plt_stub *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* The GOT slots named by the RELA sections' relocations (their symbols from the linked symbol table). */
static bool read_slots(Elf *elf, struct plt_stubs *t, struct plt_slot **slots, size_t *nslots)
{
	size_t cap = 0, shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return true;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
			continue;
		Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
		GElf_Shdr symsh;
		Elf_Data *data = elf_getdata(scn, NULL), *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
		if (!data || !syms || !gelf_getshdr(symscn, &symsh))
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym s;
			if (!gelf_getrela(data, (int)i, &r) || GELF_R_SYM(r.r_info) == 0 ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
				continue;
			const char *name = elf_strptr(elf, symsh.sh_link, s.st_name);
			if (!name || !name[0])
				continue;
			if (!ALLOC_GROW(*slots, *nslots + 1, cap))
				return false;
			(*slots)[*nslots].slot = r.r_offset;
			(*slots)[*nslots].name = (uint32_t)t->names.len;
			(*nslots)++;
			sbuf_addstr(&t->names, name);
			sbuf_addstr(&t->names, "@plt");
			sbuf_add(&t->names, "", 1);
		}
	}
	return !t->names.oom;
}

/* The GOT slot an indirect jump in the stub at vaddr (bytes p[0..n)) reads, false when it has none. */
static bool stub_slot(const unsigned char *p, size_t n, uint64_t vaddr, uint64_t *slot)
{
	for (size_t i = 0; i + 6 <= n; i++) {
		if (p[i] != 0xff || p[i + 1] != 0x25)
			continue;
		int32_t disp;
		memcpy(&disp, p + i + 2, sizeof disp);
		*slot = vaddr + i + 6 + (uint64_t)(int64_t)disp;
		return true;
	}
	return false;
}

static bool is_plt_section(const char *name)
{
	return name && (strcmp(name, ".plt") == 0 || strcmp(name, ".plt.sec") == 0 || strcmp(name, ".plt.got") == 0);
}

static bool read_stubs(Elf *elf, struct plt_stubs *t, const struct plt_slot *slots, size_t nslots)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return true;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !is_plt_section(elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < sh.sh_size)
			continue;
		uint64_t ent = sh.sh_entsize >= 8 && sh.sh_entsize <= 64 ? sh.sh_entsize : 16;
		for (uint64_t off = 0; off + ent <= sh.sh_size; off += ent) {
			uint64_t slot;
			if (!stub_slot((const unsigned char *)data->d_buf + off, ent, sh.sh_addr + off, &slot))
				continue;
			struct plt_slot key = { .slot = slot };
			const struct plt_slot *hit = bsearch(&key, slots, nslots, sizeof *slots, slot_cmp);
			if (!hit)
				continue;
			if (!ALLOC_GROW(t->v, t->n + 1, t->cap))
				return false;
			t->v[t->n++] = (struct plt_stub){ sh.sh_addr + off, sh.sh_addr + off + ent, hit->name };
		}
	}
	return true;
}

struct plt_stubs *plt_stubs_load(Elf *elf)
{
	struct plt_stubs *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	sbuf_init(&t->names);
	GElf_Ehdr eh;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		return t;
	struct plt_slot *slots = NULL;
	size_t nslots = 0;
	bool ok = read_slots(elf, t, &slots, &nslots);
	if (ok) {
		qsort(slots, nslots, sizeof *slots, slot_cmp);
		ok = read_stubs(elf, t, slots, nslots);
	}
	free(slots);
	if (!ok) {
		plt_stubs_free(t);
		return NULL;
	}
	qsort(t->v, t->n, sizeof *t->v, stub_cmp);
	return t;
}

void plt_stubs_free(struct plt_stubs *t)
{
	if (!t)
		return;
	free(t->v);
	sbuf_release(&t->names);
	free(t);
}

const char *plt_stubs_find(const struct plt_stubs *t, uint64_t vaddr)
{
	if (!t)
		return NULL;
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].end <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->n && t->v[lo].start <= vaddr && vaddr < t->v[lo].end)
		return t->names.buf + t->v[lo].name;
	return NULL;
}

size_t plt_stubs_count(const struct plt_stubs *t)
{
	return t ? t->n : 0;
}
