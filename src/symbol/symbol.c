/* symbol.c — resolves each distinct raw frame once (symbol/module.c for user code, /proc/kallsyms for the
 * kernel, perf maps for JIT code) and rebuilds the profile with labelled frames. Raw stack nodes are translated
 * in id order (a parent's id is always smaller than its child's), so the whole pass is linear. A user frame that
 * nothing names becomes `module+0xSTART` (its function's start from the unwind tables, docs/design.md §4.1);
 * the samples of modules left without names are counted for the summary's hint (symbol/hint.c). */
#include "symbol/symbol.h"

#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/intern.h"
#include "symbol/debuginfod.h"
#include "symbol/files.h"
#include "symbol/hint.h"
#include "symbol/jit.h"
#include "symbol/kallsyms.h"
#include "symbol/maps.h"
#include "symbol/module.h"

#define NO_MODULE UINT32_MAX
_Static_assert(SYM_MAX_INLINE == SYM_MAX_FRAMES, "an inline chain fits what sym_resolver_frame promises");

/* plumb's own copy of the vDSO image, which is the target's too (one kernel): its code ranges (ELF vaddrs) tell
 * where in the image an absolute address of a target's [vdso] mapping falls. */
#define VDSO_MAX_CODE 8
struct vdso_info {
	bool tried, ok;
	uint64_t load, size;
	size_t ncode;
	uint64_t code_lo[VDSO_MAX_CODE], code_hi[VDSO_MAX_CODE];
};

struct symbolizer {
	struct vdso_info vdso;
	struct interner mod_paths; /* every module path seen; its id indexes mods */
	struct sym_module **mods;  /* each allocated once: libdw's debuginfod client holds a pointer into it */
	size_t nmods, cap_mods;
	struct sym_fetch fetch;
	struct sym_jits *jits;
	struct kallsyms *kernel;
	bool kernel_tried;
	const struct sym_opts *opts;
	/* per raw frame: the module it was resolved in (NO_MODULE: none) and whether anything named it */
	uint32_t *frame_mod;
	uint8_t *frame_named;
};

char *sym_demangle(const char *name)
{
	return sym_module_demangle(name);
}

/* The module of path (its id into *id), created on first sight; NULL when out of memory. */
static struct sym_module *module_get(struct symbolizer *s, const char *path, uint32_t *id)
{
	uint32_t k = intern(&s->mod_paths, path, strlen(path), NULL);
	if (k == INTERN_NOMEM)
		return NULL;
	if (k >= s->nmods) { /* new (or left over by an allocation that failed) */
		if (!ALLOC_GROW(s->mods, (size_t)k + 1, s->cap_mods))
			return NULL;
		for (; s->nmods <= k; s->nmods++) {
			struct sym_module *m = calloc(1, sizeof *m);
			if (!m)
				return NULL;
			m->path = intern_str(&s->mod_paths, (uint32_t)s->nmods);
			m->files = s->opts->files;
			m->fetch = (struct sym_fetch_state){ .run = &s->fetch, .module = m->path };
			s->mods[s->nmods] = m;
		}
	}
	*id = k;
	return s->mods[k];
}

/* Reads the code ranges of the vDSO image: its executable sections, or its executable segments when it has no
 * section headers. */
static void vdso_init(struct vdso_info *v)
{
	v->tried = true;
	size_t size;
	const void *image = maps_vdso_image(&size, &v->load);
	if (!image)
		return;
	v->size = size;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)image, size);
	if (!elf)
		return;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL && v->ncode < VDSO_MAX_CODE) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) &&
		    sh.sh_size > 0) {
			v->code_lo[v->ncode] = sh.sh_addr;
			v->code_hi[v->ncode++] = sh.sh_addr + sh.sh_size;
		}
	}
	size_t nph;
	if (v->ncode == 0 && elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph && v->ncode < VDSO_MAX_CODE; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && ph.p_memsz > 0) {
				v->code_lo[v->ncode] = ph.p_vaddr;
				v->code_hi[v->ncode++] = ph.p_vaddr + ph.p_memsz;
			}
		}
	}
	elf_end(elf);
	v->ok = v->ncode > 0;
}

static bool vdso_is_code(const struct vdso_info *v, uint64_t vaddr)
{
	for (size_t i = 0; i < v->ncode; i++)
		if (vaddr >= v->code_lo[i] && vaddr < v->code_hi[i])
			return true;
	return false;
}

/* The vaddr in the vDSO image of a raw "[vdso]" frame's address `look` (the address to look up: the sampled
 * one, or a return address - 1). A raw address inside the image's own range is taken as an image vaddr (what
 * maps_vaddr() gives). Otherwise it is an absolute address in a target whose [vdso] mapping starts at an
 * unknown page boundary: its offset in the page is known, the page is not. The candidates are one per page of
 * the image; the address is resolved when exactly one of them falls in the image's code (true while the
 * vDSO's code spans less than a page, as on x86_64), and left unknown otherwise — never guessed. */
