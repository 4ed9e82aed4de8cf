/* inproc_ring.h — the shared-memory ring between the in-process sampler (libplumb.so, src/lib/sampler.c) and
 * the inprocess backend (src/sample/inprocess.c). plumb creates a memfd, sizes and initialises it, and passes
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

#endif
