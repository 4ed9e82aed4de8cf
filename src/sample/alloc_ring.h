/* alloc_ring.h — the shared memory between the allocation profiler in the target (libplumb-preload.so,
 * src/lib/alloc.c) and the alloc backend in plumb (src/sample/alloc.c). plumb creates a memfd holding a header and
 * two bounded multi-producer rings and passes its descriptor in PLUMB_ALLOC_FD: the alloc ring's big slots carry a
 * sampled allocation (its size, registers and a slice of the stack, unwound by plumb), the event ring's small
 * slots the free of a sampled block and the start of a process image. Every event takes a number from one clock
 * (`clock`), so plumb can replay them in order across threads, rings and processes. A producer never takes a
 * lock; when a ring is full it waits, bounded, for plumb to drain it (an event dropped after the wait is counted
 * in `lost`). Both sides compile this header; its layout is the protocol (ALLOC_VERSION changes with it). */
#ifndef PLUMB_SAMPLE_ALLOC_RING_H
#define PLUMB_SAMPLE_ALLOC_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define ALLOC_MAGIC 0x636f6c6c616d756cULL /* "lumalloc" */
#define ALLOC_VERSION 2
#define ALLOC_ENV_FD "PLUMB_ALLOC_FD"
#define ALLOC_NREGS 24 /* enum unwind_reg order (unwind/unwind.h) */
#define ALLOC_HDR_SIZE 4096u

/* What an allocation slot holds. */
enum alloc_kind { ALLOC_HEAP = 0, ALLOC_MMAP = 1 };
/* What an event slot holds. */
enum alloc_event { EV_FREE = 1, EV_START = 2, EV_FORK = 3 };

struct alloc_slot {
	_Atomic uint64_t seq;
	uint64_t id;        /* the clock's number for this allocation; a free names it */
	uint32_t pid, tid;
	uint64_t size;      /* bytes asked for */
	uint64_t time_ns;   /* CLOCK_MONOTONIC */
	uint32_t kind;      /* enum alloc_kind */
	uint32_t stack_len; /* bytes of stack that follow the slot header */
	uint64_t regs[ALLOC_NREGS];
	/* stack bytes follow, starting at regs[UREG_SP] */
};

struct alloc_event_slot {
	_Atomic uint64_t seq;
	uint64_t id;   /* EV_FREE: the allocation's id; EV_FORK: the parent's pid; EV_START: 0 */
	uint64_t when; /* the clock's number for this event */
	uint32_t pid, type; /* enum alloc_event */
};

/* One ring: its slots start `off` bytes after the header. `head` has a cache line of its own: producers take it
 * with compare-and-swap, and a line that plumb writes too would cost every sample a transfer. */
struct alloc_ring {
	uint32_t off, nslots, slot_size, pad;
	_Alignas(64) _Atomic uint64_t head;
	char pad_head[56];
};

/* Fields in three cache lines by who writes them: plumb once (the layout), the producers (the clock and the
 * counters), plumb as it drains (allocs_done). */
struct alloc_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t stack_bytes;       /* stack copied per sampled allocation, at most */
	uint64_t interval;          /* mean bytes between samples */
	_Atomic uint32_t enabled;   /* plumb clears it to stop sampling */
	_Atomic uint32_t attached;  /* pid of the first process that mapped the memory (0: none yet) */
	struct alloc_ring allocs;   /* struct alloc_slot + stack_bytes each */
	struct alloc_ring events;   /* struct alloc_event_slot each */
	_Alignas(64) _Atomic uint64_t clock; /* the next event number (from 1) */
	_Atomic uint64_t lost;      /* events dropped: a ring stayed full, or the sampled-address set was full */
	_Atomic uint64_t waits;     /* times a producer waited for a full ring */
	_Atomic uint32_t doorbell;  /* a futex plumb sleeps on between drains: bumped and woken by a producer that
				     * finds a ring full, and by a process that waits at its exit for the drain */
	_Atomic uint32_t exiting;   /* processes in their exit wait (plumb drains and polls without long naps) */
	_Alignas(64) _Atomic uint64_t allocs_done; /* allocation slots plumb has consumed (a process waits for it
						    * at exit) */
};
_Static_assert(sizeof(struct alloc_hdr) <= ALLOC_HDR_SIZE, "the header fits before the rings");

static inline void *alloc_slot_at(struct alloc_hdr *h, struct alloc_ring *r, uint64_t pos)
{
	return (char *)h + r->off + (pos % r->nslots) * (uint64_t)r->slot_size;
}

/* The slot's sequence word (every slot kind begins with it). */
static inline _Atomic uint64_t *alloc_slot_seq(struct alloc_hdr *h, struct alloc_ring *r, uint64_t pos)
{
	return (_Atomic uint64_t *)alloc_slot_at(h, r, pos);
}

/* Sets up an empty ring (the consumer's side, in zeroed memory). */
static inline void alloc_ring_init(struct alloc_hdr *h, struct alloc_ring *r, uint32_t off, uint32_t nslots,
				   uint32_t slot_size)
{
	r->off = off;
	r->nslots = nslots;
	r->slot_size = slot_size;
	atomic_store(&r->head, 0);
	for (uint64_t i = 0; i < nslots; i++)
		atomic_store(alloc_slot_seq(h, r, i), i);
}

/* Producer, lock-free: claims the next free slot, or NULL when the ring is full (it never waits here). */
static inline void *alloc_claim(struct alloc_hdr *h, struct alloc_ring *r, uint64_t *pos_out)
{
	uint64_t pos = atomic_load_explicit(&r->head, memory_order_relaxed);
	for (;;) {
		uint64_t seq = atomic_load_explicit(alloc_slot_seq(h, r, pos), memory_order_acquire);
		int64_t dif = (int64_t)(seq - pos);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&r->head, &pos, pos + 1, memory_order_relaxed,
								  memory_order_relaxed)) {
				*pos_out = pos;
				return alloc_slot_at(h, r, pos);
			}
		} else if (dif < 0) {
			return NULL;
		} else {
			pos = atomic_load_explicit(&r->head, memory_order_relaxed);
		}
	}
}

static inline void alloc_publish(struct alloc_hdr *h, struct alloc_ring *r, uint64_t pos)
{
	atomic_store_explicit(alloc_slot_seq(h, r, pos), pos + 1, memory_order_release);
}

/* Single consumer: the slot at `tail` when it has been published, else NULL. */
static inline void *alloc_peek(struct alloc_hdr *h, struct alloc_ring *r, uint64_t tail)
{
	return atomic_load_explicit(alloc_slot_seq(h, r, tail), memory_order_acquire) == tail + 1
		       ? alloc_slot_at(h, r, tail)
		       : NULL;
}

static inline void alloc_release(struct alloc_hdr *h, struct alloc_ring *r, uint64_t tail)
{
	atomic_store_explicit(alloc_slot_seq(h, r, tail), tail + r->nslots, memory_order_release);
}

#endif