static bool vdso_vaddr(struct symbolizer *s, uint64_t look, uint64_t *vaddr)
{
	struct vdso_info *v = &s->vdso;
	if (!v->tried)
		vdso_init(v);
	if (!v->ok)
		return false;
	if (look >= v->load && look - v->load < v->size) {
		*vaddr = look;
		return true;
	}
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t page = ps > 0 ? (uint64_t)ps : 4096;
	uint64_t in_page = look & (page - 1);
	size_t found = 0;
	for (uint64_t off = in_page; off < v->size; off += page)
		if (vdso_is_code(v, v->load + off)) {
			*vaddr = v->load + off;
			found++;
		}
	return found == 1;
}

static void symbolizer_free(struct symbolizer *s)
{
	for (size_t i = 0; i < s->nmods; i++)
		if (s->mods[i]) {
			sym_module_release(s->mods[i]);
			free(s->mods[i]);
		}
	free(s->mods);
	interner_release(&s->mod_paths);
	sym_jits_free(s->jits);
	kallsyms_free(s->kernel);
	free(s->frame_mod);
	free(s->frame_named);
}

/* A frame already finished by its backend (Python frames) or reader, copied into out. */
static uint32_t copy_frame(struct symbolizer *s, const struct profile *raw, const struct frame *f, struct profile *out)
{
	struct frame nf = *f;
	nf.func = profile_intern_cstr(out, profile_str(raw, f->func));
	nf.file = profile_intern_cstr(out, profile_str(raw, f->file));
	nf.module = profile_intern_cstr(out, profile_str(raw, f->module));
	if (s->opts->no_lines)
		nf.line = 0;
	return profile_frame(out, &nf);
}

/* A kernel or JIT frame: one name, or none. */
static uint32_t named_frame(struct symbolizer *s, const struct profile *raw, const struct frame *f, struct profile *out,
			    bool *named)
{
	const char *name = NULL;
	if (f->kind == FRAME_KERNEL) {
		if (!s->kernel_tried) {
			s->kernel_tried = true;
			s->kernel = kallsyms_load();
		}
		name = s->kernel ? kallsyms_lookup(s->kernel, f->addr) : NULL;
	} else {
		if (!s->jits)
			s->jits = sym_jits_new(s->opts->files);
		name = s->jits ? sym_jits_lookup(s->jits, profile_str(raw, f->module), f->addr) : NULL;
	}
	struct frame nf = { 0 };
	nf.kind = f->kind;
	nf.addr = f->addr;
	nf.func = profile_intern_cstr(out, name ? name : "[unknown]");
	*named = name != NULL;
	return profile_frame(out, &nf);
}

/* The frame of a user address nothing names: one frame per function, `module+0xSTART` with the start from the
 * unwind tables; without an FDE for it, the address itself (never merged with another function). m is NULL for
 * a mapping that is no file. */
static uint32_t unnamed_frame(struct sym_module *m, uint64_t look, struct frame nf, struct profile *out)
{
	uint64_t start;
	if (!m)
		nf.addr = 0; /* not a file ("[anon]", "[heap]"): nothing to name it by, "[unknown] (MODULE)" */
	else if (sym_module_func_start(m, look, &start))
		nf.addr = start;
	else
		nf.addr = look;
	nf.offset = m ? 1 : 0; /* rendered MODULE+0xOFFSET (profile/label.h) */
	nf.insn = m ? nf.insn : 0;
	return profile_frame(out, &nf);
}

/* The module path a raw frame names, as labels should show it: a file deleted since it was mapped is still the
 * same file (read through /proc/PID/map_files), so the kernel's " (deleted)" mark is dropped. */
static const char *shown_module(const char *module, char *buf, size_t n)
{
	size_t len = strlen(module);
	static const char mark[] = " (deleted)";
	if (module[0] != '/' || len < sizeof mark || strcmp(module + len - (sizeof mark - 1), mark) != 0 ||
	    len - (sizeof mark - 1) >= n)
		return module;
	memcpy(buf, module, len - (sizeof mark - 1));
	buf[len - (sizeof mark - 1)] = '\0';
	return buf;
}

/* What resolve_frame found out about a raw frame, for the hint: the module it was resolved in (NO_MODULE: none)
 * and whether anything named it. */
struct frame_note {
	uint32_t mod;
	bool named;
};

