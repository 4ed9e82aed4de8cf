/* alloc.c — the allocation profiler in libplumb-preload.so: it interposes the malloc family and anonymous
 * mmap/munmap, and when plumb launched the process with PLUMB_ALLOC_FD (`plumb record --mode alloc`) it samples
 * allocations by bytes: each thread counts down a distance drawn from an exponential distribution whose mean is
 * the interval, so an allocation of n bytes is sampled with probability 1 - exp(-n / interval) whatever its size.
 * A sampled allocation copies its registers and a slice of its stack into the shared ring (plumb unwinds them,
 * src/sample/alloc.c) and its address goes into a lock-free set, so free() costs one counter read unless the
 * block was sampled. Invariants: an unsampled call costs a thread-local subtraction (malloc) or one read of a
 * counter table (free); no path takes a lock or allocates; allocations made while the real functions are being
 * looked up (dlsym) come from a static arena that free() recognises; without PLUMB_ALLOC_FD every call is
 * forwarded unchanged. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/gate.h"
#include "base/rand.h"
#include "lib/lib_internal.h"
#include "sample/alloc_ring.h"
#include "unwind/unwind.h"

#define EXPORT __attribute__((visibility("default")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

_Static_assert(ALLOC_NREGS == UREG_COUNT, "the ring's registers are the unwinder's");

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef void *(*memalign_fn)(size_t, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*valloc_fn)(size_t);
typedef size_t (*usable_fn)(void *);
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);

static struct {
	malloc_fn malloc;
	calloc_fn calloc;
	realloc_fn realloc;
	free_fn free;
	memalign_fn memalign, aligned_alloc;
	posix_memalign_fn posix_memalign;
	valloc_fn valloc, pvalloc;
	usable_fn usable;
	mmap_fn mmap;
	munmap_fn munmap;
} real;
static atomic_bool resolved;

static struct alloc_hdr *ah; /* NULL: not profiling (every call is forwarded) */
static int64_t interval;
static pid_t my_pid;

/* Per-thread state; initial-exec TLS, so reading it never allocates. */
struct alloc_thread {
	int64_t countdown;   /* bytes left before the next sample */
	struct rand64 rng;
	uintptr_t stack_lo, stack_hi;
	pid_t tid;           /* 0 until the first sample (and again in a forked child) */
	bool inited;
	bool busy;           /* inside the profiler: nested allocations are forwarded, not sampled */
	bool resolving;      /* inside dlsym: allocations come from the arena */
};
static __thread struct alloc_thread at __attribute__((tls_model("initial-exec")));

extern void *__libc_stack_end; /* the main thread's stack top (ld.so) */

/* ---- the start-up arena: allocations made while dlsym runs ---- */

#define BOOT_BYTES (256 * 1024)
static _Alignas(64) char boot[BOOT_BYTES];
static _Atomic size_t boot_used;

static void *boot_alloc(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	for (;;) {
		size_t used = atomic_load(&boot_used);
		size_t start = (used + 16 + align - 1) & ~(align - 1); /* 16 bytes before the block hold its size */
		if (n > BOOT_BYTES || start + n > BOOT_BYTES)
			return NULL;
		if (atomic_compare_exchange_weak(&boot_used, &used, start + n)) {
			memcpy(boot + start - sizeof n, &n, sizeof n);
			return boot + start;
		}
	}
}

static inline bool is_boot(const void *p)
{
	return (const char *)p >= boot && (const char *)p < boot + BOOT_BYTES;
}

static size_t boot_size(const void *p)
{
	size_t n;
	memcpy(&n, (const char *)p - sizeof n, sizeof n);
	return n;
}

static void resolve(void)
{
	at.resolving = true;
	real.calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
	real.realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
	real.free = (free_fn)dlsym(RTLD_NEXT, "free");
	real.memalign = (memalign_fn)dlsym(RTLD_NEXT, "memalign");
	real.aligned_alloc = (memalign_fn)dlsym(RTLD_NEXT, "aligned_alloc");
	real.posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
	real.valloc = (valloc_fn)dlsym(RTLD_NEXT, "valloc");
	real.pvalloc = (valloc_fn)dlsym(RTLD_NEXT, "pvalloc");
	real.usable = (usable_fn)dlsym(RTLD_NEXT, "malloc_usable_size");
	real.mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
	real.munmap = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
	real.malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
	at.resolving = false;
	if (real.malloc && real.free && real.calloc && real.realloc)
		atomic_store_explicit(&resolved, true, memory_order_release);
}

