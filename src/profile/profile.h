/* profile.h — THE profile model: every reader produces it, every writer and analysis consumes it.
 * Strings are interned, frames are interned, stacks are nodes of a prefix tree (a stack is its leaf node),
 * and samples aggregate into (stack, thread) counts, so memory grows with distinct stacks, not run length.
 * A timeline of individual timed samples is kept only when asked for (profile_keep_timeline), for formats
 * and analyses that need time (Firefox Profiler output, stage slicing, flame charts).
 *
 * Ownership: profile_new() returns a profile the caller frees with profile_free(). Every string, frame,
 * stack, thread and count lives inside the profile; pointers returned by accessors stay valid until the next
 * call that adds to the same table. Functions that add return an id, or PROFILE_NOMEM when out of memory. */
#ifndef PLUMB_PROFILE_PROFILE_H
#define PLUMB_PROFILE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_NOMEM UINT32_MAX
#define PROFILE_ROOT 0 /* the empty stack: parent of every outermost frame */

typedef uint32_t str_id; /* 0 is the empty string */

enum frame_kind { FRAME_USER = 0, FRAME_KERNEL = 1, FRAME_JIT = 2 };

/* One frame. `func` is the function name (demangled); `file` the full source path as known (labels shorten
 * it); `module` the ELF object (path or name); `line` 0 when unknown; `addr` the instruction address (0 when
 * unknown). A reader that only has a finished label (folded input) stores it in `func` with `is_label` set,
 * and labels come out exactly as read. */
struct frame {
	str_id func;
	str_id file;
	str_id module;
	uint32_t line;
	uint64_t addr;
	uint8_t kind;     /* enum frame_kind */
	uint8_t inlined;  /* 1 when this frame was inlined into its caller */
	uint8_t is_label; /* func is a finished label */
	uint8_t pad;
};

struct profile_thread {
	uint32_t pid;
	uint32_t tid;
	str_id name;
};

/* One aggregated count: `weight` samples (or period units) of `stack` on `thread`. */
struct profile_count {
	uint32_t stack;
	uint32_t thread;
	uint64_t weight;
};

/* One timed sample (timeline). time_ns is on the profile's clock (meta.clock_origin_ns is time zero). */
struct profile_sample {
	uint64_t time_ns;
	uint32_t stack;
	uint32_t thread;
	uint64_t weight;
};

/* What was measured and how. Strings are interned ids. */
struct profile_meta {
	str_id command;             /* the command line, as given */
	int64_t pid;                /* main process, 0 when unknown */
	double start_unix;          /* wall-clock start, seconds since the epoch, 0 when unknown */
	uint64_t clock_origin_ns;   /* CLOCK_MONOTONIC time of profile_start (stage files count from here) */
	uint64_t interval_ns;       /* requested interval, 0 when unknown */
	double duration_s;          /* how long sampling ran */
	uint64_t ticks;             /* samples taken */
	uint64_t lost;              /* samples the backend reported lost */
	str_id backend;             /* "perf_event", "inprocess", "ptrace", "py-spy", or the source format */
	str_id unwinder;            /* "fp", "dwarf", ... */
	str_id mode;                /* "cpu" or "wall" */
	str_id ended;               /* how a --call or a command ended ("returned 0", "killed by SIGSEGV") */
	str_id weight_unit;         /* "samples" (default) or e.g. "nanoseconds" */
	uint32_t processes;         /* processes that gave samples when a backend follows several, else 0 */
};

struct profile;

struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Strings. */
str_id profile_intern(struct profile *p, const char *s, size_t len);
str_id profile_intern_cstr(struct profile *p, const char *s);
const char *profile_str(const struct profile *p, str_id id);
size_t profile_nstrings(const struct profile *p);

/* Frames: equal frames get the same id. */
uint32_t profile_frame(struct profile *p, const struct frame *f);
const struct frame *profile_frame_get(const struct profile *p, uint32_t frame_id);
size_t profile_nframes(const struct profile *p);

/* Stacks: the node for `frame` below `parent` (PROFILE_ROOT for an outermost frame). */
uint32_t profile_stack(struct profile *p, uint32_t parent, uint32_t frame_id);
/* The node for frames[0] (outermost) .. frames[n-1] (innermost). n == 0 gives PROFILE_ROOT. */
uint32_t profile_stack_from(struct profile *p, const uint32_t *frames_outer_first, size_t n);
uint32_t profile_stack_parent(const struct profile *p, uint32_t stack);
uint32_t profile_stack_frame(const struct profile *p, uint32_t stack);
uint32_t profile_stack_depth(const struct profile *p, uint32_t stack);
size_t profile_nstacks(const struct profile *p); /* nodes, PROFILE_ROOT included */

/* Threads: one id per (pid, tid); a later non-empty name replaces an earlier one. */
uint32_t profile_thread(struct profile *p, uint32_t pid, uint32_t tid, const char *name);
const struct profile_thread *profile_thread_get(const struct profile *p, uint32_t thread_id);
size_t profile_nthreads(const struct profile *p);

/* Samples. With the timeline on, the sample is also kept with its time. Returns false when out of memory. */
void profile_keep_timeline(struct profile *p, bool on);
bool profile_has_timeline(const struct profile *p);
bool profile_add_sample(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns, uint64_t weight);
/* Aggregated counts, one per distinct (stack, thread), in first-seen order. */
const struct profile_count *profile_counts(const struct profile *p, size_t *n);
/* Timeline in insertion order (empty when the timeline is off). */
const struct profile_sample *profile_timeline(const struct profile *p, size_t *n);
/* Sum of all weights. */
uint64_t profile_total_weight(const struct profile *p);

struct profile_meta *profile_meta(struct profile *p);
const struct profile_meta *profile_meta_const(const struct profile *p);

#endif
