/* jit.c — perf maps (jit.h): one table per map file, read once (at most SYM_PERF_MAP_MAX bytes: a longer map is
 * cut there), its names kept in place in the one buffer read; searched newest entry first (a JIT may reuse an
 * address range for new code). A map comes from the target's view (symbol/files.h) when the backend found one,
 * else it is opened by its path under the same trust rules. */
#include "symbol/jit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/fs.h"
#include "base/grow.h"
#include "symbol/files.h"

struct jit_sym {
	uint64_t start, end;
	const char *name; /* in the map's text */
};

struct jit_map {
	char *path;
	char *text;
	struct jit_sym *syms;
	size_t n;
};

struct sym_jits {
	const struct sym_files *files;
	struct jit_map *jits;
	size_t njits, cap_jits;
};

struct sym_jits *sym_jits_new(const struct sym_files *files)
{
	struct sym_jits *j = calloc(1, sizeof(struct sym_jits));
	if (j)
		j->files = files;
	return j;
}

void sym_jits_free(struct sym_jits *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->njits; i++) {
		free(s->jits[i].syms);
		free(s->jits[i].text);
		free(s->jits[i].path);
	}
	free(s->jits);
	free(s);
}

/* Reads fd from its start, at most max bytes, into a NUL-terminated malloc'd buffer; NULL on failure. */
static char *read_capped(int fd, size_t max, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	while (buf && n < max) {
		if (n == cap) {
			size_t ncap = cap * 2 < max ? cap * 2 : max;
			char *nb = realloc(buf, ncap + 1);
			if (!nb)
				break;
			buf = nb;
			cap = ncap;
		}
		ssize_t r = pread(fd, buf + n, cap - n, (off_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

/* Parses "START SIZE NAME" lines (hex numbers) of text in place. */
static void parse_map(struct jit_map *j, char *text, size_t len)
{
	size_t alloc = 0;
	for (char *line = text, *end = text + len; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *next = nl ? nl + 1 : end;
		if (nl)
			*nl = '\0';
		char *p = line, *q;
		unsigned long long start = strtoull(p, &q, 16), size;
		if (q != p && *q == ' ') {
			size = strtoull(p = q + 1, &q, 16);
			if (q != p && *q == ' ' && ALLOC_GROW(j->syms, j->n + 1, alloc))
				j->syms[j->n++] = (struct jit_sym){ start, start + size, q + 1 };
		}
		line = next;
	}
}

static struct jit_map *jit_get(struct sym_jits *s, const char *path)
{
	for (size_t i = 0; i < s->njits; i++)
		if (strcmp(s->jits[i].path, path) == 0)
			return &s->jits[i];
	if (!ALLOC_GROW(s->jits, s->njits + 1, s->cap_jits))
		return NULL;
	struct jit_map *j = &s->jits[s->njits++];
	memset(j, 0, sizeof *j);
	j->path = strdup(path);
	int fd = sym_files_perf_map_fd(s->files, path), own = -1;
	if (fd < 0 && !s->files) { /* no view of the target: the path itself, under the same rules */
		struct perr e = PERR_INIT;
		fd = own = fs_open_trusted(AT_FDCWD, path, geteuid(), NULL, &e);
	}
	size_t len = 0;
	j->text = fd >= 0 ? read_capped(fd, SYM_PERF_MAP_MAX, &len) : NULL;
	if (own >= 0)
		close(own);
	if (j->text)
		parse_map(j, j->text, len);
	return j;
}

const char *sym_jits_lookup(struct sym_jits *s, const char *path, uint64_t addr)
{
	struct jit_map *j = jit_get(s, path);
	if (!j)
		return NULL;
	/* later entries win: a JIT may reuse an address range for new code */
	for (size_t i = j->n; i-- > 0;)
		if (addr >= j->syms[i].start && addr < j->syms[i].end)
			return j->syms[i].name;
	return NULL;
}
