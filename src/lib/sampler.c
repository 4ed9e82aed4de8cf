/* sampler.c — the in-process sampler, built alone into libplumb-preload.so (never into the -lplumb library), started
 * when plumb preloads it into a command (or into its own `--call` child) with PLUMB_DEBUG on and PLUMB_INPROC_FD
 * naming the shared ring.
 * Every thread gets a POSIX timer on its own CPU clock (--mode cpu) or on CLOCK_MONOTONIC (--mode wall),
 * delivered to that thread alone (SIGEV_THREAD_ID), armed once at a time for an interval drawn at random around
 * the requested one (base/rand.h: a Poisson process, docs/design.md §5.2); threads created later are caught by
 * wrapping pthread_create. Invariant: the signal handler allocates nothing, takes no lock and calls no unwinder — it
 * copies the registers and a bounded slice of the stack into a preallocated slot of the ring
 * (inproc_ring.h) and returns; plumb unwinds outside the target. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/gate.h"
#include "base/rand.h"
#include "lib/lib_internal.h"
#include "sample/inproc_ring.h"
#include "unwind/unwind.h"

#define ALTSTACK_BYTES (64 * 1024)

_Static_assert(INPROC_NREGS == UREG_COUNT, "the ring's registers are the unwinder's");

static struct inproc_hdr *ring;
static pid_t my_pid;
static atomic_bool active;

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static _Atomic(pthread_create_fn) real_pthread_create;

/* Per-thread state; initial-exec TLS so that the signal handler reads it without calling __tls_get_addr. */
struct thread_state {
	bool registered;
	volatile bool sampling;  /* ticks are recorded (false while the thread tears its timer down) */
	pid_t tid;
	timer_t timer;
	uintptr_t stack_lo, stack_hi;
	void *altstack;
	struct rand64 rng; /* this thread's intervals */
	uint64_t armed_ns, drawn_ns; /* the timer's clock when it was armed, and for how long */
	uint64_t credit_ns;          /* cpu mode: overshoot not yet worth a whole interval */
};
static __thread struct thread_state ts __attribute__((tls_model("initial-exec")));

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL };

