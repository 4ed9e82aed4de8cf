/* test_symbol.c — the symbolizer's own tables: /proc/kallsyms-shaped files (sorting, module suffixes, hidden
 * addresses, malformed lines) and vDSO frames, resolved through this process's own vDSO image at the page
 * offsets a target's [vdso] mapping could have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elfutils/libdwfl.h>
#include "unit_skip.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/sbuf.h"
#include "profile/label.h"
#include "profile/profile.h"
#include "symbol/files.h"
#include "symbol/funcstart.h"
#include "symbol/plt.h"
#include "symbol/hint.h"
#include "symbol/kallsyms.h"
#include "symbol/maps.h"
#include "symbol/symbol.h"
#include "symbol/symtab.h"

/* Writes `text` to a new temporary file; returns its malloc'd path. */
static char *temp_file(const char *text, size_t len)
{
	char *path = strdup("/tmp/plumb-test-kallsyms-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

static struct kallsyms *load_text(const char *text)
{
	char *path = temp_file(text, strlen(text));
	struct kallsyms *k = kallsyms_load_path(path);
	unlink(path);
	free(path);
	return k;
}

static void test_symbol__kallsyms_sorted_lookup(void **state)
{
	/* out of order, as modules follow the core kernel; data symbols are not code and are left out */
	struct kallsyms *k = load_text("ffffffff81002000 T second\n"
				       "ffffffff81000000 T _text\n"
				       "ffffffff81001000 t first_local\n"
				       "ffffffff81001800 D some_data\n"
				       "ffffffffc0200000 t mod_fn\t[e1000]\n"
				       "ffffffffc0200100 T mod_fn2\t[e1000]\n"
				       "ffffffff81003000 W weak_fn\n"
				       "ffffffff81004000 b bss_sym\n");
	assert_non_null(k);
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000000ULL), "_text");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000fffULL), "_text");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81001000ULL), "first_local");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81001900ULL), "first_local"); /* D skipped */
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81002001ULL), "second");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81004010ULL), "weak_fn");    /* b skipped */
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0200010ULL), "mod_fn");     /* no "[e1000]" */
	assert_string_equal(kallsyms_lookup(k, 0xffffffffc0200100ULL), "mod_fn2");
	assert_null(kallsyms_lookup(k, 0xffffffff80ffffffULL));                      /* below the first */
	assert_null(kallsyms_lookup(k, 0xffffffffc0200100ULL + (2 << 20)));          /* far past the last */
	kallsyms_free(k);
}

static void test_symbol__kallsyms_hidden_addresses(void **state)
{
	/* kptr_restrict: every address reads as zero, which tells nothing */
	assert_null(load_text("0000000000000000 T _text\n0000000000000000 t foo\n"));
	assert_null(load_text(""));
	assert_null(kallsyms_load_path("/nonexistent/kallsyms"));
}

static void test_symbol__kallsyms_malformed_lines_skipped(void **state)
{
	struct kallsyms *k = load_text("\n"
				       "not-hex T bad_addr\n"
				       "ffffffff81000000\n"
				       "ffffffff81000100 T\n"
				       "ffffffff81000200 T \n"
				       "   \n"
				       "ffffffff81001000 T good_one\n"
				       "ffffffff81002000 t last_no_newline");
	assert_non_null(k);
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81001004ULL), "good_one");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81002004ULL), "last_no_newline");
	assert_null(kallsyms_lookup(k, 0xffffffff81000100ULL));
	assert_null(kallsyms_lookup(k, 0xffffffff81000204ULL));
	kallsyms_free(k);
}

static void test_symbol__kallsyms_shared_address_and_long_name(void **state)
{
	/* aliases at one address: the first listed names it; names are kept whole (KSYM_NAME_LEN is 512) */
	char longname[400];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = '\0';
	char text[1024];
	snprintf(text, sizeof text,
		 "ffffffff81000000 T _text\n"
		 "ffffffff81000000 T startup_64\n"
		 "ffffffff81000100 t %s\t[mod]\n"
		 "ffffffff81000200\tT\ttabs_between\n",
		 longname);
	struct kallsyms *k = load_text(text);
	assert_non_null(k);
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000010ULL), "_text");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000110ULL), longname);
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000200ULL), "tabs_between");
	kallsyms_free(k);
}

