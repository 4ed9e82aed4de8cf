/* perf_redraw.c — the redraw thread (perf_redraw.h). */
#include "sample/perf_redraw.h"

#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* A sample's first fields: PERF_SAMPLE_IDENTIFIER, IP, TID (pid, tid), then TIME. */
static void on_peek(void *ctx, uint32_t type, const unsigned char *body, size_t len)
{
	struct perf_redraw *r = ctx;
	if (type != PERF_RECORD_SAMPLE || len < 32)
		return;
	uint64_t id, time;
	uint32_t tid;
	memcpy(&id, body, sizeof id);
	memcpy(&tid, body + 20, sizeof tid);
	memcpy(&time, body + 24, sizeof time);
	perf_periods_sampled(r->periods, id, tid, time);
}

static void *redraw_main(void *arg)
{
	struct perf_redraw *r = arg;
	struct sched_param sp = { .sched_priority = 1 };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* refused without the privilege: fine */
	struct pollfd pfds[PERF_REDRAW_MAX_RINGS];
	nfds_t n = 0;
	for (size_t i = 0; i < r->nrings && n < PERF_REDRAW_MAX_RINGS; i++)
		if (r->rings[i].meta)
			pfds[n++] = (struct pollfd){ .fd = r->rings[i].fd, .events = POLLIN };
	while (!atomic_load(&r->quit)) {
		poll(pfds, n, 20);
		bool filling = false;
		for (size_t i = 0; i < r->nrings; i++) {
			struct perf_ring *ring = &r->rings[i];
			perf_ring_peek(ring, on_peek, r);
			/* pass the wake-ups on when a quarter of a ring waits, as its watermark did (a switch every few
			 * microseconds in wall mode) */
			if (ring->meta && __atomic_load_n(&ring->meta->data_head, __ATOMIC_ACQUIRE) - ring->meta->data_tail >
						  ring->data_size / 4)
				filling = true;
		}
		uint64_t one = 1;
		if (filling && write(r->wake_fd, &one, sizeof one) < 0)
			continue; /* already signalled (the counter is full): the reader is awake anyway */
	}
	return NULL;
}

void perf_redraw_init(struct perf_redraw *r)
{
	memset(r, 0, sizeof *r);
	r->wake_fd = -1;
}

static void set_peeking(struct perf_redraw *r, bool on)
{
	for (size_t i = 0; i < r->nrings; i++)
		__atomic_store_n(&r->rings[i].peeking, on, __ATOMIC_RELEASE);
}

bool perf_redraw_start(struct perf_redraw *r, struct perf_ring *rings, size_t nrings, struct perf_periods *pp)
{
	if (r->running || nrings > PERF_REDRAW_MAX_RINGS)
		return false;
	r->rings = rings;
	r->nrings = nrings;
	r->periods = pp;
	r->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->wake_fd < 0)
		return false;
	set_peeking(r, true);
	atomic_store(&r->quit, false);
	pp->cpu_redraw = true; /* before the thread reads it */
	r->running = pthread_create(&r->thread, NULL, redraw_main, r) == 0;
	if (!r->running) {
		pp->cpu_redraw = false;
		set_peeking(r, false);
		close(r->wake_fd);
		r->wake_fd = -1;
		return false;
	}
	return true;
}

void perf_redraw_stop(struct perf_redraw *r)
{
	if (!r->running)
		return;
	atomic_store(&r->quit, true);
	pthread_join(r->thread, NULL);
	r->running = false;
	r->periods->cpu_redraw = false;
	set_peeking(r, false);
	close(r->wake_fd);
	r->wake_fd = -1;
}
