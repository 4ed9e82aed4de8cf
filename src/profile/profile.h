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

/* What a frame is (docs/design.md §4.1). A frame whose source file is Python code (".py") is FRAME_PYTHON: the
 * model makes it so (profile_frame), whoever built the frame. Inlining is a flag beside the kind. */
enum frame_kind { FRAME_USER = 0, FRAME_KERNEL = 1, FRAME_JIT = 2, FRAME_PYTHON = 3 };

/* One frame, as fields: every reader parses into them (profile/label.h for text labels) and every writer renders
 * them in its own format's convention; nothing downstream parses a label back.
 * `func` the function name (demangled; 0 when unknown); `file` the source path as known (labels shorten it);
 * `module` the ELF object (path or name; 0 for the kernel's own frames); `line` 0 when unknown; `addr` the
 * instruction address (0 when unknown), or with `offset` set (a frame with a module and no name) the offset of
 * its function in the module, rendered `libfoo.so.1+0x4300`. */
struct frame {
	str_id func;
	str_id file;
	str_id module;
	uint32_t line;
	uint64_t addr;
	uint8_t kind;     /* enum frame_kind */
	uint8_t inlined;  /* 1 when this frame was inlined into its caller (rendered "_[i]") */
	uint8_t offset;   /* 1 when addr is the offset of a nameless function in its module */
	uint8_t pad[5];
	uint64_t insn;    /* with `offset`: the instruction's address in the module (the sampled one, or a caller's
			   * return address), so a nameless function can be annotated by instruction; 0 when unknown
			   * or when addr is the instruction itself (profile_frame_insn) */
};

/* The instruction address of frame f in its module (its ELF vaddr: the sampled instruction for a stack's leaf, the
 * return address for a caller), 0 when unknown: addr for a named frame, insn for a nameless one. The outer frames
 * of an inline chain have none: their instruction is the innermost frame's (docs/design.md §6.8). */
static inline uint64_t profile_frame_insn(const struct frame *f)
{
	return f->offset ? f->insn : f->addr;
}

/* A thread's identity: metadata of the samples, never a frame. 0 / the empty string when unknown. */
struct profile_thread {
	uint32_t pid;
	uint32_t tid;
	str_id name;     /* the thread's name */
	str_id process;  /* its process's name */
};

/* One aggregated count of `stack` on `thread`: `weight` in the profile's weight unit (meta.weight_unit) over
 * `samples` samples. When the unit is "samples" the two are equal. */
struct profile_count {
	uint32_t stack;
	uint32_t thread;
	uint64_t weight;
	uint64_t samples;
};

/* One timed sample (timeline). time_ns is on the profile's clock (meta.clock_origin_ns is time zero). */
struct profile_sample {
	uint64_t time_ns;
	uint32_t stack;
	uint32_t thread;
	uint64_t weight;
	uint64_t samples;
};

/* Weights never wrap: a total past PROFILE_MAX_WEIGHT (2^63 - 1, what JSON integers and signed readers hold)
 * is refused (profile_add_* return false with profile_overflowed() true). */
#define PROFILE_MAX_WEIGHT ((uint64_t)INT64_MAX)

/* What was measured and how. Strings are interned ids. */
struct profile_meta {
	str_id command;             /* the command line, as given */
	int64_t pid;                /* main process, 0 when unknown */
	double start_unix;          /* wall-clock start, seconds since the epoch, 0 when unknown */
	uint64_t clock_origin_ns;   /* CLOCK_MONOTONIC time of profile_start (stage files count from here) */
	uint64_t interval_ns;       /* the sampling period in nanoseconds when known (requested or measured), else 0 */
	double duration_s;          /* how long sampling ran */
	uint64_t ticks;             /* samples taken */
	uint64_t lost;              /* samples the backend reported lost */
	str_id backend;             /* "perf_event", "inprocess", "ptrace", "py-spy", or the source format */
	str_id unwinder;            /* "fp", "dwarf", ... */
	str_id mode;                /* "cpu" or "wall" */
	str_id ended;               /* how a --call or a command ended ("returned 0", "killed by SIGSEGV") */
	str_id weight_unit;         /* what a weight counts: "samples" (default), "nanoseconds", "bytes", or an
				     * event's own unit ("cycles"); counts carry the number of samples besides */
	str_id format;              /* the format the profile was read from ("folded", "gecko", ...), or written to
				     * by `record`; 0 when neither */
	uint32_t processes;         /* processes that gave samples when a backend follows several, else 0 */
	str_id os;                  /* the system sampled, "Linux x86_64" (uname), 0 when unknown */
};

