/* object.c — the target's memory and the plain objects plumb reads through it (internal.h): compact str objects
 * (as UTF-8), small ints, dicts (combined and split tables) and instance attributes. Every object is read from a
 * process that keeps running: sizes are bounded (PY_MAX_STR, PY_MAX_DICT) and a failed read yields nothing. */
#include "python/internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

bool py_mem_read(const struct py_proc *py, uint64_t addr, void *buf, size_t len)
{
	if (!addr)
		return false;
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(py->pid, &local, 1, &remote, 1, 0);
	return n == (ssize_t)len;
}

bool py_mem_read_head(const struct py_proc *py, uint64_t addr, uint8_t *buf, size_t cap, size_t n)
{
	return n <= cap && py_mem_read(py, addr, buf, n);
}

size_t py_mem_readv(const struct py_proc *py, const uint64_t *addrs, size_t n, size_t len, uint8_t *out)
{
	enum { BATCH = 256 };
	struct iovec local, remote[BATCH];
	size_t done = 0;
	while (done < n) {
		size_t k = n - done < BATCH ? n - done : BATCH;
		for (size_t i = 0; i < k; i++) {
			if (!addrs[done + i]) {
				k = i; /* a NULL address ends the batch: nothing after it counts as read */
				break;
			}
			remote[i] = (struct iovec){ (void *)(uintptr_t)addrs[done + i], len };
		}
		if (k == 0)
			break;
		local = (struct iovec){ out + done * len, k * len };
		ssize_t got = process_vm_readv(py->pid, &local, 1, remote, k, 0);
		if (got < 0)
			break;
		size_t whole = (size_t)got / len;
		done += whole < k ? whole : k;
		if (whole < k)
			break;
	}
	return done;
}

