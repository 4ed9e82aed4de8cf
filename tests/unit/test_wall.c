/* test_wall.c — off-CPU accounting for --mode wall: switch events that arrive out of time order (from different
 * CPUs' rings) are paired in time order; waits become samples at the points of a Poisson process of the
 * interval's mean, so their count follows the waiting time (within 5 Poisson standard deviations: a false
 * failure once in 3 million runs) and a rhythm of waits does not move samples from one wait to another. */
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

/* |n - mean| within 5 standard deviations of a Poisson count */
static void assert_poisson(uint64_t n, double mean)
{
	double d = (double)n - mean;
	if (d * d > 25.0 * mean)
		fail_msg("%llu samples, %.1f expected", (unsigned long long)n, mean);
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
	/* The switch-in (read from CPU 1's ring) arrives before the switch-out (CPU 0's ring): 2 s of waiting. */
	assert_true(wall_switch_in(w, 1, 2100 * MS));
	assert_true(wall_switch_out(w, 1, thread, stack, 100 * MS));
	uint64_t n = wall_flush(w, 3000 * MS);
	assert_poisson(n, 2000);
	assert_int_equal(weight_of(p, stack), n);
	/* every sample lies inside the wait */
	size_t nt;
	profile_keep_timeline(p, true);
	assert_true(wall_switch_out(w, 1, thread, stack, 4000 * MS));
	assert_true(wall_switch_in(w, 1, 4100 * MS));
	n = wall_flush(w, 5000 * MS);
	const struct profile_sample *t = profile_timeline(p, &nt);
	assert_int_equal(nt, n);
	for (size_t i = 0; i < nt; i++)
		assert_true(t[i].time_ns >= 4000 * MS && t[i].time_ns <= 4100 * MS);
	wall_free(w);
	profile_free(p);
}

/* Waits of 3 ms in one place and 2 ms in another, alternately, at a 5 ms interval: whole intervals with a carried
 * remainder gave every sample to the second; a Poisson process gives each its share of the time, 60/40. */
static void test_wall__a_rhythm_of_waits_keeps_its_shares(void **state)
{
	struct profile *p = profile_new();
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, "read");
	uint32_t sa = profile_stack(p, PROFILE_ROOT, profile_frame(p, &f));
	f.func = profile_intern_cstr(p, "poll");
	uint32_t sb = profile_stack(p, PROFILE_ROOT, profile_frame(p, &f));
	uint32_t thread = profile_thread(p, 1, 2, "worker");
	struct wall *w = wall_new(p, 5 * MS);
	uint64_t t = 0;
	for (int i = 0; i < 4000; i++) {
		assert_true(wall_switch_out(w, 2, thread, sa, t));
		assert_true(wall_switch_in(w, 2, t + 3 * MS));
		assert_true(wall_switch_out(w, 2, thread, sb, t + 3 * MS + 1000));
		assert_true(wall_switch_in(w, 2, t + 5 * MS));
		t += 5 * MS;
	}
	uint64_t n = wall_flush(w, t + 1);
	assert_poisson(weight_of(p, sa), 0.6 * (double)n);
	assert_poisson(weight_of(p, sb), 0.4 * (double)n);
	assert_poisson(n, 4000);
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
	struct wall *w = wall_new(p, 1 * MS);
	assert_true(wall_switch_out(w, 2, thread, stack, 10 * MS));
	assert_true(wall_switch_in(w, 2, 1010 * MS));
	assert_int_equal(wall_flush(w, 20 * MS), 0); /* the switch-in is not final yet */
	assert_poisson(wall_flush(w, 2000 * MS), 1000);
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
	assert_poisson(wall_finish(w, 1005 * MS), 1000);
	size_t n;
	const struct profile_count *c = profile_counts(p, &n);
	assert_int_equal(n, 1);
	assert_int_equal(c[0].thread, b);
	wall_free(w);
	profile_free(p);
}

/* A live view settles a thread that waits the whole session at each read: the ticks come as it waits (each
 * stretch of the wait gets its share of the thread's off-CPU Poisson process, whose next point carries across
 * the reads), a horizon settled twice counts nothing twice, and the whole wait gets what one final count gives. */
static void test_wall__settle_counts_a_wait_as_it_goes(void **state)
{
	struct profile *p = profile_new();
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, "sigsuspend");
	uint32_t stack = profile_stack(p, PROFILE_ROOT, profile_frame(p, &f));
	uint32_t thread = profile_thread(p, 1, 3, "waiter");
	struct wall *w = wall_new(p, 1 * MS);
	assert_true(wall_switch_out(w, 3, thread, stack, 0));
	assert_int_equal(wall_flush(w, 1000 * MS), 0);    /* still waiting: nothing until it wakes ... */
	uint64_t first = wall_settle(w, 1000 * MS);       /* ... unless settled: 1 s of waiting so far */
	assert_poisson(first, 1000);
	assert_int_equal(weight_of(p, stack), first);
	assert_int_equal(wall_settle(w, 1000 * MS), 0);   /* the same horizon twice counts nothing twice */
	uint64_t second = wall_settle(w, 1500 * MS);      /* the next 0.5 s */
	assert_poisson(second, 500);
	assert_true(wall_switch_in(w, 3, 3000 * MS));
	uint64_t last = wall_flush(w, 3001 * MS);         /* 1.5 .. 3 s, when it wakes */
	assert_poisson(last, 1500);
	assert_int_equal(weight_of(p, stack), first + second + last);
	assert_poisson(first + second + last, 3000);      /* 3 s of waiting, as without the settles */
	assert_int_equal(wall_settle(w, 4000 * MS), 0);   /* awake: nothing to settle */
	assert_int_equal(wall_finish(w, 5000 * MS), 0);
	wall_free(w);
	profile_free(p);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wall__pairs_out_of_order_events),
		cmocka_unit_test(test_wall__a_rhythm_of_waits_keeps_its_shares),
		cmocka_unit_test(test_wall__events_past_the_horizon_wait),
		cmocka_unit_test(test_wall__exit_and_finish),
		cmocka_unit_test(test_wall__settle_counts_a_wait_as_it_goes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
