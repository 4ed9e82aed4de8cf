/* inproc_ring.h — the shared-memory ring between the in-process sampler (libplumb-preload.so,
 * src/lib/sampler.c) and the inprocess backend (src/sample/inprocess.c). plumb creates a memfd, sizes and initialises it, and passes
 * its descriptor to the target (PLUMB_INPROC_FD); the target's signal handler claims fixed-size slots without
 * locks (a bounded multi-producer queue: a slot is free for position `pos` when its seq equals pos) and writes
 * raw registers + a slice of the stack; plumb, the single consumer, unwinds them. Because the memory is also
 * plumb's, every committed sample survives the target crashing. Both sides compile this header; its layout is
 * the protocol (INPROC_VERSION changes with it). */
#ifndef PLUMB_SAMPLE_INPROC_RING_H
#define PLUMB_SAMPLE_INPROC_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define INPROC_MAGIC 0x676e69726d756c70ULL /* "plumring" */
#define INPROC_VERSION 2
#define INPROC_ENV_FD "PLUMB_INPROC_FD"
#define INPROC_ENV_CALL_LIB "PLUMB_CALL_LIB"
#define INPROC_ENV_CALL_SYM "PLUMB_CALL_SYM"
#define INPROC_NREGS 24 /* enum unwind_reg order (unwind/unwind.h) */
#define INPROC_SIGNAL SIGPROF

enum inproc_mode { INPROC_CPU = 0, INPROC_WALL = 1 };

/* --call progress, written by the target. */
enum inproc_call_state {
	CALL_NONE = 0,     /* the harness has not started (libplumb was not preloaded) */
	CALL_LOADING = 1,  /* dlopen / dlsym */
	CALL_FAILED = 2,   /* dlopen or dlsym failed: call_error holds the dlerror() text */
	CALL_READY = 3,    /* resolved; waits (bounded) for plumb to read its maps and set ack */
	CALL_RUNNING = 4,
	CALL_RETURNED = 5, /* call_ret holds the return value */
};

/* Slot flags. */
#define INPROC_F_CRASH 1u  /* taken by the crash handler; the signal number is in bits 8..15 */

struct inproc_slot {
	_Atomic uint64_t seq;
	uint32_t pid, tid;
	uint64_t time_ns;             /* CLOCK_MONOTONIC */
	uint32_t flags;
	uint32_t stack_len;           /* bytes of stack that follow the slot header */
	uint32_t weight;              /* timer expiries this sample stands for: 1 + the kernel's overrun count */
	uint32_t pad;
	uint64_t regs[INPROC_NREGS];
	char comm[16];                /* thread name (PR_GET_NAME) */
	/* stack bytes follow, starting at regs[UREG_SP] */
};

struct inproc_hdr {
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;            /* offset of slot 0 */
	uint32_t nslots;
	uint32_t slot_size;           /* sizeof(struct inproc_slot) + stack bytes, rounded to 64 */
	uint32_t stack_bytes;
	uint32_t mode;                /* enum inproc_mode */
	uint64_t interval_ns;
	_Atomic uint64_t head;        /* next position producers claim */
	_Atomic uint64_t lost;        /* samples dropped because the ring was full */
	_Atomic uint64_t timer_errors;/* threads whose timer could not be created */
	_Atomic uint64_t overruns;    /* timer expiries the kernel folded into an earlier signal (si_overrun) */
	_Atomic uint32_t enabled;     /* plumb clears it to stop sampling */
	_Atomic uint32_t attached;    /* pid of the first process that mapped the ring (0: none yet) */
	_Atomic uint32_t threads;     /* threads that got a timer */
	_Atomic uint32_t exec_errno;  /* a launched command could not be executed (errno) */
	/* --call */
	_Atomic uint32_t call_state;  /* enum inproc_call_state */
	_Atomic uint32_t ack;         /* plumb has read the maps (for CALL_READY and crash samples) */
	int32_t call_ret;
	uint32_t pad;
	char call_error[512];
};

#define INPROC_HDR_SIZE 4096u

static inline struct inproc_slot *inproc_slot_at(struct inproc_hdr *h, uint64_t pos)
{
	return (struct inproc_slot *)((char *)h + h->hdr_size + (pos % h->nslots) * (uint64_t)h->slot_size);
}

/* Sets up an empty ring in zeroed memory of hdr_size + nslots * slot_size bytes (the consumer's side). */
static inline void inproc_ring_init(struct inproc_hdr *h, uint32_t hdr_size, uint32_t nslots, uint32_t slot_size)
{
	h->hdr_size = hdr_size;
	h->nslots = nslots;
	h->slot_size = slot_size;
	atomic_store(&h->head, 0);
	for (uint64_t i = 0; i < nslots; i++)
		atomic_store(&inproc_slot_at(h, i)->seq, i);
}

/* Producer (async-signal-safe, lock-free): claims the next free slot, or returns NULL — and counts the sample as
 * lost — when the ring is full; it never waits. Fill the slot, then inproc_publish() it. */
static inline struct inproc_slot *inproc_claim(struct inproc_hdr *h, uint64_t *pos_out)
{
	uint64_t pos = atomic_load_explicit(&h->head, memory_order_relaxed);
	for (;;) {
		struct inproc_slot *s = inproc_slot_at(h, pos);
		uint64_t seq = atomic_load_explicit(&s->seq, memory_order_acquire);
		int64_t dif = (int64_t)(seq - pos);
		if (dif == 0) {
			if (atomic_compare_exchange_weak_explicit(&h->head, &pos, pos + 1, memory_order_relaxed,
								  memory_order_relaxed)) {
				*pos_out = pos;
				return s;
			}
		} else if (dif < 0) {
			atomic_fetch_add_explicit(&h->lost, 1, memory_order_relaxed);
			return NULL;
		} else {
			pos = atomic_load_explicit(&h->head, memory_order_relaxed);
		}
	}
}

static inline void inproc_publish(struct inproc_slot *s, uint64_t pos)
{
	atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
}

/* Single consumer: the slot at position `tail` when it has been published, else NULL. */
static inline struct inproc_slot *inproc_peek(struct inproc_hdr *h, uint64_t tail)
{
	struct inproc_slot *s = inproc_slot_at(h, tail);
	return atomic_load_explicit(&s->seq, memory_order_acquire) == tail + 1 ? s : NULL;
}

/* Hands the slot at `tail` back to the producers (for position tail + nslots). */
static inline void inproc_release(struct inproc_hdr *h, struct inproc_slot *s, uint64_t tail)
{
	atomic_store_explicit(&s->seq, tail + h->nslots, memory_order_release);
}

#endif
