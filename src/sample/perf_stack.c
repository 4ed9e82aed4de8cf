/* perf_stack.c — a perf sample's stack as raw frames, and the sampling attributes (perf_stack.h). The
 * callchain is split and the user part unwound by unwind_sample_stack (unwind/callchain.c, shared with the perf.data
 * reader); the frames go out outermost first, so both parts are walked backwards. */
#include "sample/perf_stack.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
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
