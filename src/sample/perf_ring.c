/* perf_ring.c — perf_event_open, its ring buffers and its sample records (perf_ring.h). The kernel writes whole
 * records and then moves data_head; we read up to that head and move data_tail, so a record is never read while
 * the kernel writes it, and its space is not reused before we let go of it. */
#include "sample/perf_ring.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

bool perf_ring_map(struct perf_ring *r, int fd, size_t pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (pages + 1) * page;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return false;
	r->fd = fd;
	r->meta = m;
	r->data = (char *)m + page;
	r->data_size = pages * page;
	r->map_size = len;
	return true;
}

void perf_ring_unmap(struct perf_ring *r)
{
	if (r->meta)
		munmap(r->meta, r->map_size);
	r->meta = NULL;
	r->data = NULL;
}

size_t perf_ring_drain(struct perf_ring *r, char *scratch, size_t scratch_size, perf_record_fn fn, void *ctx)
{
	if (!r->meta)
		return 0;
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&r->peeking, __ATOMIC_ACQUIRE)) {
		uint64_t seen = __atomic_load_n(&r->peeked, __ATOMIC_ACQUIRE);
		head = seen < head ? seen : head;
	}
	uint64_t tail = r->meta->data_tail;
	size_t n = 0;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		size_t off = (size_t)(tail % r->data_size), to_end = r->data_size - off;
		if (to_end >= sizeof h) {
			memcpy(&h, r->data + off, sizeof h);
		} else {
			memcpy(&h, r->data + off, to_end);
			memcpy((char *)&h + to_end, r->data, sizeof h - to_end);
		}
		if (h.size < sizeof h || tail + h.size > head)
			break;
		if (h.size <= to_end) {
			fn(ctx, r->data + off, h.size);
			n++;
		} else if (h.size <= scratch_size) { /* wraps: copy it out whole */
			memcpy(scratch, r->data + off, to_end);
			memcpy(scratch + to_end, r->data, h.size - to_end);
			fn(ctx, scratch, h.size);
			n++;
		}
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

size_t perf_ring_peek(struct perf_ring *r, perf_peek_fn fn, void *ctx)
{
	if (!r->meta)
		return 0;
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t pos = __atomic_load_n(&r->peeked, __ATOMIC_RELAXED), tail = r->meta->data_tail;
	if (pos < tail) /* not peeked at since the drains began: start where they are */
		pos = tail;
	size_t n = 0;
	unsigned char buf[sizeof(struct perf_event_header) + 32];
	while (pos + sizeof(struct perf_event_header) <= head) {
		size_t off = (size_t)(pos % r->data_size), to_end = r->data_size - off;
		size_t want = sizeof buf;
		if (want > to_end) {
			memcpy(buf, r->data + off, to_end);
			memcpy(buf + to_end, r->data, want - to_end);
		} else {
			memcpy(buf, r->data + off, want);
		}
		struct perf_event_header h;
		memcpy(&h, buf, sizeof h);
		if (h.size < sizeof h || pos + h.size > head)
			break;
		size_t body = h.size - sizeof h;
		fn(ctx, h.type, buf + sizeof h, body < 32 ? body : 32);
		n++;
		pos += h.size;
	}
	__atomic_store_n(&r->peeked, pos, __ATOMIC_RELEASE);
	return n;
}

/* Takes sizeof(dst) bytes from *p into dst; false when that passes end. */
#define TAKE(dst)                                         \
	do {                                              \
		if ((size_t)(end - p) < sizeof(dst))      \
			return false;                     \
		memcpy(&(dst), p, sizeof(dst));           \
		p += sizeof(dst);                         \
	} while (0)

