/* python.c — the CPython frame reader (python.h). Everything is read with process_vm_readv from a target that
 * keeps running; each pointer chain is bounded, and a chain that fails to read midway is dropped for this
 * sample. Code objects are cached by address (name, file, first line, line table), so a steady-state sample
 * costs one small read per thread state and per frame. */
#include "python/python.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "python/layout.h"

#define PY_MAX_FRAMES 1024
#define PY_MAX_THREADS 4096
#define PY_MAX_INTERPS 64
#define PY_MAX_STR 4096
#define PY_MAX_LINETABLE (1 << 20)

/* ---- ELF facts about one file ---- */

struct elf_facts {
	bool has_runtime;
	uint64_t runtime;            /* vaddr of _PyRuntime */
	bool has_version;
	uint64_t version_vaddr;      /* vaddr of Py_Version */
	unsigned long version_hex;   /* its value read from the file (0 when it lives in .bss) */
	bool has_eval;
	uint64_t eval_start, eval_end;
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

/* Resolves a command name on PATH like execvp does; returns false when not found. */
static bool resolve_on_path(const char *name, char *out, size_t n)
{
	if (strchr(name, '/')) {
		snprintf(out, n, "%s", name);
		return access(out, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		snprintf(out, n, "%.*s/%s", (int)len, len ? path : ".", name);
		if (access(out, X_OK) == 0)
			return true;
		path += len;
		if (*path == ':')
			path++;
	}
	return false;
}

bool py_command_is_script(const char *argv0)
{
	char path[PATH_MAX], head[2];
	if (!argv0 || !resolve_on_path(argv0, path, sizeof path))
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
	if (!argv0 || !resolve_on_path(argv0, path, sizeof path))
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
			if (!interp || !resolve_on_path(interp, real, sizeof real))
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

/* ---- the process ---- */

struct py_code {
	uint64_t addr;
	uint64_t name_p, file_p; /* what the entry was read from, to notice a freed and reused address */
	uint64_t checked_ns;     /* when that was last checked */
	char *func;
	char *file;
	int firstlineno;
	int firsttraceable;
	uint8_t *linetable;
	size_t linetable_len;
	uint32_t last_addrq; /* one-entry line cache: most samples of a frame hit the same instruction */
	int last_line;
};

static void code_free(struct py_code *c);

struct py_proc {
	pid_t pid;
	const struct py_layout *L;
	char version[32];
	char module[PATH_MAX];   /* the ELF object that holds the interpreter */
	uint64_t bias;           /* runtime address = vaddr + bias */
	uint64_t runtime;        /* absolute address of _PyRuntime */
	bool has_eval;
	uint64_t eval_start, eval_end;
	struct hmap code_index;  /* code addr -> index in codes */
	struct py_code *codes;
	size_t ncodes, capcodes;
	struct py_frame *frames; /* scratch for one thread */
	struct py_name *names;   /* threading.get_ident() -> threading's name */
	size_t nnames;
	uint64_t names_read_ns;  /* when threading._active was last read */
};

struct py_name {
	uint64_t ident;
	char *name;
};

static bool rd(const struct py_proc *py, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return false;
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(py->pid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len;
}

static bool rd_ptr(const struct py_proc *py, uint64_t addr, uint64_t *out)
{
	return rd(py, addr, out, sizeof *out);
}

/* One executable-or-data mapping of a file in /proc/PID/maps. */
struct candidate {
	char path[PATH_MAX];
	uint64_t base; /* start of the mapping with offset 0 */
};

static size_t list_candidates(pid_t pid, struct candidate *out, size_t max)
{
	char mp[64];
	snprintf(mp, sizeof mp, "/proc/%d/maps", (int)pid);
	FILE *fp = fopen(mp, "re");
	if (!fp)
		return 0;
	char line[PATH_MAX + 128];
	size_t n = 0;
	while (n < max && fgets(line, sizeof line, fp)) {
		unsigned long start, end, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &start, &end, perms, &off, &pos) < 4 || !pos)
			continue;
		char *path = line + pos;
		path[strcspn(path, "\n")] = 0;
		if (path[0] != '/' || off != 0)
			continue;
		const char *base = strrchr(path, '/') + 1;
		unsigned a, b;
		bool interesting = parse_py_name(base, "libpython", &a, &b) || parse_py_name(base, "python", &a, &b);
		if (!interesting) {
			/* the executable itself, whatever its name */
			char exe[PATH_MAX], ep[64];
			snprintf(ep, sizeof ep, "/proc/%d/exe", (int)pid);
			ssize_t l = readlink(ep, exe, sizeof exe - 1);
			if (l > 0) {
				exe[l] = 0;
				interesting = strcmp(exe, path) == 0;
			}
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
		n++;
	}
	fclose(fp);
	return n;
}

/* The file behind a mapping, readable even when the target runs in another mount namespace. */
static void file_for(pid_t pid, const char *path, char *out, size_t n)
{
	snprintf(out, n, "/proc/%d/root%s", (int)pid, path);
	if (access(out, R_OK) != 0)
		snprintf(out, n, "%s", path);
}

bool py_probe_pid(pid_t pid, struct py_binary_info *out)
{
	memset(out, 0, sizeof *out);
	struct candidate c[8];
	size_t n = list_candidates(pid, c, 8);
	for (size_t i = 0; i < n; i++) {
		char file[PATH_MAX + 32];
		struct elf_facts f;
		file_for(pid, c[i].path, file, sizeof file);
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
	return false;
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
		file_for(pid, c[i].path, file, sizeof file);
		if (elf_facts_read(file, &f) && f.has_runtime)
			break;
	}
	if (i == n) {
		free(py);
		return perr_set(e, PLUMB_EUNSUPPORTED,
				"process %d is not a CPython interpreter with a _PyRuntime symbol (CPython 3.7+)", (int)pid);
	}
	snprintf(py->module, sizeof py->module, "%s", c[i].path);
	py->bias = c[i].base - f.first_load_vaddr;
	py->runtime = f.runtime + py->bias;
	py->has_eval = f.has_eval;
	py->eval_start = f.eval_start;
	py->eval_end = f.eval_end;
	unsigned major = 0, minor = 0, micro = 0;
	uint64_t hex = 0;
	if (f.has_version && rd(py, f.version_vaddr + py->bias, &hex, sizeof hex) && hex) {
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
	py->L = py_layout_find(major, minor);
	if (!py->L) {
		enum plumb_err code = perr_set(e, PLUMB_EUNSUPPORTED,
					       "CPython %s in process %d is not supported yet (supported: 3.11, 3.12); "
					       "try --backend perf_event or --backend py-spy",
					       py->version, (int)pid);
		free(py);
		return code;
	}
	uint64_t interp = 0;
	if (!rd_ptr(py, py->runtime + py->L->runtime_interp_head, &interp)) {
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
	if (!py->frames) {
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
	for (size_t i = 0; i < py->ncodes; i++)
		code_free(&py->codes[i]);
	free(py->codes);
	hmap_release(&py->code_index);
	free(py->frames);
	for (size_t i = 0; i < py->nnames; i++)
		free(py->names[i].name);
	free(py->names);
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

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Appends code point cp as UTF-8. */
static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Reads a str object as a malloc'd UTF-8 string (compact strings only; others read as NULL). */
static char *read_str(const struct py_proc *py, uint64_t addr)
{
	const struct py_layout *L = py->L;
	uint8_t head[128];
	if (L->str_compact_size > sizeof head || !rd(py, addr, head, L->str_compact_size))
		return NULL;
	int64_t length;
	uint32_t state;
	memcpy(&length, head + L->str_length, sizeof length);
	memcpy(&state, head + L->str_state, sizeof state);
	unsigned kind = (state >> L->str_kind_shift) & 7;
	bool compact = (state >> L->str_compact_bit) & 1, ascii = (state >> L->str_ascii_bit) & 1;
	if (!compact || length < 0 || length > PY_MAX_STR || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	size_t n = (size_t)length * kind;
	uint8_t *raw = malloc(n + 1);
	char *s = malloc((size_t)length * 4 + 1);
	if (!raw || !s || !rd(py, addr + (ascii ? L->str_ascii_size : L->str_compact_size), raw, n + (n == 0))) {
		free(raw);
		free(s);
		return NULL;
	}
	size_t o = 0;
	for (int64_t i = 0; i < length; i++) {
		uint32_t cp;
		if (kind == 1)
			cp = raw[i];
		else if (kind == 2)
			cp = (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8;
		else
			memcpy(&cp, raw + 4 * i, 4);
		if (cp == 0 || cp > 0x10ffff)
			cp = '?';
		o += put_utf8(s + o, cp);
	}
	s[o] = 0;
	free(raw);
	return s;
}

static int scan_varint(const uint8_t **p, const uint8_t *end)
{
	unsigned val = 0, shift = 0;
	while (*p < end) {
		uint8_t b = *(*p)++;
		val |= (unsigned)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 24)
			break;
	}
	return (int)val;
}

static int scan_svarint(const uint8_t **p, const uint8_t *end)
{
	unsigned u = (unsigned)scan_varint(p, end);
	return (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
}

/* CPython 3.11 Objects/locations.md: each entry starts with a byte 1CCCCLLL (code, length-1 in code units);
 * code 15 has no line, 14 (long) and 13 (no columns) carry a signed line delta, 10..12 mean delta 0..2,
 * 0..9 keep the line. The line is updated before the entry's range is tested, as codeobject.c's advance(). */
int py_linetable_line(const uint8_t *table, size_t len, int firstlineno, int addrq)
{
	const uint8_t *p = table, *end = table + len;
	int64_t line = firstlineno; /* wide: a table read from a changing process may hold any deltas */
	int start = 0;
	if (addrq < 0)
		return firstlineno;
	while (p < end) {
		uint8_t first = *p++;
		if (!(first & 0x80))
			continue; /* resynchronise on an entry start */
		int code = (first >> 3) & 15, units = (first & 7) + 1;
		int delta = 0;
		const uint8_t *q = p;
		if (code == 13 || code == 14)
			delta = scan_svarint(&q, end);
		else if (code >= 10 && code <= 12)
			delta = code - 10;
		line += delta;
		int end_addr = start + units * 2;
		if (addrq < end_addr)
			return code == 15 || line < 0 || line > INT32_MAX ? -1 : (int)line;
		start = end_addr;
		while (p < end && !(*p & 0x80))
			p++;
	}
	return -1;
}

static void code_free(struct py_code *c)
{
	free(c->func);
	free(c->file);
	free(c->linetable);
}

/* Reads a code object into c (its strings and line table). */
static bool code_read(struct py_proc *py, uint64_t addr, struct py_code *c)
{
	const struct py_layout *L = py->L;
	uint8_t head[512];
	if (L->code_size > sizeof head || !rd(py, addr, head, L->code_size))
		return false;
	uint64_t lt_p;
	int32_t first, traceable;
	memset(c, 0, sizeof *c);
	memcpy(&c->name_p, head + L->code_name, 8);
	memcpy(&c->file_p, head + L->code_filename, 8);
	memcpy(&lt_p, head + L->code_linetable, 8);
	memcpy(&first, head + L->code_firstlineno, 4);
	memcpy(&traceable, head + L->code_firsttraceable, 4);
	c->addr = addr;
	c->firstlineno = first;
	c->firsttraceable = traceable;
	c->last_addrq = UINT32_MAX;
	c->checked_ns = mono_ns();
	c->func = read_str(py, c->name_p);
	c->file = read_str(py, c->file_p);
	if (!c->func || !c->file) {
		code_free(c);
		return false;
	}
	int64_t lt_len = 0;
	if (lt_p && rd(py, lt_p + L->bytes_size, &lt_len, sizeof lt_len) && lt_len > 0 && lt_len <= PY_MAX_LINETABLE) {
		c->linetable = malloc((size_t)lt_len);
		if (c->linetable && rd(py, lt_p + L->bytes_data, c->linetable, (size_t)lt_len)) {
			c->linetable_len = (size_t)lt_len;
		} else {
			free(c->linetable);
			c->linetable = NULL;
		}
	}
	return true;
}

/* The cached code object at addr. A code object can be freed and its address reused by another (a reloaded
 * module, exec'd code): an entry is re-checked against the object's name and file pointers once a second. */
static struct py_code *code_get(struct py_proc *py, uint64_t addr)
{
	uint32_t idx;
	if (hmap_get(&py->code_index, addr, &idx)) {
		struct py_code *c = &py->codes[idx];
		uint64_t now = mono_ns();
		if (now - c->checked_ns < 1000000000ULL)
			return c;
		uint64_t name_p, file_p;
		if (!rd_ptr(py, addr + py->L->code_name, &name_p) || !rd_ptr(py, addr + py->L->code_filename, &file_p))
			return NULL;
		if (name_p == c->name_p && file_p == c->file_p) {
			c->checked_ns = now;
			return c;
		}
		struct py_code fresh;
		if (!code_read(py, addr, &fresh))
			return NULL;
		code_free(c);
		*c = fresh;
		return c;
	}
	struct py_code c;
	if (!code_read(py, addr, &c))
		return NULL;
	if (!ALLOC_GROW(py->codes, py->ncodes + 1, py->capcodes))
		goto oom;
	if (!hmap_put(&py->code_index, addr, (uint32_t)py->ncodes))
		goto oom;
	py->codes[py->ncodes] = c;
	return &py->codes[py->ncodes++];
oom:
	code_free(&c);
	return NULL;
}

static int code_line(struct py_code *c, int addrq)
{
	if ((uint32_t)addrq == c->last_addrq)
		return c->last_line;
	int line = c->linetable ? py_linetable_line(c->linetable, c->linetable_len, c->firstlineno, addrq) : -1;
	if (line < 0)
		line = c->firstlineno;
	c->last_addrq = (uint32_t)addrq;
	c->last_line = line;
	return line;
}

/* Walks one thread's frame chain into py->frames; returns the count, or -1 when the chain could not be read. */
static int read_frames(struct py_proc *py, uint64_t tstate_addr, const uint8_t *ts)
{
	const struct py_layout *L = py->L;
	uint64_t cframe, frame;
	memcpy(&cframe, ts + L->tstate_cframe, 8);
	if (!cframe)
		return 0;
	if (!rd_ptr(py, cframe + L->cframe_current_frame, &frame))
		return -1;
	(void)tstate_addr;
	int n = 0;
	uint8_t fb[256];
	for (int steps = 0; frame && n < PY_MAX_FRAMES && steps < 2 * PY_MAX_FRAMES; steps++) {
		if (L->frame_size > sizeof fb || !rd(py, frame, fb, L->frame_size))
			return -1;
		uint64_t code_p, prev, prev_instr;
		memcpy(&code_p, fb + L->frame_code, 8);
		memcpy(&prev, fb + L->frame_previous, 8);
		memcpy(&prev_instr, fb + L->frame_prev_instr, 8);
		bool is_entry = !L->frame_no_is_entry && fb[L->frame_is_entry] != 0;
		uint8_t owner = fb[L->frame_owner];
		if (L->frame_has_cstack && owner == L->frame_owned_by_cstack) {
			/* 3.12: the shim an evaluation-loop call links in: the frame inside it is an entry frame */
			if (n > 0)
				py->frames[n - 1].is_entry = true;
			frame = prev;
			continue;
		}
		struct py_code *c = code_get(py, code_p);
		if (!c)
			return -1;
		uint64_t code_start = code_p + L->code_code_adaptive;
		int64_t lasti = ((int64_t)prev_instr - (int64_t)code_start) / 2;
		/* An incomplete frame (still setting up, _PyFrame_IsIncomplete) is not shown, as CPython does. */
		bool incomplete = owner != L->frame_owned_by_generator && lasti < c->firsttraceable;
		if (!incomplete) {
			struct py_frame *f = &py->frames[n++];
			f->func = c->func;
			f->file = c->file;
			f->line = (uint32_t)code_line(c, lasti < 0 || lasti > INT32_MAX / 2 ? -1 : (int)(lasti * 2));
			f->is_entry = is_entry;
			f->code_addr = code_p;
		} else if (is_entry && n > 0) {
			py->frames[n - 1].is_entry = true;
		}
		frame = prev;
	}
	return n;
}

/* ---- thread names: threading._active ({ident: Thread}) and each Thread's _name ---- */

#define PY_MAX_DICT 16384

typedef bool (*dict_fn)(struct py_proc *py, void *ctx, uint64_t key, uint64_t value);

/* Calls fn for each live entry of a dict given by its keys object and, for split tables, values array. */
static bool keys_each(struct py_proc *py, uint64_t keys, uint64_t values, dict_fn fn, void *ctx)
{
	const struct py_layout *L = py->L;
	uint8_t kh[64];
	if (L->dictkeys_indices > sizeof kh || !rd(py, keys, kh, L->dictkeys_indices))
		return false;
	uint8_t log2_index_bytes = kh[L->dictkeys_log2_index_bytes], kind = kh[L->dictkeys_kind];
	int64_t n;
	memcpy(&n, kh + L->dictkeys_nentries, sizeof n);
	if (n <= 0 || n > PY_MAX_DICT || log2_index_bytes > 24)
		return false;
	size_t esize = kind == L->dict_kind_general ? L->dict_entry_size : L->dict_uentry_size;
	size_t key_off = kind == L->dict_kind_general ? 8 : 0;
	uint8_t *ents = malloc((size_t)n * esize);
	uint64_t *vals = values ? malloc((size_t)n * 8) : NULL;
	bool ok = ents && (!values || vals) &&
		  rd(py, keys + L->dictkeys_indices + (1ULL << log2_index_bytes), ents, (size_t)n * esize) &&
		  (!values || rd(py, values, vals, (size_t)n * 8));
	for (int64_t i = 0; ok && i < n; i++) {
		uint64_t k, v;
		memcpy(&k, ents + i * esize + key_off, 8);
		memcpy(&v, ents + i * esize + key_off + 8, 8);
		if (values)
			v = vals[i];
		if (k && v && fn(py, ctx, k, v))
			break;
	}
	free(ents);
	free(vals);
	return ok;
}

static bool dict_each(struct py_proc *py, uint64_t dict, dict_fn fn, void *ctx)
{
	uint64_t keys, values;
	if (!rd_ptr(py, dict + py->L->dict_keys, &keys) || !rd(py, dict + py->L->dict_values, &values, 8))
		return false;
	return keys_each(py, keys, values, fn, ctx);
}

struct str_lookup {
	const char *want;
	uint64_t found;
};

static bool match_str_key(struct py_proc *py, void *ctx, uint64_t key, uint64_t value)
{
	struct str_lookup *sl = ctx;
	char *k = read_str(py, key);
	bool hit = k && strcmp(k, sl->want) == 0;
	free(k);
	if (hit)
		sl->found = value;
	return hit;
}

static uint64_t dict_get_str(struct py_proc *py, uint64_t dict, const char *key)
{
	struct str_lookup sl = { key, 0 };
	dict_each(py, dict, match_str_key, &sl);
	return sl.found;
}

/* An instance attribute (3.11: a managed dict, split values or a materialized dict before the object). */
static uint64_t obj_attr(struct py_proc *py, uint64_t obj, const char *name)
{
	const struct py_layout *L = py->L;
	uint64_t type, flags = 0, values = 0, dict = 0;
	if (!rd_ptr(py, obj + L->obj_type, &type) || !rd(py, type + L->type_flags, &flags, 8) ||
	    !(flags & L->managed_dict_flag))
		return 0;
	if (L->dict_or_values_tagged) { /* 3.12: one tagged word */
		uint64_t word;
		if (!rd(py, obj - L->obj_dict_before, &word, 8) || !word)
			return 0;
		if (word & 1)
			values = word + 1;
		else
			dict = word;
	} else if (!rd(py, obj - L->obj_values_before, &values, 8)) {
		values = 0;
	}
	if (values) {
		uint64_t keys;
		struct str_lookup sl = { name, 0 };
		if (rd_ptr(py, type + L->type_cached_keys, &keys))
			keys_each(py, keys, values, match_str_key, &sl);
		return sl.found;
	}
	if (!L->dict_or_values_tagged && !rd(py, obj - L->obj_dict_before, &dict, 8))
		dict = 0;
	if (dict)
		return dict_get_str(py, dict, name);
	return 0;
}

static bool read_int(struct py_proc *py, uint64_t obj, uint64_t *out)
{
	const struct py_layout *L = py->L;
	int64_t size;
	uint32_t digits[3] = { 0 };
	if (!rd(py, obj + L->long_size, &size, sizeof size))
		return false;
	if (L->long_tagged) { /* 3.12: digits << bits | sign (0 positive, 1 zero, 2 negative) */
		if ((size & 3) == 2)
			return false;
		size = (int64_t)((uint64_t)size >> L->long_tagged);
	}
	if (size < 0 || size > 3 ||
	    (size && !rd(py, obj + L->long_digits, digits, (size_t)size * 4)))
		return false;
	uint64_t v = 0;
	for (int64_t i = size; i-- > 0;)
		v = (v << L->long_shift) | digits[i];
	*out = v;
	return true;
}

static bool add_thread_name(struct py_proc *py, void *ctx, uint64_t key, uint64_t thread)
{
	(void)ctx;
	uint64_t ident;
	if (!read_int(py, key, &ident))
		return false;
	uint64_t name_obj = obj_attr(py, thread, "_name");
	char *name = name_obj ? read_str(py, name_obj) : NULL;
	if (!name)
		return false;
	if (!REALLOC_ARRAY(py->names, py->nnames + 1)) {
		free(name);
		return true;
	}
	py->names[py->nnames++] = (struct py_name){ ident, name };
	return py->nnames >= PY_MAX_THREADS;
}

/* Re-reads threading._active (at most every 200 ms) into py->names. */
static void refresh_names(struct py_proc *py, uint64_t interp)
{
	uint64_t now = mono_ns();
	if (py->names_read_ns && now - py->names_read_ns < 200000000ULL)
		return;
	py->names_read_ns = now;
	uint64_t modules, threading, mdict, active;
	if (!rd_ptr(py, interp + py->L->interp_modules, &modules) || !modules)
		return;
	threading = dict_get_str(py, modules, "threading");
	if (!threading || !rd_ptr(py, threading + py->L->module_dict, &mdict) || !mdict)
		return;
	active = dict_get_str(py, mdict, "_active");
	if (!active)
		return;
	for (size_t i = 0; i < py->nnames; i++)
		free(py->names[i].name);
	py->nnames = 0;
	dict_each(py, active, add_thread_name, NULL);
}

static const char *thread_name(struct py_proc *py, uint64_t interp, uint64_t ident)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < py->nnames; i++)
			if (py->names[i].ident == ident)
				return py->names[i].name;
		if (pass == 0)
			refresh_names(py, interp);
	}
	return NULL;
}

enum plumb_err py_read_threads(struct py_proc *py, py_thread_fn fn, void *ctx, struct perr *e)
{
	const struct py_layout *L = py->L;
	uint64_t interp, gil = 0;
	if (!rd_ptr(py, py->runtime + L->runtime_interp_head, &interp))
		return perr_set(e, PLUMB_EIO, "cannot read process %d: %s", (int)py->pid, strerror(errno));
	if (!L->no_tstate_current)
		rd_ptr(py, py->runtime + L->runtime_tstate_current, &gil);
	for (int ni = 0; interp && ni < PY_MAX_INTERPS; ni++) {
		uint64_t ts_addr;
		if (!rd_ptr(py, interp + L->interp_threads_head, &ts_addr))
			break;
		for (int nt = 0; ts_addr && nt < PY_MAX_THREADS; nt++) {
			uint8_t ts[256];
			size_t need = L->tstate_native_thread_id + 8;
			if (need > sizeof ts || !rd(py, ts_addr, ts, need))
				break;
			struct py_thread t = { 0 };
			uint64_t native, ident, next;
			memcpy(&native, ts + L->tstate_native_thread_id, 8);
			memcpy(&ident, ts + L->tstate_thread_id, 8);
			memcpy(&next, ts + L->tstate_next, 8);
			t.tid = (pid_t)native;
			t.ident = ident;
			t.holds_gil = gil == ts_addr;
			t.name = L->no_thread_names ? NULL : thread_name(py, interp, ident);
			/* The chain is read while the thread runs: when its current frame moved meanwhile the walk may
			 * have mixed two stacks, so it is read again (twice at most). */
			int n = -1;
			for (int attempt = 0; attempt < 3; attempt++) {
				uint64_t cframe, before = 0, after = 1;
				memcpy(&cframe, ts + L->tstate_cframe, 8);
				if (cframe && !rd_ptr(py, cframe + L->cframe_current_frame, &before))
					break;
				n = read_frames(py, ts_addr, ts);
				if (!cframe || (rd_ptr(py, cframe + L->cframe_current_frame, &after) && after == before))
					break;
				/* the thread state itself may have a new cframe by now */
				if (!rd(py, ts_addr, ts, need))
					break;
			}
			if (n >= 0) {
				t.nframes = (size_t)n;
				t.frames = py->frames;
				fn(ctx, &t);
			}
			ts_addr = next;
		}
		if (!rd_ptr(py, interp + L->interp_next, &interp))
			break;
	}
	return PLUMB_OK;
}