/* kallsyms_parse takes the text itself: a buffer with a NUL inside and no final newline */
static void test_symbol__kallsyms_parse_buffer(void **state)
{
	static const char src[] = "ffffffff81000000 T a\n\0garbage\nffffffff81000100 T b";
	char *text = malloc(sizeof src);
	memcpy(text, src, sizeof src);
	struct kallsyms *k = kallsyms_parse(text, sizeof src - 1);
	assert_non_null(k);
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000004ULL), "a");
	assert_string_equal(kallsyms_lookup(k, 0xffffffff81000104ULL), "b");
	kallsyms_free(k);
}

/* Whether /proc/kallsyms shows this process real addresses (root, or kptr_restrict off), read without plumb. */
static bool kallsyms_addresses_visible(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	assert_non_null(f);
	char line[1024];
	bool visible = false;
	for (int i = 0; i < 1000 && !visible && fgets(line, sizeof line, f); i++)
		visible = strtoull(line, NULL, 16) != 0;
	fclose(f);
	return visible;
}

static void test_symbol__kallsyms_real_file(void **state)
{
	/* the running kernel's table: _text or startup code starts it; hidden addresses give no table */
	struct kallsyms *k = kallsyms_load();
	if (!kallsyms_addresses_visible()) {
		assert_null(k);
		return;
	}
	assert_non_null(k);
	FILE *f = fopen("/proc/kallsyms", "re");
	assert_non_null(f);
	char line[1024];
	int checked = 0;
	/* several symbols may share an address (they are adjacent in the file): the name found must be one of them */
	unsigned long long group_addr = 0;
	char group[8][512];
	int ngroup = 0;
	bool more = true;
	while (more && checked < 5000) {
		unsigned long long addr = 0;
		char type = 0, name[512];
		more = fgets(line, sizeof line, f) != NULL;
		if (more && (sscanf(line, "%llx %c %511s", &addr, &type, name) != 3 || (type != 'T' && type != 't')))
			continue;
		if (ngroup > 0 && (!more || addr != group_addr)) {
			const char *got = kallsyms_lookup(k, group_addr);
			assert_non_null(got);
			bool match = false;
			for (int i = 0; i < ngroup; i++)
				match = match || strcmp(got, group[i]) == 0;
			if (!match)
				fail_msg("%#llx: got %s, want %s", group_addr, got, group[0]);
			checked++;
			ngroup = 0;
		}
		if (!more)
			break;
		group_addr = addr;
		if (ngroup < 8)
			strcpy(group[ngroup++], name);
	}
	fclose(f);
	assert_true(checked > 0);
	kallsyms_free(k);
}

/* --- vDSO frames --- */

/* The value and size of `name` in this process's vDSO (its .dynsym). */
static bool vdso_symbol(const char *name, uint64_t *value, uint64_t *size)
{
	size_t image_size;
	uint64_t load;
	const void *image = maps_vdso_image(&image_size, &load);
	if (!image)
		return false;
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)image, image_size);
	Elf_Scn *scn = NULL;
	bool found = false;
	while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			if (gelf_getsym(d, (int)i, &sym) && strcmp(elf_strptr(elf, sh.sh_link, sym.st_name), name) == 0) {
				*value = sym.st_value;
				*size = sym.st_size;
				found = true;
				break;
			}
		}
	}
	elf_end(elf);
	return found;
}

/* Symbolizes one raw frame of `kind` (module, addr; caller = a return address) and returns its label. */
static char *label_of_kind(enum frame_kind kind, const char *module, uint64_t addr, bool caller)
{
	struct profile *raw = profile_new();
	struct frame f = { 0 };
	f.kind = kind;
	f.module = profile_intern_cstr(raw, module);
	f.addr = addr;
	f.line = caller ? 1 : 0;
	uint32_t id = profile_frame(raw, &f);
	uint32_t th = profile_thread(raw, 1, 1, "t");
	assert_true(profile_add_sample(raw, profile_stack_from(raw, &id, 1), th, 0, 1));
	struct profile *out = NULL;
	struct perr e = { 0 };
	assert_int_equal(sym_resolve_profile(raw, NULL, &out, &e), PLUMB_OK);
	size_t n;
	const struct profile_count *c = profile_counts(out, &n);
	assert_int_equal(n, 1);
	assert_int_equal(profile_stack_depth(out, c[0].stack), 1);
	struct sbuf sb = SBUF_INIT;
	label_append(&sb, out, profile_stack_frame(out, c[0].stack), 0);
	char *label = strdup(sb.buf);
	sbuf_release(&sb);
	profile_free(out);
	profile_free(raw);
	return label;
}