/* True when the real functions are known; false while dlsym runs on this thread (use the arena). */
static inline bool ready(void)
{
	if (likely(atomic_load_explicit(&resolved, memory_order_acquire)))
		return true;
	if (at.resolving)
		return false;
	resolve();
	return atomic_load_explicit(&resolved, memory_order_acquire);
}

/* ---- the sampled-address set: lock-free, keys are addresses ----
 * An address lives in one bucket of SET_WAYS slots (two cache lines), chosen by its hash; a lookup reads the
 * whole bucket, so a removal simply empties its slot (no tombstones, no chains). A bucket whose SET_WAYS slots are
 * all taken refuses the insert (the sample is counted lost): at the table's load (a few thousand sampled blocks
 * in use in 16,384 buckets) that does not happen. Beside it, a dense array counts each bucket's entries, and a
 * bitmap (2 KiB, in the first-level cache) says which counts are not 0: an unsampled free() reads one word of it. */

#define SET_BUCKET_BITS 14
#define SET_BUCKETS (1u << SET_BUCKET_BITS)
#define SET_WAYS 8

struct set_entry {
	_Atomic uint64_t key; /* 0 empty */
	_Atomic uint64_t id;
};
static struct set_entry *set;    /* SET_BUCKETS * SET_WAYS */
static _Atomic uint16_t *filter; /* entries in each bucket */
static _Atomic uint64_t *occupied; /* a bit per bucket: set while its count is not 0 (2 KiB: free() reads it) */

static inline void occupied_set(uint32_t b)
{
	atomic_fetch_or_explicit(&occupied[b >> 6], 1ull << (b & 63), memory_order_seq_cst);
}

/* The bucket's count went to 0: clear its bit, and set it again when an insert raced in (it counts, then sets). */
static inline void occupied_clear(uint32_t b)
{
	atomic_fetch_and_explicit(&occupied[b >> 6], ~(1ull << (b & 63)), memory_order_seq_cst);
	if (atomic_load_explicit(&filter[b], memory_order_seq_cst) != 0)
		occupied_set(b);
}

static inline uint32_t set_bucket(uintptr_t a)
{
	return (uint32_t)(((uint64_t)(a >> 4) * 0x9E3779B97F4A7C15ull) >> (64 - SET_BUCKET_BITS));
}

