/* perf_stack.h — what the perf_event and system backends both do with a sample: the event attributes they
 * sample with, and the stack of a PERF_RECORD_SAMPLE made into raw profile frames (the kernel's callchain split
 * into its kernel and user parts, the user part unwound by DWARF from the copied stack or taken from the
 * callchain with frame pointers; each address made a raw frame, symbol/symbol.h conventions).
 *
 * Ownership: a perf_stacker owns its unwinder and buffers (perf_stacker_free); it borrows the profile and the
 * maps, which must outlive it. */
#ifndef PLUMB_SAMPLE_PERF_STACK_H
#define PLUMB_SAMPLE_PERF_STACK_H

#include "sample/backend.h"
#include "sample/perf_ring.h"

#define PERF_STACK_MAX_DEPTH 1024 /* frames kept of each part (kernel, user) of a stack */

/* The attributes of a cpu-clock sampling event as both backends open it, disabled, with the task records
 * (mmap2, comm, fork/exit) and sample_id_all: the caller adds what is its own (inherit, enable_on_exec, ...). */
void perf_attr_cpu_clock(struct perf_event_attr *attr, const struct record_opts *opts, uint64_t sample_type,
			 bool kernel);

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
