/* debuginfod.h — bounds and reports the fetches of elfutils' own debuginfod client (docs/design.md §4.2), inside
 * symbol/ only. libdw asks the servers of DEBUGINFOD_URLS by itself, through libdebuginfod, for a module without
 * local debug information; this adds a time bound per file (PLUMB_DEBUGINFOD_TIMEOUT seconds, default 10; after
 * one fetch ran out of time, the rest of the run asks no more), a call when a fetch starts (for a progress line),
 * and what happened, for the hint. Nothing is loaded or asked when DEBUGINFOD_URLS is unset.
 *
 * Inside symbol/ only, but for sym_fetch_executable, which the perf.data reader (format/) calls.
 *
 * Ownership: the symbolizer owns one sym_fetch per run (sym_fetch_init / no release: it holds no resource). */
#ifndef PLUMB_SYMBOL_DEBUGINFOD_H
#define PLUMB_SYMBOL_DEBUGINFOD_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

#define SYM_FETCH_TIMEOUT_S 10.0

/* The run's fetch state, shared by its modules. */
struct sym_fetch {
	bool enabled;           /* DEBUGINFOD_URLS is set and libdebuginfod is loaded */
	uint64_t bound_ns;      /* per file */
	bool timed_out;         /* a fetch ran out of time: no more are made */
	/* a fetch starts (first) or goes on (may be NULL): sym_opts.fetching */
	void (*fetching)(void *ctx, const char *module, bool first, long done, long total);
	void *ctx;
};

/* What one module's fetches did. */
struct sym_fetch_state {
	struct sym_fetch *run;
	const char *module;     /* the module's path */
	uint64_t start_ns;      /* when its first fetch started, 0: none started */
	bool timed_out;         /* it was cut off at the bound */
};

void sym_fetch_init(struct sym_fetch *f, void (*fetching)(void *ctx, const char *module, bool first, long done,
							     long total), void *ctx);
/* Hooks the bound and the progress call into dwfl's debuginfod client (none when debuginfod is off). st must
 * live as long as dwfl. */
void sym_fetch_attach(Dwfl *dwfl, struct sym_fetch_state *st);
/* The find_debuginfo callback of every Dwfl plumb makes: with DEBUGINFOD_URLS set, libdw's standard search (build-id,
 * .gnu_debuglink, then debuginfod); without it the same local search — by build-id under /usr/lib/debug/.build-id,
 * then the debuglink name (or NAME.debug) beside the file, in its .debug/ and under /usr/lib/debug — so that
 * libdw never loads libdebuginfod (and libcurl with it) for nothing. */
int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, const char *file_name,
		       const char *debuglink_file, GElf_Word debuglink_crc, char **debuginfo_file_name);

/* The ELF file (an executable or shared object) whose build ID is id[0..len), from the servers of DEBUGINFOD_URLS
 * (a file in the client's cache, bounded like every fetch): its descriptor (the caller closes it) and *path
 * (malloc'd; the caller frees it). -1 when DEBUGINFOD_URLS is unset or no server has it. */
int sym_fetch_executable(const unsigned char *id, size_t len, char **path);

/* Why a module that was asked for has no names, for the hint ("" when debuginfod was not asked). */
void sym_fetch_why(const struct sym_fetch_state *st, char *buf, size_t n);

#endif
