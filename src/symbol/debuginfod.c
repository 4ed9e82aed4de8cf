/* debuginfod.c — the time bound and the progress call on elfutils' debuginfod client (debuginfod.h). libdw loads
 * libdebuginfod itself when DEBUGINFOD_URLS is set (when its first client is made); the three functions used here
 * are found in that already loaded library (dlopen with RTLD_NOLOAD), so plumb neither links it nor loads it when
 * debuginfod is off. The client calls
 * the progress function about once a second while a transfer runs; returning nonzero ends the transfer. */
#include "symbol/debuginfod.h"

#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/settings.h"

/* libdebuginfod's API (debuginfod.h of elfutils, stable since 0.179). */
typedef int (*dbgd_progressfn)(debuginfod_client *c, long a, long b);
static void (*dbgd_set_progressfn)(debuginfod_client *c, dbgd_progressfn fn);
static void (*dbgd_set_user_data)(debuginfod_client *c, void *data);
static void *(*dbgd_get_user_data)(const debuginfod_client *c);

static bool load_api(void)
{
	static int loaded; /* 0 untried, 1 found, -1 absent */
	if (loaded)
		return loaded > 0;
	loaded = -1;
	void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return false;
	*(void **)&dbgd_set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&dbgd_set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&dbgd_get_user_data = dlsym(h, "debuginfod_get_user_data");
	if (dbgd_set_progressfn && dbgd_set_user_data && dbgd_get_user_data)
		loaded = 1;
	return loaded > 0;
}

void sym_fetch_init(struct sym_fetch *f, void (*fetching)(void *ctx, const char *module, bool first, long done,
							     long total), void *ctx)
{
	memset(f, 0, sizeof *f);
	f->fetching = fetching;
	f->ctx = ctx;
	if (!settings()->debuginfod)
		return; /* off: nothing is loaded, nothing is asked */
	double s = settings()->debuginfod_timeout_s;
	f->bound_ns = (uint64_t)((s > 0 ? s : SYM_FETCH_TIMEOUT_S) * 1e9); /* settings.h: 0 unless in (0, 3600) */
	f->enabled = true;
}

static int on_progress(debuginfod_client *c, long done, long total)
{
	struct sym_fetch_state *st = dbgd_get_user_data(c);
	if (!st)
		return 0;
	struct sym_fetch *run = st->run;
	uint64_t now = mono_ns();
	if (run->timed_out) /* the servers did not answer in time once: the rest of the run goes without */
		return 1;
	bool first = !st->start_ns;
	if (first)
		st->start_ns = now;
	if (run->fetching)
		run->fetching(run->ctx, st->module, first, done, total);
	if (now - st->start_ns > run->bound_ns) {
		st->timed_out = run->timed_out = true;
		return 1;
	}
	return 0;
}

void sym_fetch_attach(Dwfl *dwfl, struct sym_fetch_state *st)
{
	if (!st->run || !st->run->enabled)
		return;
	debuginfod_client *c = dwfl_get_debuginfod_client(dwfl); /* libdw loads libdebuginfod for the first one */
	if (!c || !load_api())
		return;
	dbgd_set_user_data(c, st);
	dbgd_set_progressfn(c, on_progress);
}

void sym_fetch_why(const struct sym_fetch_state *st, char *buf, size_t n)
{
	buf[0] = '\0';
	if (!st->run || !st->run->enabled)
		return;
	if (st->timed_out)
		snprintf(buf, n, "debuginfod gave no debug information within %.0f s (PLUMB_DEBUGINFOD_TIMEOUT)",
			 (double)st->run->bound_ns / 1e9);
	else if (st->run->timed_out && !st->start_ns)
		snprintf(buf, n, "debuginfod was not asked (an earlier fetch ran out of time)");
	else
		snprintf(buf, n, "the servers of DEBUGINFOD_URLS have no debug information for it");
}

/* fd when the file on it is an ELF file whose build-id is mod's (or mod has none), else closes it: -1. */
static int matching_debug_file(Dwfl_Module *mod, int fd)
{
	const unsigned char *want;
	GElf_Addr vaddr;
	int want_len = dwfl_module_build_id(mod, &want, &vaddr);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *got = NULL;
	ssize_t got_len = elf && elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &got) : -1;
	bool ok = elf && elf_kind(elf) == ELF_K_ELF &&
		  (want_len <= 0 || (got_len == want_len && memcmp(got, want, (size_t)want_len) == 0));
	if (elf)
		elf_end(elf);
	if (ok)
		return fd;
	close(fd);
	return -1;
}

/* The debuglink search of libdw, locally: NAME in the file's directory, its .debug/, and /usr/lib/debug/DIR. */
static int find_by_link(Dwfl_Module *mod, const char *file_name, const char *debuglink_file, char **found)
{
	if (!file_name || file_name[0] != '/')
		return -1;
	const char *slash = strrchr(file_name, '/');
	char name[512], path[4096 + 600];
	if (debuglink_file)
		snprintf(name, sizeof name, "%s", debuglink_file);
	else
		snprintf(name, sizeof name, "%s.debug", slash + 1);
	int dirlen = (int)(slash - file_name);
	static const char *const forms[] = { "%.*s/%s", "%.*s/.debug/%s", "/usr/lib/debug%.*s/%s" };
	for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
		int w = snprintf(path, sizeof path, forms[i], dirlen, file_name, name);
		if (w <= 0 || (size_t)w >= sizeof path || strcmp(path, file_name) == 0)
			continue;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			continue;
		fd = matching_debug_file(mod, fd);
		if (fd >= 0) {
			*found = strdup(path);
			return fd;
		}
	}
	return -1;
}

int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base, const char *file_name,
		       const char *debuglink_file, GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	if (settings()->debuginfod)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
						    debuglink_crc, debuginfo_file_name);
	/* by build-id (also the dwz alternate file, when the debug file is open already) */
	int fd = dwfl_build_id_find_debuginfo(mod, NULL, NULL, 0, NULL, NULL, 0, debuginfo_file_name);
	if (fd >= 0 || (debuglink_file && debuglink_file[0] == '/')) /* an absolute name: the dwz alternate file */
		return fd;
	return find_by_link(mod, file_name, debuglink_file, debuginfo_file_name);
}

int sym_fetch_executable(const unsigned char *id, size_t len, char **path)
{
	*path = NULL;
	if (!settings()->debuginfod || !len || len > 64)
		return -1;
	static const Dwfl_Callbacks callbacks = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
	};
	Dwfl *dwfl = dwfl_begin(&callbacks); /* only for its client: libdw loads libdebuginfod for it */
	if (!dwfl)
		return -1;
	struct sym_fetch run;
	sym_fetch_init(&run, NULL, NULL);
	struct sym_fetch_state st = { &run, "executable", 0, false };
	sym_fetch_attach(dwfl, &st);
	debuginfod_client *c = dwfl_get_debuginfod_client(dwfl);
	int (*find)(debuginfod_client *, const unsigned char *, int, char **) = NULL;
	void *h = c ? dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD) : NULL;
	if (h)
		*(void **)&find = dlsym(h, "debuginfod_find_executable");
	int fd = find ? find(c, id, (int)len, path) : -1;
	if (fd < 0) {
		free(*path);
		*path = NULL;
		fd = -1;
	}
	dwfl_end(dwfl);
	return fd;
}
