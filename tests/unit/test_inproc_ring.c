/* test_inproc_ring.c — the shared ring between the in-process sampler and plumb: with several producer threads
 * racing (as signal handlers on different threads do) and one consumer, every published sample arrives exactly
 * once and whole, a full ring drops and counts instead of waiting, and positions wrap around the slots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sample/inproc_ring.h"

#define NSLOTS 64
#define PAYLOAD 256
#define SLOT_SIZE ((uint32_t)((sizeof(struct inproc_slot) + PAYLOAD + 63) & ~(size_t)63))

static struct inproc_hdr *ring_new(void)
{
	struct inproc_hdr *h = aligned_alloc(64, INPROC_HDR_SIZE + (size_t)NSLOTS * SLOT_SIZE);
	assert_non_null(h);
	memset(h, 0, INPROC_HDR_SIZE + (size_t)NSLOTS * SLOT_SIZE);
	inproc_ring_init(h, INPROC_HDR_SIZE, NSLOTS, SLOT_SIZE);
	return h;
}

static atomic_int finished;

struct producer {
	struct inproc_hdr *h;
	uint32_t id;
	uint32_t count;
	uint32_t published;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	for (uint32_t i = 0; i < p->count; i++) {
		uint64_t pos = 0;
		struct inproc_slot *s = inproc_claim(p->h, &pos);
		if (!s) {
			sched_yield(); /* full: dropped and counted; let the consumer run on a busy machine */
			continue;
		}
		s->tid = p->id;
		s->pid = i;
		s->stack_len = PAYLOAD;
		memset(s + 1, (int)(p->id * 31 + i) & 0xff, PAYLOAD);
		inproc_publish(s, pos);
		p->published++;
	}
	atomic_fetch_add(&finished, 1);
	return NULL;
}

static void test_inproc_ring__racing_producers_one_consumer(void **state)
{
	(void)state;
	struct inproc_hdr *h = ring_new();
	enum { NPROD = 4, PER = 200000 };
	struct producer prod[NPROD];
	pthread_t t[NPROD];
	for (uint32_t i = 0; i < NPROD; i++) {
		prod[i] = (struct producer){ h, i, PER, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, produce, &prod[i]), 0);
	}
	uint32_t *next = calloc(NPROD, sizeof *next); /* per producer, samples arrive in its own order */
	uint64_t tail = 0, got = 0;
	for (;;) {
		struct inproc_slot *s = inproc_peek(h, tail);
		if (!s) {
			/* once every producer is done, every claimed slot has been published */
			if (atomic_load(&finished) == NPROD && atomic_load(&h->head) == tail)
				break;
			continue;
		}
		assert_true(s->tid < NPROD);
		assert_true(s->pid >= next[s->tid]); /* never twice, never out of its producer's order */
		next[s->tid] = s->pid + 1;
		assert_int_equal(s->stack_len, PAYLOAD);
		const uint8_t *b = (const uint8_t *)(s + 1);
		uint8_t want = (uint8_t)((s->tid * 31 + s->pid) & 0xff);
		for (int k = 0; k < PAYLOAD; k++)
			assert_int_equal(b[k], want); /* whole: published only after it was filled */
		inproc_release(h, s, tail);
		tail++;
		got++;
	}
	uint64_t published = 0;
	for (int i = 0; i < NPROD; i++) {
		pthread_join(t[i], NULL);
		published += prod[i].published;
	}
	assert_int_equal(got, published);
	assert_int_equal(published + atomic_load(&h->lost), (uint64_t)NPROD * PER);
	assert_true(tail > 2 * NSLOTS); /* positions wrapped around the slots */
	free(next);
	free(h);
}

static void test_inproc_ring__full_ring_drops_and_counts(void **state)
{
	(void)state;
	struct inproc_hdr *h = ring_new();
	uint64_t pos = 0;
	for (int i = 0; i < NSLOTS; i++) {
		struct inproc_slot *s = inproc_claim(h, &pos);
		assert_non_null(s);
		assert_int_equal(pos, (uint64_t)i);
		inproc_publish(s, pos);
	}
	assert_null(inproc_claim(h, &pos));
	assert_null(inproc_claim(h, &pos));
	assert_int_equal(atomic_load(&h->lost), 2);
	/* a claimed but unpublished slot blocks the consumer at that position, not before it */
	struct inproc_slot *s = inproc_peek(h, 0);
	assert_non_null(s);
	inproc_release(h, s, 0);
	struct inproc_slot *c = inproc_claim(h, &pos);
	assert_non_null(c);
	assert_int_equal(pos, NSLOTS);
	for (uint64_t t = 1; t < NSLOTS; t++) {
		struct inproc_slot *x = inproc_peek(h, t);
		assert_non_null(x);
		inproc_release(h, x, t);
	}
	assert_null(inproc_peek(h, NSLOTS));
	inproc_publish(c, pos);
	assert_ptr_equal(inproc_peek(h, NSLOTS), c);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inproc_ring__racing_producers_one_consumer),
		cmocka_unit_test(test_inproc_ring__full_ring_drops_and_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
