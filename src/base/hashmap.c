/* hashmap.c — linear probing; the table stays at most half full so probes stay short. */
#include "base/hashmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Tables from this size up come straight from mmap with MAP_POPULATE: the kernel hands over zeroed pages in one
 * call. Zeroing by hand is no substitute: GCC turns malloc + memset(0) into calloc, and a big calloc maps the
 * shared zero page, so a probe's read and then its write fault twice per page, and each copy-on-write fault
 * flushes the TLB of every thread of the process (a fifth of `plumb convert`'s time before this). */
#define TABLE_MMAP_MIN ((size_t)256 << 10)

void *table_zalloc(size_t bytes)
{
	if (bytes < TABLE_MMAP_MIN)
		return calloc(1, bytes ? bytes : 1);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void table_free(void *table, size_t bytes)
{
	if (!table)
		return;
	if (bytes < TABLE_MMAP_MIN)
		free(table);
	else
		munmap(table, bytes);
}

static size_t slot_for(const struct hmap *m, uint64_t key)
{
	return (size_t)hash_u64(key) & (m->cap - 1);
}

bool hmap_get(const struct hmap *m, uint64_t key, uint32_t *value)
{
	if (!m->cap)
		return false;
	for (size_t i = slot_for(m, key);; i = (i + 1) & (m->cap - 1)) {
		const struct hmap_slot *s = &m->slots[i];
		if (!s->used)
			return false;
		if (s->key == key) {
			*value = s->value;
			return true;
		}
	}
}

static bool hmap_resize(struct hmap *m, size_t cap)
{
	if (cap > SIZE_MAX / sizeof(struct hmap_slot))
		return false;
	struct hmap_slot *slots = table_zalloc(cap * sizeof *slots);
	if (!slots)
		return false;
	struct hmap old = *m;
	m->slots = slots;
	m->cap = cap;
	m->count = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].used)
			hmap_put(m, old.slots[i].key, old.slots[i].value);
	table_free(old.slots, old.cap * sizeof *old.slots);
	return true;
}

bool hmap_put(struct hmap *m, uint64_t key, uint32_t value)
{
	if ((m->count + 1) * 2 > m->cap && !hmap_resize(m, m->cap ? m->cap * 2 : 64))
		return false;
	for (size_t i = slot_for(m, key);; i = (i + 1) & (m->cap - 1)) {
		struct hmap_slot *s = &m->slots[i];
		if (!s->used) {
			s->used = 1;
			s->key = key;
			s->value = value;
			m->count++;
			return true;
		}
		if (s->key == key) {
			s->value = value;
			return true;
		}
	}
}

void hmap_release(struct hmap *m)
{
	table_free(m->slots, m->cap * sizeof *m->slots);
	m->slots = NULL;
	m->cap = m->count = 0;
}

uint64_t hash_bytes(const void *data, size_t len)
{
	/* FNV-1a over 8-byte words, then a final mix: fast enough for labels, good spread after hash_u64. */
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ len;
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	uint64_t tail = 0;
	memcpy(&tail, p, len);
	h = (h ^ tail) * 0x100000001b3ULL;
	return hash_u64(h);
}
