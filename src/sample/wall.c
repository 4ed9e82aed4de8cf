/* wall.c — off-CPU accounting for --mode wall (see wall.h). Invariant: events are applied per thread in time
 * order; a waiting thread's time is sampled at the points of a Poisson process around the interval (each thread
 * its own, in its off-CPU time: docs/design.md §5.2), so its off-CPU ticks follow its waiting time and no rhythm
 * of its waits (3 ms here, 2 ms there) moves them from one wait to another, as whole intervals with a carried
 * remainder did. Memory: one slot per thread seen, plus the events of one drain round. */
#include "sample/wall.h"

#include <stdlib.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/rand.h"

enum wall_kind { EV_OUT, EV_IN, EV_EXIT };

struct wall_event {
	uint64_t time;
	uint64_t seq; /* arrival order, to keep the sort stable for equal times */
	uint32_t tid;
	uint32_t thread;
	uint32_t stack;
	uint8_t kind;
};

struct wall_thread {
	uint64_t out_time;
	uint64_t left;  /* off-CPU nanoseconds to its next tick (0: not drawn yet) */
	uint32_t thread;
	uint32_t stack;
	bool waiting;
};

struct wall {
	struct profile *p;
	uint64_t interval;
	struct wall_event *ev;
	size_t nev, capev;
	uint64_t seq;
	struct wall_thread *th;
	size_t nth, capth;
	struct hmap by_tid; /* tid -> index in th */
	struct rand64 rng;
};

struct wall *wall_new(struct profile *p, uint64_t interval_ns)
{
	struct wall *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->p = p;
	w->interval = interval_ns ? interval_ns : 5000000;
	rand64_seed(&w->rng, (uint64_t)(uintptr_t)w ^ ((uint64_t)interval_ns << 20));
	return w;
}

void wall_free(struct wall *w)
{
	if (!w)
		return;
	free(w->ev);
	free(w->th);
	hmap_release(&w->by_tid);
	free(w);
}

static bool push(struct wall *w, enum wall_kind kind, uint32_t tid, uint32_t thread, uint32_t stack, uint64_t time)
{
	if (!ALLOC_GROW(w->ev, w->nev + 1, w->capev))
		return false;
	w->ev[w->nev++] = (struct wall_event){ time, w->seq++, tid, thread, stack, (uint8_t)kind };
	return true;
}

bool wall_switch_out(struct wall *w, uint32_t tid, uint32_t thread, uint32_t stack, uint64_t time)
{
	return push(w, EV_OUT, tid, thread, stack, time);
}

bool wall_switch_in(struct wall *w, uint32_t tid, uint64_t time)
{
	return push(w, EV_IN, tid, 0, 0, time);
}

bool wall_exit(struct wall *w, uint32_t tid, uint64_t time)
{
	return push(w, EV_EXIT, tid, 0, 0, time);
}

static int by_time(const void *a, const void *b)
{
	const struct wall_event *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct wall_thread *thread_slot(struct wall *w, uint32_t tid)
{
	uint32_t idx;
	if (hmap_get(&w->by_tid, tid, &idx))
		return &w->th[idx];
	if (!ALLOC_GROW(w->th, w->nth + 1, w->capth))
		return NULL;
	if (!hmap_put(&w->by_tid, tid, (uint32_t)w->nth))
		return NULL;
	w->th[w->nth] = (struct wall_thread){ 0 };
	return &w->th[w->nth++];
}

/* Turns the wait of t from its switch-out until `until` into samples. */
static uint64_t account(struct wall *w, struct wall_thread *t, uint64_t until)
{
	if (!t->waiting || until <= t->out_time)
		return 0;
	uint64_t pos = t->out_time, ticks = 0;
	if (!t->left)
		t->left = rand64_interval_ns(&w->rng, w->interval);
	while (until - pos >= t->left) {
		pos += t->left;
		profile_add_sample(w->p, t->stack, t->thread, pos, 1);
		ticks++;
		t->left = rand64_interval_ns(&w->rng, w->interval);
	}
	t->left -= until - pos; /* > 0: the rest of the way to its next tick, in its next wait */
	t->waiting = false;
	return ticks;
}

uint64_t wall_flush(struct wall *w, uint64_t horizon)
{
	uint64_t ticks = 0;
	if (w->nev == 0)
		return 0;
	qsort(w->ev, w->nev, sizeof(*w->ev), by_time);
	size_t i = 0;
	for (; i < w->nev && w->ev[i].time < horizon; i++) {
		const struct wall_event *e = &w->ev[i];
		struct wall_thread *t = thread_slot(w, e->tid);
		if (!t)
			continue;
		switch (e->kind) {
		case EV_OUT:
			t->waiting = true;
			t->out_time = e->time;
			t->stack = e->stack;
			t->thread = e->thread;
			break;
		case EV_IN:
			ticks += account(w, t, e->time);
			break;
		case EV_EXIT:
			t->waiting = false;
			break;
		}
	}
	/* Keep the events at or after the horizon for the next round. */
	size_t rest = w->nev - i;
	for (size_t k = 0; k < rest; k++)
		w->ev[k] = w->ev[i + k];
	w->nev = rest;
	return ticks;
}

uint64_t wall_settle(struct wall *w, uint64_t upto)
{
	uint64_t ticks = 0;
	for (size_t i = 0; i < w->nth; i++) {
		struct wall_thread *t = &w->th[i];
		if (!t->waiting || upto <= t->out_time)
			continue;
		ticks += account(w, t, upto);
		t->waiting = true; /* still off the CPU: its wait goes on from here */
		t->out_time = upto;
	}
	return ticks;
}

uint64_t wall_finish(struct wall *w, uint64_t end_ns)
{
	uint64_t ticks = wall_flush(w, UINT64_MAX);
	for (size_t i = 0; i < w->nth; i++)
		ticks += account(w, &w->th[i], end_ns);
	return ticks;
}
