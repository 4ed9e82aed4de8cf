/* runtime.c — finding a CPython interpreter (python.h, internal.h): the ELF object that holds it (the executable
 * or its libpython, from /proc/PID/maps, or a command's binary before it runs), its version (Py_Version, else the
 * soname), _PyRuntime and the evaluation loop from the ELF symbols; and the reader's lifecycle. Nothing is
 * trusted that the target's memory does not confirm: an interpreter not initialized yet is PLUMB_ENOENT. */
#include "python/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/fs.h"
#include "os/procfs.h"

/* ---- ELF facts about one file ---- */

struct elf_facts {
	bool has_runtime;
	uint64_t runtime;            /* vaddr of _PyRuntime */
	bool has_version;
	uint64_t version_vaddr;      /* vaddr of Py_Version */
	unsigned long version_hex;   /* its value read from the file (0 when it lives in .bss) */
	bool has_eval;
	uint64_t eval_start, eval_end;
	uint64_t code_type;          /* vaddr of PyCode_Type, 0 when not found */
	uint64_t first_load_vaddr;   /* p_vaddr of the PT_LOAD with p_offset 0, page aligned */
	unsigned needed_major, needed_minor; /* from DT_NEEDED libpythonX.Y.so */
};

static bool parse_py_name(const char *name, const char *prefix, unsigned *major, unsigned *minor)
{
	size_t n = strlen(prefix);
	if (strncmp(name, prefix, n) != 0)
		return false;
	unsigned a, b;
	if (sscanf(name + n, "%u.%u", &a, &b) != 2 || a < 2 || a > 3)
		return false;
	*major = a;
	*minor = b;
	return true;
}

static void elf_read_symbol_value(Elf *elf, GElf_Sym *sym, struct elf_facts *f)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
		return;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || sym->st_value < sh.sh_addr || sym->st_value - sh.sh_addr + 8 > d->d_size)
		return;
	uint64_t v;
	memcpy(&v, (const char *)d->d_buf + (sym->st_value - sh.sh_addr), sizeof v);
	f->version_hex = (unsigned long)v;
}

static bool elf_facts_read(const char *path, struct elf_facts *f)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return false;
	}
	size_t nph = 0;
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
				f->first_load_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
				break;
			}
		}
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || sh.sh_entsize == 0)
			continue;
		if (sh.sh_type == SHT_DYNSYM || sh.sh_type == SHT_SYMTAB) {
			size_t n = sh.sh_size / sh.sh_entsize;
			for (size_t i = 0; i < n; i++) {
				GElf_Sym sym;
				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
					continue;
				const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (!name || (name[0] != '_' && name[0] != 'P'))
					continue;
				if (!f->has_runtime && strcmp(name, "_PyRuntime") == 0) {
					f->has_runtime = true;
					f->runtime = sym.st_value;
				} else if (!f->has_version && strcmp(name, "Py_Version") == 0) {
					f->has_version = true;
					f->version_vaddr = sym.st_value;
					elf_read_symbol_value(elf, &sym, f);
				} else if (!f->code_type && strcmp(name, "PyCode_Type") == 0) {
					f->code_type = sym.st_value;
				} else if (!f->has_eval && strcmp(name, "_PyEval_EvalFrameDefault") == 0 &&
					   sym.st_size) {
					f->has_eval = true;
					f->eval_start = sym.st_value;
					f->eval_end = sym.st_value + sym.st_size;
				}
			}
		} else if (sh.sh_type == SHT_DYNAMIC) {
			size_t n = sh.sh_size / sh.sh_entsize;
			for (size_t i = 0; i < n; i++) {
				GElf_Dyn dyn;
				if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
					continue;
				const char *name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
				if (name)
					parse_py_name(name, "libpython", &f->needed_major, &f->needed_minor);
			}
		}
	}
	elf_end(elf);
	close(fd);
	return true;
}

static void info_from_facts(const struct elf_facts *f, struct py_binary_info *out)
{
	memset(out, 0, sizeof *out);
	if (f->has_runtime) {
		out->is_python = true;
		if (f->version_hex) {
			out->major = (f->version_hex >> 24) & 0xff;
			out->minor = (f->version_hex >> 16) & 0xff;
		}
	}
	if (!out->major && f->needed_major) {
		out->is_python = true;
		out->major = f->needed_major;
		out->minor = f->needed_minor;
	}
	out->supported = out->is_python && py_layout_find(out->major, out->minor) != NULL;
}

bool py_command_is_script(const char *argv0)
{
	char path[PATH_MAX], head[2];
	if (!argv0 || !fs_which(argv0, path, sizeof path))
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool script = read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!';
	close(fd);
	return script;
}

