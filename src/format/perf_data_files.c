/* perf_data_files.c — the files a perf.data recording names (format/perf_data.h): each mapped file's build ID
 * (from the BUILD_ID feature or MMAP2 records) and the file plumb reads for it — the recorded path when it is still
 * the same build, else perf's build-ID cache (~/.debug/.build-id), else /usr/lib/debug/.build-id, else debuginfod
 * (when DEBUGINFOD_URLS is set); and how kernel
 * frames are named — by the running kernel when it is the recorded one, by perf's cached copy of the recorded
 * kernel's kallsyms, or said unnamed. */
#include "format/perf_data.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/readall.h"
#include "symbol/debuginfod.h"
#include "symbol/kallsyms.h"
#include "base/settings.h"

#define PD_MAX_FILES 65536 /* distinct mapped files whose build ID is kept */
#define BUILD_ID_MAX 20

struct pd_file {
	char *path;    /* as recorded */
	char *use;     /* what to open (NULL: not looked for yet; "" : path itself) */
	uint8_t id[BUILD_ID_MAX];
	uint8_t id_len;
};

enum kernel_names { KERNEL_UNDECIDED, KERNEL_RUNNING, KERNEL_CACHED, KERNEL_NONE };

struct pd_files {
	const struct fmt_read_opts *opts; /* borrowed */
	struct pd_file *files;
	size_t nfiles, files_cap;
	struct hmap file_index;           /* hash of path -> index in files (open addressing on collisions) */
	enum kernel_names kernel;
	struct kallsyms *kallsyms;        /* KERNEL_CACHED: perf's copy of the recorded kernel's symbols */
	uint8_t kernel_id[BUILD_ID_MAX];
	uint8_t kernel_id_len;
	uint64_t kernel_text;             /* where the recording's kernel map put _text (0: not said) */
	uint64_t unnamed_kernel;
};

void fmt_pd_warn(const struct fmt_read_opts *opts, const char *fmt, ...)
{
	if (!opts || !opts->warn)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	opts->warn(opts->warn_ctx, msg);
}

struct pd_files *fmt_pd_files_new(const struct fmt_read_opts *opts)
{
	struct pd_files *s = calloc(1, sizeof *s);
	if (s)
		s->opts = opts;
	return s;
}

void fmt_pd_files_free(struct pd_files *s)
{
	if (!s)
		return;
	kallsyms_free(s->kallsyms);
	for (size_t i = 0; i < s->nfiles; i++) {
		free(s->files[i].path);
		free(s->files[i].use);
	}
	free(s->files);
	hmap_release(&s->file_index);
	free(s);
}

/* --- files and build IDs ------------------------------------------------------------------------------------ */

static struct pd_file *file_get(struct pd_files *s, const char *path, bool add)
{
	uint64_t h = hash_bytes(path, strlen(path));
	uint32_t at;
	/* open addressing over the hash: a collision moves on to h + 1 */
	for (uint64_t k = h;; k++) {
		if (!hmap_get(&s->file_index, k, &at))
			break;
		if (strcmp(s->files[at].path, path) == 0)
			return &s->files[at];
	}
	if (!add || s->nfiles >= PD_MAX_FILES)
		return NULL;
	if (s->nfiles == s->files_cap) {
		size_t nc = grow_cap(s->nfiles + 1, s->files_cap);
		struct pd_file *nf = realloc_array(s->files, nc, sizeof *nf);
		if (!nf)
			return NULL;
		s->files = nf;
		s->files_cap = nc;
	}
	struct pd_file *f = &s->files[s->nfiles];
	memset(f, 0, sizeof *f);
	if (!(f->path = strdup(path)))
		return NULL;
	uint64_t k = h;
	while (hmap_get(&s->file_index, k, &at))
		k++;
	if (!hmap_put(&s->file_index, k, (uint32_t)s->nfiles)) {
		free(f->path);
		return NULL;
	}
	s->nfiles++;
	return f;
}

