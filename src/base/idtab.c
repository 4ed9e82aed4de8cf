/* idtab.c — growing the id table: slots move to an array twice the size, placed by their stored hash (no
 * callback is needed: every stored id is distinct). */
#include "base/idtab.h"

static void place(struct idtab_slot *slots, size_t cap, uint64_t hash, uint32_t id)
{
	size_t mask = cap - 1, i = (size_t)hash & mask;
	while (slots[i].used)
		i = (i + 1) & mask;
	slots[i] = (struct idtab_slot){ hash, id, 1 };
}

static bool resize(struct idtab *t, size_t cap)
{
	if (cap > SIZE_MAX / sizeof(struct idtab_slot))
		return false;
	struct idtab_slot *slots = table_zalloc(cap * sizeof *slots);
	if (!slots)
		return false;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i].used)
			place(slots, cap, t->slots[i].hash, t->slots[i].id);
	table_free(t->slots, t->cap * sizeof *t->slots);
	t->slots = slots;
	t->cap = cap;
	return true;
}

bool idtab_reserve(struct idtab *t, size_t n)
{
	if (n > SIZE_MAX / 4)
		return false;
	size_t cap = t->cap ? t->cap : 64;
	while (n * 2 > cap)
		cap *= 2;
	return cap == t->cap || resize(t, cap);
}

bool idtab_add(struct idtab *t, uint64_t hash, uint32_t id)
{
	if ((t->count + 1) * 2 > t->cap && !idtab_reserve(t, t->count + 1))
		return false;
	place(t->slots, t->cap, hash, id);
	t->count++;
	return true;
}

void idtab_release(struct idtab *t)
{
	table_free(t->slots, t->cap * sizeof *t->slots);
	*t = (struct idtab)IDTAB_INIT;
}