bool py_probe_command(const char *argv0, struct py_binary_info *out)
{
	memset(out, 0, sizeof *out);
	char path[PATH_MAX];
	if (!argv0 || !fs_which(argv0, path, sizeof path))
		return false;
	/* A "#!" script: follow its interpreter (and "env NAME"), once. */
	FILE *fp = fopen(path, "re");
	if (fp) {
		char line[256];
		if (fgets(line, sizeof line, fp) && line[0] == '#' && line[1] == '!') {
			char *save = NULL, *interp = strtok_r(line + 2, " \t\r\n", &save);
			char *arg = strtok_r(NULL, " \t\r\n", &save);
			if (interp && strcmp(strrchr(interp, '/') ? strrchr(interp, '/') + 1 : interp, "env") == 0 && arg)
				interp = arg;
			fclose(fp);
			char real[PATH_MAX];
			if (!interp || !fs_which(interp, real, sizeof real))
				return false;
			snprintf(path, sizeof path, "%s", real);
		} else {
			fclose(fp);
		}
	}
	struct elf_facts f;
	if (!elf_facts_read(path, &f))
		return false;
	info_from_facts(&f, out);
	return out->is_python;
}

/* One executable-or-data mapping of a file in /proc/PID/maps. */
struct candidate {
	char path[PATH_MAX];
	uint64_t base; /* start of the mapping with offset 0 */
	uint64_t end;  /* its end */
};

static size_t list_candidates(pid_t pid, struct candidate *out, size_t max)
{
	struct procfs_maps it;
	struct procfs_map m;
	if (!procfs_maps_open(&it, pid))
		return 0;
	size_t n = 0;
	char exe[PATH_MAX];
	int have_exe = -1; /* read once, when a mapping is not named like CPython */
	while (n < max && procfs_maps_next(&it, &m)) {
		const char *path = m.path;
		uint64_t start = m.start;
		if (path[0] != '/' || m.offset != 0)
			continue;
		const char *base = strrchr(path, '/') + 1;
		unsigned a, b;
		bool interesting = parse_py_name(base, "libpython", &a, &b) || parse_py_name(base, "python", &a, &b);
		if (!interesting) {
			/* the executable itself, whatever its name */
			if (have_exe < 0)
				have_exe = procfs_exe(pid, exe, sizeof exe) > 0;
			interesting = have_exe && strcmp(exe, path) == 0;
		}
		if (!interesting)
			continue;
		bool dup = false;
		for (size_t i = 0; i < n; i++)
			dup |= strcmp(out[i].path, path) == 0;
		if (dup)
			continue;
		snprintf(out[n].path, sizeof out[n].path, "%s", path);
		out[n].base = start;
		out[n].end = m.end;
		n++;
	}
	procfs_maps_close(&it);
	return n;
}

/* The file behind a mapping as the target sees it: the mapped file itself (/proc/PID/map_files: even deleted or
 * replaced on disk since), else its path in the target's mount namespace (/proc/PID/root), else the path. */
static void file_for(pid_t pid, const struct candidate *c, char *out, size_t n)
{
	int fd = procfs_open_map_file(pid, c->base, c->end);
	if (fd >= 0) {
		close(fd);
		if (procfs_map_file_path(pid, c->base, c->end, out, n))
			return;
	}
	if (!procfs_root_path(pid, c->path, out, n) || access(out, R_OK) != 0)
		snprintf(out, n, "%s", c->path);
}

bool py_probe_pid(pid_t pid, struct py_binary_info *out)
{
	memset(out, 0, sizeof *out);
	struct candidate c[8];
	size_t n = list_candidates(pid, c, 8);
	for (size_t i = 0; i < n; i++) {
		char file[PATH_MAX + 32];
		struct elf_facts f;
		file_for(pid, &c[i], file, sizeof file);
		if (!elf_facts_read(file, &f) || !f.has_runtime)
			continue;
		info_from_facts(&f, out);
		if (!out->major) {
			const char *base = strrchr(c[i].path, '/') + 1;
			if (!parse_py_name(base, "libpython", &out->major, &out->minor))
				parse_py_name(base, "python", &out->major, &out->minor);
			out->supported = py_layout_find(out->major, out->minor) != NULL;
		}
		return true;
	}
	/* CPython before 3.7 has no _PyRuntime: a mapped libpythonX.Y still says what it is */
	for (size_t i = 0; i < n; i++) {
		const char *base = strrchr(c[i].path, '/') + 1;
		if (parse_py_name(base, "libpython", &out->major, &out->minor)) {
			out->is_python = true;
			out->supported = false;
			return true;
		}
	}
	return false;
}

