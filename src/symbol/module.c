/* module.c — one ELF module of the symbolizer (module.h): libdw opens the file and finds its separate debug
 * information; a name comes from the symbol tables, DWARF adds the inline chain and lines; the unwind tables'
 * function starts are read only when an address has no name. Invariant: a module is opened at most once per
 * run (m->tried), whatever happens. */
#include "symbol/module.h"

#include <ctype.h>
#include <demangle.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol/cache.h"
#include "symbol/files.h"
#include "symbol/maps.h"
#include "symbol/symtab.h"

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = sym_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

char *sym_module_demangle(const char *name)
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
	.find_debuginfo = sym_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void module_open_vdso(struct sym_module *m)
{
	size_t size;
	uint64_t load;
	if (!maps_vdso_image(&size, &load))
		return;
	m->dwfl = dwfl_begin(&vdso_callbacks);
	if (!m->dwfl)
		return;
	sym_fetch_attach(m->dwfl, &m->fetch);
	/* reported at its own vaddrs: addresses given to libdw are vaddrs in the image, as for files */
	m->mod = dwfl_report_module(m->dwfl, m->path, load, load + size);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod || !dwfl_module_getelf(m->mod, &m->bias)) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		m->mod = NULL;
	}
}

void sym_module_open(struct sym_module *m)
{
	m->tried = true;
	if (strcmp(m->path, "[vdso]") == 0) {
		module_open_vdso(m);
		return;
	}
	if (m->path[0] != '/')
		return;
	/* the file as the process saw it (its own descriptor: libdwfl closes what it is given), found again by its
	 * name only when the sampler never opened it; libdw looks for its debug files beside the view's path */
	int fd = -1;
	if (m->files && sym_files_elf_tried(m->files, m->path)) {
		int held = sym_files_elf_fd(m->files, m->path);
		if (held < 0 || (fd = fcntl(held, F_DUPFD_CLOEXEC, 0)) < 0)
			return;
	}
	char view[4200];
	const char *file = sym_files_view_path(m->files, m->path, view, sizeof view);
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl) {
		if (fd >= 0)
			close(fd);
		return;
	}
	sym_fetch_attach(m->dwfl, &m->fetch);
	m->mod = dwfl_report_offline(m->dwfl, m->path, file, fd);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		return;
	}
	dwfl_module_getelf(m->mod, &m->bias);
}

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

static void set_name(struct sym_resolved *r, const char *name)
{
	r->owned = sym_module_demangle(name);
	r->func = r->owned ? r->owned : name;
}

/* Drops a symbol version ("__libc_start_main@@GLIBC_2.34", "memcpy@GLIBC_2.2.5") as perf shows names: the
 * version tells which of a library's definitions the symbol is, never a different function to the reader. A
 * name that is all version, or an "@plt" stub's mark, is kept. */
static void drop_version(struct sym_resolved *r)
{
	const char *at = r->func ? strchr(r->func, '@') : NULL;
	if (!at || at == r->func || strcmp(at, "@plt") == 0)
		return;
	size_t n = (size_t)(at - r->func);
	if (r->owned) {
		r->owned[n] = '\0';
		return;
	}
	char *copy = strndup(r->func, n);
	if (copy) {
		r->owned = copy;
		r->func = copy;
	}
}

/* The frame of a PLT stub (named X@plt from the relocations), or 0 when vaddr is in none. */
static size_t resolve_plt(struct sym_module *m, uint64_t vaddr, bool caller, struct sym_resolved *out)
{
	if (!m->funcs_tried) {
		uint64_t start;
		sym_module_func_start(m, vaddr, &start); /* loads the unwind tables and the PLT names */
	}
	const char *name = plt_stubs_find(m->plt, vaddr - (caller ? 1 : 0));
	if (!name)
		return 0;
	memset(out, 0, sizeof *out);
	out->func = name;
	return 1;
}

/* The names of vaddr from the symbol tables and DWARF (sym_module_resolve without the cache). */
static size_t resolve_debug(struct sym_module *m, uint64_t vaddr, bool caller, struct sym_resolved *out, size_t max)
{
	Dwarf_Addr addr = vaddr + m->bias - (caller ? 1 : 0);
	if (!m->syms_tried) {
		m->syms_tried = true;
		m->syms = symtab_load(m->mod);
	}
	GElf_Sym sym;
	GElf_Off off;
	const char *symname = m->syms ? symtab_find(m->syms, addr, NULL) : dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
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
			struct sym_resolved *r = &out[n++];
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

size_t sym_module_resolve(struct sym_module *m, uint64_t vaddr, bool caller, struct sym_resolved *out, size_t max)
{
	if (!m->tried)
		sym_module_open(m);
	if (!m->mod)
		return 0;
	if (!m->cache_tried) {
		m->cache_tried = true;
		const unsigned char *id;
		GElf_Addr id_vaddr;
		int len = m->path[0] == '/' ? dwfl_module_build_id(m->mod, &id, &id_vaddr) : 0;
		if (len > 0)
			m->cache = sym_cache_open(id, (size_t)len);
	}
	size_t n;
	if (!sym_cache_get(m->cache, vaddr, caller, out, max, &n)) {
		n = resolve_debug(m, vaddr, caller, out, max);
		if (n > 0)
			sym_cache_put(m->cache, vaddr, caller, out, n);
	}
	if (n == 0 && max > 0)
		return resolve_plt(m, vaddr, caller, out);
	for (size_t i = 0; i < n; i++)
		drop_version(&out[i]);
	return n;
}

/* Saves the module's cache when its names came from DWARF, stamped with the file that held it. */
static void cache_save(struct sym_module *m)
{
	const char *mainfile = NULL, *debugfile = NULL;
	Dwarf_Addr bias;
	if (!sym_cache_dirty(m->cache) || !m->mod)
		return;
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	if (dwfl_module_getdwarf(m->mod, &bias)) /* loaded already: entries were added by resolve_debug */
		sym_cache_save(m->cache, debugfile ? debugfile : mainfile);
}

bool sym_module_func_start(struct sym_module *m, uint64_t vaddr, uint64_t *start)
{
	if (!m->tried)
		sym_module_open(m);
	if (!m->funcs_tried) {
		m->funcs_tried = true;
		Dwarf_Addr bias;
		Elf *elf = m->mod ? dwfl_module_getelf(m->mod, &bias) : NULL;
		if (elf) {
			m->funcs = funcstarts_load(elf);
			m->plt = plt_stubs_load(elf);
		}
	}
	return funcstarts_find(m->funcs, vaddr, start);
}

void sym_module_release(struct sym_module *m)
{
	cache_save(m);
	sym_cache_close(m->cache);
	m->cache = NULL;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
	funcstarts_free(m->funcs);
	symtab_free(m->syms);
	m->syms = NULL;
	m->funcs = NULL;
	plt_stubs_free(m->plt);
	m->plt = NULL;
}
