/* maps.c — per-process executable mappings. Each process has a sorted array of entries; lookups are binary
 * searches. Paths are interned in one table so entries of many processes share them. The ELF bias of a
 * mapping (vaddr = addr - bias) is computed lazily from the file's program headers and cached per path. */
#include "symbol/maps.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/intern.h"
#include "os/procfs.h"
#include "profile/profile.h"
#include "symbol/files.h"

struct proc_maps {
	pid_t pid;
	struct map_entry *entries;
	size_t n, cap;
};

/* Per-file ELF facts: the loadable segments' (offset, vaddr) pairs. */
struct elf_info {
	const char *path; /* held by the maps' path interner */
	bool loaded, ok;
	size_t nseg;
	uint64_t seg_off[16], seg_vaddr[16], seg_filesz[16];
	unsigned char build_id[64]; /* the GNU build ID note, build_id_len bytes (0: none) */
	size_t build_id_len;
};

/* The GNU build ID of elf (its NT_GNU_BUILD_ID note in a PT_NOTE segment) into info. */
static void read_build_id(Elf *elf, size_t nph, struct elf_info *info)
{
	for (size_t i = 0; i < nph && !info->build_id_len; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						   ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0 &&
			    nh.n_descsz <= sizeof info->build_id) {
				memcpy(info->build_id, (const char *)d->d_buf + desc_off, nh.n_descsz);
				info->build_id_len = nh.n_descsz;
				break;
			}
		}
	}
}

struct maps {
	struct proc_maps *procs;
	size_t nprocs, cap_procs;
	struct hmap proc_index; /* pid -> index in procs */
	struct interner paths;  /* every path seen; its id indexes elfs */
	struct elf_info *elfs;
	size_t nelfs, cap_elfs;
	struct sym_files *files; /* the processes' view of their files, or NULL: open by name */
};

struct maps *maps_new(void)
{
	elf_version(EV_CURRENT);
	struct maps *m = calloc(1, sizeof(struct maps));
	if (m)
		m->paths = (struct interner)INTERNER_INIT;
	return m;
}

void maps_use_files(struct maps *m, struct sym_files *files)
{
	m->files = files;
}

int maps_file_fd(const struct maps *m, const char *path, bool *known)
{
	int fd = m->files ? sym_files_elf_fd(m->files, path) : -1;
	*known = m->files && (fd >= 0 || sym_files_elf_tried(m->files, path));
	return fd;
}

void maps_free(struct maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nprocs; i++)
		free(m->procs[i].entries);
	free(m->procs);
	hmap_release(&m->proc_index);
	free(m->elfs);
	interner_release(&m->paths);
	free(m);
}

static struct proc_maps *proc_get(struct maps *m, pid_t pid, bool create)
{
	uint32_t idx;
	if (hmap_get(&m->proc_index, (uint64_t)pid, &idx))
		return &m->procs[idx];
	if (!create)
		return NULL;
	if (!ALLOC_GROW(m->procs, m->nprocs + 1, m->cap_procs))
		return NULL;
	idx = (uint32_t)m->nprocs;
	if (!hmap_put(&m->proc_index, (uint64_t)pid, idx))
		return NULL;
	m->procs[m->nprocs++] = (struct proc_maps){ pid, NULL, 0, 0 };
	return &m->procs[idx];
}

/* The facts of the file at path, whose path is the interned copy every entry of that file points at (the copies
 * do not move when elfs grows). NULL when out of memory. */
static struct elf_info *elf_get(struct maps *m, const char *path)
{
	uint32_t id = intern(&m->paths, path, strlen(path), NULL);
	if (id == INTERN_NOMEM)
		return NULL;
	if (id >= m->nelfs) { /* new (or left over by an allocation that failed) */
		if (!ALLOC_GROW(m->elfs, (size_t)id + 1, m->cap_elfs))
			return NULL;
		for (; m->nelfs <= id; m->nelfs++)
			m->elfs[m->nelfs] = (struct elf_info){ .path = intern_str(&m->paths, (uint32_t)m->nelfs) };
	}
	return &m->elfs[id];
}

const void *maps_vdso_image(size_t *size, uint64_t *load)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr))
		return NULL;
	size_t end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)eh + eh->e_phoff);
	bool have_load = false;
	*load = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
		if (ph[i].p_type == PT_LOAD && !have_load) {
			*load = ph[i].p_vaddr - ph[i].p_offset;
			have_load = true;
		}
	}
	if (!have_load)
		return NULL;
	*size = end;
	return eh;
}