void fmt_pd_files_build_id(struct pd_files *s, const char *path, const uint8_t *id, size_t len)
{
	if (len > BUILD_ID_MAX)
		len = BUILD_ID_MAX;
	if (strcmp(path, "[kernel.kallsyms]") == 0) {
		memcpy(s->kernel_id, id, len);
		s->kernel_id_len = (uint8_t)len;
		return;
	}
	struct pd_file *f = file_get(s, path, true);
	if (f && !f->use) {
		memcpy(f->id, id, len);
		f->id_len = (uint8_t)len;
	}
}

/* The GNU build ID in the notes at buf[0..len) (ELF note layout); 0 when none. */
static size_t notes_build_id(const uint8_t *buf, size_t len, uint8_t *id)
{
	size_t p = 0;
	while (len - p >= 12) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, buf + p, 4);
		memcpy(&descsz, buf + p + 4, 4);
		memcpy(&type, buf + p + 8, 4);
		size_t name_al = ((size_t)namesz + 3) & ~(size_t)3, desc_al = ((size_t)descsz + 3) & ~(size_t)3;
		p += 12;
		if (name_al > len - p || desc_al > len - p - name_al)
			return 0;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(buf + p, "GNU", 4) == 0 && descsz > 0) {
			size_t n = descsz > BUILD_ID_MAX ? BUILD_ID_MAX : descsz;
			memcpy(id, buf + p + name_al, n);
			return n;
		}
		p += name_al + desc_al;
	}
	return 0;
}