/* 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h), at the start of _PyRuntime: the offsets the
 * interpreter itself says tools should use. Only the 3.13 shape is known here (3.14 adds fields). */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct {
		uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins, ceval_gil,
			gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
			gil_runtime_state_holder;
	} interpreter_state;
	struct {
		uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk,
			status;
	} thread_state;
	struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
	struct {
		uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
			localspluskinds, co_code_adaptive;
	} code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object, list_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
	struct { uint64_t size, collecting; } gc;
};

/* Reads _Py_DebugOffsets over py->layout: every offset they name is taken from them, and each must equal the
 * table's, because the table's other numbers (the ones they do not name) come from the same headers. False, with
 * why, when they disagree or say something plumb cannot read (a free-threaded build). */
static bool check_debug_offsets(struct py_proc *py, uint64_t hex, char *why, size_t whylen)
{
	struct debug_offsets_313 d;
	if (!py_mem_read(py, py->runtime, &d, sizeof d) || memcmp(d.cookie, "xdebugpy", 8) != 0) {
		snprintf(why, whylen, "no _Py_DebugOffsets at _PyRuntime");
		return false;
	}
	if ((d.version >> 16) != (hex >> 16)) {
		snprintf(why, whylen, "_Py_DebugOffsets of version 0x%llx", (unsigned long long)d.version);
		return false;
	}
	if (d.free_threaded) {
		snprintf(why, whylen, "a free-threaded build");
		return false;
	}
	struct py_layout *L = &py->layout;
	struct { const char *name; uint32_t *field; uint64_t value; } map[] = {
		{ "runtime_state.interpreters_head", &L->runtime_interp_head, d.runtime_state.interpreters_head },
		{ "interpreter_state.next", &L->interp_next, d.interpreter_state.next },
		{ "interpreter_state.threads_head", &L->interp_threads_head, d.interpreter_state.threads_head },
		{ "interpreter_state.imports_modules", &L->interp_modules, d.interpreter_state.imports_modules },
		{ "thread_state.next", &L->tstate_next, d.thread_state.next },
		{ "thread_state.current_frame", &L->tstate_frame, d.thread_state.current_frame },
		{ "thread_state.thread_id", &L->tstate_thread_id, d.thread_state.thread_id },
		{ "thread_state.native_thread_id", &L->tstate_native_thread_id, d.thread_state.native_thread_id },
		{ "interpreter_frame.previous", &L->frame_previous, d.interpreter_frame.previous },
		{ "interpreter_frame.executable", &L->frame_code, d.interpreter_frame.executable },
		{ "interpreter_frame.instr_ptr", &L->frame_prev_instr, d.interpreter_frame.instr_ptr },
		{ "interpreter_frame.localsplus", &L->frame_size, d.interpreter_frame.localsplus },
		{ "interpreter_frame.owner", &L->frame_owner, d.interpreter_frame.owner },
		{ "code_object.filename", &L->code_filename, d.code_object.filename },
		{ "code_object.name", &L->code_name, d.code_object.name },
		{ "code_object.qualname", &L->code_qualname, d.code_object.qualname },
		{ "code_object.linetable", &L->code_linetable, d.code_object.linetable },
		{ "code_object.firstlineno", &L->code_firstlineno, d.code_object.firstlineno },
		{ "code_object.co_code_adaptive", &L->code_code_adaptive, d.code_object.co_code_adaptive },
		{ "pyobject.ob_type", &L->obj_type, d.pyobject.ob_type },
		{ "type_object.tp_flags", &L->type_flags, d.type_object.tp_flags },
		{ "dict_object.ma_keys", &L->dict_keys, d.dict_object.ma_keys },
		{ "dict_object.ma_values", &L->dict_values, d.dict_object.ma_values },
		{ "long_object.lv_tag", &L->long_size, d.long_object.lv_tag },
		{ "long_object.ob_digit", &L->long_digits, d.long_object.ob_digit },
		{ "bytes_object.ob_size", &L->bytes_size, d.bytes_object.ob_size },
		{ "bytes_object.ob_sval", &L->bytes_data, d.bytes_object.ob_sval },
		{ "unicode_object.state", &L->str_state, d.unicode_object.state },
		{ "unicode_object.length", &L->str_length, d.unicode_object.length },
		{ "unicode_object.asciiobject_size", &L->str_ascii_size, d.unicode_object.asciiobject_size },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
		if (map[i].value != *map[i].field) {
			snprintf(why, whylen, "_Py_DebugOffsets: %s is %llu, plumb's table %u", map[i].name,
				 (unsigned long long)map[i].value, (unsigned)*map[i].field);
			return false;
		}
		*map[i].field = (uint32_t)map[i].value;
	}
	py->debug_offsets = true;
	return true;
}

