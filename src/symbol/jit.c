/* jit.c — perf maps (jit.h): one table per map file, read whole on first use, searched newest entry first
 * (a JIT may reuse an address range for new code). */
#include "symbol/jit.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"

struct jit_map {
	char *path;
	struct jit_sym { uint64_t start, end; char *name; } *syms;
	size_t n;
};

struct sym_jits {
	struct jit_map *jits;
	size_t njits, cap_jits;
};

struct sym_jits *sym_jits_new(void)
{
	return calloc(1, sizeof(struct sym_jits));
}

void sym_jits_free(struct sym_jits *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->njits; i++) {
		for (size_t k = 0; k < s->jits[i].n; k++)
			free(s->jits[i].syms[k].name);
		free(s->jits[i].syms);
		free(s->jits[i].path);
	}
	free(s->jits);
	free(s);
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
	/* A regular file only: a FIFO would block the open, a link to a device (/dev/zero) never ends. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	FILE *f = fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return j;
	}
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long start, size;
		int at = 0;
		if (sscanf(line, "%llx %llx %n", &start, &size, &at) < 2 || !at)
			continue;
		char *name = line + at;
		name[strcspn(name, "\n")] = '\0';
		if (!ALLOC_GROW(j->syms, j->n + 1, alloc))
			break;
		j->syms[j->n++] = (struct jit_sym){ start, start + size, strdup(name) };
	}
	free(line);
	fclose(f);
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