static char *label_of(const char *module, uint64_t addr, bool caller)
{
	return label_of_kind(FRAME_USER, module, addr, caller);
}

static void assert_label(const char *module, uint64_t addr, bool caller, const char *want)
{
	char *got = label_of(module, addr, caller);
	if (strcmp(got, want) != 0)
		fail_msg("addr %#llx%s: got '%s', want '%s'", (unsigned long long)addr, caller ? " (caller)" : "", got,
			 want);
	free(got);
}

static void test_symbol__vdso_frames_named(void **state)
{
	uint64_t value = 0, size = 0;
	assert_true(vdso_symbol("__vdso_clock_gettime", &value, &size)); /* every x86_64 process has a vDSO */
	size_t image_size;
	uint64_t load;
	assert_non_null(maps_vdso_image(&image_size, &load));
	uint64_t own = getauxval(AT_SYSINFO_EHDR);
	/* where the target's [vdso] starts is not in the frame: any page boundary must do */
	uint64_t starts[] = { own, 0x7ffd4e3f1000ULL, 0x7f0000000000ULL, 0x10000ULL + 0x1000ULL * 37 };
	for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
		uint64_t start = starts[i];
		assert_label("[vdso]", start + value - load, false, "__vdso_clock_gettime ([vdso])");
		assert_label("[vdso]", start + value - load + size / 2, false, "__vdso_clock_gettime ([vdso])");
		/* a return address just past the function's end still belongs to it (the call is at addr - 1) */
		assert_label("[vdso]", start + value - load + size, true, "__vdso_clock_gettime ([vdso])");
	}
	/* a vaddr in the image itself (what maps_vaddr gives for a [vdso] entry) */
	assert_label("[vdso]", value + 1, false, "__vdso_clock_gettime ([vdso])");
	/* other mappings without a file stay unknown */
	assert_label("[anon]", own + value - load, false, "[unknown] ([anon])");
}

/* An absolute address whose page offset is code at no page of the image is not named. */
static void test_symbol__vdso_non_code_unknown(void **state)
{
	size_t image_size;
	uint64_t load;
	const void *image = maps_vdso_image(&image_size, &load);
	assert_non_null(image);
	Elf *elf = elf_memory((char *)image, image_size);
	uint64_t lo[16], hi[16];
	size_t n = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL && n < 16) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR)) {
			lo[n] = sh.sh_addr - load;
			hi[n++] = sh.sh_addr - load + sh.sh_size;
		}
	}
	elf_end(elf);
	long page = sysconf(_SC_PAGESIZE);
	for (uint64_t in_page = 0; in_page < (uint64_t)page; in_page += 8) {
		bool code = false;
		for (uint64_t off = in_page; off < image_size && !code; off += (uint64_t)page)
			for (size_t i = 0; i < n; i++)
				code = code || (off >= lo[i] && off < hi[i]);
		if (!code) {
			assert_label("[vdso]", 0x7ffd4e3f1000ULL + in_page, false, "[unknown] ([vdso])");
			return;
		}
	}
	fail_msg("the vDSO's code covers every page offset: no address left to test this with");
}

/* JIT frames are named from the perf map file; a map that is not a regular file (a FIFO, which would block the
 * open, or a link to /dev/zero, which never ends) leaves them unknown instead of hanging or filling memory. */
static void test_symbol__jit_map_regular_files_only(void **state)
{
	(void)state;
	char dir[] = "/tmp/plumb-jit-XXXXXX", map[64], fifo[64], zero[64];
	assert_non_null(mkdtemp(dir));
	snprintf(map, sizeof map, "%s/perf-1.map", dir);
	snprintf(fifo, sizeof fifo, "%s/perf-2.map", dir);
	snprintf(zero, sizeof zero, "%s/perf-3.map", dir);
	FILE *f = fopen(map, "w");
	assert_non_null(f);
	fprintf(f, "1000 100 jitted_fn\n");
	fclose(f);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink("/dev/zero", zero), 0);
	char *label = label_of_kind(FRAME_JIT, map, 0x1050, false);
	assert_non_null(strstr(label, "jitted_fn"));
	free(label);
	label = label_of_kind(FRAME_JIT, fifo, 0x1050, false);
	assert_non_null(strstr(label, "[unknown]"));
	free(label);
	label = label_of_kind(FRAME_JIT, zero, 0x1050, false);
	assert_non_null(strstr(label, "[unknown]"));
	free(label);
	unlink(map);
	unlink(fifo);
	unlink(zero);
	rmdir(dir);
}

