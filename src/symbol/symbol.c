/* symbol.c — resolves each distinct raw frame once (libdw for user code, /proc/kallsyms for the kernel,
 * /tmp/perf-PID.map for JIT code) and rebuilds the profile with labelled frames. Raw stack nodes are
 * translated in id order (a parent's id is always smaller than its child's), so the whole pass is linear. */
#include "symbol/symbol.h"

#include <ctype.h>
#include <demangle.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/intern.h"
#include "symbol/kallsyms.h"
#include "symbol/maps.h"

#define MAX_INLINE 32

struct module_info {
	const char *path; /* held by the symbolizer's interner */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	bool tried;
};

struct jit_map {
	char *path;
	struct jit_sym { uint64_t start, end; char *name; } *syms;
	size_t n;
};

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
	struct module_info *mods;
	size_t nmods, cap_mods;
	struct jit_map *jits;
	size_t njits, cap_jits;
	struct kallsyms *kernel;
	bool kernel_tried;
	const struct sym_opts *opts;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

char *sym_demangle(const char *name)
{
	if (!name || !(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')))
		return NULL;
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!d && name[1] == 'R')
		d = cplus_demangle(name, DMGL_RUST);
	if (!d)
		return NULL;
	/* legacy Rust names end in ::h<16 hex digits>; the hash only adds noise to labels */
	size_t n = strlen(d);
	if (n > 19 && memcmp(d + n - 19, "::h", 3) == 0) {
		bool hex = true;
		for (size_t i = n - 16; i < n; i++)
			hex = hex && isxdigit((unsigned char)d[i]);
		if (hex)
			d[n - 19] = '\0';
	}
	return d;
}

static struct module_info *module_get(struct symbolizer *s, const char *path)
{
	uint32_t id = intern(&s->mod_paths, path, strlen(path), NULL);
	if (id == INTERN_NOMEM)
		return NULL;
	if (id >= s->nmods) { /* new (or left over by an allocation that failed) */
		if (!ALLOC_GROW(s->mods, (size_t)id + 1, s->cap_mods))
			return NULL;
		for (; s->nmods <= id; s->nmods++)
			s->mods[s->nmods] = (struct module_info){ .path = intern_str(&s->mod_paths, (uint32_t)s->nmods) };
	}
	return &s->mods[id];
}

/* libdw callback for the "[vdso]" module: the ELF is plumb's own in-memory image (libdw ends the Elf, not the
 * memory under it). */
static int vdso_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, char **file_name,
			 Elf **elfp)
{
	size_t size;
	uint64_t load;
	const void *image = maps_vdso_image(&size, &load);
	*elfp = image ? elf_memory((char *)image, size) : NULL;
	return -1;
}

static const Dwfl_Callbacks vdso_callbacks = {
	.find_elf = vdso_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void module_open_vdso(struct module_info *m)
{
	size_t size;
	uint64_t load;
	if (!maps_vdso_image(&size, &load))
		return;
	m->dwfl = dwfl_begin(&vdso_callbacks);
	if (!m->dwfl)
		return;
	/* reported at its own vaddrs: addresses given to libdw are vaddrs in the image, as for files */
	m->mod = dwfl_report_module(m->dwfl, m->path, load, load + size);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod || !dwfl_module_getelf(m->mod, &m->bias)) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		m->mod = NULL;
	}
}

static void module_open(struct module_info *m)
{
	m->tried = true;
	if (strcmp(m->path, "[vdso]") == 0) {
		module_open_vdso(m);
		return;
	}
	if (m->path[0] != '/')
		return;
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl)
		return;
	m->mod = dwfl_report_offline(m->dwfl, m->path, m->path, -1);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		return;
	}
	dwfl_module_getelf(m->mod, &m->bias);
}

/* One resolved frame before interning. */
struct resolved {
	const char *func;  /* may point into libdw data or `owned` */
	char *owned;       /* demangled name to free */
	const char *file;
	int line;
};

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	const char *name = NULL;
	/* inlined instances and concrete copies name their function through the abstract origin */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) || dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		name = dwarf_formstring(&attr);
	if (!name)
		name = dwarf_diename(die);
	if (!name && dwarf_attr(die, DW_AT_abstract_origin, &attr) && dwarf_formref_die(&attr, &origin))
		name = dwarf_diename(&origin);
	return name;
}

static void set_name(struct resolved *r, const char *name)
{
	r->owned = sym_demangle(name);
	r->func = r->owned ? r->owned : name;
}

