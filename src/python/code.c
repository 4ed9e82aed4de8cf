/* code.c — code objects (internal.h): each read once into a cache by address (name, file, first line and line
 * table), and the line of an instruction from a 3.11+ location table. A code object can be freed and its address
 * reused, so a cached entry is checked against the object's name and file pointers once a second. */
#include "python/internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/grow.h"

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
	if (L->code_size > sizeof head || !py_mem_read(py, addr, head, L->code_size))
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
	c->func = py_str_read(py, c->name_p);
	c->file = py_str_read(py, c->file_p);
	if (!c->func || !c->file) {
		code_free(c);
		return false;
	}
	int64_t lt_len = 0;
	if (lt_p && py_mem_read(py, lt_p + L->bytes_size, &lt_len, sizeof lt_len) && lt_len > 0 && lt_len <= PY_MAX_LINETABLE) {
		c->linetable = malloc((size_t)lt_len);
		if (c->linetable && py_mem_read(py, lt_p + L->bytes_data, c->linetable, (size_t)lt_len)) {
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
struct py_code *py_code_get(struct py_proc *py, uint64_t addr)
{
	uint32_t idx;
	if (hmap_get(&py->code_index, addr, &idx)) {
		struct py_code *c = &py->codes[idx];
		uint64_t now = mono_ns();
		if (now - c->checked_ns < 1000000000ULL)
			return c;
		uint64_t name_p, file_p;
		if (!py_mem_ptr(py, addr + py->L->code_name, &name_p) ||
		    !py_mem_ptr(py, addr + py->L->code_filename, &file_p))
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

int py_code_line(struct py_code *c, int addrq)
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

void py_codes_release(struct py_proc *py)
{
	for (size_t i = 0; i < py->ncodes; i++)
		code_free(&py->codes[i]);
	free(py->codes);
	py->codes = NULL;
	py->ncodes = py->capcodes = 0;
	hmap_release(&py->code_index);
}
