/* perf_stack.h — what the perf_event and system backends both do with a sample: the event attributes they
 * sample with, and the stack of a PERF_RECORD_SAMPLE made into raw profile frames (the kernel's callchain split
 * into its kernel and user parts, the user part unwound by DWARF from the copied stack or taken from the
 * callchain with frame pointers; each address made a raw frame, symbol/symbol.h conventions).
 *
 * Ownership: a perf_stacker owns its unwinder and buffers (perf_stacker_free); it borrows the profile and the
 * maps, which must outlive it. */
#ifndef PLUMB_SAMPLE_PERF_STACK_H
#define PLUMB_SAMPLE_PERF_STACK_H

#include "base/hashmap.h"
#include "base/rand.h"
#include "sample/backend.h"
#include "sample/perf_ring.h"

#define PERF_STACK_MAX_DEPTH 1024 /* frames kept of each part (kernel, user) of a stack */

/* The attributes of a cpu-clock sampling event as both backends open it, disabled, with the task records
 * (mmap2, comm, fork/exit) and sample_id_all: the caller adds what is its own (inherit, enable_on_exec, ...). */
void perf_attr_cpu_clock(struct perf_event_attr *attr, const struct record_opts *opts, uint64_t sample_type,
			 bool kernel);
/* The task records (mmap and mmap2, comm and exec's comm, fork and exit) that name a sample's maps and threads:
 * perf_attr_cpu_clock turns them on; an event whose threads another event already describes turns them off, or
 * the reader would see each record twice. */
void perf_attr_task_records(struct perf_event_attr *attr, bool on);

/* Random sampling periods (docs/design.md §5.2) for the events whose descriptors we hold: each is opened with a
 * period drawn at random around the interval (base/rand.h) and given a new one after each of its samples
 * (PERF_EVENT_IOC_PERIOD restarts its countdown), so an event's sample times are a renewal process in its clock
 * (a thread's CPU time, a CPU's time). The redraw comes late, more so on a loaded machine, and the restart would
 * lose what the event counted meanwhile: its count (read()) says how far it went since its last sample, which is
 * taken off the new period (never below a quarter of the interval: the kernel repeats a period until it is given
 * another). A per-CPU event is redrawn only when pp->cpu_redraw says a thread wakes at each of its samples: a
 * redraw at each read of the rings would repeat one draw over a window of fixed length, whose count is the
 * window over the period — E[1/period] is 1.19 / interval — where a period repeated until the next sample
 * averages 1 / interval. An inherited event (a thread the target created) keeps the period it started with, its
 * parent's of the moment: its samples name the parent's id and must not restart the parent's countdown, so only
 * a sample of the event's own thread does. Owns nothing but its table. */
/* A CPU's event wakes the redraw thread at every 4th sample (wakeup_events) and gets its next period then: each
 * draw is used for 4 intervals, a fixed number, so the rate stays one sample per interval and the first of the
 * four is still at a random phase of any rhythm. Waking at every sample cost a target 4-6% of its time at 1 kHz
 * (the woken thread preempts whatever was sampled: a CPU-bound program read 20% kernel time for 16). */
#define PERF_PERIODS_CPU_BATCH 4

struct perf_periods {
	struct rand64 rng;
	uint64_t mean_ns;
	struct hmap by_id;   /* event id -> index in ev */
	struct perf_period_event {
		int fd;
		int32_t tid;        /* the thread it was opened on, -1 for a per-CPU event */
		uint64_t period;    /* its period now */
		uint64_t armed_at;  /* its count when it was given that period */
		uint64_t seen;      /* a CPU's event: its samples so far (it is redrawn at every PERF_PERIODS_CPU_BATCH-th) */
	} *ev;
	size_t n, cap;
	uint64_t redraws;    /* periods given: what randomizing costs is an ioctl and a read each */
	bool cpu_redraw;     /* per-CPU events are redrawn too (a thread wakes at each of their samples) */
	const struct hmap *own_tids; /* or NULL: threads with events of their own, whose per-CPU samples are not
				      * redrawn (borrowed; not changed while the redraw thread runs) */
};

void perf_periods_init(struct perf_periods *pp, uint64_t mean_ns, uint64_t seed);
void perf_periods_release(struct perf_periods *pp);
/* A period to open a thread's event with (redrawn after each of its samples). */
uint64_t perf_periods_draw(struct perf_periods *pp);
/* Registers sampling event fd opened on thread tid (-1: a CPU) with period `period`, its id read with
 * PERF_EVENT_IOC_ID: false when out of memory or refused. */
bool perf_periods_add(struct perf_periods *pp, int fd, int32_t tid, uint64_t period);
/* The thread event `id` was opened on (-1: a CPU); false for an id not registered. */
bool perf_periods_owner(const struct perf_periods *pp, uint64_t id, int32_t *tid);
/* A sample of event `id` (PERF_SAMPLE_IDENTIFIER) in thread tid at time_ns: a per-thread event gets its next
 * period now, a per-CPU event too when pp->cpu_redraw. Unknown ids and the samples of inherited events are left
 * alone. */
void perf_periods_sampled(struct perf_periods *pp, uint64_t id, uint32_t tid, uint64_t time_ns);

struct perf_stacker {
	struct profile *p;          /* borrowed */
	struct maps *maps;          /* borrowed */
	struct unwinder *unwinder;  /* owned; NULL with frame pointers */
	uint64_t sample_type;       /* what the events sample (perf_sample_parse's argument) */
	uint64_t *ips;              /* 2 * PERF_STACK_MAX_DEPTH: kernel part, then user part */
	uint32_t *frames;           /* 2 * PERF_STACK_MAX_DEPTH: the stack built, outermost first */
	str_id s_unknown, s_kernel;
	/* How a user address becomes a raw frame (caller: a return address); NULL: perf_stacker_user_frame. */
	uint32_t (*user_frame)(void *ctx, pid_t pid, uint64_t addr, bool caller);
	void *ctx;
};

/* Sets up s for opts (DWARF or frame pointers): PLUMB_ENOMEM when out of memory (s is then freeable). */
enum plumb_err perf_stacker_init(struct perf_stacker *s, const struct record_opts *opts, struct profile *p,
				 struct maps *maps, struct perr *e);
void perf_stacker_free(struct perf_stacker *s);
/* The raw frame of user address addr of process pid, by its mapping (read from /proc when not yet known). */
uint32_t perf_stacker_user_frame(struct perf_stacker *s, pid_t pid, uint64_t addr, bool caller);
/* Builds the stack of sample sv into s->frames (outermost first: user frames, then kernel ones); returns how
 * many frames. */
size_t perf_stacker_build(struct perf_stacker *s, const struct perf_sample *sv);

#endif
