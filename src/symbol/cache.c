/* cache.c — the symbol cache (cache.h): $PLUMB_HOME/symbols/BUILDID, a text file of
 *   plumb-symbols 1 <TAB> SOURCE <TAB> SIZE <TAB> MTIME_NS
 *   VADDR(hex) CALLER N <TAB> FUNC <TAB> FILE <TAB> LINE ... (N frames, innermost first)
 * Invariant: an entry in memory is either loaded from a file whose source stamp matched, or was resolved in this
 * run; a string with a tab or a newline is never stored (it could not be read back). */
#include "symbol/cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/atomic.h"
#include "os/fs.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "os/home.h"
#include "base/intern.h"
#include "base/sbuf.h"
#include "base/settings.h"

#define CACHE_MAGIC "plumb-symbols 1"
#define CACHE_MAX_FILE (SYM_CACHE_MAX_BYTES / 4)

struct cache_entry {
	uint64_t key;    /* vaddr << 1 | caller */
	uint32_t first;  /* index into frames */
	uint32_t n;
};

struct cache_frame {
	uint32_t func, file; /* interned */
	int line;
};

struct sym_cache {
	char dir[PATH_MAX];
	char path[PATH_MAX];
	char name[130];      /* the file's name in the directory: the build-id in hex */
	struct interner strs;
	struct hmap index; /* key -> entry */
	struct cache_entry *entries;
	size_t nentries, capentries;
	struct cache_frame *frames;
	size_t nframes, capframes;
	bool dirty;
};


/* size and mtime (ns) of path as one stamp; false when it cannot be read */
static bool stamp_of(const char *path, unsigned long long *size, unsigned long long *mtime)
{
	struct stat sb;
	if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
		return false;
	*size = (unsigned long long)sb.st_size;
	*mtime = (unsigned long long)sb.st_mtim.tv_sec * 1000000000ULL + (unsigned long long)sb.st_mtim.tv_nsec;
	return true;
}

static bool add_entry(struct sym_cache *c, uint64_t key, const struct cache_frame *fr, size_t n)
{
	uint32_t dummy;
	if (n == 0 || c->nentries >= SYM_CACHE_MAX_ENTRIES || hmap_get(&c->index, key, &dummy))
		return false;
	if (!ALLOC_GROW(c->entries, c->nentries + 1, c->capentries) ||
	    !ALLOC_GROW(c->frames, c->nframes + n, c->capframes))
		return false;
	if (!hmap_put(&c->index, key, (uint32_t)c->nentries))
		return false;
	c->entries[c->nentries++] = (struct cache_entry){ key, (uint32_t)c->nframes, (uint32_t)n };
	memcpy(c->frames + c->nframes, fr, n * sizeof *fr);
	c->nframes += n;
	return true;
}

static uint32_t str_id(struct sym_cache *c, const char *s, size_t len)
{
	return intern(&c->strs, s, len, NULL);
}

/* One entry line (NUL-terminated, no newline); false when it is malformed. */
static bool parse_line(struct sym_cache *c, char *line)
{
	char *tab = strchr(line, '\t');
	unsigned long long vaddr;
	unsigned caller, n;
	if (!tab || sscanf(line, "%llx %u %u", &vaddr, &caller, &n) != 3 || n == 0 || n > SYM_MAX_INLINE || caller > 1)
		return false;
	struct cache_frame fr[SYM_MAX_INLINE];
	char *p = tab + 1;
	for (unsigned i = 0; i < n; i++) {
		char *f = p, *t1 = strchr(f, '\t');
		if (!t1)
			return false;
		char *file = t1 + 1, *t2 = strchr(file, '\t');
		if (!t2)
			return false;
		char *ln = t2 + 1, *end;
		long l = strtol(ln, &end, 10);
		if (end == ln || (*end != '\t' && *end != '\0'))
			return false;
		fr[i].func = str_id(c, f, (size_t)(t1 - f));
		fr[i].file = str_id(c, file, (size_t)(t2 - file));
		fr[i].line = (int)l;
		if (fr[i].func == INTERN_NOMEM || fr[i].file == INTERN_NOMEM)
			return false;
		p = *end ? end + 1 : end;
	}
	add_entry(c, (uint64_t)vaddr << 1 | caller, fr, n);
	return true;
}