bool py_mem_ptr(const struct py_proc *py, uint64_t addr, uint64_t *out)
{
	return py_mem_read(py, addr, out, sizeof *out);
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
char *py_str_read(const struct py_proc *py, uint64_t addr)
{
	const struct py_layout *L = py->L;
	uint8_t head[128];
	if (!py_mem_read_head(py, addr, head, sizeof head, L->str_compact_size))
		return NULL;
	int64_t length = py_field_i64(head, L->str_length);
	uint32_t state = py_field_u32(head, L->str_state);
	unsigned kind = (state >> L->str_kind_shift) & 7;
	bool compact = (state >> L->str_compact_bit) & 1, ascii = (state >> L->str_ascii_bit) & 1;
	if (!compact || length < 0 || length > PY_MAX_STR || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	size_t n = (size_t)length * kind;
	uint8_t *raw = malloc(n + 1);
	char *s = malloc((size_t)length * 4 + 1);
	if (!raw || !s || !py_mem_read(py, addr + (ascii ? L->str_ascii_size : L->str_compact_size), raw, n + (n == 0))) {
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

/* ---- dicts and attributes: threading._active ({ident: Thread}) and each Thread's _name ---- */

/* Calls fn for each live entry of a dict given by its keys object and, for split tables, values array. */
static bool keys_each(const struct py_proc *py, uint64_t keys, uint64_t values, py_dict_fn fn, void *ctx)
{
	const struct py_layout *L = py->L;
	uint8_t kh[64];
	if (!py_mem_read_head(py, keys, kh, sizeof kh, L->dictkeys_indices))
		return false;
	int64_t n = py_field_i64(kh, L->dictkeys_nentries);
	uint64_t index_bytes;
	size_t esize, key_off;
	if (L->dictkeys_old) { /* <= 3.10: dk_size slots, each index as wide as the size needs */
		int64_t size = py_field_i64(kh, L->dictkeys_size);
		if (size <= 0 || size > 4 * PY_MAX_DICT)
			return false;
		index_bytes = (uint64_t)size * (size <= 0xff ? 1 : size <= 0xffff ? 2 : 4);
		esize = L->dict_entry_size;
		key_off = 8;
	} else {
		uint8_t log2_index_bytes = kh[L->dictkeys_log2_index_bytes], kind = kh[L->dictkeys_kind];
		if (log2_index_bytes > 24)
			return false;
		index_bytes = 1ULL << log2_index_bytes;
		esize = kind == L->dict_kind_general ? L->dict_entry_size : L->dict_uentry_size;
		key_off = kind == L->dict_kind_general ? 8 : 0;
	}
	if (n <= 0 || n > PY_MAX_DICT)
		return false;
	uint8_t *ents = malloc((size_t)n * esize);
	uint64_t *vals = values ? malloc((size_t)n * 8) : NULL;
	bool ok = ents && (!values || vals) &&
		  py_mem_read(py, keys + L->dictkeys_indices + index_bytes, ents, (size_t)n * esize) &&
		  (!values || py_mem_read(py, values, vals, (size_t)n * 8));
	for (int64_t i = 0; ok && i < n; i++) {
		uint64_t k = py_field_u64(ents, i * esize + key_off);
		uint64_t v = values ? vals[i] : py_field_u64(ents, i * esize + key_off + 8);
		if (k && v && fn(py, ctx, k, v))
			break;
	}
	free(ents);
	free(vals);
	return ok;
}

bool py_dict_each(const struct py_proc *py, uint64_t dict, py_dict_fn fn, void *ctx)
{
	uint64_t keys, values;
	if (!py_mem_ptr(py, dict + py->L->dict_keys, &keys) || !py_mem_read(py, dict + py->L->dict_values, &values, 8))
		return false;
	return keys_each(py, keys, values, fn, ctx);
}

struct str_lookup {
	const char *want;
	uint64_t found;
};

static bool match_str_key(const struct py_proc *py, void *ctx, uint64_t key, uint64_t value)
{
	struct str_lookup *sl = ctx;
	char *k = py_str_read(py, key);
	bool hit = k && strcmp(k, sl->want) == 0;
	free(k);
	if (hit)
		sl->found = value;
	return hit;
}

uint64_t py_dict_get_str(const struct py_proc *py, uint64_t dict, const char *key)
{
	struct str_lookup sl = { key, 0 };
	py_dict_each(py, dict, match_str_key, &sl);
	return sl.found;
}

/* The str-keyed value name among the values of a split table whose keys are the type's cached keys. */
static uint64_t split_attr(const struct py_proc *py, uint64_t type, uint64_t values, const char *name)
{
	uint64_t keys;
	struct str_lookup sl = { name, 0 };
	if (py_mem_ptr(py, type + py->L->type_cached_keys, &keys))
		keys_each(py, keys, values, match_str_key, &sl);
	return sl.found;
}

/* An instance attribute: before 3.11 from the dict at tp_dictoffset; 3.11 a managed dict (split values or a
 * materialized dict before the object); 3.12 one tagged word for either; 3.13 values inline after the object
 * while they are valid, else the dict before it. */
uint64_t py_obj_attr(const struct py_proc *py, uint64_t obj, const char *name)
{
	const struct py_layout *L = py->L;
	uint64_t type, flags = 0, values = 0, dict = 0;
	if (!py_mem_ptr(py, obj + L->obj_type, &type) || !py_mem_read(py, type + L->type_flags, &flags, 8))
		return 0;
	if (L->obj_dict_at_offset) {
		int64_t off;
		if (!py_mem_read(py, type + L->type_dictoffset, &off, 8) || off <= 0 || off > 4096 ||
		    !py_mem_ptr(py, obj + (uint64_t)off, &dict) || !dict)
			return 0;
		return py_dict_get_str(py, dict, name);
	}
	if (!(flags & L->managed_dict_flag))
		return 0;
	if (L->inline_values_flag) { /* 3.13 */
		if (flags & L->inline_values_flag) {
			int64_t basic;
			uint8_t valid = 0;
			if (py_mem_read(py, type + L->type_basicsize, &basic, 8) && basic > 0 && basic < 4096 &&
			    py_mem_read(py, obj + (uint64_t)basic + L->values_valid, &valid, 1) && valid)
				return split_attr(py, type, obj + (uint64_t)basic + L->values_values, name);
		}
		if (py_mem_ptr(py, obj - L->obj_dict_before, &dict) && dict)
			return py_dict_get_str(py, dict, name);
		return 0;
	}
	if (L->dict_or_values_tagged) { /* 3.12: one tagged word */
		uint64_t word;
		if (!py_mem_read(py, obj - L->obj_dict_before, &word, 8) || !word)
			return 0;
		if (word & 1)
			values = word + 1;
		else
			dict = word;
	} else if (!py_mem_read(py, obj - L->obj_values_before, &values, 8)) {
		values = 0;
	}
	if (values)
		return split_attr(py, type, values, name);
	if (!L->dict_or_values_tagged && !py_mem_read(py, obj - L->obj_dict_before, &dict, 8))
		dict = 0;
	if (dict)
		return py_dict_get_str(py, dict, name);
	return 0;
}

bool py_int_read(const struct py_proc *py, uint64_t obj, uint64_t *out)
{
	const struct py_layout *L = py->L;
	int64_t size;
	uint32_t digits[3] = { 0 };
	if (!py_mem_read(py, obj + L->long_size, &size, sizeof size))
		return false;
	if (L->long_tagged) { /* 3.12: digits << bits | sign (0 positive, 1 zero, 2 negative) */
		if ((size & 3) == 2)
			return false;
		size = (int64_t)((uint64_t)size >> L->long_tagged);
	}
	if (size < 0 || size > 3 ||
	    (size && !py_mem_read(py, obj + L->long_digits, digits, (size_t)size * 4)))
		return false;
	uint64_t v = 0;
	for (int64_t i = size; i-- > 0;)
		v = (v << L->long_shift) | digits[i];
	*out = v;
	return true;
}
