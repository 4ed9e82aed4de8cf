/* dump_core.c — the threads of a core file (dump_core.h). elfutils reports the core's mappings as modules
 * (finding each file by its build-id or its name, or taking the executable given), and unwinds each thread from
 * the registers of its NT_PRSTATUS note through the memory the core holds. Every pc becomes a raw frame in the
 * module that holds it (a return address's call site looked up at pc - 1, as the live unwinder's callers are). */
#include "sample/dump_core.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/procfs.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/readall.h"

struct core_walk {
	struct dump *d;
	struct profile *raw;
	size_t cap;
	Dwfl *dwfl;
	uint64_t pcs[DUMP_CORE_MAX_FRAMES];
	size_t npcs;
	bool oom;
	str_id unknown;
};

static int on_frame(Dwfl_Frame *frame, void *arg)
{
	struct core_walk *w = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	/* a return address (not the interrupted frame): its call is the byte before */
	w->pcs[w->npcs++] = activation ? pc : pc - 1;
	return w->npcs < DUMP_CORE_MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* The raw frame of one pc (the call site for a caller): the module's path and the ELF vaddr. */
static uint32_t raw_frame(struct core_walk *w, uint64_t pc, bool caller)
{
	Dwfl_Module *m = dwfl_addrmodule(w->dwfl, pc);
	const char *mainfile = NULL, *name = NULL;
	Dwarf_Addr bias = 0;
	if (m && dwfl_module_getelf(m, &bias)) {
		name = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
		/* an ELF image elfutils read from the core's own memory has no file: the module's name is its path */
		if (!mainfile && name && name[0] == '/')
			mainfile = name;
	}
	struct frame f = { 0 };
	f.kind = FRAME_USER;
	if (mainfile) {
		f.module = profile_intern_cstr(w->raw, mainfile);
		/* a caller's frame carries its return address (line 1 marks it, symbol/symbol.h) */
		f.addr = pc - bias + (caller ? 1 : 0);
		f.line = caller ? 1 : 0;
	} else {
		f.module = w->unknown;
		f.addr = pc + (caller ? 1 : 0);
	}
	return profile_frame(w->raw, &f);
}

static int on_thread(Dwfl_Thread *thread, void *arg)
{
	struct core_walk *w = arg;
	struct dump *d = w->d;
	if (d->nthreads >= 4096)
		return DWARF_CB_ABORT;
	if (!ALLOC_GROW(d->threads, d->nthreads + 1, w->cap)) {
		w->oom = true;
		return DWARF_CB_ABORT;
	}
	struct dump_thread *t = &d->threads[d->nthreads++];
	memset(t, 0, sizeof *t);
	t->tid = dwfl_thread_tid(thread);
	t->state = '?';
	t->syscall = -2;
	if (t->tid == d->pid)
		snprintf(t->name, sizeof t->name, "%s", d->comm);
	w->npcs = 0;
	dwfl_thread_getframes(thread, on_frame, w); /* an unwind that stops early keeps the frames it found */
	uint32_t node = PROFILE_ROOT;
	for (size_t i = w->npcs; i-- > 0 && node != PROFILE_NOMEM;) {
		uint32_t f = raw_frame(w, w->pcs[i], i > 0);
		node = f == PROFILE_NOMEM ? PROFILE_NOMEM : profile_stack(w->raw, node, f);
	}
	uint32_t th = profile_thread(w->raw, (uint32_t)d->pid, (uint32_t)t->tid, t->name);
	if (node == PROFILE_NOMEM || th == PROFILE_NOMEM || !profile_add_sample(w->raw, node, th, 0, 1)) {
		w->oom = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* The process's pid, name and state from the NT_PRPSINFO note. */
static void read_prpsinfo(Elf *elf, struct dump *d)
{
	size_t nph;
	if (elf_getphdrnum(elf, &nph) != 0)
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!data)
			continue;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_PRPSINFO || nh.n_descsz < sizeof(struct elf_prpsinfo))
				continue;
			struct elf_prpsinfo ps; /* copied out: a note's descriptor is 4-byte aligned, the struct wants 8 */
			memcpy(&ps, (const char *)data->d_buf + desc_off, sizeof ps);
			d->pid = ps.pr_pid;
			size_t n = strnlen(ps.pr_fname, sizeof ps.pr_fname);
			memcpy(d->comm, ps.pr_fname, n < sizeof d->comm ? n : sizeof d->comm - 1);
			return;
		}
	}
}

static const char *dwfl_why(void)
{
	const char *m = dwfl_errmsg(-1);
	return m ? m : "elfutils found nothing it could use";
}

static const Dwfl_Callbacks core_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

enum plumb_err dump_core_read(const char *core, const char *exe, struct dump *d, struct profile *raw,
			      struct perr *e)
{
	elf_version(EV_CURRENT);
	/* the input rule (base/readall.h): a device is refused unopened, a FIFO unread (a core is mapped, so it must
	 * be a regular file; its size is not capped, the mapping costs no memory) */
	int fd;
	enum plumb_err orc = read_input_open_file(core, "core file", SIZE_MAX, &fd, NULL, e);
	if (orc)
		return orc;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	enum plumb_err rc = PLUMB_OK;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || eh.e_type != ET_CORE) {
		rc = perr_set(e, PLUMB_EFORMAT, "%s is not a core file", core);
		goto out;
	}
	read_prpsinfo(elf, d);
	Dwfl *dwfl = dwfl_begin(&core_callbacks);
	if (!dwfl) {
		rc = perr_set(e, PLUMB_ENOMEM, "dump: out of memory");
		goto out;
	}
	/* the symbolizer opens modules by absolute path */
	char exe_abs[PATH_MAX];
	if (exe && !realpath(exe, exe_abs)) {
		rc = perr_set(e, errno == ENOENT ? PLUMB_ENOENT : PLUMB_EIO, "cannot open executable %s: %s", exe,
			      strerror(errno));
		dwfl_end(dwfl);
		goto out;
	}
	if (exe)
		exe = exe_abs;
	dwfl_report_begin(dwfl);
	int mods = dwfl_core_file_report(dwfl, elf, exe);
	dwfl_report_end(dwfl, NULL, NULL);
	if (mods < 0 || dwfl_core_file_attach(dwfl, elf) < 0) {
		rc = perr_set(e, PLUMB_EFORMAT, "cannot read core file %s: %s", core, dwfl_why());
		dwfl_end(dwfl);
		goto out;
	}
	/* the executable: the one given, else the main module elfutils found */
	if (exe)
		snprintf(d->exe, sizeof d->exe, "%s", exe);
	struct core_walk w = { .d = d, .raw = raw, .dwfl = dwfl, .unknown = profile_intern_cstr(raw, "[unknown]") };
	dwfl_getthreads(dwfl, on_thread, &w);
	if (w.oom)
		rc = perr_set(e, PLUMB_ENOMEM, "dump: out of memory");
	else if (d->nthreads == 0)
		rc = perr_set(e, PLUMB_EFORMAT, "core file %s holds no threads: %s", core, dwfl_why());
	dwfl_end(dwfl);
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}
