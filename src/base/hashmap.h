/* hashmap.h — open-addressing map from an exact 64-bit key to a 32-bit value (linear probing, power-of-two
 * size): pids, tids, addresses, (parent << 32 | child) pairs. The key is the whole key and is compared; keys
 * that do not fit in 64 bits (strings, frames) go through base/idtab.h or base/intern.h, never through a hash
 * of them here. Also the 64-bit hashes and the table allocator plumb's tables share. The map owns its table. */
#ifndef PLUMB_BASE_HASHMAP_H
#define PLUMB_BASE_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t key;
	uint32_t value;
	uint32_t used;
};

struct hmap {
	struct hmap_slot *slots;
	size_t cap;   /* power of two, 0 when empty */
	size_t count;
};
#define HMAP_INIT { NULL, 0, 0 }

/* Finds key; returns true and sets *value when present. */
bool hmap_get(const struct hmap *m, uint64_t key, uint32_t *value);
/* Inserts or replaces; returns false only when out of memory. */
bool hmap_put(struct hmap *m, uint64_t key, uint32_t value);
void hmap_release(struct hmap *m);

/* Zeroed memory for a hash table of `bytes` (big ones are mapped populated); NULL when out of memory.
 * table_free takes the same size back; it accepts NULL. */
void *table_zalloc(size_t bytes);
void table_free(void *table, size_t bytes);

/* Iteration over slots (i from 0 to m->cap); a slot with used == 0 is empty. */

/* 64-bit hashes used across plumb. */
uint64_t hash_bytes(const void *data, size_t len);
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