/* Resolves a user-space address into frames, innermost first (inline chain). Returns how many. */
static size_t resolve_user(struct symbolizer *s, const char *path, uint64_t vaddr, bool caller, struct resolved *out,
			   size_t max)
{
	struct module_info *m = module_get(s, path);
	if (!m)
		return 0;
	if (!m->tried)
		module_open(m);
	if (!m->mod)
		return 0;
	Dwarf_Addr addr = vaddr + m->bias - (caller ? 1 : 0);
	GElf_Sym sym;
	GElf_Off off;
	const char *symname = dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
	size_t n = 0;
	memset(out, 0, sizeof *out * max);

	Dwarf_Addr cu_bias;
	Dwarf_Die *cudie = dwfl_module_addrdie(m->mod, addr, &cu_bias);
	Dwfl_Line *line = dwfl_module_getsrc(m->mod, addr);
	const char *leaf_file = NULL;
	int leaf_line = 0;
	if (line)
		leaf_file = dwfl_lineinfo(line, NULL, &leaf_line, NULL, NULL, NULL);

	Dwarf_Die *scopes = NULL;
	int nscopes = cudie ? dwarf_getscopes(cudie, addr - cu_bias, &scopes) : 0;
	if (nscopes > 0) {
		/* dwarf_getscopes follows an inlined instance into its abstract definition (and the innermost scope
		 * may be a lexical block inside it); the chain of callers that the instance sits in comes from the
		 * innermost scope's own DIE */
		Dwarf_Die *chain = NULL;
		int nchain = dwarf_getscopes_die(&scopes[0], &chain);
		if (nchain > 0) {
			free(scopes);
			scopes = chain;
			nscopes = nchain;
		}
	}
	if (nscopes > 0) {
		Dwarf_Files *files = NULL;
		size_t nfiles = 0;
		dwarf_getsrcfiles(cudie, &files, &nfiles);
		const char *file = leaf_file;
		int lineno = leaf_line;
		for (int i = 0; i < nscopes && n < max; i++) {
			int tag = dwarf_tag(&scopes[i]);
			if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
				continue;
			struct resolved *r = &out[n++];
			r->file = file;
			r->line = lineno;
			if (tag == DW_TAG_subprogram) {
				set_name(r, symname ? symname : die_name(&scopes[i]));
				break;
			}
			set_name(r, die_name(&scopes[i]));
			/* the caller's position is this inlined instance's call site */
			Dwarf_Attribute attr;
			Dwarf_Word w;
			file = NULL;
			lineno = 0;
			if (dwarf_attr(&scopes[i], DW_AT_call_file, &attr) && dwarf_formudata(&attr, &w) == 0 && files)
				file = dwarf_filesrc(files, w, NULL, NULL);
			if (dwarf_attr(&scopes[i], DW_AT_call_line, &attr) && dwarf_formudata(&attr, &w) == 0)
				lineno = (int)w;
		}
		free(scopes);
	}
	if (n == 0 && symname) {
		set_name(&out[0], symname);
		out[0].file = leaf_file;
		out[0].line = leaf_line;
		n = 1;
	}
	for (size_t i = 0; i < n; i++)
		if (!out[i].func)
			out[i].func = symname;
	return n;
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

static struct jit_map *jit_get(struct symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->njits; i++)
		if (strcmp(s->jits[i].path, path) == 0)
			return &s->jits[i];
	if (!ALLOC_GROW(s->jits, s->njits + 1, s->cap_jits))
		return NULL;
	struct jit_map *j = &s->jits[s->njits++];
	memset(j, 0, sizeof *j);
	j->path = strdup(path);
	/* A regular file only: a FIFO would block the open, a link to a device (/dev/zero) never ends. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	FILE *f = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return j;
	}
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long start, size;
		int at = 0;
		if (sscanf(line, "%llx %llx %n", &start, &size, &at) < 2 || !at)
			continue;
		char *name = line + at;
		name[strcspn(name, "\n")] = '\0';
		if (!ALLOC_GROW(j->syms, j->n + 1, alloc))
			break;
		j->syms[j->n++] = (struct jit_sym){ start, start + size, strdup(name) };
	}
	free(line);
	fclose(f);
	return j;
}

static const char *jit_lookup(struct symbolizer *s, const char *path, uint64_t addr)
{
	struct jit_map *j = jit_get(s, path);
	if (!j)
		return NULL;
	/* later entries win: a JIT may reuse an address range for new code */
	for (size_t i = j->n; i-- > 0;)
		if (addr >= j->syms[i].start && addr < j->syms[i].end)
			return j->syms[i].name;
	return NULL;
}

static void symbolizer_free(struct symbolizer *s)
{
	for (size_t i = 0; i < s->nmods; i++) {
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
	}
	free(s->mods);
	interner_release(&s->mod_paths);
	for (size_t i = 0; i < s->njits; i++) {
		for (size_t k = 0; k < s->jits[i].n; k++)
			free(s->jits[i].syms[k].name);
		free(s->jits[i].syms);
		free(s->jits[i].path);
	}
	free(s->jits);
	kallsyms_free(s->kernel);
}

