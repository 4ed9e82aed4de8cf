/* perf_stack.c — a perf sample's stack as raw frames, and the sampling attributes (perf_stack.h). The
 * callchain is split and the user part unwound by unwind_sample_stack (unwind/callchain.c, shared with the perf.data
 * reader); the frames go out outermost first, so both parts are walked backwards. */
#include "sample/perf_stack.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow.h"

#include "symbol/maps.h"
#include "unwind/unwind.h"

void perf_attr_cpu_clock(struct perf_event_attr *attr, const struct record_opts *opts, uint64_t sample_type,
			 bool kernel)
{
	memset(attr, 0, sizeof *attr);
	attr->size = sizeof *attr;
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = backend_interval_ns(opts);
	attr->sample_type = sample_type;
	attr->disabled = 1;
	perf_attr_task_records(attr, true);
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->exclude_kernel = kernel ? 0 : 1;
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = kernel ? 0 : 1;
	if (opts->unwind == UNWIND_DWARF) {
		attr->exclude_callchain_user = 1;
		attr->sample_regs_user = UNWIND_REGS_MASK;
		attr->sample_stack_user = (uint32_t)opts->stack_bytes;
	}
	attr->watermark = 1;
}

void perf_attr_task_records(struct perf_event_attr *attr, bool on)
{
	attr->mmap = attr->mmap2 = on;
	attr->comm = attr->comm_exec = on;
	attr->task = on;
}

void perf_periods_init(struct perf_periods *pp, uint64_t mean_ns, uint64_t seed)
{
	memset(pp, 0, sizeof *pp);
	rand64_seed(&pp->rng, seed);
	pp->mean_ns = mean_ns ? mean_ns : 5000000;
}

void perf_periods_release(struct perf_periods *pp)
{
	hmap_release(&pp->by_id);
	free(pp->ev);
	pp->ev = NULL;
	pp->n = pp->cap = 0;
}

uint64_t perf_periods_draw(struct perf_periods *pp)
{
	return rand64_interval_ns(&pp->rng, pp->mean_ns);
}

bool perf_periods_add(struct perf_periods *pp, int fd, int32_t tid, uint64_t period)
{
	uint64_t id;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0 || !ALLOC_GROW(pp->ev, pp->n + 1, pp->cap) ||
	    !hmap_put(&pp->by_id, id, (uint32_t)pp->n))
		return false;
	pp->ev[pp->n++] = (struct perf_period_event){ fd, tid, period ? period : 1, 0, 0 };
	return true;
}

bool perf_periods_owner(const struct perf_periods *pp, uint64_t id, int32_t *tid)
{
	uint32_t i;
	if (!hmap_get(&pp->by_id, id, &i))
		return false;
	*tid = pp->ev[i].tid;
	return true;
}

/* How far event ev counted since it last sampled: its count (read()) past the last fire, as it fires every
 * `period` of it from when it was given that period (an inherited parent's count also takes in its children's,
 * which only makes this a random amount; where per-CPU events exist the per-thread ones are not inherited). The
 * redraw comes a kernel tick late or more: a thread's event counted only the CPU time the thread had meanwhile,
 * and taking off the wall time would shorten its next period for nothing; a CPU's event counts that CPU's time. */
static uint64_t counted_since(struct perf_period_event *ev, uint64_t *count)
{
	*count = 0;
	if (read(ev->fd, count, sizeof *count) != (ssize_t)sizeof *count)
		return 0;
	uint64_t since = *count >= ev->armed_at ? *count - ev->armed_at : 0;
	return since % ev->period;
}

/* How long ago a CPU's event last fired, from the time of one of its samples: its clock is that CPU's time
 * (CLOCK_MONOTONIC, perf_attr_cpu_clock), so no read() is needed — a read of a per-CPU event is an IPI to its
 * CPU, which interrupts whatever runs there (with the period's ioctl, two per sample: at 1 kHz the target lost
 * 4-6% of its time to them, and its samples showed it as kernel time). */
static uint64_t cpu_since(const struct perf_period_event *ev, uint64_t time_ns)
{
	uint64_t now = mono_ns();
	return now > time_ns && ev->period ? (now - time_ns) % ev->period : 0;
}

/* The event's next period, which the kernel repeats until the next redraw: a thread's event is redrawn at each
 * of its samples, a CPU's at every PERF_PERIODS_CPU_BATCH-th, so the time since it fired is taken off a batch-th
 * at a time, from each interval of the batch (taken off each whole, it shortened all four: a CPU's event at
 * 1-2 ms read a CPU-bound process 3-8% over its CPU time under --all). */