/* Reads the file when its source is unchanged (anything else: the cache starts empty and is rewritten), under the
 * home's trust rule (os/home.h, os/fs.h): a directory that is not the user's, or a file that is a link, a FIFO
 * or another user's, is not read. */
static void cache_load(struct sym_cache *c)
{
	char dir[PATH_MAX];
	int dfd = -1;
	struct perr e = PERR_INIT;
	if (home_open("symbols", false, dir, sizeof dir, &dfd, &e) || dfd < 0)
		return;
	char *buf = NULL;
	size_t len = 0;
	enum plumb_err rc = fs_read_trusted(dfd, c->name, geteuid(), CACHE_MAX_FILE, &buf, &len, &e);
	close(dfd);
	if (rc)
		return;
	char *nl = strchr(buf, '\n');
	char source[PATH_MAX];
	unsigned long long size, mtime, now_size, now_mtime;
	if (nl) {
		*nl = '\0';
		char fmt[64];
		snprintf(fmt, sizeof fmt, CACHE_MAGIC "\t%%%d[^\t]\t%%llu\t%%llu", PATH_MAX - 1);
		if (sscanf(buf, fmt, source, &size, &mtime) == 3 && stamp_of(source, &now_size, &now_mtime) &&
		    size == now_size && mtime == now_mtime) {
			for (char *line = nl + 1; *line;) {
				char *next = strchr(line, '\n');
				if (!next) /* a file cut short: the last line is not trusted */
					break;
				*next = '\0';
				if (!parse_line(c, line))
					break;
				line = next + 1;
			}
		}
	}
	free(buf);
}

struct sym_cache *sym_cache_open(const unsigned char *build_id, size_t len)
{
	char home[PATH_MAX - 128];
	if (!build_id || len == 0 || len > 64 || !settings()->symbol_cache || !home_dir(home, sizeof home))
		return NULL;
	struct sym_cache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->strs = (struct interner)INTERNER_INIT;
	snprintf(c->dir, sizeof c->dir, "%s/symbols", home);
	for (size_t i = 0; i < len; i++)
		snprintf(c->name + 2 * i, 3, "%02x", build_id[i]);
	snprintf(c->path, sizeof c->path, "%s/%s", c->dir, c->name);
	cache_load(c);
	return c;
}

bool sym_cache_get(struct sym_cache *c, uint64_t vaddr, bool caller, struct sym_resolved *out, size_t max,
		   size_t *n)
{
	uint32_t i;
	if (!c || !hmap_get(&c->index, vaddr << 1 | caller, &i))
		return false;
	const struct cache_entry *en = &c->entries[i];
	size_t k = en->n < max ? en->n : max;
	for (size_t j = 0; j < k; j++) {
		const struct cache_frame *fr = &c->frames[en->first + j];
		const char *func = intern_str(&c->strs, fr->func), *file = intern_str(&c->strs, fr->file);
		out[j] = (struct sym_resolved){ func[0] ? func : NULL, NULL, file[0] ? file : NULL, fr->line };
	}
	*n = k;
	return true;
}

static bool storable(const char *s)
{
	return !s || !strpbrk(s, "\t\n");
}

void sym_cache_put(struct sym_cache *c, uint64_t vaddr, bool caller, const struct sym_resolved *r, size_t n)
{
	if (!c || n == 0 || n > SYM_MAX_INLINE)
		return;
	struct cache_frame fr[SYM_MAX_INLINE];
	for (size_t i = 0; i < n; i++) {
		if (!storable(r[i].func) || !storable(r[i].file))
			return;
		const char *func = r[i].func ? r[i].func : "", *file = r[i].file ? r[i].file : "";
		fr[i].func = str_id(c, func, strlen(func));
		fr[i].file = str_id(c, file, strlen(file));
		fr[i].line = r[i].line;
		if (fr[i].func == INTERN_NOMEM || fr[i].file == INTERN_NOMEM)
			return;
	}
	if (add_entry(c, vaddr << 1 | caller, fr, n))
		c->dirty = true;
}

