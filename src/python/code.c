/* code.c — code objects (internal.h): each read once into a cache by address (name, file, first line and line
 * table), and the line of an instruction from each version's line table (3.8/3.9 co_lnotab, 3.10's PEP 626
 * table, 3.11+'s location table). A code object can be freed and its address given to a new one (exec'd code,
 * a module imported and dropped): every sample hands in the object's head as read at that moment (frame.c reads
 * all of a chain's in one call), and an entry whose identity (struct py_code_ident) differs is read afresh. */
#include "python/internal.h"

#include <stdlib.h>
#include <string.h>

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

/* 3.8/3.9 co_lnotab: (bytecode increment, signed line increment) pairs; PyCode_Addr2Line's walk. */
int py_lnotab_line(const uint8_t *t, size_t len, int firstlineno, int addrq)
{
	int64_t line = firstlineno, addr = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		addr += t[i];
		if (addr > addrq)
			break;
		line += (int8_t)t[i + 1];
	}
	return line < 0 || line > INT32_MAX ? -1 : (int)line;
}

/* 3.10 co_linetable (PEP 626): (byte length, signed line delta; -128 no line) pairs; the delta of an empty
 * range still counts, as codeobject.c's advance() does. */
int py_pep626_line(const uint8_t *t, size_t len, int firstlineno, int addrq)
{
	int64_t line = firstlineno, start = 0;
	for (size_t i = 0; i + 1 < len; i += 2) {
		int64_t end = start + t[i];
		int8_t ld = (int8_t)t[i + 1];
		if (ld != -128)
			line += ld;
		if (addrq < end)
			return ld == -128 || line < 0 || line > INT32_MAX ? -1 : (int)line;
		start = end;
	}
	return -1;
}

static void code_free(struct py_code *c)
{
	free(c->func);
	free(c->file);
	free(c->linetable);
}

/* The identity fields of the code object whose head (code_size bytes) is h. */
static void ident_of(const struct py_layout *L, const uint8_t *h, struct py_code_ident *id)
{
	memset(id, 0, sizeof *id);
	memcpy(&id->type_p, h + L->obj_type, 8);
	memcpy(&id->name_p, h + L->code_name, 8);
	memcpy(&id->file_p, h + L->code_filename, 8);
	if (!L->no_qualname)
		memcpy(&id->qual_p, h + L->code_qualname, 8);
	memcpy(&id->lt_p, h + L->code_linetable, 8);
	memcpy(&id->firstlineno, h + L->code_firstlineno, 4);
	if (L->has_code_version)
		memcpy(&id->version, h + L->code_version, 4);
}

static bool ident_same(const struct py_code_ident *a, const struct py_code_ident *b)
{
	return a->type_p == b->type_p && a->name_p == b->name_p && a->file_p == b->file_p && a->qual_p == b->qual_p &&
	       a->lt_p == b->lt_p && a->firstlineno == b->firstlineno && a->version == b->version;
}

/* Reads the code object at addr, whose head is h, into c (its strings and line table). */
static bool code_read(struct py_proc *py, uint64_t addr, const uint8_t *h, struct py_code *c)
{
	const struct py_layout *L = py->L;
	memset(c, 0, sizeof *c);
	ident_of(L, h, &c->id);
	if (py->code_type && c->id.type_p != py->code_type)
		return false; /* not (or no longer) a code object */
	c->addr = addr;
	c->firstlineno = c->id.firstlineno;
	if (L->linetable_kind == 3)
		memcpy(&c->firsttraceable, h + L->code_firsttraceable, 4);
	c->last_addrq = UINT32_MAX;
	c->func = py_str_read(py, c->id.name_p);
	c->file = py_str_read(py, c->id.file_p);
	if (!c->func || !c->file) {
		code_free(c);
		return false;
	}
	int64_t lt_len = 0;
	uint64_t lt_p = c->id.lt_p;
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

/* The cached code object at addr, when it is still the object the entry was read from; read afresh when the
 * address now holds another one (a freed object's memory given to a new code object). */
struct py_code *py_code_get(struct py_proc *py, uint64_t addr, const uint8_t *head)
{
	uint32_t idx;
	if (hmap_get(&py->code_index, addr, &idx)) {
		struct py_code *c = &py->codes[idx];
		struct py_code_ident now;
		ident_of(py->L, head, &now);
		if (ident_same(&now, &c->id))
			return c;
		struct py_code fresh;
		if (!code_read(py, addr, head, &fresh))
			return NULL;
		code_free(c);
		*c = fresh;
		return c;
	}
	struct py_code c;
	if (!code_read(py, addr, head, &c))
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

int py_code_line(const struct py_proc *py, struct py_code *c, int addrq)
{
	if ((uint32_t)addrq == c->last_addrq)
		return c->last_line;
	int line = -1;
	if (c->linetable && addrq >= 0) {
		if (py->L->linetable_kind == 1)
			line = py_lnotab_line(c->linetable, c->linetable_len, c->firstlineno, addrq);
		else if (py->L->linetable_kind == 2)
			line = py_pep626_line(c->linetable, c->linetable_len, c->firstlineno, addrq);
		else
			line = py_linetable_line(c->linetable, c->linetable_len, c->firstlineno, addrq);
	}
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
