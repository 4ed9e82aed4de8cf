/* test_live.c — the live tables (analyze/live.h) on a raw profile that grows between updates: the window is what
 * was added since the update before, the session everything, frames are symbolized only when a view needs
 * them and once, views narrow to one process, the process table sums a process's threads, and a copy taken for
 * another thread keeps the raw profile's ids. Frames here are named already, so they pass the symbolizer
 * unchanged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "analyze/analyze.h"
#include "analyze/live.h"
#include "profile/profile.h"

static uint32_t named(struct profile *p, const char *func)
{
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, func);
	f.file = profile_intern_cstr(p, "/src/app.c");
	f.module = profile_intern_cstr(p, "/bin/app");
	f.line = 3;
	return profile_frame(p, &f);
}

static void add(struct profile *p, uint32_t thread, const char *a, const char *b, uint64_t w)
{
	uint32_t frames[2] = { named(p, a), named(p, b) };
	assert_true(profile_add_sample(p, profile_stack_from(p, frames, 2), thread, 0, w));
}

/* The leaf count of function func (its label starts with func) in a view. */
static uint64_t leaf(const struct profile *view, const char *func)
{
	struct hot_summary *s = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(hot_analyze(view, NULL, &s, &e), PLUMB_OK);
	uint64_t n = 0;
	const struct hot_table *t = &s->all.tables[HOT_LEAF];
	for (size_t i = 0; i < t->n; i++)
		if (strncmp(t->rows[i].name, func, strlen(func)) == 0 && t->rows[i].name[strlen(func)] == ' ')
			n += t->rows[i].count;
	hot_summary_free(s);
	return n;
}

static uint64_t view_leaf(struct live *l, bool window, uint32_t pid, const char *func)
{
	struct profile *v = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(live_view(l, window, pid, &v, &e), PLUMB_OK);
	uint64_t n = leaf(v, func);
	profile_free(v);
	return n;
}

static void test_live__window_and_session(void **state)
{
	(void)state;
	struct profile *raw = profile_new();
	struct live *l = live_new(NULL);
	struct perr e = PERR_INIT;
	uint32_t t1 = profile_thread(raw, 10, 10, "app"), t2 = profile_thread(raw, 10, 11, "worker");
	uint32_t t3 = profile_thread(raw, 20, 20, "other");
	add(raw, t1, "main", "work_a", 5);
	add(raw, t2, "main", "work_b", 3);
	assert_int_equal(live_update(l, raw, &e), PLUMB_OK);
	assert_int_equal(live_window_total(l), 8);
	assert_int_equal(view_leaf(l, true, 0, "work_a"), 5);
	assert_int_equal(view_leaf(l, false, 0, "work_b"), 3);

	/* the second window holds only what grew, the session all of it */
	add(raw, t1, "main", "work_a", 1);
	add(raw, t3, "main", "work_c", 4);
	assert_int_equal(live_update(l, raw, &e), PLUMB_OK);
	assert_int_equal(live_window_total(l), 5);
	assert_int_equal(view_leaf(l, true, 0, "work_a"), 1);
	assert_int_equal(view_leaf(l, true, 0, "work_b"), 0);
	assert_int_equal(view_leaf(l, true, 0, "work_c"), 4);
	assert_int_equal(view_leaf(l, false, 0, "work_a"), 6);
	assert_int_equal(live_session_total(l), 13);

	/* one process: its threads, none of the others' */
	assert_int_equal(view_leaf(l, false, 10, "work_a"), 6);
	assert_int_equal(view_leaf(l, false, 10, "work_b"), 3);
	assert_int_equal(view_leaf(l, false, 10, "work_c"), 0);
	assert_int_equal(view_leaf(l, true, 20, "work_c"), 4);
	assert_int_equal(view_leaf(l, true, 10, "work_b"), 0);

	/* an update with nothing new is an empty window; nothing is counted twice */
	assert_int_equal(live_update(l, raw, &e), PLUMB_OK);
	assert_int_equal(live_window_total(l), 0);
	assert_int_equal(live_session_total(l), 13);
	live_free(l);
	profile_free(raw);
}