/* Reads the loadable segments of the file of mapping e of pid. */
static void elf_load(struct maps *m, struct elf_info *info, pid_t pid, const struct map_entry *e)
{
	info->loaded = true;
	if (strcmp(info->path, "[vdso]") == 0) {
		/* the image is in memory, not in a file: one segment from offset 0 */
		size_t size;
		uint64_t load;
		if (maps_vdso_image(&size, &load)) {
			info->seg_off[0] = 0;
			info->seg_vaddr[0] = load;
			info->seg_filesz[0] = size;
			info->nseg = 1;
			info->ok = true;
		}
		return;
	}
	if (info->path[0] != '/')
		return;
	bool own = !m->files;
	int fd = own ? open(info->path, O_RDONLY | O_CLOEXEC) : sym_files_elf(m->files, pid, info->path, e->start, e->end,
									       e->ino);
	if (fd < 0)
		return;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t nph;
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph && info->nseg < 16; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
				info->seg_off[info->nseg] = ph.p_offset;
				info->seg_vaddr[info->nseg] = ph.p_vaddr;
				info->seg_filesz[info->nseg] = ph.p_filesz;
				info->nseg++;
			}
		}
		info->ok = info->nseg > 0;
		read_build_id(elf, nph, info);
	}
	if (elf)
		elf_end(elf);
	if (own)
		close(fd);
}

/* Inserts e into the process's sorted entries, dropping what it overlaps. */
static void proc_insert(struct proc_maps *pm, const struct map_entry *e)
{
	size_t w = 0;
	for (size_t i = 0; i < pm->n; i++)
		if (pm->entries[i].end <= e->start || pm->entries[i].start >= e->end)
			pm->entries[w++] = pm->entries[i];
	pm->n = w;
	if (!ALLOC_GROW(pm->entries, pm->n + 1, pm->cap))
		return;
	size_t pos = pm->n;
	while (pos > 0 && pm->entries[pos - 1].start > e->start) {
		pm->entries[pos] = pm->entries[pos - 1];
		pos--;
	}
	pm->entries[pos] = *e;
	pm->n++;
}

static void add_entry(struct maps *m, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const char *path,
		      bool exec, uint64_t ino)
{
	struct proc_maps *pm = proc_get(m, pid, true);
	/* perf names anonymous executable mappings (JIT code) "//anon": not a file */
	bool anon = !path || !path[0] || strncmp(path, "//anon", 6) == 0;
	struct elf_info *info = elf_get(m, anon ? "[anon]" : path);
	if (!pm || !info)
		return;
	struct map_entry e = { .start = start, .end = start + len, .pgoff = pgoff, .ino = anon ? 0 : ino,
			       .path = info->path, .exec = exec };
	proc_insert(pm, &e);
}

void maps_add_file(struct maps *m, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const char *path,
		   uint64_t ino)
{
	add_entry(m, pid, start, len, pgoff, path, true, ino);
}

void maps_add(struct maps *m, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const char *path, bool exec)
{
	add_entry(m, pid, start, len, pgoff, path, exec, 0);
}

bool maps_load_proc(struct maps *m, pid_t pid)
{
	struct procfs_maps it;
	struct procfs_map e;
	if (!procfs_maps_open(&it, pid))
		return false;
	while (procfs_maps_next(&it, &e))
		if (e.perms[2] == 'x') /* " (deleted)" files are still mapped; keep the name as the kernel shows it */
			maps_add_file(m, pid, e.start, e.end - e.start, e.offset, e.path, e.inode);
	procfs_maps_close(&it);
	return true;
}

void maps_fork(struct maps *m, pid_t parent, pid_t child)
{
	struct proc_maps *pp = proc_get(m, parent, false);
	if (!pp || parent == child)
		return;
	size_t n = pp->n;
	struct map_entry *copy = n ? malloc(n * sizeof *copy) : NULL;
	if (n && !copy)
		return;
	if (n)
		memcpy(copy, pp->entries, n * sizeof *copy);
	struct proc_maps *pc = proc_get(m, child, true); /* may move procs: pp is stale after this */
	if (!pc) {
		free(copy);
		return;
	}
	free(pc->entries);
	pc->entries = copy;
	pc->n = pc->cap = n;
}

void maps_forget(struct maps *m, pid_t pid)
{
	struct proc_maps *pm = proc_get(m, pid, false);
	if (pm)
		pm->n = 0;
}

static void entry_bias(struct maps *m, pid_t pid, struct map_entry *e);

const struct map_entry *maps_find(struct maps *m, pid_t pid, uint64_t addr)
{
	struct proc_maps *pm = proc_get(m, pid, false);
	if (!pm)
		return NULL;
	size_t lo = 0, hi = pm->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pm->entries[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= pm->n || pm->entries[lo].start > addr)
		return NULL;
	struct map_entry *e = &pm->entries[lo];
	entry_bias(m, pid, e);
	return e;
}