/* The raw system call, so that the profiler's own memory is never an allocation it sees. */
static void *map_anon(size_t n)
{
	void *m = (void *)syscall(SYS_mmap, NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

static bool set_insert(uintptr_t a, uint64_t id)
{
	uint32_t b = set_bucket(a);
	struct set_entry *e = &set[(size_t)b * SET_WAYS];
	for (uint32_t i = 0; i < SET_WAYS; i++) {
		uint64_t k = 0;
		if (atomic_load_explicit(&e[i].key, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong_explicit(&e[i].key, &k, a, memory_order_acq_rel, memory_order_relaxed)) {
			atomic_store_explicit(&e[i].id, id, memory_order_release);
			atomic_fetch_add_explicit(&filter[b], 1, memory_order_seq_cst);
			occupied_set(b);
			return true;
		}
	}
	return false;
}

/* Removes a and returns its id, or 0 when a was not sampled. The cheap part (the filter) is inline. */
static uint64_t set_take_slow(uintptr_t a, uint32_t b)
{
	struct set_entry *e = &set[(size_t)b * SET_WAYS];
	for (uint32_t i = 0; i < SET_WAYS; i++) {
		if (atomic_load_explicit(&e[i].key, memory_order_acquire) != a)
			continue;
		/* a's free follows its allocation, so the id was stored; read it before the slot can be reused */
		uint64_t id = atomic_load_explicit(&e[i].id, memory_order_acquire);
		uint64_t k = a;
		if (!atomic_compare_exchange_strong_explicit(&e[i].key, &k, 0, memory_order_acq_rel, memory_order_relaxed))
			return 0;
		if (atomic_fetch_sub_explicit(&filter[b], 1, memory_order_seq_cst) == 1)
			occupied_clear(b);
		return id;
	}
	return 0;
}

static inline uint64_t set_take(const void *p)
{
	uint32_t b = set_bucket((uintptr_t)p);
	if (likely((atomic_load_explicit(&occupied[b >> 6], memory_order_acquire) & (1ull << (b & 63))) == 0))
		return 0;
	return set_take_slow((uintptr_t)p, b);
}

/* ---- sampling ---- */

/* The bytes to the next sample: exponential with mean `interval` (a Poisson process over the bytes). */
static int64_t next_distance(void)
{
	double d = rand64_neg_log(rand64_unit(&at.rng)) * (double)interval;
	if (d < 1)
		return 1;
	if (d > 4.0e18)
		return (int64_t)4e18;
	return (int64_t)d;
}

static void thread_init(void)
{
	uint64_t seed = (uint64_t)syscall(SYS_gettid) * 0x9E3779B97F4A7C15ull;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	seed ^= (uint64_t)t.tv_nsec * 0xBF58476D1CE4E5B9ull ^ (uint64_t)(uintptr_t)&t;
	rand64_seed(&at.rng, seed);
	at.inited = true;
	at.countdown = next_distance();
}

/* This thread's stack, for bounded copies (the main thread: up to __libc_stack_end). */
static void find_stack(void)
{
	if ((pid_t)syscall(SYS_gettid) == getpid()) {
		uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
		at.stack_hi = (uintptr_t)__libc_stack_end;
		at.stack_lo = sp - (64u << 20);
		return;
	}
	lib_thread_stack(&at.stack_lo, &at.stack_hi);
}

/* Wakes plumb from its nap between drains. */
static void ring_doorbell(void)
{
	atomic_fetch_add_explicit(&ah->doorbell, 1, memory_order_release);
	syscall(SYS_futex, &ah->doorbell, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Claims a slot of ring r, waiting (bounded, sleeping) while plumb drains a full ring. NULL: dropped. */
static void *claim_waiting(struct alloc_ring *r, uint64_t *pos)
{
	void *s = alloc_claim(ah, r, pos);
	if (likely(s != NULL))
		return s;
	atomic_fetch_add_explicit(&ah->waits, 1, memory_order_relaxed);
	ring_doorbell();
	struct timespec nap = { 0, 50000 };
	for (int i = 0; i < 40000 && atomic_load_explicit(&ah->enabled, memory_order_relaxed); i++) {
		nanosleep(&nap, NULL);
		if ((s = alloc_claim(ah, r, pos)) != NULL)
			return s;
	}
	atomic_fetch_add_explicit(&ah->lost, 1, memory_order_relaxed);
	return NULL;
}

/* A sampled allocation of n bytes at p: into the set, then its registers and stack into the ring. Kept out of
 * line (and its frame is the innermost one plumb unwinds from; plumb trims this library's frames). */
static __attribute__((noinline)) void take_sample(void *p, size_t n, uint32_t kind)
{
	if (!atomic_load_explicit(&ah->enabled, memory_order_relaxed))
		return;
	uint64_t id = atomic_fetch_add_explicit(&ah->clock, 1, memory_order_relaxed) + 1;
	if (!set_insert((uintptr_t)p, id)) {
		atomic_fetch_add_explicit(&ah->lost, 1, memory_order_relaxed);
		return;
	}
	uint64_t pos;
	struct alloc_slot *s = claim_waiting(&ah->allocs, &pos);
	if (!s) {
		set_take(p);
		return;
	}
	if (!at.stack_hi)
		find_stack();
	uint64_t *r = s->regs;
	for (int i = 0; i < UREG_COUNT; i++)
		r[i] = 0;
	uint64_t ip, sp, bp, bx, r12, r13, r14, r15;
	__asm__ volatile("lea 0(%%rip), %0\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %%rbp, %2\n\t"
			 "mov %%rbx, %3\n\t"
			 "mov %%r12, %4\n\t"
			 "mov %%r13, %5\n\t"
			 "mov %%r14, %6\n\t"
			 "mov %%r15, %7"
			 : "=r"(ip), "=m"(sp), "=m"(bp), "=m"(bx), "=m"(r12), "=m"(r13), "=m"(r14), "=m"(r15));
	r[UREG_IP] = ip, r[UREG_SP] = sp, r[UREG_BP] = bp, r[UREG_BX] = bx;
	r[UREG_R12] = r12, r[UREG_R13] = r13, r[UREG_R14] = r14, r[UREG_R15] = r15;
	s->id = id;
	s->pid = (uint32_t)my_pid;
	if (!at.tid)
		at.tid = (pid_t)syscall(SYS_gettid);
	s->tid = (uint32_t)at.tid;
	s->size = n;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	s->time_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	s->kind = kind;
	s->stack_len = lib_copy_stack((uint8_t *)(s + 1), sp, ah->stack_bytes, at.stack_lo, at.stack_hi, my_pid);
	alloc_publish(ah, &ah->allocs, pos);
}

static void put_event(uint32_t type, uint64_t id)
{
	uint64_t pos;
	struct alloc_event_slot *s = claim_waiting(&ah->events, &pos);
	if (!s)
		return;
	s->id = id;
	s->when = atomic_fetch_add_explicit(&ah->clock, 1, memory_order_relaxed) + 1;
	s->pid = (uint32_t)my_pid;
	s->type = type;
	alloc_publish(ah, &ah->events, pos);
}

/* The slow path of an allocation: this thread's countdown ran out (or was never set). */
static __attribute__((noinline)) void *sampled(void *p, size_t n, uint32_t kind)
{
	if (at.busy || !p)
		return p;
	at.busy = true;
	bool take = true;
	if (!at.inited) {
		thread_init();
		take = (at.countdown -= (int64_t)n) <= 0;
	}
	if (take) {
		at.countdown = next_distance();
		take_sample(p, n, kind);
	}
	at.busy = false;
	return p;
}

/* Counts n bytes allocated at p; the common case is one subtraction. */
static inline void *account(void *p, size_t n, uint32_t kind)
{
	struct alloc_hdr *h = ah;
	if (likely(!h))
		return p;
	if (likely((at.countdown -= (int64_t)n) > 0))
		return p;
	return sampled(p, n, kind);
}

/* A block about to be released: when it was sampled, its free goes to the ring. */
static inline void release(const void *p)
{
	if (likely(!ah))
		return;
	uint64_t id = set_take(p);
	if (unlikely(id != 0))
		put_event(EV_FREE, id);
}

/* ---- the interposed functions ---- */

EXPORT void *malloc(size_t n)
{
	if (unlikely(!ready()))
		return boot_alloc(n, 16);
	return account(real.malloc(n), n, ALLOC_HEAP);
}

EXPORT void free(void *p)
{
	if (!p || unlikely(is_boot(p)))
		return;
	release(p);
	free_fn f = real.free;
	if (likely(f != NULL) || (ready() && (f = real.free) != NULL))
		f(p);
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(!ready()))
		return boot_alloc(n, 16); /* static memory is zeroed and never reused */
	return account(real.calloc(nmemb, size), n, ALLOC_HEAP);
}

EXPORT void *realloc(void *p, size_t n)
{
	if (unlikely(!ready())) {
		void *q = boot_alloc(n, 16);
		if (q && p)
			memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
		return q;
	}
	if (unlikely(p && is_boot(p))) {
		void *q = malloc(n);
		if (q)
			memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
		return q;
	}
	/* the old block leaves the set before the real call, so no other thread can get its address back while
	 * it is still there; a failed call puts it back */
	uint64_t id = p && ah ? set_take(p) : 0;
	void *q = real.realloc(p, n);
	if (!q && n) {
		if (id && !set_insert((uintptr_t)p, id))
			put_event(EV_FREE, id);
		return NULL;
	}
	if (id)
		put_event(EV_FREE, id);
	return q ? account(q, n, ALLOC_HEAP) : q;
}

EXPORT void *reallocarray(void *p, size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
	if (unlikely(!ready()))
		return boot_alloc(n, align);
	return account(real.memalign(align, n), n, ALLOC_HEAP);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (unlikely(!ready()))
		return boot_alloc(n, align);
	return account(real.aligned_alloc(align, n), n, ALLOC_HEAP);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (unlikely(!ready())) {
		*out = boot_alloc(n, align);
		return *out ? 0 : ENOMEM;
	}
	int r = real.posix_memalign(out, align, n);
	if (r == 0)
		account(*out, n, ALLOC_HEAP);
	return r;
}

EXPORT void *valloc(size_t n)
{
	if (unlikely(!ready()))
		return boot_alloc(n, 4096);
	return account(real.valloc(n), n, ALLOC_HEAP);
}

EXPORT void *pvalloc(size_t n)
{
	if (unlikely(!ready()))
		return boot_alloc(n, 4096);
	return account(real.pvalloc(n), n, ALLOC_HEAP);
}

/* The arena's blocks have their size beside them; every other block is the real allocator's. */
EXPORT size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	if (is_boot(p))
		return boot_size(p);
	return ready() && real.usable ? real.usable(p) : 0;
}

static void *do_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (unlikely(!ready() || !real.mmap))
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	void *m = real.mmap(addr, len, prot, flags, fd, off);
	if (m != MAP_FAILED && (flags & MAP_ANONYMOUS))
		account(m, len, ALLOC_MMAP);
	return m;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(addr, len, prot, flags, fd, off);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return do_mmap(addr, len, prot, flags, fd, off);
}

/* An unmap that starts at a sampled mapping releases all of it (a partial unmap is counted as the whole). */
EXPORT int munmap(void *addr, size_t len)
{
	release(addr);
	if (unlikely(!ready() || !real.munmap))
		return (int)syscall(SYS_munmap, addr, len);
	return real.munmap(addr, len);
}

/* ---- start-up, fork ---- */

/* A forked child keeps the parent's blocks, which belong to the parent's profile: its set starts empty. */
static void after_fork_child(void)
{
	pid_t parent = my_pid;
	my_pid = getpid();
	at.tid = 0;
	memset(set, 0, (size_t)SET_BUCKETS * SET_WAYS * sizeof *set);
	memset((void *)filter, 0, SET_BUCKETS * sizeof *filter);
	memset((void *)occupied, 0, SET_BUCKETS / 8);
	put_event(EV_FORK, (uint64_t)parent); /* plumb gives it the parent's maps: it may exec before they are read */
}

/* The header plumb wrote: its rings fit in the size mapped. */
static bool valid_shared(const void *m, uint64_t size)
{
	const struct alloc_hdr *h = m;
	uint64_t need_a = (uint64_t)h->allocs.off + (uint64_t)h->allocs.nslots * h->allocs.slot_size;
	uint64_t need_e = (uint64_t)h->events.off + (uint64_t)h->events.nslots * h->events.slot_size;
	return h->magic == ALLOC_MAGIC && h->version == ALLOC_VERSION && h->allocs.nslots && h->events.nslots &&
	       h->allocs.slot_size >= sizeof(struct alloc_slot) + h->stack_bytes &&
	       h->events.slot_size >= sizeof(struct alloc_event_slot) && need_a <= size && need_e <= size &&
	       h->interval != 0 && h->interval <= (1ull << 40);
}

__attribute__((constructor)) static void alloc_start(void)
{
	if (!getenv(ALLOC_ENV_FD) || !gate_enabled())
		return;
	at.busy = true; /* nothing the start-up allocates is sampled */
	ready();
	struct alloc_hdr *h = lib_map_env_fd(ALLOC_ENV_FD, ALLOC_HDR_SIZE, valid_shared);
	set = map_anon((size_t)SET_BUCKETS * SET_WAYS * sizeof *set);
	filter = map_anon(SET_BUCKETS * sizeof *filter);
	occupied = map_anon(SET_BUCKETS / 8);
	if (!h || !set || !filter || !occupied) {
		at.busy = false;
		return;
	}
	my_pid = getpid();
	interval = (int64_t)h->interval;
	uint32_t zero = 0;
	atomic_compare_exchange_strong(&h->attached, &zero, (uint32_t)my_pid);
	pthread_atfork(NULL, NULL, after_fork_child);
	ah = h;
	put_event(EV_START, 0); /* an exec'd image: the blocks of the one before it are gone */
	at.busy = false;
}

/* At exit: wait (bounded) until plumb has unwound every sampled allocation, while this process's maps are still
 * there to read. */
__attribute__((destructor)) static void alloc_stop(void)
{
	struct alloc_hdr *h = ah;
	if (!h)
		return;
	atomic_fetch_add_explicit(&h->exiting, 1, memory_order_release);
	ring_doorbell();
	struct timespec nap = { 0, 200000 };
	for (int i = 0; i < 10000 && atomic_load_explicit(&h->enabled, memory_order_relaxed); i++) {
		uint64_t head = atomic_load_explicit(&h->allocs.head, memory_order_acquire);
		if (atomic_load_explicit(&h->allocs_done, memory_order_acquire) >= head)
			break;
		nanosleep(&nap, NULL);
	}
	/* plumb keeps polling briefly while `exiting` is set: the exit itself follows */
}