/* The unwind tables' function starts agree with the symbol table: every function of this test binary that an FDE
 * covers starts where its symbol says, at any address inside it, and nearly every function has one. */
/* The sorted table names every address the way libdw's own (linear) lookup does: the middle, start and last byte
 * of every function symbol of libc and of plumb itself. */
static void check_symtab_against_libdw(const char *path)
{
	static const Dwfl_Callbacks cb = { .find_elf = dwfl_build_id_find_elf,
					   .find_debuginfo = dwfl_standard_find_debuginfo,
					   .section_address = dwfl_offline_section_address };
	Dwfl *dwfl = dwfl_begin(&cb);
	assert_non_null(dwfl);
	Dwfl_Module *mod = dwfl_report_offline(dwfl, path, path, -1);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	struct symtab *t = symtab_load(mod);
	assert_non_null(t);
	assert_true(symtab_count(t) > 100);
	int n = dwfl_module_getsymtab(mod);
	size_t checked = 0, differ = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size)
			continue;
		uint64_t probes[3] = { addr, addr + sym.st_size / 2, addr + sym.st_size - 1 };
		for (int k = 0; k < 3; k++) {
			GElf_Sym s2;
			GElf_Off off = 0;
			const char *want = dwfl_module_addrinfo(mod, probes[k], &off, &s2, NULL, NULL, NULL);
			uint64_t start = 0;
			const char *got = symtab_find(t, probes[k], &start);
			checked++;
			/* the same symbol, or an alias of it at the same start (aliases of one rank may sort either way) */
			if (!want != !got || (want && strcmp(want, got) != 0 && start != probes[k] - off))
				differ++;
		}
	}
	symtab_free(t);
	dwfl_end(dwfl);
	assert_true(checked > 300);
	assert_int_equal(differ, 0);
}

static void test_symbol__symtab_names_like_libdw(void **state)
{
	(void)state;
	check_symtab_against_libdw("/lib/x86_64-linux-gnu/libc.so.6");
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(len > 0);
	self[len] = 0;
	check_symtab_against_libdw(self);
}

static void test_symbol__funcstarts_match_symbols(void **state)
{
	(void)state;
	elf_version(EV_CURRENT);
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	struct funcstarts *t = funcstarts_load(elf);
	assert_non_null(t);
	assert_true(funcstarts_count(t) > 50);
	size_t funcs = 0, covered = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < 4 ||
			    sym.st_shndx == SHN_UNDEF)
				continue;
			funcs++;
			uint64_t start;
			if (!funcstarts_find(t, sym.st_value + sym.st_size / 2, &start))
				continue;
			covered++;
			if (start != sym.st_value)
				fail_msg("%s at %#llx: the FDE starts at %#llx",
					 elf_strptr(elf, sh.sh_link, sym.st_name), (unsigned long long)sym.st_value,
					 (unsigned long long)start);
		}
	}
	assert_true(funcs > 50);
	assert_true(covered * 10 >= funcs * 9);
	uint64_t start;
	assert_false(funcstarts_find(t, 0, &start)); /* below every function */
	funcstarts_free(t);
	elf_end(elf);
	close(fd);
}

/* PLT stubs are named as binutils names them: every `ADDR <X@plt>:` that objdump prints for the PLT sections of
 * a library that calls through its PLT a lot (sqlite3's, several kinds of stub: .plt and .plt.got) is the stub
 * plt_stubs_find names X@plt, and the .plt header is no stub. */
static void test_symbol__plt_stubs_match_objdump(void **state)
{
	(void)state;
	static const char lib[] = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";
	if (access(lib, R_OK) != 0)
		skip_missing_tool("libsqlite3-0");
	if (system("command -v objdump >/dev/null 2>&1") != 0)
		skip_missing_tool("objdump");
	elf_version(EV_CURRENT);
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(elf);
	struct plt_stubs *t = plt_stubs_load(elf);
	assert_non_null(t);
	FILE *f = popen("objdump -d -j .plt -j .plt.got -j .plt.sec /usr/lib/x86_64-linux-gnu/libsqlite3.so.0", "r");
	assert_non_null(f);
	char line[512], name[400];
	unsigned long long addr;
	size_t seen = 0;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%llx <%399[^>]>:", &addr, name) != 2)
			continue;
		const char *got = plt_stubs_find(t, addr + 4);
		if (strstr(name, "@plt-0x")) { /* the .plt header */
			assert_null(got);
			continue;
		}
		seen++;
		if (!got || strcmp(got, name) != 0)
			fail_msg("%#llx: objdump says %s, plumb %s", addr, name, got ? got : "nothing");
	}
	pclose(f);
	assert_true(seen > 100);
	assert_int_equal(plt_stubs_count(t), seen);
	plt_stubs_free(t);
	elf_end(elf);
	close(fd);
}