/* Resolves raw frame `fi` of `raw` into frames of `out` (outermost first in ids[]); returns how many. */
static size_t resolve_frame(struct symbolizer *s, const struct profile *raw, uint32_t fi, struct profile *out,
			    uint32_t *ids, size_t max, struct frame_note *note)
{
	const struct frame *f = profile_frame_get(raw, fi);
	const char *module = profile_str(raw, f->module);
	note->mod = NO_MODULE;
	note->named = true;
	if (f->func) { /* already resolved (python frames, folded input) */
		ids[0] = copy_frame(s, raw, f, out);
		return 1;
	}
	if (f->kind == FRAME_KERNEL || f->kind == FRAME_JIT) {
		bool named;
		ids[0] = named_frame(s, raw, f, out, &named);
		note->named = named;
		return 1;
	}
	struct sym_resolved r[SYM_MAX_INLINE];
	size_t n = 0, rmax = max < SYM_MAX_INLINE ? max : SYM_MAX_INLINE;
	bool caller = f->line == 1;
	uint64_t vaddr = f->addr;
	struct sym_module *m = NULL;
	uint32_t mid = NO_MODULE;
	bool image = module[0] == '/';
	if (!image && strcmp(module, "[vdso]") == 0 && vdso_vaddr(s, f->addr - caller, &vaddr)) {
		vaddr += caller; /* a return address stays one */
		image = true;
	}
	if (image)
		m = module_get(s, module, &mid);
	if (m)
		n = sym_module_resolve(m, vaddr, caller, r, rmax);
	char shown[4096];
	struct frame nf = { 0 };
	nf.kind = f->kind;
	nf.addr = f->addr;
	nf.module = profile_intern_cstr(out, shown_module(module, shown, sizeof shown));
	note->mod = mid;
	note->named = n > 0;
	if (n == 0) {
		nf.insn = vaddr; /* the instruction, kept beside the function's start (profile.h) */
		ids[0] = unnamed_frame(m, vaddr - caller, nf, out);
		return 1;
	}
	/* r[] is innermost first; ids[] must be outermost first */
	for (size_t i = 0; i < n; i++) {
		struct frame g = nf;
		g.func = profile_intern_cstr(out, r[i].func ? r[i].func : "");
		g.file = profile_intern_cstr(out, r[i].file ? r[i].file : "");
		g.line = s->opts->no_lines ? 0 : (uint32_t)(r[i].line > 0 ? r[i].line : 0);
		g.inlined = i + 1 < n;
		g.addr = f->addr; /* one instruction: every frame of its inline chain is at it (the Firefox Profiler's model) */
		ids[n - 1 - i] = profile_frame(out, &g);
		free(r[i].owned);
	}
	return n;
}

/* Counts each sample's leaf frame against its module and, when asked, hints at the modules whose samples
 * mostly had no names. */
static void leaf_stats(struct symbolizer *s, const struct profile *raw)
{
	size_t n;
	const struct profile_count *c = profile_counts(raw, &n);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		total += c[i].weight;
		if (c[i].stack == PROFILE_ROOT)
			continue;
		uint32_t f = profile_stack_frame(raw, c[i].stack);
		if (s->frame_mod[f] == NO_MODULE)
			continue;
		struct sym_module *m = s->mods[s->frame_mod[f]];
		m->samples += c[i].weight;
		if (!s->frame_named[f])
			m->unnamed += c[i].weight;
	}
	if (!s->opts->hints)
		return;
	sbuf_addstr(s->opts->hints, sym_files_notes(s->opts->files));
	for (size_t i = 0; i < s->nmods; i++) {
		char why[160];
		sym_fetch_why(&s->mods[i]->fetch, why, sizeof why);
		sym_hint_module(s->opts->hints, s->mods[i]->path, s->mods[i]->unnamed, s->mods[i]->samples, total, why);
	}
}

/* Declares raw's value columns (an allocation profile's) in out, which has no counts yet. */
static bool declare_values(struct profile *out, const struct profile *raw)
{
	size_t nv = profile_nvalues(raw);
	if (!nv)
		return true;
	const char *names[PROFILE_MAX_VALUES], *units[PROFILE_MAX_VALUES];
	for (size_t i = 0; i < nv; i++) {
		names[i] = profile_value_name(raw, i);
		units[i] = profile_value_unit(raw, i);
	}
	return profile_set_values(out, nv, names, units, profile_values_period(raw));
}

/* raw's value columns, onto the symbolized stacks. False when out of memory. */
static bool copy_values(struct profile *out, const struct profile *raw, const uint32_t *stack_map)
{
	size_t n;
	const struct profile_count *c = profile_counts(raw, &n);
	for (size_t i = 0; profile_nvalues(raw) && i < n; i++)
		if (!profile_add_values(out, stack_map[c[i].stack], c[i].thread, profile_count_values(raw, i)))
			return false;
	return true;
}

