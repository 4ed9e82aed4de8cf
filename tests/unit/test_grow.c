/* test_grow.c — the one grow macro (base/grow.h): doubling, parallel arrays, and sizes that would overflow
 * refused with the array left as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/readall.h"
#include "base/sbuf.h"

struct big {
	char bytes[4096];
};

static void test_grow__doubles_and_keeps_items(void **state)
{
	(void)state;
	int *v = NULL;
	size_t n = 0, cap = 0, grows = 0;
	for (int i = 0; i < 100000; i++) {
		size_t before = cap;
		assert_true(ALLOC_GROW(v, n + 1, cap));
		if (cap != before) {
			grows++;
			assert_true(cap >= 2 * before && cap >= GROW_MIN);
		}
		v[n++] = i;
	}
	assert_true(grows < 20); /* amortized: a logarithmic number of reallocations */
	for (int i = 0; i < 100000; i++)
		assert_int_equal(v[i], i);
	/* asking for room that is already there changes nothing */
	int *same = v;
	size_t c = cap;
	assert_true(ALLOC_GROW(v, 10, cap));
	assert_ptr_equal(v, same);
	assert_int_equal(cap, c);
	/* a jump past double goes straight to what is needed */
	assert_true(ALLOC_GROW(v, 5 * c, cap));
	assert_int_equal(cap, 5 * c);
	free(v);
}

static void test_grow__overflow_refused(void **state)
{
	(void)state;
	struct big *v = NULL;
	size_t cap = 0;
	assert_true(ALLOC_GROW(v, 3, cap));
	struct big *before = v;
	size_t cap_before = cap;
	/* n * 4096 wraps size_t: refused, not turned into a small buffer */
	assert_false(ALLOC_GROW(v, SIZE_MAX / 1024, cap));
	assert_ptr_equal(v, before);
	assert_int_equal(cap, cap_before);
	assert_false(ALLOC_GROW(v, SIZE_MAX, cap));
	assert_false(REALLOC_ARRAY(v, (SIZE_MAX / sizeof *v) + 1));
	assert_ptr_equal(v, before);
	size_t bytes;
	assert_false(grow_mul(SIZE_MAX / 2 + 1, 2, &bytes));
	assert_true(grow_mul(SIZE_MAX / 2, 2, &bytes));
	assert_null(realloc_array(NULL, SIZE_MAX / 8 + 1, 8));
	/* the capacity saturates instead of wrapping */
	assert_int_equal(grow_cap(1, SIZE_MAX / 2 + 1), SIZE_MAX);
	assert_int_equal(grow_cap(1, 0), GROW_MIN);
	assert_int_equal(grow_cap(100, 8), 100);
	assert_int_equal(grow_cap(17, 16), 32);
	/* parallel arrays share one capacity */
	uint32_t *a = NULL;
	uint64_t *b = NULL;
	size_t n = 0, pcap = 0;
	for (uint32_t i = 0; i < 1000; i++) {
		if (n == pcap) {
			size_t nc = grow_cap(n + 1, pcap);
			assert_true(REALLOC_ARRAY(a, nc) && REALLOC_ARRAY(b, nc));
			pcap = nc;
		}
		a[n] = i;
		b[n++] = (uint64_t)i << 32;
	}
	assert_true(a[999] == 999 && b[999] == (uint64_t)999 << 32);
	free(a);
	free(b);
	free(v);
}

static void test_grow__sbuf_refuses_overflow(void **state)
{
	(void)state;
	struct sbuf sb = SBUF_INIT;
	sbuf_addstr(&sb, "abc");
	assert_false(sbuf_grow(&sb, SIZE_MAX - 1)); /* len + extra + NUL wraps */
	assert_true(sb.oom);
	sbuf_add(&sb, "d", 1); /* dropped: the buffer keeps what it had */
	assert_int_equal(sb.len, 3);
	assert_string_equal(sb.buf, "abc");
	sbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow__doubles_and_keeps_items),
		cmocka_unit_test(test_grow__overflow_refused),
		cmocka_unit_test(test_grow__sbuf_refuses_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
