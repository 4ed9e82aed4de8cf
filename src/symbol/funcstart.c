/* funcstart.c — function ranges from the FDEs of .eh_frame and .debug_frame (funcstart.h). libdw frames the
 * CIEs and FDEs (dwarf_next_cfi); the FDE's initial location is decoded here with its CIE's pointer encoding.
 * Invariant: the table is sorted by start with no two ranges overlapping (a later FDE inside an earlier one is
 * dropped), so a lookup is one binary search. */
#include "symbol/funcstart.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

struct range {
	uint64_t start, end;
};

struct funcstarts {
	struct range *r;
	size_t n, cap;
};

/* The CIEs seen so far: section offset -> the pointer encoding of their FDEs. */
struct cie_enc {
	Dwarf_Off off;
	uint8_t enc;
};

struct cfi_section {
	const uint8_t *base; /* the section's bytes */
	size_t size;
	uint64_t addr;       /* its ELF vaddr (pc-relative values are relative to it) */
	bool eh;             /* .eh_frame (encoded pointers) rather than .debug_frame (absolute, 8 bytes) */
};

static size_t enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: return 8;
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: return 2;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: return 4;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: return 8;
	default: return 0; /* uleb128/sleb128 and unknown forms: not used for FDE locations by x86_64 compilers */
	}
}

/* Reads an encoded value at p (end bounds it); false for an encoding we do not decode. */
static bool read_encoded(const struct cfi_section *s, const uint8_t *p, const uint8_t *end, uint8_t enc,
			 bool apply_base, uint64_t *out)
{
	size_t n = enc_size(enc);
	if (enc == DW_EH_PE_omit || n == 0 || (size_t)(end - p) < n)
		return false;
	uint64_t v = 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_sdata2: { int16_t x; memcpy(&x, p, 2); v = (uint64_t)(int64_t)x; break; }
	case DW_EH_PE_udata2: { uint16_t x; memcpy(&x, p, 2); v = x; break; }
	case DW_EH_PE_sdata4: { int32_t x; memcpy(&x, p, 4); v = (uint64_t)(int64_t)x; break; }
	case DW_EH_PE_udata4: { uint32_t x; memcpy(&x, p, 4); v = x; break; }
	default: memcpy(&v, p, 8); break;
	}
	if (!apply_base) {
		*out = v;
		return true;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: break;
	case DW_EH_PE_pcrel: v += s->addr + (uint64_t)(p - s->base); break;
	default: return false; /* textrel, datarel, funcrel: not in .eh_frame FDEs on x86_64 */
	}
	if (enc & DW_EH_PE_indirect)
		return false;
	*out = v;
	return true;
}

static void skip_uleb(const uint8_t **p, const uint8_t *end)
{
	while (*p < end && (*(*p)++ & 0x80))
		;
}

/* The FDE pointer encoding a CIE declares ('R' in its augmentation string); absptr when it declares none. */
static uint8_t cie_fde_encoding(const struct cfi_section *s, const Dwarf_CIE *cie)
{
	if (!s->eh)
		return DW_EH_PE_absptr;
	const char *aug = cie->augmentation;
	const uint8_t *p = cie->augmentation_data, *end = p ? p + cie->augmentation_data_size : NULL;
	if (!aug || aug[0] != 'z' || !p)
		return DW_EH_PE_absptr;
	for (const char *a = aug + 1; *a && p < end; a++) {
		switch (*a) {
		case 'R':
			return *p;
		case 'L':
			p++;
			break;
		case 'P': {
			uint8_t penc = *p++;
			size_t n = enc_size(penc);
			if (n == 0) {
				if ((penc & 0x0f) != DW_EH_PE_uleb128 && (penc & 0x0f) != DW_EH_PE_sleb128)
					return DW_EH_PE_omit;
				skip_uleb(&p, end);
			} else {
				p += n;
			}
			break;
		}
		case 'S': case 'B':
			break;
		default:
			return DW_EH_PE_omit; /* an augmentation we do not know: its data cannot be skipped */
		}
	}
	return DW_EH_PE_absptr;
}

static bool add_range(struct funcstarts *t, uint64_t start, uint64_t len)
{
	if (len == 0 || start + len < start)
		return true;
	if (!ALLOC_GROW(t->r, t->n + 1, t->cap))
		return false;
	t->r[t->n++] = (struct range){ start, start + len };
	return true;
}

/* Adds the FDEs of one section. False when out of memory. */
static bool load_section(struct funcstarts *t, Elf *elf, const struct cfi_section *s)
{
	Elf_Data data = { .d_buf = (void *)s->base, .d_size = s->size, .d_type = ELF_T_BYTE };
	struct cie_enc *cies = NULL;
	size_t ncies = 0, capcies = 0;
	bool ok = true;
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry entry;
	while (ok && ident && off < s->size && dwarf_next_cfi(ident, &data, s->eh, off, &next, &entry) == 0) {
		if (entry.CIE_id == DW_CIE_ID_64) {
			ok = ALLOC_GROW(cies, ncies + 1, capcies);
			if (ok)
				cies[ncies++] = (struct cie_enc){ off, cie_fde_encoding(s, &entry.cie) };
		} else {
			uint8_t enc = s->eh ? DW_EH_PE_omit : DW_EH_PE_absptr;
			for (size_t i = ncies; i-- > 0;)
				if (cies[i].off == entry.fde.CIE_pointer) {
					enc = cies[i].enc;
					break;
				}
			uint64_t start, len;
			const uint8_t *p = entry.fde.start, *end = entry.fde.end;
			if (enc != DW_EH_PE_omit && read_encoded(s, p, end, enc, true, &start) &&
			    read_encoded(s, p + enc_size(enc), end, enc & 0x0f, false, &len))
				ok = add_range(t, start, len);
		}
		if (next <= off)
			break;
		off = next;
	}
	free(cies);
	return ok;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* the widest first: the inner ones are dropped */
}

struct funcstarts *funcstarts_load(Elf *elf)
{
	struct funcstarts *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return t;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		bool eh = strcmp(name, ".eh_frame") == 0;
		if (!eh && strcmp(name, ".debug_frame") != 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL); /* .debug_frame may be compressed: libelf inflates it here */
		if (!d || !d->d_buf)
			continue;
		struct cfi_section s = { d->d_buf, d->d_size, sh.sh_addr, eh };
		if (!load_section(t, elf, &s)) {
			funcstarts_free(t);
			return NULL;
		}
	}
	if (t->n) {
		qsort(t->r, t->n, sizeof *t->r, range_cmp);
		size_t w = 0;
		for (size_t i = 0; i < t->n; i++)
			if (w == 0 || t->r[i].start >= t->r[w - 1].end)
				t->r[w++] = t->r[i];
		t->n = w;
	}
	return t;
}

void funcstarts_free(struct funcstarts *t)
{
	if (!t)
		return;
	free(t->r);
	free(t);
}

bool funcstarts_find(const struct funcstarts *t, uint64_t vaddr, uint64_t *start)
{
	uint64_t end;
	return funcstarts_find_range(t, vaddr, start, &end);
}

bool funcstarts_find_range(const struct funcstarts *t, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	if (!t || t->n == 0)
		return false;
	size_t lo = 0, hi = t->n;
	while (lo < hi) { /* the first range starting after vaddr */
		size_t mid = lo + (hi - lo) / 2;
		if (t->r[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= t->r[lo - 1].end)
		return false;
	*start = t->r[lo - 1].start;
	*end = t->r[lo - 1].end;
	return true;
}

size_t funcstarts_count(const struct funcstarts *t)
{
	return t ? t->n : 0;
}