/* Resolves raw frame `f` of `raw` into frames of `out` (outermost first in ids[]); returns how many. */
static size_t resolve_frame(struct symbolizer *s, const struct profile *raw, const struct frame *f, struct profile *out,
			    uint32_t *ids, size_t max)
{
	const char *module = profile_str(raw, f->module);
	struct frame nf = { 0 };
	nf.kind = f->kind;
	nf.addr = f->addr;
	if (f->func) { /* already resolved (python frames, folded input) */
		nf = *f;
		nf.func = profile_intern_cstr(out, profile_str(raw, f->func));
		nf.file = profile_intern_cstr(out, profile_str(raw, f->file));
		nf.module = profile_intern_cstr(out, module);
		if (s->opts->no_lines)
			nf.line = 0;
		ids[0] = profile_frame(out, &nf);
		return 1;
	}
	if (f->kind == FRAME_KERNEL) {
		if (!s->kernel_tried) {
			s->kernel_tried = true;
			s->kernel = kallsyms_load();
		}
		const char *name = s->kernel ? kallsyms_lookup(s->kernel, f->addr) : NULL;
		nf.func = profile_intern_cstr(out, name ? name : "[unknown]");
		ids[0] = profile_frame(out, &nf);
		return 1;
	}
	if (f->kind == FRAME_JIT) {
		const char *name = jit_lookup(s, module, f->addr);
		nf.func = profile_intern_cstr(out, name ? name : "[unknown]");
		ids[0] = profile_frame(out, &nf);
		return 1;
	}
	struct resolved r[MAX_INLINE];
	size_t n = 0, rmax = max < MAX_INLINE ? max : MAX_INLINE;
	bool caller = f->line == 1;
	uint64_t vaddr;
	if (module[0] == '/')
		n = resolve_user(s, module, f->addr, caller, r, rmax);
	else if (strcmp(module, "[vdso]") == 0 && vdso_vaddr(s, f->addr - (caller ? 1 : 0), &vaddr))
		n = resolve_user(s, module, vaddr + (caller ? 1 : 0), caller, r, rmax);
	nf.module = profile_intern_cstr(out, module);
	if (n == 0) { /* [unknown] (module) */
		ids[0] = profile_frame(out, &nf);
		return 1;
	}
	/* r[] is innermost first; ids[] must be outermost first */
	for (size_t i = 0; i < n; i++) {
		struct frame g = nf;
		g.func = profile_intern_cstr(out, r[i].func ? r[i].func : "");
		g.file = profile_intern_cstr(out, r[i].file ? r[i].file : "");
		g.line = s->opts->no_lines ? 0 : (uint32_t)(r[i].line > 0 ? r[i].line : 0);
		g.inlined = i + 1 < n;
		g.addr = i == 0 ? f->addr : 0;
		ids[n - 1 - i] = profile_frame(out, &g);
		free(r[i].owned);
	}
	return n;
}

enum plumb_err sym_resolve_profile(const struct profile *raw, const struct sym_opts *opts, struct profile **outp,
				   struct perr *e)
{
	static const struct sym_opts no_opts;
	struct symbolizer s = { 0 };
	s.opts = opts ? opts : &no_opts;
	struct profile *out = profile_new();
	size_t nframes = profile_nframes(raw), nstacks = profile_nstacks(raw);
	uint32_t *frame_first = calloc(nframes + 1, sizeof *frame_first); /* index into frame_ids */
	uint32_t *frame_count = calloc(nframes + 1, sizeof *frame_count);
	uint32_t *frame_ids = NULL;
	size_t nids = 0, cap_ids = 0;
	uint32_t *stack_map = calloc(nstacks + 1, sizeof *stack_map);
	enum plumb_err rc = PLUMB_OK;
	if (!out || !frame_first || !frame_count || !stack_map) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory while symbolizing");
		goto done;
	}
	profile_keep_timeline(out, profile_has_timeline(raw));
	for (size_t i = 0; i < nframes; i++) {
		if (!ALLOC_GROW(frame_ids, nids + MAX_INLINE, cap_ids)) {
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory while symbolizing");
			goto done;
		}
		frame_first[i] = (uint32_t)nids;
		frame_count[i] = (uint32_t)resolve_frame(&s, raw, profile_frame_get(raw, (uint32_t)i), out, frame_ids + nids,
							 MAX_INLINE);
		nids += frame_count[i];
	}
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
	if (!profile_meta_copy(out, raw)) {
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
	if (!f || max == 0)
		return 0;
	return resolve_frame(&r->s, raw, f, out, ids, max < MAX_INLINE ? max : MAX_INLINE);
}