bool sym_cache_dirty(const struct sym_cache *c)
{
	return c && c->dirty;
}

struct old_file {
	char name[NAME_MAX + 1];
	long long mtime;
	off_t size;
};

static int by_age(const void *a, const void *b)
{
	const struct old_file *x = a, *y = b;
	return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

/* Keeps the directory under SYM_CACHE_MAX_BYTES: the files written longest ago go first. */
static void cache_trim(int dir_fd)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct old_file *files = NULL;
	size_t n = 0, cap = 0;
	unsigned long long total = 0;
	for (struct dirent *de; (de = readdir(d)) != NULL;) {
		struct stat sb;
		if (de->d_name[0] == '.' || fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(sb.st_mode) || !ALLOC_GROW(files, n + 1, cap))
			continue;
		snprintf(files[n].name, sizeof files[n].name, "%s", de->d_name);
		files[n].mtime = (long long)sb.st_mtim.tv_sec;
		files[n].size = sb.st_size;
		total += (unsigned long long)sb.st_size;
		n++;
	}
	if (total > SYM_CACHE_MAX_BYTES) {
		qsort(files, n, sizeof *files, by_age);
		for (size_t i = 0; i < n && total > SYM_CACHE_MAX_BYTES; i++)
			if (unlinkat(dirfd(d), files[i].name, 0) == 0)
				total -= (unsigned long long)files[i].size;
	}
	closedir(d);
	free(files);
}

void sym_cache_save(struct sym_cache *c, const char *source)
{
	unsigned long long size, mtime;
	if (!c || !c->dirty || !source || !storable(source) || !stamp_of(source, &size, &mtime))
		return;
	struct perr e = PERR_INIT;
	char dir[PATH_MAX];
	int dfd = -1;
	if (home_open("symbols", true, dir, sizeof dir, &dfd, &e) || dfd < 0) /* a home others could plant in */
		return;
	/* the writer writes a device or a FIFO in place (os/atomic.h); in plumb's own cache such an entry, or one
	 * that is not the user's, is planted: it goes, and the file is written anew */
	struct stat st;
	if (fstatat(dfd, c->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (!S_ISREG(st.st_mode) || st.st_uid != geteuid()))
		unlinkat(dfd, c->name, 0);
	struct sbuf sb;
	sbuf_init(&sb);
	sbuf_addf(&sb, CACHE_MAGIC "\t%s\t%llu\t%llu\n", source, size, mtime);
	for (size_t i = 0; i < c->nentries; i++) {
		const struct cache_entry *en = &c->entries[i];
		sbuf_addf(&sb, "%llx %u %u", (unsigned long long)(en->key >> 1), (unsigned)(en->key & 1), en->n);
		for (uint32_t j = 0; j < en->n; j++) {
			const struct cache_frame *fr = &c->frames[en->first + j];
			sbuf_addf(&sb, "\t%s\t%s\t%d", intern_str(&c->strs, fr->func), intern_str(&c->strs, fr->file),
				  fr->line);
		}
		sbuf_addch(&sb, '\n');
	}
	/* written and trimmed in the directory checked above, never by its path again (docs/design.md §3.5) */
	if (!sbuf_done(&sb, &e) && sb.len <= CACHE_MAX_FILE &&
	    !atomic_write_file_at(dfd, c->name, c->path, sb.buf, sb.len, false, &e))
		cache_trim(dfd);
	close(dfd);
	sbuf_release(&sb);
	c->dirty = false;
}

void sym_cache_close(struct sym_cache *c)
{
	if (!c)
		return;
	interner_release(&c->strs);
	hmap_release(&c->index);
	free(c->entries);
	free(c->frames);
	free(c);
}