static void test_live__processes(void **state)
{
	(void)state;
	struct profile *raw = profile_new();
	struct live *l = live_new(NULL);
	struct perr e = PERR_INIT;
	uint32_t t1 = profile_thread(raw, 10, 11, "worker"), t2 = profile_thread(raw, 10, 10, "app");
	uint32_t t3 = profile_thread(raw, 20, 20, "other");
	add(raw, t1, "main", "work_a", 2);
	add(raw, t2, "main", "work_b", 2);
	add(raw, t3, "main", "work_c", 9);
	assert_int_equal(live_update(l, raw, &e), PLUMB_OK);
	add(raw, t1, "main", "work_a", 7);
	assert_int_equal(live_update(l, raw, &e), PLUMB_OK);
	struct live_proc *procs = NULL;
	size_t n = 0;
	assert_int_equal(live_processes(l, &procs, &n, &e), PLUMB_OK);
	assert_int_equal(n, 2);
	/* the last window first: process 10 grew by 7, process 20 by nothing */
	assert_int_equal(procs[0].pid, 10);
	assert_string_equal(procs[0].name, "app"); /* named by its main thread */
	assert_int_equal(procs[0].window, 7);
	assert_int_equal(procs[0].session, 11);
	assert_int_equal(procs[1].pid, 20);
	assert_int_equal(procs[1].window, 0);
	assert_int_equal(procs[1].session, 9);
	free(procs);
	live_free(l);
	profile_free(raw);
}

/* Frames are symbolized when a view first needs them, once: the process view needs none, one process's view
 * only that process's. */
static void test_live__frames_resolved_lazily_and_once(void **state)
{
	(void)state;
	struct profile *raw = profile_new();
	struct live *l = live_new(NULL);
	struct perr e = PERR_INIT;
	uint32_t t1 = profile_thread(raw, 1, 1, "app"), t2 = profile_thread(raw, 2, 2, "other");
	add(raw, t1, "main", "f", 1);
	add(raw, t2, "start", "g", 1);
	assert_int_equal(live_update(l, raw, &e), PLUMB_OK);
	struct live_proc *procs = NULL;
	size_t n = 0;
	assert_int_equal(live_processes(l, &procs, &n, &e), PLUMB_OK);
	free(procs);
	assert_int_equal(n, 2);
	assert_int_equal(live_resolved(l), 0);
	assert_int_equal(view_leaf(l, false, 1, "f"), 1);
	assert_int_equal(live_resolved(l), 2); /* main and f, not start and g */
	for (int i = 0; i < 5; i++) {
		add(raw, t1, "main", "f", 1);
		assert_int_equal(live_update(l, raw, &e), PLUMB_OK);
		assert_int_equal(view_leaf(l, true, 0, "f"), 1);
	}
	assert_int_equal(live_resolved(l), 2);
	assert_int_equal(view_leaf(l, false, 0, "g"), 1);
	assert_int_equal(live_resolved(l), 4);
	assert_int_equal(live_session_total(l), 7);
	live_free(l);
	profile_free(raw);
}

/* The copy another thread reads keeps the raw profile's ids, so the session read through copies taken now and
 * then is the session of the raw profile. */
static void test_live__copy_keeps_ids(void **state)
{
	(void)state;
	struct profile *raw = profile_new();
	struct live_copy *c = live_copy_new();
	struct live *l = live_new(NULL);
	struct perr e = PERR_INIT;
	uint32_t t1 = profile_thread(raw, 1, 1, "app");
	add(raw, t1, "main", "f", 2);
	assert_int_equal(live_copy_take(c, raw, &e), PLUMB_OK);
	assert_int_equal(live_update(l, live_copy_profile(c), &e), PLUMB_OK);
	assert_int_equal(view_leaf(l, true, 0, "f"), 2);
	uint32_t t2 = profile_thread(raw, 1, 2, "worker");
	add(raw, t2, "main", "h", 3);
	add(raw, t1, "main", "f", 1);
	profile_thread(raw, 1, 1, "renamed");
	assert_int_equal(live_copy_take(c, raw, &e), PLUMB_OK);
	const struct profile *cp = live_copy_profile(c);
	assert_int_equal(profile_nframes(cp), profile_nframes(raw));
	assert_int_equal(profile_nstacks(cp), profile_nstacks(raw));
	assert_int_equal(profile_nthreads(cp), profile_nthreads(raw));
	assert_string_equal(profile_str(cp, profile_thread_get(cp, t1)->name), "renamed");
	assert_int_equal(live_update(l, cp, &e), PLUMB_OK);
	assert_int_equal(view_leaf(l, true, 0, "f"), 1);
	assert_int_equal(view_leaf(l, true, 0, "h"), 3);
	assert_int_equal(view_leaf(l, false, 0, "f"), 3);
	assert_int_equal(live_session_total(l), 6);
	live_free(l);
	live_copy_free(c);
	profile_free(raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live__window_and_session),
		cmocka_unit_test(test_live__processes),
		cmocka_unit_test(test_live__frames_resolved_lazily_and_once),
		cmocka_unit_test(test_live__copy_keeps_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