/* Computes e's bias (and loads its file's ELF facts) once. */
static void entry_bias(struct maps *m, pid_t pid, struct map_entry *e)
{
	if (!e->has_bias) {
		struct elf_info *info = elf_get(m, e->path);
		if (info && !info->loaded)
			elf_load(m, info, pid, e);
		e->bias = e->start - e->pgoff; /* default: file offset == vaddr */
		if (info && info->ok) {
			for (size_t i = 0; i < info->nseg; i++) {
				uint64_t so = info->seg_off[i];
				if (e->pgoff >= (so & ~0xfffULL) && e->pgoff < so + info->seg_filesz[i] + 0x1000) {
					/* vaddr = seg_vaddr + (file_off - seg_off), file_off = addr - start + pgoff */
					e->bias = e->start - e->pgoff + so - info->seg_vaddr[i];
					break;
				}
			}
		}
		e->has_bias = true;
	}
}

uint64_t maps_vaddr(const struct map_entry *e, uint64_t addr)
{
	return addr - e->bias;
}

bool maps_is_image(const struct map_entry *e)
{
	return e && (e->path[0] == '/' || strcmp(e->path, "[vdso]") == 0);
}

uint32_t maps_raw_frame(struct profile *p, const struct map_entry *m, uint64_t addr, bool caller, uint32_t unknown)
{
	struct frame f = { 0 };
	f.kind = FRAME_USER;
	f.line = caller ? 1 : 0;
	if (maps_is_image(m)) {
		f.module = profile_intern_cstr(p, m->path);
		f.addr = maps_vaddr(m, addr);
	} else {
		f.module = m ? profile_intern_cstr(p, m->path) : unknown;
		f.addr = addr;
	}
	return profile_frame(p, &f);
}

/* The executable of a process among its mappings: the file mapped lowest (x86_64 Linux loads a program at
 * 0x400000 or 0x55..., its libraries and the loader near the top of the address space). */
static const struct map_entry *main_entry(const struct proc_maps *pm)
{
	for (size_t i = 0; i < pm->n; i++) /* entries are sorted by start */
		if (pm->entries[i].path[0] == '/')
			return &pm->entries[i];
	return NULL;
}

bool maps_to_profile(struct maps *m, struct profile *p, pid_t main_pid)
{
	static const char hex[] = "0123456789abcdef";
	/* only the files frames are in: the others are neither opened nor kept */
	struct interner used = INTERNER_INIT;
	for (size_t f = 0, nf = profile_nframes(p); f < nf; f++) {
		const struct frame *fr = profile_frame_get(p, (uint32_t)f);
		const char *mod = profile_str(p, fr->module);
		if (fr->kind == FRAME_USER && fr->module && intern(&used, mod, strlen(mod), NULL) == INTERN_NOMEM) {
			interner_release(&used);
			return false;
		}
	}
	bool ok = true;
	for (size_t k = 0; ok && k < m->nprocs; k++) {
		struct proc_maps *pm = &m->procs[k];
		const struct map_entry *exe = main_entry(pm);
		for (size_t i = 0; i < pm->n; i++) {
			struct map_entry *e = &pm->entries[i];
			if (!e->exec || !maps_is_image(e) || intern_find(&used, e->path, strlen(e->path)) == IDTAB_NONE)
				continue;
			entry_bias(m, pm->pid, e);
			struct elf_info *info = elf_get(m, e->path);
			char id[2 * sizeof info->build_id + 1];
			size_t n = info ? info->build_id_len : 0;
			for (size_t j = 0; j < n; j++) {
				id[2 * j] = hex[info->build_id[j] >> 4];
				id[2 * j + 1] = hex[info->build_id[j] & 15];
			}
			id[2 * n] = '\0';
			struct profile_mapping pmap = { .start = e->start, .limit = e->end, .offset = e->pgoff,
							.bias = e->bias, .has_bias = 1, .pid = (uint32_t)pm->pid };
			pmap.path = profile_intern_cstr(p, e->path);
			pmap.build_id = n ? profile_intern(p, id, 2 * n) : 0;
			pmap.main = exe && strcmp(exe->path, e->path) == 0 && (pm->pid == main_pid || main_pid <= 0);
			if (pmap.path == PROFILE_NOMEM || pmap.build_id == PROFILE_NOMEM ||
			    profile_add_mapping(p, &pmap) == PROFILE_NOMEM)
				ok = false;
		}
	}
	interner_release(&used);
	return ok;
}
