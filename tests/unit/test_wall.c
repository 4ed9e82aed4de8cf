/* test_wall.c — off-CPU accounting for --mode wall: switch events that arrive out of time order (from different
 * CPUs' rings) are paired in time order; waits become one sample per interval, remainders carry over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "profile/profile.h"
#include "sample/wall.h"

#define MS 1000000ULL

static uint64_t weight_of(struct profile *p, uint32_t stack)
{
	size_t n;
	const struct profile_count *c = profile_counts(p, &n);
	uint64_t w = 0;
	for (size_t i = 0; i < n; i++)
		if (c[i].stack == stack)
			w += c[i].weight;
	return w;
}

static void test_wall__pairs_out_of_order_events(void **state)
{
	struct profile *p = profile_new();
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, "nanosleep");
	uint32_t stack = profile_stack(p, PROFILE_ROOT, profile_frame(p, &f));
	uint32_t thread = profile_thread(p, 1, 1, "main");
	struct wall *w = wall_new(p, 1 * MS);
	assert_non_null(w);
	/* The switch-in (read from CPU 1's ring) arrives before the switch-out (CPU 0's ring). */
	assert_true(wall_switch_in(w, 1, 105 * MS + 10));
	assert_true(wall_switch_out(w, 1, thread, stack, 100 * MS));
	assert_int_equal(wall_flush(w, 200 * MS), 5);
	assert_int_equal(weight_of(p, stack), 5);
	/* The 10 ns left over carry into the next wait: 0.99999 ms + 10 ns is one more tick. */
	assert_true(wall_switch_out(w, 1, thread, stack, 300 * MS));
	assert_true(wall_switch_in(w, 1, 301 * MS - 5));
	assert_int_equal(wall_flush(w, 400 * MS), 1);
	wall_free(w);
	profile_free(p);
}

static void test_wall__events_past_the_horizon_wait(void **state)
{
	struct profile *p = profile_new();
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, "read");
	uint32_t stack = profile_stack(p, PROFILE_ROOT, profile_frame(p, &f));
	uint32_t thread = profile_thread(p, 1, 2, "worker");
	struct wall *w = wall_new(p, 2 * MS);
	assert_true(wall_switch_out(w, 2, thread, stack, 10 * MS));
	assert_true(wall_switch_in(w, 2, 30 * MS));
	assert_int_equal(wall_flush(w, 20 * MS), 0); /* the switch-in is not final yet */
	assert_int_equal(wall_flush(w, 40 * MS), 10);
	wall_free(w);
	profile_free(p);
}

static void test_wall__exit_and_finish(void **state)
{
	struct profile *p = profile_new();
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, "futex_wait");
	uint32_t stack = profile_stack(p, PROFILE_ROOT, profile_frame(p, &f));
	uint32_t a = profile_thread(p, 1, 3, "a"), b = profile_thread(p, 1, 4, "b");
	struct wall *w = wall_new(p, 1 * MS);
	assert_true(wall_switch_out(w, 3, a, stack, 0));
	assert_true(wall_exit(w, 3, 2 * MS)); /* an exited thread stops waiting, without samples */
	assert_true(wall_switch_out(w, 4, b, stack, 5 * MS));
	/* b still waits when sampling ends: counted until the end. */
	assert_int_equal(wall_finish(w, 12 * MS), 7);
	size_t n;
	const struct profile_count *c = profile_counts(p, &n);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].thread, b);
	wall_free(w);
	profile_free(p);
}

/* A live view settles a thread that waits the whole session at each read: the ticks come as it waits, and the
 * total over the wait is what one final count gives (the remainder carries across the reads). */
static void test_wall__settle_counts_a_wait_as_it_goes(void **state)
{
	struct profile *p = profile_new();
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, "sigsuspend");
	uint32_t stack = profile_stack(p, PROFILE_ROOT, profile_frame(p, &f));
	uint32_t thread = profile_thread(p, 1, 3, "waiter");
	struct wall *w = wall_new(p, 2 * MS);
	assert_true(wall_switch_out(w, 3, thread, stack, 0));
	assert_int_equal(wall_flush(w, 5 * MS), 0);       /* still waiting: nothing until it wakes ... */
	assert_int_equal(wall_settle(w, 5 * MS), 2);      /* ... unless settled: 5 ms is two ticks, 1 ms carried */
	assert_int_equal(wall_settle(w, 5 * MS), 0);      /* the same horizon twice counts nothing twice */
	assert_int_equal(wall_settle(w, 8 * MS), 2);      /* 1 + 3 ms */
	assert_true(wall_switch_in(w, 3, 20 * MS));
	assert_int_equal(wall_flush(w, 30 * MS), 6);      /* 8..20 ms */
	assert_int_equal(weight_of(p, stack), 10);        /* 20 ms of waiting, as without the settles */
	assert_int_equal(wall_settle(w, 40 * MS), 0);     /* awake: nothing to settle */
	wall_free(w);
	profile_free(p);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wall__pairs_out_of_order_events),
		cmocka_unit_test(test_wall__events_past_the_horizon_wait),
		cmocka_unit_test(test_wall__exit_and_finish),
		cmocka_unit_test(test_wall__settle_counts_a_wait_as_it_goes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