struct profile;

struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Strings. A string longer than PROFILE_STR_MAX bytes (a function, file, module or thread name, a command line)
 * is kept as its first PROFILE_STR_MAX bytes, cut at a character, followed by PROFILE_STR_CUT (§4.1): memory and
 * every output's labels stay bounded whatever a symbol table or a perf map holds. */
#define PROFILE_STR_MAX (16u << 10)
#define PROFILE_STR_CUT "..."
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
/* The same below `node`; nodes_out (NULL or n entries) gets the node after each frame. Faster than one
 * profile_stack per frame when much of the path is new (its index slots are fetched ahead). */
uint32_t profile_stack_path(struct profile *p, uint32_t node, const uint32_t *frames, size_t n, uint32_t *nodes_out);
uint32_t profile_stack_parent(const struct profile *p, uint32_t stack);
uint32_t profile_stack_frame(const struct profile *p, uint32_t stack);
uint32_t profile_stack_depth(const struct profile *p, uint32_t stack);
size_t profile_nstacks(const struct profile *p); /* nodes, PROFILE_ROOT included */

/* Threads: one id per (pid, tid); a later non-empty name replaces an earlier one. */
uint32_t profile_thread(struct profile *p, uint32_t pid, uint32_t tid, const char *name);
/* Sets the process name of a thread (a non-empty name replaces an earlier one). False when out of memory. */
bool profile_thread_set_process(struct profile *p, uint32_t thread_id, const char *process, size_t len);
/* The thread of dst with the identity of src's thread_id (pid, tid, names); PROFILE_NOMEM when out of memory. */
uint32_t profile_thread_copy(struct profile *dst, const struct profile *src, uint32_t thread_id);
const struct profile_thread *profile_thread_get(const struct profile *p, uint32_t thread_id);
size_t profile_nthreads(const struct profile *p);

/* Samples. With the timeline on, the sample is also kept with its time. A reader of a format without sample
 * times turns the timeline off (times are never invented). Returns false when out of memory or when the total
 * weight would pass PROFILE_MAX_WEIGHT (then profile_overflowed() is true). */
void profile_keep_timeline(struct profile *p, bool on);
bool profile_has_timeline(const struct profile *p);
/* A timeline in sample order whose times are not known (folded lines in file order, for a flame chart): its
 * time_ns are 0 and no writer or analysis may take them for times. Its memory follows distinct stacks: a sample
 * of the same (stack, thread) as the one before adds to that entry, and once it holds PROFILE_UNTIMED_MAX entries
 * more than twice the distinct (stack, thread) counts, it is dropped (profile_has_timeline turns false; the
 * counts keep every sample). */
#define PROFILE_UNTIMED_MAX ((size_t)1 << 20)
void profile_mark_untimed(struct profile *p);
/* True when the profile has a timeline with real sample times. */
bool profile_has_times(const struct profile *p);
/* `weight` over `samples` samples (both saturate nowhere: see PROFILE_MAX_WEIGHT). */
bool profile_add_weighted(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns, uint64_t weight,
			  uint64_t samples);
/* The weight is a number of samples: profile_add_weighted(p, stack, thread, time_ns, weight, weight). */
bool profile_add_sample(struct profile *p, uint32_t stack, uint32_t thread, uint64_t time_ns, uint64_t weight);
bool profile_overflowed(const struct profile *p);
/* Aggregated counts, one per distinct (stack, thread), in first-seen order. */
const struct profile_count *profile_counts(const struct profile *p, size_t *n);
/* Timeline in insertion order (empty when the timeline is off). */
const struct profile_sample *profile_timeline(const struct profile *p, size_t *n);
/* Sum of all weights, and of all sample counts. */
uint64_t profile_total_weight(const struct profile *p);
uint64_t profile_total_samples(const struct profile *p);
/* Shares `samples` samples out over the counts (and the timeline) in proportion to their weights, so they add up
 * to exactly that many: for a format that keeps weights and only their total number of samples (folded text with
 * its "# plumb:" line). Nothing happens when the total weight is 0. */