bool perf_sample_parse(uint64_t sample_type, const char *rec, size_t len, struct perf_sample *sv)
{
	const char *p = rec + sizeof(struct perf_event_header), *end = rec + len;
	memset(sv, 0, sizeof *sv);
	if (len < sizeof(struct perf_event_header))
		return false;
	if (sample_type & PERF_SAMPLE_IDENTIFIER)
		TAKE(sv->id);
	if (sample_type & PERF_SAMPLE_IP)
		TAKE(sv->ip);
	if (sample_type & PERF_SAMPLE_TID) {
		TAKE(sv->pid);
		TAKE(sv->tid);
	}
	if (sample_type & PERF_SAMPLE_TIME)
		TAKE(sv->time);
	if (sample_type & PERF_SAMPLE_PERIOD) {
		uint64_t period;
		TAKE(period);
	}
	if (sample_type & PERF_SAMPLE_CALLCHAIN) {
		TAKE(sv->nr);
		if ((size_t)(end - p) / 8 < sv->nr)
			return false;
		sv->chain = (const uint64_t *)p;
		p += sv->nr * 8;
	}
	if (sample_type & PERF_SAMPLE_REGS_USER) {
		TAKE(sv->abi);
		if (sv->abi) {
			size_t nregs = (size_t)__builtin_popcountll(UNWIND_REGS_MASK);
			if ((size_t)(end - p) / 8 < nregs)
				return false;
			sv->regs = (const uint64_t *)p;
			p += nregs * 8;
		}
	}
	if (sample_type & PERF_SAMPLE_STACK_USER) {
		TAKE(sv->stack_size);
		if (sv->stack_size) {
			if ((size_t)(end - p) < sv->stack_size)
				return false;
			sv->stack = (const uint8_t *)p;
			p += sv->stack_size;
			TAKE(sv->stack_dyn);
			if (sv->stack_dyn > sv->stack_size)
				sv->stack_dyn = sv->stack_size;
		}
	}
	return true;
}

#undef TAKE

void perf_sample_regs(const struct perf_sample *s, struct unwind_regs *out)
{
	memset(out, 0, sizeof *out);
	if (!s->regs)
		return;
	size_t k = 0;
	for (int r = 0; r < UREG_COUNT; r++)
		if (UNWIND_REGS_MASK & (1ULL << r))
			out->r[r] = s->regs[k++];
}

/* The task records as the kernel writes them (sample_id_all trailers, when asked for, follow and are ignored). */
struct mmap2_layout {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	char filename[];
};
struct comm_layout {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};
struct task_layout { /* PERF_RECORD_FORK and PERF_RECORD_EXIT */
	struct perf_event_header h;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
struct lost_layout {
	struct perf_event_header h;
	uint64_t id, lost;
};

/* Copies the NUL-terminated (or record-ending) string at src, of at most avail bytes, into dst (n bytes). */
static void task_string(char *dst, size_t n, const char *src, size_t avail)
{
	size_t len = strnlen(src, avail < n - 1 ? avail : n - 1);
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* The time in a record's sample_id_all trailer: its last fields, { pid, tid } { time } { id } { stream_id }
 * { cpu, res } { identifier }, each there when sample_type asks for it. 0 without one. */
static uint64_t trailer_time(const char *rec, size_t len, size_t fields, uint64_t sample_type)
{
	if (!(sample_type & PERF_SAMPLE_TIME))
		return 0;
	const uint64_t in_trailer[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
					PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER };
	size_t size = 0;
	for (size_t i = 0; i < sizeof in_trailer / sizeof in_trailer[0]; i++)
		size += (sample_type & in_trailer[i]) ? 8 : 0;
	if (len < fields + size)
		return 0;
	uint64_t time;
	memcpy(&time, rec + len - size + ((sample_type & PERF_SAMPLE_TID) ? 8 : 0), sizeof time);
	return time;
}

bool perf_task_parse(const char *rec, size_t len, uint64_t sample_type, struct perf_task_rec *out)
{
	const struct perf_event_header *h = (const void *)rec;
	out->type = 0;
	out->misc = h->misc;
	if (h->type == PERF_RECORD_MMAP2 && len >= sizeof(struct mmap2_layout)) {
		const struct mmap2_layout *m = (const void *)rec;
		out->pid = m->pid;
		out->tid = m->tid;
		out->addr = m->addr;
		out->len = m->len;
		out->pgoff = m->pgoff;
		out->ino = m->ino;
		out->prot = m->prot;
		task_string(out->name, sizeof out->name, m->filename, len - sizeof *m);
	} else if (h->type == PERF_RECORD_COMM && len >= sizeof(struct comm_layout)) {
		const struct comm_layout *c = (const void *)rec;
		out->pid = c->pid;
		out->tid = c->tid;
		task_string(out->name, sizeof out->name, c->comm, len - sizeof *c);
		out->time = trailer_time(rec, len, sizeof *c + strnlen(c->comm, len - sizeof *c) + 1, sample_type);
	} else if ((h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) && len >= sizeof(struct task_layout)) {
		const struct task_layout *t = (const void *)rec;
		out->pid = t->pid;
		out->ppid = t->ppid;
		out->tid = t->tid;
		out->ptid = t->ptid;
		out->time = t->time;
	} else if (h->type == PERF_RECORD_LOST && len >= sizeof(struct lost_layout)) {
		out->lost = ((const struct lost_layout *)rec)->lost;
	} else {
		return false;
	}
	out->type = h->type;
	return true;
}