/* The build ID of the ELF file at path; 0 when it has none or cannot be read. */
static size_t elf_build_id(const char *path, uint8_t *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	size_t n = 0;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t nph = 0;
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph && !n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
			if (d && d->d_buf)
				n = notes_build_id(d->d_buf, d->d_size, id);
		}
	}
	if (elf && !n) { /* a debug file keeps its notes in a section */
		Elf_Scn *scn = NULL;
		while (!n && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
				continue;
			Elf_Data *d = elf_rawdata(scn, NULL);
			if (d && d->d_buf)
				n = notes_build_id(d->d_buf, d->d_size, id);
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return n;
}

static void hex(const uint8_t *id, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	out[2 * len] = '\0';
}

static bool is_file(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The file of f's build ID from debuginfod (DEBUGINFOD_URLS) into buf; false when there is none. */
static bool fetched(struct pd_files *s, const struct pd_file *f, char *buf, size_t n)
{
	char *path;
	int fd = sym_fetch_executable(f->id, f->id_len, &path);
	if (fd < 0)
		return false;
	close(fd);
	bool ok = strlen(path) < n && is_file(path);
	if (ok)
		snprintf(buf, n, "%s", path);
	free(path);
	(void)s;
	return ok;
}

/* The file to read for what the recording calls path: the recorded path when its build ID matches (or none is
 * known), else perf's build-ID cache (~/.debug), else the system's debug directory; the recorded path when
 * nothing matches (its frames then say what they can). */
const char *fmt_pd_files_use(struct pd_files *s, const char *path)
{
	if (path[0] != '/')
		return path;
	/* a recording names any path it likes: only regular files are read (never a device, a FIFO, /proc) */
	struct stat sb;
	if (strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/sys/", 5) == 0 || strncmp(path, "/dev/", 5) == 0 ||
	    (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)))
		return "[not a file]";
	struct pd_file *f = file_get(s, path, true);
	if (!f)
		return path;
	if (f->use)
		return f->use[0] ? f->use : f->path;
	const char *use = "";
	char buf[4096], idhex[2 * BUILD_ID_MAX + 1];
	if (f->id_len) {
		uint8_t have[BUILD_ID_MAX];
		size_t n = elf_build_id(path, have);
		if (n != f->id_len || memcmp(have, f->id, n) != 0) {
			hex(f->id, f->id_len, idhex);
			const char *dirs[2] = { settings()->home, NULL };
			if (dirs[0] && snprintf(buf, sizeof buf, "%s/.debug/.build-id/%.2s/%s/elf", dirs[0], idhex,
						idhex + 2) < (int)sizeof buf && is_file(buf))
				use = buf;
			else if (fetched(s, f, buf, sizeof buf)) /* the whole file: its unwind tables too */
				use = buf;
			else if (snprintf(buf, sizeof buf, "/usr/lib/debug/.build-id/%.2s/%s.debug", idhex, idhex + 2) <
					 (int)sizeof buf && is_file(buf))
				use = buf;
			else if (n)
				fmt_pd_warn(s->opts, "a file the recording maps was rebuilt since (its build ID is not the "
						     "recorded one) and perf's build-ID cache has no copy: its frames may be "
						     "named wrongly");
		}
	}
	f->use = strdup(use);
	return f->use && f->use[0] ? f->use : f->path;
}

/* --- kernel names --------------------------------------------------------------------------------------------- */

/* The address of "_text" in kallsyms text ("ADDR T _text" lines); 0 when it has none. */
static uint64_t text_address(const char *text, size_t len)
{
	static const char key[] = " T _text\n";
	const char *hit = memmem(text, len, key, sizeof key - 1);
	if (!hit)
		return 0;
	const char *line = hit;
	while (line > text && line[-1] != '\n')
		line--;
	return strtoull(line, NULL, 16);
}

/* perf's copy of the recorded kernel's kallsyms (~/.debug/[kernel.kallsyms]/ID/kallsyms), when it is of the
 * recording's boot: its _text where the recording's kernel map says (when it says); NULL otherwise. */
static struct kallsyms *cached_kallsyms(const struct pd_files *s)
{
	char idhex[2 * BUILD_ID_MAX + 1], path[4096];
	hex(s->kernel_id, s->kernel_id_len, idhex);
	const char *home = settings()->home;
	if (!home ||
	    snprintf(path, sizeof path, "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home, idhex) >= (int)sizeof path ||
	    !is_file(path))
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	char *text = NULL;
	size_t len = 0;
	int err = fd >= 0 ? read_fd_whole(fd, 1 << 20, (size_t)256 << 20, &text, &len) : errno;
	if (fd >= 0)
		close(fd);
	if (err)
		return NULL;
	if (s->kernel_text && text_address(text, len) != s->kernel_text) {
		free(text);
		return NULL;
	}
	return kallsyms_parse(text, len);
}

/* Decides how kernel frames are named: by perf's copy of the recorded kernel's symbols (the recording's own
 * boot), else by the running kernel's when its build ID is the recorded one (or none was recorded), else not at
 * all. */
static void kernel_decide(struct pd_files *s)
{
	s->kernel = KERNEL_RUNNING;
	if (!s->kernel_id_len)
		return;
	if ((s->kallsyms = cached_kallsyms(s))) {
		s->kernel = KERNEL_CACHED;
		return;
	}
	uint8_t now[BUILD_ID_MAX];
	size_t n = 0;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		uint8_t notes[4096];
		ssize_t got = read(fd, notes, sizeof notes);
		close(fd);
		if (got > 0)
			n = notes_build_id(notes, (size_t)got, now);
	}
	if (n == s->kernel_id_len && memcmp(now, s->kernel_id, n) == 0)
		return;
	char idhex[2 * BUILD_ID_MAX + 1];
	hex(s->kernel_id, s->kernel_id_len, idhex);
	s->kernel = KERNEL_NONE;
	fmt_pd_warn(s->opts, "kernel frames are not named: the recording's kernel (build ID %s) is not the running "
			     "one and perf's build-ID cache has no copy of its symbols", idhex);
}

void fmt_pd_files_kernel_text(struct pd_files *s, uint64_t text)
{
	s->kernel_text = text;
}

const char *fmt_pd_files_kernel_name(struct pd_files *s, uint64_t addr, bool *running)
{
	if (s->kernel == KERNEL_UNDECIDED)
		kernel_decide(s);
	*running = s->kernel == KERNEL_RUNNING;
	if (*running)
		return NULL;
	const char *name = s->kallsyms ? kallsyms_lookup(s->kallsyms, addr) : NULL;
	if (!name)
		s->unnamed_kernel++;
	return name;
}

void fmt_pd_files_finish(struct pd_files *s)
{
	if (s->unnamed_kernel && s->kernel == KERNEL_CACHED)
		fmt_pd_warn(s->opts, "%llu kernel frames are in no symbol of the recorded kernel",
			    (unsigned long long)s->unnamed_kernel);
}

