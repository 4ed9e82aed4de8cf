/* files.h — the files of sampled processes as those processes see them (docs/design.md §4.2): an ELF file mapped
 * by a process in another mount namespace (a container, a private /tmp), deleted or replaced on disk since it was
 * mapped, is opened through /proc/PID/map_files (the mapped file itself) or /proc/PID/root, never by its name in
 * plumb's own view; a perf map is /tmp/perf-NSPID.map in the process's own /tmp, under its own pid, opened under
 * the trust rules (regular file, the target's user or root, a size cap; docs/design.md §3.5). Files are opened
 * while the process lives (the backend, at first sight) and kept open, so symbolization after it exits still
 * reads them.
 *
 * Ownership: sym_files_new() / sym_files_free(); descriptors returned are the set's (never close them); strings
 * returned live as long as the set. The caller (record) creates the set, backends fill it (record_opts.files),
 * the symbolizer reads it (sym_opts.files). */
#ifndef PLUMB_SYMBOL_FILES_H
#define PLUMB_SYMBOL_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/sbuf.h"

#define SYM_PERF_MAP_MAX ((size_t)64 << 20) /* a perf map is read up to 64 MiB */

struct sym_files;

struct sym_files *sym_files_new(void);
void sym_files_free(struct sym_files *f);

/* The ELF file that pid maps at [start, end) and its maps name `path` (as /proc/PID/maps or a perf mmap record
 * shows it, " (deleted)" included; ino 0 when unknown): opened once per path, through /proc/PID/map_files, else
 * as pid sees the path (/proc/PID/root), else plainly — the last two only when the file there is still the mapped
 * one (same inode). Returns the set's descriptor, or -1 when it cannot be opened. */
int sym_files_elf(struct sym_files *f, pid_t pid, const char *path, uint64_t start, uint64_t end, uint64_t ino);
/* The descriptor an earlier sym_files_elf opened for path, or -1. NULL f gives -1. */
int sym_files_elf_fd(const struct sym_files *f, const char *path);
/* Whether sym_files_elf was asked for path (so -1 from sym_files_elf_fd means it could not be opened as the
 * process saw it, and opening the name in plumb's view would risk another file). */
bool sym_files_elf_tried(const struct sym_files *f, const char *path);
/* Where libdw should look for path's separate debug files (its directory, .debug/, debuglink): path itself in
 * plumb's view, or "/proc/self/fd/N/..." through a kept descriptor of the process's root when it lives in another
 * mount namespace. Written into buf (n bytes); returns buf, or path when nothing better is known. */
const char *sym_files_view_path(const struct sym_files *f, const char *path, char *buf, size_t n);

/* pid's perf map (/tmp/perf-NSPID.map in pid's root, NSPID the pid pid has in its own namespace), opened under the
 * trust rules once it exists (looked for again at most every 200 ms while it does not). True with the raw frames'
 * module name for it in module (n bytes); false when there is none, or it was refused (with a note). */
bool sym_files_perf_map(struct sym_files *f, pid_t pid, char *module, size_t n);
/* The descriptor of the perf map a raw JIT frame's module names, or -1. */
int sym_files_perf_map_fd(const struct sym_files *f, const char *module);

/* Lines ("note: ...\n") about files refused or not found as the target saw them; "" when none. */
const char *sym_files_notes(const struct sym_files *f);

#endif
