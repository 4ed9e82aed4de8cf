/* plt.h — names for PLT stubs, the way perf names them: `X@plt`, X the symbol whose GOT slot the stub jumps
 * through, read from the relocation tables (.rela.plt, .rela.dyn) of an ELF file. The stubs of .plt, .plt.sec and
 * .plt.got are all `jmp *GOT(%rip)` (after an optional endbr64 or push), so a stub is named by decoding its jump's
 * slot and finding the relocation of that slot; a stub without one (the .plt header) stays nameless.
 *
 * Ownership: plt_stubs_load() copies what it needs and keeps nothing of the Elf; plt_stubs_free() accepts NULL.
 * Names returned live as long as the table. */
#ifndef PLUMB_SYMBOL_PLT_H
#define PLUMB_SYMBOL_PLT_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct plt_stubs;

/* The named stubs of elf (x86_64 ELF files; any other file gives an empty table). NULL when out of memory. */
struct plt_stubs *plt_stubs_load(Elf *elf);
void plt_stubs_free(struct plt_stubs *t);
/* The name ("memcpy@plt") of the stub holding vaddr, or NULL when vaddr is in no named stub. */
const char *plt_stubs_find(const struct plt_stubs *t, uint64_t vaddr);
/* How many stubs the table names (tests). */
size_t plt_stubs_count(const struct plt_stubs *t);

#endif