static void redraw(struct perf_periods *pp, struct perf_period_event *ev, uint64_t time_ns)
{
	uint64_t count = 0, late = ev->tid < 0 ? cpu_since(ev, time_ns) / PERF_PERIODS_CPU_BATCH
					       : counted_since(ev, &count);
	uint64_t period = perf_periods_draw(pp);
	/* the time since the event fired is taken off, so the next sample comes a drawn interval after the last one;
	 * never below a quarter of the interval, since the kernel repeats this period until the next redraw and a
	 * short one repeated while the redraw thread is late would burst. (Drawing afresh instead, as before, lost
	 * the time since the fire whenever a draw fell below it plus half the interval: about a third of the samples
	 * at 1 kHz, where that time is 0.1-0.3 ms, and the sampler read 0.87-0.93 of a thread's CPU time.) */
	uint64_t floor = pp->mean_ns / 4;
	period = period > late + floor ? period - late : floor;
	if (ioctl(ev->fd, PERF_EVENT_IOC_PERIOD, &period) != 0) /* an event that is gone keeps its old one */
		return;
	ev->armed_at = count;
	ev->period = period;
	pp->redraws++;
}

void perf_periods_sampled(struct perf_periods *pp, uint64_t id, uint32_t tid, uint64_t time_ns)
{
	uint32_t i;
	if (!hmap_get(&pp->by_id, id, &i))
		return;
	struct perf_period_event *ev = &pp->ev[i];
	uint32_t dummy;
	/* a CPU's sample of a thread that has a clock of its own is not that thread's sample (perf_event drops it):
	 * a redraw would only cost the CPU an interrupt */
	if (ev->tid < 0) {
		if (pp->cpu_redraw && ++ev->seen % PERF_PERIODS_CPU_BATCH == 0 &&
		    !(pp->own_tids && hmap_get(pp->own_tids, tid, &dummy)))
			redraw(pp, ev, time_ns);
	} else if ((uint32_t)ev->tid == tid) {
		redraw(pp, ev, time_ns);
	}
}

enum plumb_err perf_stacker_init(struct perf_stacker *s, const struct record_opts *opts, struct profile *p,
				 struct maps *maps, struct perr *e)
{
	memset(s, 0, sizeof *s);
	s->p = p;
	s->maps = maps;
	s->ips = malloc(2 * PERF_STACK_MAX_DEPTH * sizeof *s->ips);
	s->frames = malloc(2 * PERF_STACK_MAX_DEPTH * sizeof *s->frames);
	s->s_unknown = profile_intern_cstr(p, "[unknown]");
	s->s_kernel = profile_intern_cstr(p, "[kernel.kallsyms]");
	s->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	if (opts->unwind == UNWIND_DWARF) {
		s->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		s->unwinder = maps ? unwinder_new(maps) : NULL;
	}
	if (!maps || !s->ips || !s->frames || s->s_unknown == PROFILE_NOMEM || s->s_kernel == PROFILE_NOMEM ||
	    (opts->unwind == UNWIND_DWARF && !s->unwinder))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	return PLUMB_OK;
}

void perf_stacker_free(struct perf_stacker *s)
{
	free(s->ips);
	free(s->frames);
	unwinder_free(s->unwinder);
	s->ips = NULL;
	s->frames = NULL;
	s->unwinder = NULL;
}

uint32_t perf_stacker_user_frame(struct perf_stacker *s, pid_t pid, uint64_t addr, bool caller)
{
	const struct map_entry *m = maps_find(s->maps, pid, addr);
	if (!m && maps_load_proc(s->maps, pid)) /* mappings made before we saw them (attach, or pre-exec) */
		m = maps_find(s->maps, pid, addr);
	return backend_user_frame(s->p, m, addr, caller, s->s_unknown);
}

static uint32_t kernel_frame(struct perf_stacker *s, uint64_t addr)
{
	struct frame f = { 0 };
	f.kind = FRAME_KERNEL;
	f.module = s->s_kernel;
	f.addr = addr;
	return profile_frame(s->p, &f);
}

size_t perf_stacker_build(struct perf_stacker *s, const struct perf_sample *sv)
{
	size_t nkernel, nuser;
	uint64_t *kern = s->ips, *user = s->ips + PERF_STACK_MAX_DEPTH;
	struct unwind_regs regs;
	struct unwind_sample us = { 0 };
	us.pid = (pid_t)sv->pid;
	us.ip = sv->ip;
	us.chain = sv->chain;
	us.nr = sv->nr;
	if (sv->regs) {
		perf_sample_regs(sv, &regs);
		us.regs = &regs;
		us.stack = sv->stack;
		us.stack_len = sv->stack ? sv->stack_dyn : 0;
	}
	unwind_sample_stack(s->unwinder, &us, kern, &nkernel, user, &nuser, PERF_STACK_MAX_DEPTH);
	size_t n = 0;
	for (size_t i = nuser; i-- > 0;) {
		uint32_t f = s->user_frame ? s->user_frame(s->ctx, (pid_t)sv->pid, user[i], i > 0)
					   : perf_stacker_user_frame(s, (pid_t)sv->pid, user[i], i > 0);
		if (f != PROFILE_NOMEM)
			s->frames[n++] = f;
	}
	for (size_t i = nkernel; i-- > 0;) {
		uint32_t f = kernel_frame(s, kern[i]);
		if (f != PROFILE_NOMEM)
			s->frames[n++] = f;
	}
	return n;
}
