/* dump_core.h — `plumb dump --core FILE [--exe BINARY]`: the threads of a core file (gcore, or a kernel core
 * dump) unwound by elfutils (dwfl_core_file_report / dwfl_core_file_attach, as eu-stack --core does), each
 * frame kept as a raw frame (module path + ELF vaddr) so that plumb's symbolizer names it as it names a live
 * process's frames. Internal to sample/dump.c. */
#ifndef PLUMB_SAMPLE_DUMP_CORE_H
#define PLUMB_SAMPLE_DUMP_CORE_H

#include "base/err.h"
#include "profile/profile.h"
#include "sample/dump.h"

#define DUMP_CORE_MAX_FRAMES 512

/* Reads core (with exe, or the executable the core names when NULL): d->pid, d->comm, d->exe and d->threads
 * (tid, name, state; no frames yet), and one sample per thread in raw whose stack holds its raw frames (the
 * profile thread (d->pid, tid)). PLUMB_ENOENT: no such file; PLUMB_EFORMAT: not a core file, or one elfutils
 * cannot read; PLUMB_ENOMEM. */
enum plumb_err dump_core_read(const char *core, const char *exe, struct dump *d, struct profile *raw,
			      struct perr *e);

#endif
