/* test_idtab.c — the id table that compares keys (base/idtab.h) and the interner on it (base/intern.h):
 * colliding hashes, growth, many keys, borrowed and copied strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/idtab.h"
#include "base/intern.h"

static bool u64_eq(const void *ctx, uint32_t id, const void *key)
{
	return ((const uint64_t *)ctx)[id] == *(const uint64_t *)key;
}

static void test_idtab__collisions_compare_keys(void **state)
{
	(void)state;
	/* every item under the same hash: only the callback tells them apart */
	uint64_t items[300];
	struct idtab t = IDTAB_INIT;
	for (uint32_t i = 0; i < 300; i++) {
		items[i] = 1000 + i * 7;
		assert_int_equal(idtab_find(&t, 42, u64_eq, items, &items[i]), IDTAB_NONE);
		assert_true(idtab_add(&t, 42, i));
	}
	for (uint32_t i = 0; i < 300; i++)
		assert_int_equal(idtab_find(&t, 42, u64_eq, items, &items[i]), i);
	uint64_t absent = 5;
	assert_int_equal(idtab_find(&t, 42, u64_eq, items, &absent), IDTAB_NONE);
	assert_int_equal(idtab_find(&t, 43, u64_eq, items, &items[0]), IDTAB_NONE); /* another hash: not looked at */
	assert_int_equal(t.count, 300);
	assert_true(t.cap >= 600); /* at most half full */
	idtab_release(&t);
	assert_int_equal(t.cap, 0);
	assert_int_equal(idtab_find(&t, 42, u64_eq, items, &items[0]), IDTAB_NONE); /* released is empty */
}

static void test_idtab__growth_and_many_keys(void **state)
{
	(void)state;
	enum { N = 200000 };
	uint64_t *items = malloc(N * sizeof *items);
	assert_non_null(items);
	struct idtab t = IDTAB_INIT;
	size_t grows = 0, last_cap = 0;
	for (uint32_t i = 0; i < N; i++) {
		items[i] = (uint64_t)i * 2654435761u;
		assert_true(idtab_add(&t, hash_u64(items[i]), i));
		if (t.cap != last_cap)
			grows++, last_cap = t.cap;
		if (i % 4999 == 0) /* earlier ids survive every move */
			for (uint32_t k = 0; k <= i; k += 997)
				assert_int_equal(idtab_find(&t, hash_u64(items[k]), u64_eq, items, &items[k]), k);
	}
	assert_true(grows >= 10);
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(idtab_find(&t, hash_u64(items[i]), u64_eq, items, &items[i]), i);
	uint64_t absent = 1;
	assert_int_equal(idtab_find(&t, hash_u64(absent), u64_eq, items, &absent), IDTAB_NONE);
	/* reserve grows once, then adds do not move the slots */
	struct idtab r = IDTAB_INIT;
	assert_true(idtab_reserve(&r, 1000));
	const struct idtab_slot *slots = r.slots;
	for (uint32_t i = 0; i < 1000; i++)
		assert_true(idtab_add(&r, hash_u64(items[i]), i));
	assert_ptr_equal(r.slots, slots);
	idtab_release(&r);
	idtab_release(&t);
	free(items);
}

static void test_idtab__interner(void **state)
{
	(void)state;
	struct interner in = INTERNER_INIT;
	bool added;
	assert_int_equal(intern(&in, "", 0, &added), 0);
	assert_true(added);
	assert_int_equal(intern(&in, "abc", 3, &added), 1);
	assert_true(added);
	assert_int_equal(intern(&in, "abcd", 3, &added), 1); /* length decides: the same bytes */
	assert_false(added);
	assert_int_equal(intern(&in, "ab\0c", 4, NULL), 2);  /* bytes, not C strings */
	assert_int_equal(intern(&in, "ab", 2, NULL), 3);
	assert_int_equal(intern_find(&in, "ab\0c", 4), 2);
	assert_int_equal(intern_find(&in, "zz", 2), IDTAB_NONE);
	assert_string_equal(intern_str(&in, 1), "abc");      /* copies are NUL-terminated */
	assert_int_equal(intern_len(&in, 2), 4);
	/* the copy is the interner's: the caller's buffer may change */
	char buf[8] = "hello";
	uint32_t h = intern(&in, buf, 5, NULL);
	buf[0] = 'j';
	assert_string_equal(intern_str(&in, h), "hello");
	assert_int_equal(intern(&in, "hello", 5, NULL), h);
	/* a string bigger than a chunk, then small ones: all pointers stay valid */
	size_t big = 600 * 1024;
	char *b = malloc(big);
	memset(b, 'x', big);
	uint32_t bid = intern(&in, b, big, NULL);
	const char *first = intern_str(&in, 1);
	char name[32];
	for (int i = 0; i < 50000; i++) {
		int n = snprintf(name, sizeof name, "label-%d", i);
		uint32_t id = intern(&in, name, (size_t)n, &added);
		assert_true(added);
		assert_int_equal(id, 6 + (uint32_t)i);
	}
	for (int i = 0; i < 50000; i += 777) {
		int n = snprintf(name, sizeof name, "label-%d", i);
		assert_int_equal(intern_find(&in, name, (size_t)n), 6 + (uint32_t)i);
		assert_string_equal(intern_str(&in, 6 + (uint32_t)i), name);
	}
	assert_ptr_equal(intern_str(&in, 1), first);
	assert_int_equal(intern_len(&in, bid), big);
	assert_memory_equal(intern_str(&in, bid), b, big);
	assert_int_equal(intern_count(&in), 50006);
	free(b);
	interner_release(&in);
	assert_int_equal(intern_count(&in), 0);
}

static void test_idtab__borrowing_interner(void **state)
{
	(void)state;
	const char *text = "one two one";
	struct interner in = INTERNER_BORROW_INIT;
	assert_int_equal(intern(&in, text, 3, NULL), 0);
	assert_int_equal(intern(&in, text + 4, 3, NULL), 1);
	assert_int_equal(intern(&in, text + 8, 3, NULL), 0);
	assert_ptr_equal(intern_str(&in, 0), text);       /* no copy: the caller's pointer */
	assert_ptr_equal(intern_str(&in, 1), text + 4);
	/* a caller's own hash works the same way when used for every call */
	struct interner own = INTERNER_BORROW_INIT;
	assert_int_equal(intern_h(&own, 7, "a", 1, NULL), 0);
	assert_int_equal(intern_h(&own, 7, "b", 1, NULL), 1); /* the same hash, another key */
	assert_int_equal(intern_find_h(&own, 7, "a", 1), 0);
	assert_int_equal(intern_find_h(&own, 7, "b", 1), 1);
	interner_release(&own);
	interner_release(&in);
	assert_true(in.borrow); /* released, still borrowing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idtab__collisions_compare_keys),
		cmocka_unit_test(test_idtab__growth_and_many_keys),
		cmocka_unit_test(test_idtab__interner),
		cmocka_unit_test(test_idtab__borrowing_interner),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
