/* python_native.h — --native for the python backend: native stacks sampled with perf_event (user registers
 * and a copy of the user stack, unwound with DWARF CFI) merged with the Python frames read at the same moment:
 * each evaluation-loop frame (_PyEval_EvalFrameDefault) is replaced by the Python frames it was running.
 *
 * Ownership: pyn_open() returns a sampler freed by pyn_close(); it borrows py, opts and the profile. */
#ifndef PLUMB_SAMPLE_PYTHON_NATIVE_H
#define PLUMB_SAMPLE_PYTHON_NATIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"
#include "profile/profile.h"
#include "python/python.h"
#include "sample/backend.h"

struct pyn_sampler;

/* Opens per-thread sampling events on pid's threads. PLUMB_EPERM when perf_event_open is refused. */
enum plumb_err pyn_open(struct pyn_sampler **out, struct py_proc *py, pid_t pid, const struct record_opts *opts,
			struct profile *p, struct perr *e);
/* Waits for samples until until_ns (CLOCK_MONOTONIC) and adds each as a merged stack; picks up new threads. */
void pyn_poll(struct pyn_sampler *s, uint64_t until_ns);
/* The same for several samplers at once (the target's and its child processes'), each drained as its samples
 * arrive. */
void pyn_poll_many(struct pyn_sampler *const *s, size_t n, uint64_t until_ns);
/* Drains what is left; adds the number of samples taken to *ticks. */
void pyn_finish(struct pyn_sampler *s, uint64_t *ticks);
void pyn_close(struct pyn_sampler *s);

/* Merges a native stack with Python frames. ips: innermost first (ips[0] the sampled address); is_eval[i]
 * tells whether ips[i] lies in the evaluation loop. py: Python frames innermost first, entry frames marked.
 * Writes to out (innermost first) entries that are either a native index (>= 0) or -(1 + python index), and
 * returns the count. The k-th evaluation-loop frame from the inside gets the k-th group of Python frames
 * (a group ends at an entry frame); when the native stack has fewer evaluation-loop frames than groups (it was
 * cut short), the remaining outer groups go at the outer end. Exposed for tests. */
size_t pyn_merge(const int *is_eval, size_t nips, const struct py_frame *py, size_t npy, long *out, size_t max);

#endif