void profile_spread_samples(struct profile *p, uint64_t samples);

/* Value columns: profiles that measure several things per (stack, thread) — an allocation profile's objects and
 * bytes allocated, in use at exit, at the peak, freed — keep them as named columns beside the weight (which stays
 * what every analysis reads; profile_use_value makes a column the weight). At most PROFILE_MAX_VALUES columns,
 * declared once before any is added; `period` is what one sample stands for in the first unit that is not a count
 * (pprof's period), 0 when unknown. */
#define PROFILE_MAX_VALUES 8
bool profile_set_values(struct profile *p, size_t n, const char *const *names, const char *const *units,
			uint64_t period);
size_t profile_nvalues(const struct profile *p);
const char *profile_value_name(const struct profile *p, size_t col);
const char *profile_value_unit(const struct profile *p, size_t col);
uint64_t profile_values_period(const struct profile *p);
/* Adds vals (profile_nvalues of them) to the columns of (stack, thread), making its count (weight 0) when there
 * is none. False when out of memory or when no columns were declared. */
bool profile_add_values(struct profile *p, uint32_t stack, uint32_t thread, const uint64_t *vals);
/* The columns of count i (the index into profile_counts), or NULL when the profile has none. */
const uint64_t *profile_count_values(const struct profile *p, size_t i);
/* The column named `name` (or whose index it is, "3") as the weight of every count and the weight unit; the
 * timeline is dropped (it holds the old weight). False when there is no such column. */
bool profile_use_value(struct profile *p, const char *name);

struct profile_meta *profile_meta(struct profile *p);
const struct profile_meta *profile_meta_const(const struct profile *p);
/* Copies src's metadata into dst, its strings interned in dst. False when out of memory. */
bool profile_meta_copy(struct profile *dst, const struct profile *src);

/* The name of thread_id's process: its own (profile_thread_set_process), else the name of its process's main
 * thread (tid == pid), else the program of the command line (its base name), else the thread's name; "" when
 * nothing names it. Points into p's strings. */
const char *profile_process_name(const struct profile *p, uint32_t thread_id);
/* The timeline's indexes in time order (equal times in insertion order): a malloc'd array of *n entries the
 * caller frees, NULL when out of memory or when the timeline is empty. */
size_t *profile_timeline_order(const struct profile *p, size_t *n);

/* Mappings: the files mapped into the sampled processes, as the kernel mapped them — what pprof's mappings and
 * the Firefox Profiler's libs carry so that a viewer can re-symbolize (docs/design.md §4.1, §6.1). Frames keep
 * their module and ELF virtual address (struct frame); a mapping gives back the address in the process
 * (vaddr + bias) and the file's identity (build ID). `main` marks the program's own executable. */
struct profile_mapping {
	uint64_t start, limit;  /* [start, limit) in the process */
	uint64_t offset;        /* file offset of start */
	uint64_t bias;          /* address in the process = ELF vaddr + bias (valid when has_bias) */
	str_id path;            /* the module as frames name it (struct frame.module) */
	str_id build_id;        /* lowercase hex (GNU build ID), 0 when unknown */
	uint32_t pid;           /* the process, 0 when unknown */
	uint8_t main;           /* 1: the program's executable */
	uint8_t has_bias;
	uint8_t pad[2];
};
/* Adds a mapping (strings interned in p); the same mapping added again is one (its build ID and main mark
 * merged). Returns its id or PROFILE_NOMEM. */
uint32_t profile_add_mapping(struct profile *p, const struct profile_mapping *m);
/* All mappings in the order added. */
const struct profile_mapping *profile_mappings(const struct profile *p, size_t *n);
/* The mapping of a frame's module (the main one when several processes mapped it, else the first); NULL when
 * the profile has none for it. */
const struct profile_mapping *profile_mapping_of(const struct profile *p, str_id module);
/* The address in the process of user frame f (its ELF vaddr through its module's mapping); false when unknown. */
bool profile_mapping_addr(const struct profile *p, const struct frame *f, uint64_t *addr);
/* Copies src's mappings into dst, their strings interned in dst. False when out of memory. */
bool profile_mappings_copy(struct profile *dst, const struct profile *src);

#endif
