/* perf_ring.h — what the two users of perf_event_open share (the perf_event backend and the python backend's
 * --native): opening an event, mapping its ring buffer, reading the records out of it in order (a record that
 * wraps around the ring's end is copied out whole), parsing a PERF_RECORD_SAMPLE by its sample_type, and the
 * records that describe the tasks (mmap, comm, fork, exit, lost).
 *
 * Ownership: a perf_ring maps memory of an event descriptor it does not own; perf_ring_unmap() releases the
 * mapping only, the caller closes the descriptor. Records handed to a perf_record_fn are valid during the call. */
#ifndef PLUMB_SAMPLE_PERF_RING_H
#define PLUMB_SAMPLE_PERF_RING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/unwind.h"

/* perf_event_open(attr, pid, cpu, no group, close-on-exec): the descriptor, or -1 with errno. */
int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu);

struct perf_ring {
	int fd;                            /* the event whose ring this is (not owned) */
	struct perf_event_mmap_page *meta; /* NULL while not mapped */
	char *data;
	size_t data_size;                  /* a power of two */
	size_t map_size;                   /* the metadata page and the data pages */
	/* With a peeker (another thread calling perf_ring_peek), drains stop at what it has seen, so no record is
	 * given back to the kernel before it was peeked at. */
	bool peeking;                      /* set before the peeker starts, cleared after it stopped */
	uint64_t peeked;                   /* atomic: the peeker's position */
};

/* Maps the ring of event fd with `pages` data pages (a power of two); false with errno when mmap refuses. */
bool perf_ring_map(struct perf_ring *r, int fd, size_t pages);
/* Unmaps the ring (a ring never mapped is left alone); does not close the descriptor. */
void perf_ring_unmap(struct perf_ring *r);

/* One record: h->type tells which, len = h->size bytes from rec (the header included). */
typedef void (*perf_record_fn)(void *ctx, const char *rec, size_t len);
/* Hands every complete record written since the last drain to fn, in order, then gives the space back to the
 * kernel. A record that wraps around the end is copied into scratch (scratch_size bytes; a larger one is
 * skipped). Returns the number of records read. */
size_t perf_ring_drain(struct perf_ring *r, char *scratch, size_t scratch_size, perf_record_fn fn, void *ctx);

/* Peeks at every record written since the last peek, without giving them back: fn gets each one's type and its
 * first bytes after the header (up to 32: a sample's PERF_SAMPLE_IDENTIFIER comes first). For one thread while
 * another drains (r->peeking). Returns the number of records seen. */
typedef void (*perf_peek_fn)(void *ctx, uint32_t type, const unsigned char *body, size_t len);
size_t perf_ring_peek(struct perf_ring *r, perf_peek_fn fn, void *ctx);

/* The fields of a PERF_RECORD_SAMPLE that plumb asks for (pointers point into the record). */
struct perf_sample {
	uint64_t id;              /* PERF_SAMPLE_IDENTIFIER */
	uint64_t ip;              /* PERF_SAMPLE_IP */
	uint32_t pid, tid;        /* PERF_SAMPLE_TID */
	uint64_t time;            /* PERF_SAMPLE_TIME */
	uint64_t nr;              /* PERF_SAMPLE_CALLCHAIN: nr entries at chain */
	const uint64_t *chain;
	uint64_t abi;             /* PERF_SAMPLE_REGS_USER: 0 (no user state) or the registers at regs */
	const uint64_t *regs;     /* in UNWIND_REGS_MASK order */
	uint64_t stack_size;      /* PERF_SAMPLE_STACK_USER: bytes copied at stack, stack_dyn of them valid */
	const uint8_t *stack;
	uint64_t stack_dyn;
};

/* Parses a PERF_RECORD_SAMPLE of an event opened with sample_type (whose user registers are
 * UNWIND_REGS_MASK). False when the record is shorter than its fields say. */
bool perf_sample_parse(uint64_t sample_type, const char *rec, size_t len, struct perf_sample *out);
/* The sample's user registers as the unwinder takes them (zeros when it has none). */
void perf_sample_regs(const struct perf_sample *s, struct unwind_regs *out);

/* The fields of the task records plumb reads: PERF_RECORD_MMAP2, COMM, FORK, EXIT and LOST (their layouts are
 * given in linux/perf_event.h in comments only). */
struct perf_task_rec {
	uint32_t type;            /* h->type, or 0 when the record is shorter than its type's fields */
	uint16_t misc;            /* h->misc (PERF_RECORD_MISC_COMM_EXEC, PERF_RECORD_MISC_MMAP_BUILD_ID, ...) */
	uint32_t pid, tid;        /* every type but LOST */
	uint32_t ppid, ptid;      /* FORK, EXIT */
	uint64_t time;            /* FORK, EXIT; COMM from its sample_id_all trailer (0 without one) */
	uint64_t addr, len, pgoff, ino; /* MMAP2 (ino is meaningless when misc has PERF_RECORD_MISC_MMAP_BUILD_ID) */
	uint32_t prot;            /* MMAP2 */
	uint64_t lost;            /* LOST */
	char name[4096];          /* MMAP2: the file name; COMM: the thread's name (cut to fit, NUL-terminated) */
};

/* Decodes a task record into out (only the fields of its type are set); sample_type is the events' (a COMM
 * record's time is in its sample_id_all trailer, whose fields it says). False for any other type, and for a
 * record shorter than its type's fields. */
bool perf_task_parse(const char *rec, size_t len, uint64_t sample_type, struct perf_task_rec *out);

#endif
