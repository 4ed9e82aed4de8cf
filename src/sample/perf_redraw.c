/* perf_redraw.c — the redraw threads, one on each CPU (perf_redraw.h). */
#include "sample/perf_redraw.h"

#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
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
	pthread_mutex_lock(&r->lock); /* the draws and counters are shared; each event is one CPU's */
	perf_periods_sampled(r->periods, id, tid, time);
	pthread_mutex_unlock(&r->lock);
}

static void *redraw_main(void *arg)
{
	struct perf_redraw_cpu *c = arg;
	struct perf_redraw *r = c->r;
	struct perf_ring *ring = &r->rings[c->ring];
	cpu_set_t on;
	CPU_ZERO(&on);
	CPU_SET(c->ring, &on);
	sched_setaffinity(0, sizeof on, &on); /* refused (a cpuset without it): it works from elsewhere */
	struct sched_param sp = { .sched_priority = 1 };
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp); /* refused without the privilege: fine */
	struct pollfd pfd = { .fd = ring->fd, .events = POLLIN };
	bool hup = false;
	while (!atomic_load(&r->quit)) {
		/* the ring's own event ended (its thread or the target exited): poll returns at once from then on, and
		 * spinning at a real-time priority would keep the reader off this CPU; other threads' samples may still
		 * come, so it looks every millisecond */
		if (hup)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		else if (poll(&pfd, 1, 20) > 0 && (pfd.revents & (POLLHUP | POLLERR)))
			hup = true;
		perf_ring_peek(ring, on_peek, r);
		/* pass the wake-ups on when a quarter of the ring waits, as its watermark did (a switch every few
		 * microseconds in wall mode) */
		uint64_t one = 1;
		if (__atomic_load_n(&ring->meta->data_head, __ATOMIC_ACQUIRE) - ring->meta->data_tail > ring->data_size / 4 &&
		    write(r->wake_fd, &one, sizeof one) < 0)
			continue; /* already signalled (the counter is full): the reader is awake anyway */
	}
	return NULL;
}

void perf_redraw_init(struct perf_redraw *r)
{
	memset(r, 0, sizeof *r);
	pthread_mutex_init(&r->lock, NULL);
	r->wake_fd = -1;
}

static void set_peeking(struct perf_redraw *r, bool on)
{
	for (size_t i = 0; i < r->nrings; i++)
		__atomic_store_n(&r->rings[i].peeking, on, __ATOMIC_RELEASE);
}

static void stop_threads(struct perf_redraw *r)
{
	atomic_store(&r->quit, true);
	for (size_t i = 0; i < r->nrings; i++)
		if (r->cpus[i].running) {
			pthread_join(r->cpus[i].thread, NULL);
			r->cpus[i].running = false;
		}
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
	pp->cpu_redraw = true; /* before the threads read it */
	for (size_t i = 0; i < nrings; i++) {
		struct perf_redraw_cpu *c = &r->cpus[i];
		*c = (struct perf_redraw_cpu){ .r = r, .ring = i };
		if (rings[i].meta) /* an offline CPU has none */
			c->running = pthread_create(&c->thread, NULL, redraw_main, c) == 0;
		if (rings[i].meta && !c->running) { /* all or none: a CPU left out would keep its periods */
			stop_threads(r);
			pp->cpu_redraw = false;
			set_peeking(r, false);
			close(r->wake_fd);
			r->wake_fd = -1;
			return false;
		}
	}
	r->running = true;
	return true;
}

void perf_redraw_stop(struct perf_redraw *r)
{
	if (!r->running)
		return;
	stop_threads(r);
	r->running = false;
	r->periods->cpu_redraw = false;
	set_peeking(r, false);
	close(r->wake_fd);
	r->wake_fd = -1;
}