enum plumb_err sym_resolve_profile(const struct profile *raw, const struct sym_opts *opts, struct profile **outp,
				   struct perr *e)
{
	static const struct sym_opts no_opts;
	struct symbolizer s = { 0 };
	s.opts = opts ? opts : &no_opts;
	sym_fetch_init(&s.fetch, s.opts->fetching, s.opts->fetching_ctx);
	struct profile *out = profile_new();
	size_t nframes = profile_nframes(raw), nstacks = profile_nstacks(raw);
	uint32_t *frame_first = calloc(nframes + 1, sizeof *frame_first); /* index into frame_ids */
	uint32_t *frame_count = calloc(nframes + 1, sizeof *frame_count);
	uint32_t *frame_ids = NULL;
	size_t nids = 0, cap_ids = 0;
	uint32_t *stack_map = calloc(nstacks + 1, sizeof *stack_map);
	enum plumb_err rc = PLUMB_OK;
	s.frame_mod = malloc((nframes + 1) * sizeof *s.frame_mod);
	s.frame_named = malloc(nframes + 1);
	if (!out || !frame_first || !frame_count || !stack_map || !s.frame_mod || !s.frame_named) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory while symbolizing");
		goto done;
	}
	profile_keep_timeline(out, profile_has_timeline(raw));
	if (!declare_values(out, raw)) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory while symbolizing");
		goto done;
	}
	for (size_t i = 0; i < nframes; i++) {
		if (!ALLOC_GROW(frame_ids, nids + SYM_MAX_INLINE, cap_ids)) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory while symbolizing");
			goto done;
		}
		frame_first[i] = (uint32_t)nids;
		struct frame_note note;
		frame_count[i] = (uint32_t)resolve_frame(&s, raw, (uint32_t)i, out, frame_ids + nids, SYM_MAX_INLINE, &note);
		s.frame_mod[i] = note.mod;
		s.frame_named[i] = note.named;
		nids += frame_count[i];
	}
	leaf_stats(&s, raw);
	stack_map[PROFILE_ROOT] = PROFILE_ROOT;
	for (size_t i = 1; i < nstacks; i++) {
		uint32_t node = stack_map[profile_stack_parent(raw, (uint32_t)i)];
		uint32_t f = profile_stack_frame(raw, (uint32_t)i);
		for (uint32_t k = 0; k < frame_count[f] && node != PROFILE_NOMEM; k++)
			node = profile_stack(out, node, frame_ids[frame_first[f] + k]);
		if (node == PROFILE_NOMEM) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory while symbolizing");
			goto done;
		}
		stack_map[i] = node;
	}
	for (size_t i = 0; i < profile_nthreads(raw); i++)
		profile_thread_copy(out, raw, (uint32_t)i);
	size_t n;
	if (profile_has_timeline(raw)) {
		const struct profile_sample *tl = profile_timeline(raw, &n);
		for (size_t i = 0; i < n; i++)
			profile_add_weighted(out, stack_map[tl[i].stack], tl[i].thread, tl[i].time_ns, tl[i].weight,
					     tl[i].samples);
	} else {
		const struct profile_count *c = profile_counts(raw, &n);
		for (size_t i = 0; i < n; i++)
			profile_add_weighted(out, stack_map[c[i].stack], c[i].thread, 0, c[i].weight, c[i].samples);
	}
	if (!profile_meta_copy(out, raw) || !copy_values(out, raw, stack_map) || !profile_mappings_copy(out, raw)) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto done;
	}
	*outp = out;
	out = NULL;
done:
	profile_free(out);
	free(frame_first);
	free(frame_count);
	free(frame_ids);
	free(stack_map);
	symbolizer_free(&s);
	return rc;
}

/* ---- a symbolizer kept between calls ------------------------------------------------------------------ */

struct sym_resolver {
	struct symbolizer s;
	struct sym_opts opts;
};

struct sym_resolver *sym_resolver_new(const struct sym_opts *opts)
{
	struct sym_resolver *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	if (opts)
		r->opts = *opts;
	r->s.opts = &r->opts;
	sym_fetch_init(&r->s.fetch, r->opts.fetching, r->opts.fetching_ctx);
	return r;
}

void sym_resolver_free(struct sym_resolver *r)
{
	if (!r)
		return;
	symbolizer_free(&r->s);
	free(r);
}

size_t sym_resolver_frame(struct sym_resolver *r, const struct profile *raw, uint32_t frame_id, struct profile *out,
			  uint32_t *ids, size_t max)
{
	const struct frame *f = profile_frame_get(raw, frame_id);
	struct frame_note note;
	if (!f || max == 0)
		return 0;
	return resolve_frame(&r->s, raw, frame_id, out, ids, max < SYM_MAX_INLINE ? max : SYM_MAX_INLINE, &note);
}
