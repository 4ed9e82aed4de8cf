/* maps.h — the memory maps of sampled processes, kept from /proc/PID/maps and perf mmap events so that an
 * address can be turned into (module, ELF virtual address) while sampling, even after the process exits.
 * Raw frames in the profile carry module = the mapped file's path and addr = the ELF virtual address
 * (what readelf shows, and what libdw looks up), so identical code in different processes is one frame.
 *
 * Ownership: maps_new() / maps_free(); strings returned live as long as the maps. */
#ifndef PLUMB_SYMBOL_MAPS_H
#define PLUMB_SYMBOL_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct map_entry {
	uint64_t start, end;   /* absolute addresses [start, end) */
	uint64_t pgoff;        /* file offset of start */
	uint64_t ino;          /* the mapped file's inode, 0 when unknown */
	uint64_t bias;         /* vaddr = addr - bias (from the ELF program headers); valid when has_bias */
	const char *path;      /* file path, or a pseudo name like "[vdso]", "[anon]" */
	bool exec;
	bool has_bias;
};

struct maps;
struct sym_files;
struct profile;

struct maps *maps_new(void);
void maps_free(struct maps *m);
/* Opens mapped files through files (symbol/files.h: as each process sees them, kept for the symbolizer) rather
 * than by their names in plumb's view. files (may be NULL) must outlive the maps. */
void maps_use_files(struct maps *m, struct sym_files *files);
/* The descriptor the maps opened path through (sym_files_elf_fd), -1 when none; *known tells whether the files
 * tried it at all (when not, the caller may open path itself). */
int maps_file_fd(const struct maps *m, const char *path, bool *known);

/* Reads /proc/PID/maps (executable mappings) for pid. Returns false when the process is gone. */
bool maps_load_proc(struct maps *m, pid_t pid);
/* Adds one mapping (a PERF_RECORD_MMAP2 event); replaces what it overlaps. */
void maps_add(struct maps *m, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const char *path, bool exec);
/* The same with the mapped file's inode (0 when unknown), which tells the mapped file from one put in its place. */
void maps_add_file(struct maps *m, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const char *path,
		   uint64_t ino);
/* A forked child starts with its parent's maps. */
void maps_fork(struct maps *m, pid_t parent, pid_t child);
/* Forgets a process (exec replaces the image: call maps_forget then maps_add the new mappings). */
void maps_forget(struct maps *m, pid_t pid);
/* Finds the executable mapping containing addr in pid; NULL when none. Computes the ELF bias lazily. */
const struct map_entry *maps_find(struct maps *m, pid_t pid, uint64_t addr);
/* ELF virtual address of addr within entry (for symbolization and CFI lookup). */
uint64_t maps_vaddr(const struct map_entry *e, uint64_t addr);
/* True when frames in entry are kept as ELF vaddrs (maps_vaddr): a mapped file, or the vDSO (whose image is
 * plumb's own copy, so its vaddrs name one frame in every process). NULL gives false. */
bool maps_is_image(const struct map_entry *e);

/* The raw frame (symbol/symbol.h) of the user-space address addr, found in mapping m (NULL: in none): a mapped
 * file or the vDSO keeps addr as its ELF vaddr, any other mapping the address itself under its pseudo name,
 * no mapping the address under `unknown` (a string id of p). caller: addr is a return address. PROFILE_NOMEM
 * when out of memory. The one way the backends and the perf.data reader make a user frame. */
uint32_t maps_raw_frame(struct profile *p, const struct map_entry *m, uint64_t addr, bool caller, uint32_t unknown);

/* Adds the executable mappings of every process the maps know to p's mappings (profile_add_mapping: bounds,
 * file offset, bias, build ID), the lowest-mapped file of main_pid (any process when main_pid <= 0) marked as
 * the program. False when out of memory. */
bool maps_to_profile(struct maps *m, struct profile *p, pid_t main_pid);

/* plumb's own vDSO: the kernel maps the same image into every process, so this copy describes the target's
 * "[vdso]" mapping too. Returns the image (read-only, lives as long as the process) and sets *size (bytes of
 * the ELF image: headers, segments, section headers) and *load (ELF vaddr of the image's first byte); NULL when
 * there is no vDSO or it is not a 64-bit ELF image. A "[vdso]" entry's bias follows this image, so
 * maps_vaddr() gives the vaddr in it. */
const void *maps_vdso_image(size_t *size, uint64_t *load);

#endif