enum plumb_err py_open(pid_t pid, struct py_proc **out, struct perr *e)
{
	*out = NULL;
	struct candidate c[8];
	size_t n = list_candidates(pid, c, 8);
	if (n == 0) {
		if (kill(pid, 0) != 0 && errno == ESRCH)
			return perr_set(e, PLUMB_EINVAL, "no process with pid %d", (int)pid);
		return perr_set(e, PLUMB_EUNSUPPORTED, "process %d is not a CPython interpreter", (int)pid);
	}
	struct py_proc *py = calloc(1, sizeof *py);
	if (!py)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	py->pid = pid;
	struct elf_facts f;
	size_t i;
	for (i = 0; i < n; i++) {
		char file[PATH_MAX + 32];
		file_for(pid, &c[i], file, sizeof file);
		if (elf_facts_read(file, &f) && f.has_runtime)
			break;
	}
	if (i == n) {
		unsigned a = 0, b = 0;
		for (i = 0; i < n && !parse_py_name(strrchr(c[i].path, '/') + 1, "libpython", &a, &b); i++)
			;
		free(py);
		if (a)
			return perr_set(e, PLUMB_EUNSUPPORTED,
					"CPython %u.%u: Python frames not supported (plumb reads 3.8 to 3.13)", a, b);
		return perr_set(e, PLUMB_EUNSUPPORTED, "process %d is not a CPython interpreter", (int)pid);
	}
	snprintf(py->module, sizeof py->module, "%s", c[i].path);
	py->bias = c[i].base - f.first_load_vaddr;
	py->runtime = f.runtime + py->bias;
	py->has_eval = f.has_eval;
	py->eval_start = f.eval_start;
	py->eval_end = f.eval_end;
	unsigned major = 0, minor = 0, micro = 0;
	uint64_t hex = 0;
	if (f.has_version && py_mem_read(py, f.version_vaddr + py->bias, &hex, sizeof hex) && hex) {
		major = (hex >> 24) & 0xff;
		minor = (hex >> 16) & 0xff;
		micro = (hex >> 8) & 0xff;
		snprintf(py->version, sizeof py->version, "%u.%u.%u", major, minor, micro);
	} else {
		const char *base = strrchr(c[i].path, '/') + 1;
		if (!parse_py_name(base, "libpython", &major, &minor))
			parse_py_name(base, "python", &major, &minor);
		snprintf(py->version, sizeof py->version, "%u.%u", major, minor);
	}
	if (f.has_version && !hex) {
		/* Py_Version exists but cannot be read: the memory is not ours to read */
		int err = errno;
		free(py);
		return perr_set(e, PLUMB_EPERM, "cannot read the memory of process %d: %s", (int)pid, strerror(err));
	}
	const struct py_layout *row = py_layout_find(major, minor);
	if (!row) {
		enum plumb_err code = perr_set(e, PLUMB_EUNSUPPORTED,
					       "CPython %s: Python frames not supported (plumb reads 3.8 to 3.13)",
					       py->version);
		free(py);
		return code;
	}
	py->layout = *row;
	py->L = &py->layout;
	py->code_type = f.code_type ? f.code_type + py->bias : 0;
	py->tid_off = 0;
	char why[160];
	if ((major > 3 || (major == 3 && minor >= 13)) && !check_debug_offsets(py, hex, why, sizeof why)) {
		free(py);
		return perr_set(e, PLUMB_EUNSUPPORTED, "CPython %s: layout check failed (%s)", py->version, why);
	}
	uint64_t interp = 0;
	if (!py_mem_ptr(py, py->runtime + py->L->runtime_interp_head, &interp)) {
		int err = errno;
		free(py);
		return perr_set(e, err == EPERM ? PLUMB_EPERM : PLUMB_EIO, "cannot read the memory of process %d: %s",
				(int)pid, strerror(err));
	}
	if (!interp) {
		free(py);
		return perr_set(e, PLUMB_ENOENT, "the interpreter in process %d is not initialized yet", (int)pid);
	}
	py->frames = calloc(PY_MAX_FRAMES, sizeof *py->frames);
	py->raw = calloc(PY_MAX_FRAMES, sizeof *py->raw);
	py->heads = malloc((size_t)PY_MAX_FRAMES * py->L->code_size);
	if (!py->frames || !py->raw || !py->heads) {
		free(py->frames);
		free(py->raw);
		free(py->heads);
		free(py);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	*out = py;
	return PLUMB_OK;
}

void py_close(struct py_proc *py)
{
	if (!py)
		return;
	py_codes_release(py);
	py_names_release(py);
	free(py->frames);
	free(py->raw);
	free(py->heads);
	free(py);
}

const char *py_version(const struct py_proc *py)
{
	return py->version;
}

bool py_eval_range(const struct py_proc *py, const char **module, uint64_t *vaddr_start, uint64_t *vaddr_end)
{
	if (!py->has_eval)
		return false;
	*module = py->module;
	*vaddr_start = py->eval_start;
	*vaddr_end = py->eval_end;
	return true;
}
