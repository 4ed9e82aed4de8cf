/* kallsyms.c — /proc/kallsyms read whole into one buffer and parsed by hand into a sorted array; names are
 * NUL-terminated in place in that buffer, so the load makes no copy per symbol. The kernel lists ~120-200k
 * lines already in address order, so the sort is skipped when the table is sorted. Where several symbols
 * share an address, the first one listed names it. */
#include "symbol/kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/readall.h"

struct ksym {
	uint64_t addr;
	uint32_t name_off;
	uint32_t order; /* line index: ties sort in file order */
};

struct kallsyms {
	struct ksym *syms;
	size_t n;
	char *names; /* the file's text, names terminated in place */
	uint64_t end; /* end of the last text symbol region (approximate: last + 1 MiB) */
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Reads a whole file into a NUL-terminated malloc'd buffer. /proc files report size 0: the first buffer is sized
 * for /proc/kallsyms (~8 MB on a distribution kernel). */
static char *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *buf = NULL;
	int err = read_fd_whole(fd, (size_t)1 << 23, 0, &buf, len);
	close(fd);
	if (err)
		return NULL;
	char *fit = realloc(buf, *len + 1); /* the names stay in it: give back the slack */
	return fit ? fit : buf;
}

static inline int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Parses one line "ADDR TYPE NAME[\t[MODULE]]" at *pp, before end (where the buffer has a NUL); moves *pp to
 * the next line. Returns true for a well-formed line, with the name terminated in place. */
static bool parse_line(char **pp, char *end, uint64_t *addr, char *type, char **name)
{
	char *p = *pp;
	char *nl = memchr(p, '\n', (size_t)(end - p));
	char *eol = nl ? nl : end;
	*pp = nl ? nl + 1 : end;
	uint64_t a = 0;
	int digits = 0, d;
	while ((d = hex_digit((unsigned char)*p)) >= 0) {
		a = a << 4 | (uint64_t)d;
		digits++;
		p++;
	}
	if (digits == 0 || digits > 16 || !is_blank(*p))
		return false;
	while (is_blank(*p))
		p++;
	if (p >= eol || is_blank(p[0]) || !is_blank(p[1]))
		return false;
	*type = p[0];
	p += 2;
	while (is_blank(*p))
		p++;
	char *n = p;
	while (p < eol && !is_blank(*p) && *p != '\r')
		p++;
	if (p == n)
		return false;
	*p = '\0'; /* the name's end: a blank before the [module], the newline, or the buffer's end */
	*addr = a;
	*name = n;
	return true;
}

struct kallsyms *kallsyms_parse(char *text, size_t len)
{
	if (!text)
		return NULL;
	struct kallsyms *k = calloc(1, sizeof *k);
	if (!k) {
		free(text);
		return NULL;
	}
	k->names = text;
	if (len >= UINT32_MAX) /* names are 32-bit offsets */
		goto fail;
	size_t cap = len / 32 + 16;
	k->syms = malloc(cap * sizeof *k->syms);
	if (!k->syms)
		goto fail;
	bool nonzero = false, sorted = true;
	uint32_t order = 0;
	char *p = text, *end = text + len;
	while (p < end) {
		uint64_t addr;
		char type, *name;
		if (!parse_line(&p, end, &addr, &type, &name))
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		nonzero |= addr != 0;
		if (!ALLOC_GROW(k->syms, k->n + 1, cap))
			goto fail;
		if (k->n && addr < k->syms[k->n - 1].addr)
			sorted = false;
		k->syms[k->n++] = (struct ksym){ addr, (uint32_t)(name - text), order++ };
	}
	if (!nonzero || k->n == 0)
		goto fail;
	if (!sorted)
		qsort(k->syms, k->n, sizeof *k->syms, cmp_ksym);
	/* one entry per address: the first listed */
	size_t w = 1;
	for (size_t i = 1; i < k->n; i++)
		if (k->syms[i].addr != k->syms[w - 1].addr)
			k->syms[w++] = k->syms[i];
	k->n = w;
	k->end = k->syms[k->n - 1].addr + (1 << 20);
	return k;
fail:
	kallsyms_free(k);
	return NULL;
}

struct kallsyms *kallsyms_load_path(const char *path)
{
	size_t len = 0;
	char *text = read_all(path, &len);
	return text ? kallsyms_parse(text, len) : NULL;
}

struct kallsyms *kallsyms_load(void)
{
	return kallsyms_load_path("/proc/kallsyms");
}

void kallsyms_free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->names);
	free(k);
}

const char *kallsyms_lookup(const struct kallsyms *k, uint64_t addr)
{
	if (!k || k->n == 0 || addr < k->syms[0].addr || addr >= k->end)
		return NULL;
	size_t lo = 0, hi = k->n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return k->names + k->syms[lo].name_off;
}