/* A file without unwind tables gives an empty table, not a failure. */
static void test_symbol__funcstarts_empty(void **state)
{
	(void)state;
	static char text[] = "not an ELF file at all";
	Elf *elf = elf_memory(text, sizeof text);
	struct funcstarts *t = funcstarts_load(elf);
	assert_non_null(t);
	assert_int_equal(funcstarts_count(t), 0);
	uint64_t start;
	assert_false(funcstarts_find(t, 0x1000, &start));
	funcstarts_free(t);
	if (elf)
		elf_end(elf);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The package of a file, found as dpkg -S finds it, including the merged-/usr spelling of a path. */
static void test_symbol__hint_package(void **state)
{
	(void)state;
	char dir[] = "/tmp/plumb-dpkg-XXXXXX", path[128];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/gzip.list", dir);
	write_text(path, "/.\n/bin\n/bin/gunzip\n/bin/gzip\n/usr/share/doc/gzip\n");
	snprintf(path, sizeof path, "%s/liblzma5:amd64.list", dir);
	write_text(path, "/lib/x86_64-linux-gnu/liblzma.so.5.4.1\n");
	snprintf(path, sizeof path, "%s/other.md5sums", dir);
	write_text(path, "/usr/bin/mine\n");
	char pkg[64];
	assert_true(sym_hint_package("/usr/bin/gzip", dir, pkg, sizeof pkg));
	assert_string_equal(pkg, "gzip");
	assert_true(sym_hint_package("/bin/gzip", dir, pkg, sizeof pkg));
	assert_true(sym_hint_package("/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1", dir, pkg, sizeof pkg));
	assert_string_equal(pkg, "liblzma5");
	assert_false(sym_hint_package("/bin/gz", dir, pkg, sizeof pkg));      /* a prefix of a listed path */
	assert_false(sym_hint_package("/usr/bin/mine", dir, pkg, sizeof pkg)); /* only .list files count */
	assert_false(sym_hint_package("/usr/bin/gzip", "/nonexistent", pkg, sizeof pkg));
	struct sbuf sb = SBUF_INIT;
	sym_hint_module(&sb, "/usr/bin/gzip", 5, 10, 1000, NULL); /* 1% of the profile: no hint */
	assert_int_equal(sb.len, 0);
	sym_hint_module(&sb, "/usr/bin/gzip", 10, 400, 1000, NULL); /* mostly named: no hint */
	assert_int_equal(sb.len, 0);
	sym_hint_module(&sb, "/usr/bin/gzip", 900, 950, 1000, "debuginfod: not found");
	assert_non_null(strstr(sb.buf, "90%"));
	assert_non_null(strstr(sb.buf, "gzip+0xOFFSET"));
	assert_non_null(strstr(sb.buf, "debuginfod: not found"));
	assert_int_equal(sb.buf[sb.len - 1], '\n');
	sbuf_release(&sb);
	char cmd[200];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbol__kallsyms_sorted_lookup),
		cmocka_unit_test(test_symbol__kallsyms_hidden_addresses),
		cmocka_unit_test(test_symbol__kallsyms_malformed_lines_skipped),
		cmocka_unit_test(test_symbol__kallsyms_shared_address_and_long_name),
		cmocka_unit_test(test_symbol__kallsyms_parse_buffer),
		cmocka_unit_test(test_symbol__kallsyms_real_file),
		cmocka_unit_test(test_symbol__vdso_frames_named),
		cmocka_unit_test(test_symbol__vdso_non_code_unknown),
		cmocka_unit_test(test_symbol__jit_map_regular_files_only),
		cmocka_unit_test(test_symbol__funcstarts_match_symbols),
		cmocka_unit_test(test_symbol__symtab_names_like_libdw),
		cmocka_unit_test(test_symbol__funcstarts_empty),
		cmocka_unit_test(test_symbol__plt_stubs_match_objdump),
		cmocka_unit_test(test_symbol__hint_package),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