static pid_t gettid_raw(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ---- the signal path: async-signal-safe, no allocation, no lock ---- */

static void copy_regs(uint64_t *r, const ucontext_t *uc)
{
#if defined(__x86_64__)
	const greg_t *g = uc->uc_mcontext.gregs;
	/* the unwinder's order (enum unwind_reg, perf_regs.h); segment registers stay 0 */
	for (int i = 0; i < UREG_COUNT; i++)
		r[i] = 0;
	r[UREG_AX] = (uint64_t)g[REG_RAX], r[UREG_BX] = (uint64_t)g[REG_RBX];
	r[UREG_CX] = (uint64_t)g[REG_RCX], r[UREG_DX] = (uint64_t)g[REG_RDX];
	r[UREG_SI] = (uint64_t)g[REG_RSI], r[UREG_DI] = (uint64_t)g[REG_RDI];
	r[UREG_BP] = (uint64_t)g[REG_RBP], r[UREG_SP] = (uint64_t)g[REG_RSP];
	r[UREG_IP] = (uint64_t)g[REG_RIP], r[UREG_FLAGS] = (uint64_t)g[REG_EFL];
	r[UREG_R8] = (uint64_t)g[REG_R8], r[UREG_R9] = (uint64_t)g[REG_R9];
	r[UREG_R10] = (uint64_t)g[REG_R10], r[UREG_R11] = (uint64_t)g[REG_R11];
	r[UREG_R12] = (uint64_t)g[REG_R12], r[UREG_R13] = (uint64_t)g[REG_R13];
	r[UREG_R14] = (uint64_t)g[REG_R14], r[UREG_R15] = (uint64_t)g[REG_R15];
#else
#error "the in-process sampler reads x86_64 registers from the ucontext"
#endif
}

/* Claims a slot (inproc_claim: lock-free, drops the sample when the ring is full — the handler never waits),
 * fills it and publishes it. */
static bool take_sample(const ucontext_t *uc, uint32_t flags, uint32_t weight)
{
	struct inproc_hdr *h = ring;
	if (!h)
		return false;
	uint64_t pos;
	struct inproc_slot *s = inproc_claim(h, &pos);
	if (!s)
		return false;
	s->pid = (uint32_t)my_pid;
	s->tid = (uint32_t)(ts.tid ? ts.tid : gettid_raw());
	s->time_ns = mono_ns();
	s->flags = flags;
	s->weight = weight;
	copy_regs(s->regs, uc);
	s->stack_len =
		lib_copy_stack((uint8_t *)(s + 1), s->regs[UREG_SP], h->stack_bytes, ts.stack_lo, ts.stack_hi, my_pid);
	if (prctl(PR_GET_NAME, s->comm, 0, 0, 0) != 0)
		s->comm[0] = 0;
	inproc_publish(s, pos);
	return true;
}

static uint64_t timer_clock_ns(void)
{
	struct timespec t;
	clock_gettime(ring->mode == INPROC_WALL ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Arms the thread's timer once, for a random interval (timer_settime and clock_gettime are
 * async-signal-safe). In wall mode from the last expiry, as an absolute time, so that a signal delivered late
 * (the thread waited for a CPU: the kernel delivers on its way back to user space) does not move the ticks
 * after it; in cpu mode from now_ns, the late ones counted by late_intervals. */
static int arm_timer(uint64_t now_ns)
{
	struct itimerspec it;
	memset(&it, 0, sizeof it);
	uint64_t draw = rand64_interval_ns(&ts.rng, ring->interval_ns), due = ts.armed_ns + ts.drawn_ns;
	if (ring->mode == INPROC_WALL && ts.armed_ns && due + draw > now_ns) {
		ts.armed_ns = due;
		ts.drawn_ns = draw;
		it.it_value = ns_timespec(due + draw);
		return timer_settime(ts.timer, TIMER_ABSTIME, &it, NULL);
	}
	ts.drawn_ns = draw;
	ts.armed_ns = now_ns;
	it.it_value = ns_timespec(draw);
	return timer_settime(ts.timer, 0, &it, NULL);
}

/* cpu mode: the kernel checks CPU-clock timers only at its tick, so an expiry can come late; the intervals a
 * Poisson process would have ended in the overshoot are counted into this sample's weight (with a carried
 * remainder), as the periodic timer's overruns were. */
static uint32_t late_intervals(uint64_t now_ns)
{
	uint64_t due = ts.armed_ns + ts.drawn_ns;
	if (ring->mode != INPROC_CPU || now_ns <= due || !ring->interval_ns)
		return 0;
	ts.credit_ns += now_ns - due;
	uint64_t k = ts.credit_ns / ring->interval_ns;
	ts.credit_ns -= k * ring->interval_ns;
	return k > 1000 ? 1000 : (uint32_t)k;
}

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	int saved = errno;
	(void)si;
	uint32_t over = 0;
	if (ts.sampling && ring) {
		uint64_t now = timer_clock_ns();
		over = late_intervals(now);
		arm_timer(now);
	}
	if (ts.sampling && ring && atomic_load_explicit(&ring->enabled, memory_order_relaxed)) {
		if (over)
			atomic_fetch_add_explicit(&ring->overruns, over, memory_order_relaxed);
		/* In wall mode expiries fold only while the thread waits for a CPU; one sample per delivery keeps
		 * the estimate's variance low (a long wait would otherwise be one heavy sample). */
		take_sample(uc, 0, ring->mode == INPROC_CPU ? 1 + over : 1);
	}
	errno = saved;
}

/* Waits (bounded, sleeping) until plumb has acknowledged — it reads the process maps while we still live. */
static void wait_ack(uint64_t max_ns)
{
	uint64_t deadline = mono_ns() + max_ns;
	struct timespec nap = ns_timespec(1000000);
	while (!atomic_load_explicit(&ring->ack, memory_order_acquire) && mono_ns() < deadline)
		nanosleep(&nap, NULL);
}

/* A fatal signal: record the stack at the crash (marked), let plumb read the maps, then die of the signal. */
static void on_crash(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	if (ring && atomic_load_explicit(&ring->enabled, memory_order_relaxed)) {
		atomic_store_explicit(&ring->ack, 0, memory_order_release);
		if (take_sample(uc, INPROC_F_CRASH | ((uint32_t)sig << 8), 1))
			wait_ack(2000000000ull);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig); /* pending until we return; a fault re-executes and dies of the default action anyway */
}

/* ---- threads ---- */

static void register_thread(void)
{
	if (!ring || ts.registered)
		return;
	ts.tid = gettid_raw();
	lib_thread_stack(&ts.stack_lo, &ts.stack_hi);
	/* An alternate stack so that the crash handler runs even when the crash is a stack overflow. */
	stack_t cur;
	if (sigaltstack(NULL, &cur) == 0 && (cur.ss_flags & SS_DISABLE)) {
		void *alt = mmap(NULL, ALTSTACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (alt != MAP_FAILED) {
			stack_t ss = { .ss_sp = alt, .ss_size = ALTSTACK_BYTES, .ss_flags = 0 };
			if (sigaltstack(&ss, NULL) == 0)
				ts.altstack = alt;
			else
				munmap(alt, ALTSTACK_BYTES);
		}
	}
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = INPROC_SIGNAL;
	sev._sigev_un._tid = ts.tid; /* sigev_notify_thread_id */
	clockid_t clock = ring->mode == INPROC_WALL ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
	if (timer_create(clock, &sev, &ts.timer) != 0) {
		atomic_fetch_add_explicit(&ring->timer_errors, 1, memory_order_relaxed);
		return;
	}
	rand64_seed(&ts.rng, mono_ns() ^ ((uint64_t)ts.tid << 32));
	if (arm_timer(timer_clock_ns()) != 0) {
		timer_delete(ts.timer);
		atomic_fetch_add_explicit(&ring->timer_errors, 1, memory_order_relaxed);
		return;
	}
	ts.registered = true;
	ts.sampling = true;
	atomic_fetch_add_explicit(&ring->threads, 1, memory_order_relaxed);
}

static void unregister_thread(void *unused)
{
	(void)unused;
	ts.sampling = false;
	if (ts.registered) {
		timer_delete(ts.timer);
		ts.registered = false;
	}
	if (ts.altstack) {
		stack_t ss = { .ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE };
		if (sigaltstack(&ss, NULL) == 0)
			munmap(ts.altstack, ALTSTACK_BYTES);
		ts.altstack = NULL;
	}
}

struct start_arg {
	void *(*fn)(void *);
	void *arg;
};

static void *thread_start(void *p)
{
	struct start_arg a = *(struct start_arg *)p;
	free(p);
	register_thread();
	void *ret;
	pthread_cleanup_push(unregister_thread, NULL);
	ret = a.fn(a.arg);
	pthread_cleanup_pop(1);
	return ret;
}

static pthread_create_fn resolve_pthread_create(void)
{
	pthread_create_fn f = atomic_load_explicit(&real_pthread_create, memory_order_acquire);
	if (!f) {
		f = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
		atomic_store_explicit(&real_pthread_create, f, memory_order_release);
	}
	return f;
}

/* Interposes pthread_create (the library is preloaded) so that every new thread starts its own timer before
 * running its start routine and deletes it when it ends. Without an active sampler it only forwards. */
__attribute__((visibility("default"))) int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
							  void *(*fn)(void *), void *arg)
{
	pthread_create_fn real = resolve_pthread_create();
	if (!real)
		return EAGAIN;
	if (!atomic_load_explicit(&active, memory_order_relaxed))
		return real(thread, attr, fn, arg);
	struct start_arg *a = malloc(sizeof *a);
	if (!a)
		return real(thread, attr, fn, arg);
	a->fn = fn;
	a->arg = arg;
	int r = real(thread, attr, thread_start, a);
	if (r != 0)
		free(a);
	return r;
}

/* A forked child has one thread and no timers (they are not inherited): give it its own. */
static void after_fork_child(void)
{
	my_pid = getpid();
	ts.registered = false;
	ts.altstack = NULL; /* the mapping was inherited and stays registered with sigaltstack */
	register_thread();
}

/* ---- start-up ---- */

/* The header plumb wrote: its ring fits in the size mapped. */
static bool valid_ring(const void *m, uint64_t size)
{
	const struct inproc_hdr *h = m;
	return h->magic == INPROC_MAGIC && h->version == INPROC_VERSION && h->hdr_size >= sizeof *h &&
	       (uint64_t)h->hdr_size + (uint64_t)h->nslots * h->slot_size <= size && h->nslots;
}

static __attribute__((noinline)) int invoke(void *fn)
{
	int r = ((int (*)(void))fn)();
	__asm__ volatile("" ::: "memory"); /* keep this frame: no tail call */
	return r;
}

static void call_failed(const char *what, const char *err)
{
	snprintf(ring->call_error, sizeof ring->call_error, "%s", err ? err : what);
	atomic_store_explicit(&ring->call_state, CALL_FAILED, memory_order_release);
	_exit(2);
}

/* `plumb record --call LIB:SYMBOL`: plumb runs itself with this library preloaded; we load LIB, resolve
 * SYMBOL, sample while it runs, and exit without ever returning to plumb's main(). */
static void run_call(const char *lib, const char *sym)
{
	atomic_store_explicit(&ring->call_state, CALL_LOADING, memory_order_release);
	void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		call_failed("dlopen failed", dlerror());
	dlerror();
	void *fn = dlsym(dl, sym);
	const char *err = dlerror();
	if (err || !fn)
		call_failed("symbol resolves to NULL", err);
	atomic_store_explicit(&ring->call_state, CALL_READY, memory_order_release);
	wait_ack(2000000000ull);
	atomic_store_explicit(&ring->call_state, CALL_RUNNING, memory_order_release);
	register_thread();
	int r = invoke(fn);
	if (atomic_load(&ring->attached) != (uint32_t)getpid()) {
		/* A process the function forked returned from it too: only the host's return is the call's. */
		unregister_thread(NULL);
		fflush(NULL);
		_exit(0);
	}
	ring->call_ret = r;
	atomic_store_explicit(&ring->call_state, CALL_RETURNED, memory_order_release);
	unregister_thread(NULL);
	fflush(NULL);
	_exit(0);
}

__attribute__((constructor)) static void sampler_start(void)
{
	if (!getenv(INPROC_ENV_FD) || !gate_enabled())
		return;
	struct inproc_hdr *h = lib_map_env_fd(INPROC_ENV_FD, INPROC_HDR_SIZE, valid_ring);
	if (!h)
		return;
	resolve_pthread_create();
	my_pid = getpid();
	ring = h;
	uint32_t zero = 0;
	atomic_compare_exchange_strong(&h->attached, &zero, (uint32_t)my_pid);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(INPROC_SIGNAL, &sa, NULL) != 0) {
		ring = NULL;
		return;
	}
	for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++) {
		struct sigaction old;
		if (sigaction(crash_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
			continue; /* the program (or a sanitizer) handles it: leave it alone */
		struct sigaction c;
		memset(&c, 0, sizeof c);
		c.sa_sigaction = on_crash;
		c.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
		sigemptyset(&c.sa_mask);
		sigaddset(&c.sa_mask, INPROC_SIGNAL);
		sigaction(crash_signals[i], &c, NULL);
	}
	pthread_atfork(NULL, NULL, after_fork_child);
	atomic_store_explicit(&active, true, memory_order_release);

	const char *lib = getenv(INPROC_ENV_CALL_LIB), *sym = getenv(INPROC_ENV_CALL_SYM);
	if (lib && sym && atomic_load(&h->attached) == (uint32_t)my_pid) {
		/* Children of the called function must not run it again. */
		unsetenv(INPROC_ENV_CALL_LIB);
		unsetenv(INPROC_ENV_CALL_SYM);
		run_call(lib, sym);
	}
	register_thread();
}
