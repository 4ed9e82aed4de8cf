/* ptrace.c — the `ptrace` backend: attach to a running process where perf_event_open is refused. Every thread
 * is seized with PTRACE_SEIZE (which does not stop it; threads created later are seized by the kernel through
 * PTRACE_O_TRACECLONE). At each tick the threads to sample are interrupted (PTRACE_INTERRUPT), their registers
 * (PTRACE_GETREGS) and a slice of their stack (process_vm_readv) are copied, and they are resumed at once;
 * unwinding happens afterwards, with the same unwinders as perf_event. Invariant: no thread is left stopped —
 * every stop we cause is resumed before the next tick, signals are re-injected, and on every way out we detach
 * (the kernel detaches and resumes the threads too if plumb itself dies). */
#include "sample/backend.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/clock.h"
#include "os/procfs.h"
#include "base/rand.h"
#include "symbol/maps.h"
#include "unwind/unwind.h"

#define MAX_FRAMES 256
#define STOP_WAIT_NS 200000000ull /* how long a tick waits for an interrupted thread to stop */
#define DEFER_MAX 32              /* --mode cpu: ticks a due sample waits to catch its thread on a CPU */
#define CATCH_UP 16               /* --mode cpu: intervals of CPU past due a thread's credit keeps */

struct pt_thread {
	pid_t tid;
	bool want;          /* interrupted for a sample, stop not seen yet */
	bool sampled;       /* registers and stack copied this tick */
	bool gone;
	uint64_t runtime;   /* ns on CPU (schedstat) at the last tick */
	int64_t credit;     /* --mode cpu: CPU time not yet sampled (ns) */
	int64_t due;        /* --mode cpu: the credit its next sample waits for, a random interval */
	uint64_t slices;    /* --mode cpu: times put on a CPU (schedstat) when it was interrupted */
	bool waited;        /* --mode cpu: it was put on a CPU between the tick and its stop */
	bool at_syscall;    /* --mode cpu: it stopped on its way out of a system call (orig_rax >= 0) */
	bool forced;        /* --mode cpu: interrupted off a CPU after DEFER_MAX ticks of waiting to catch it on one */
	bool tick_wants;    /* this tick interrupts it */
	int cpu;            /* --mode cpu: the CPU it was last on at this tick (-1: unknown) */
	int deferred;       /* --mode cpu: ticks its due sample has waited to catch it on a CPU */
	struct unwind_regs regs;
	uint8_t *stack;
	size_t stack_len;
	uint64_t time_ns;
};

struct pt_state {
	const struct record_opts *opts;
	struct profile *p;
	pid_t pid;
	struct maps *maps;
	struct unwinder *unw;
	struct pt_thread *t;
	size_t nt, cap;
	size_t stack_bytes;
	uint64_t ticks, lost;
	uint64_t stopped_ns;  /* total time threads spent stopped by us */
	uint64_t stops;
	bool behind;          /* --mode cpu: a thread's credit is still due after this tick: the next comes sooner */
	int sigchld_fd;       /* signalfd for SIGCHLD: wakes us when a tracee stops */
	str_id s_unknown;
	struct rand64 rng;    /* the intervals between ticks */
	bool leader_ended;    /* the process's end was reported to us, its tracer: */
	int leader_status;    /* its wait status (exit code or killing signal) */
	cpu_set_t allowed;    /* the sampling thread's own CPUs as it started (has_allowed) */
	cpu_set_t placed;     /* the CPUs it is kept on now */
	bool has_allowed;
};

static struct pt_thread *find_thread(struct pt_state *st, pid_t tid)
{
	for (size_t i = 0; i < st->nt; i++)
		if (st->t[i].tid == tid && !st->t[i].gone)
			return &st->t[i];
	return NULL;
}

static struct pt_thread *add_thread(struct pt_state *st, pid_t tid)
{
	struct pt_thread *t = find_thread(st, tid);
	if (t)
		return t;
	if (!ALLOC_GROW(st->t, st->nt + 1, st->cap))
		return NULL;
	t = &st->t[st->nt];
	memset(t, 0, sizeof *t);
	t->cpu = -1;
	t->stack = malloc(st->stack_bytes);
	if (!t->stack)
		return NULL;
	t->tid = tid;
	st->nt++;
	return t;
}

static void copy_sample(struct pt_state *st, struct pt_thread *t)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) != 0)
		return;
	unwind_regs_from_user(&t->regs, &r);
	t->at_syscall = (long long)r.orig_rax >= 0;
	struct iovec local = { t->stack, st->stack_bytes }, remote = { (void *)(uintptr_t)r.rsp, st->stack_bytes };
	ssize_t n = process_vm_readv(st->pid, &local, 1, &remote, 1, 0);
	if (n < 0 && errno == EFAULT) {
		/* the stack ends before stack_bytes: read up to the end of its page */
		remote.iov_len = local.iov_len = 4096 - (r.rsp & 4095);
		n = process_vm_readv(st->pid, &local, 1, &remote, 1, 0);
	}
	t->stack_len = n > 0 ? (size_t)n : 0;
	t->time_ns = mono_ns();
	t->sampled = true;
	if (st->opts->mode == MODE_CPU) { /* stopped, its run time is exact: what it ran up to here counts */
		struct procfs_sched now;
		t->waited = false;
		if (procfs_sched_read(st->pid, t->tid, &now)) {
			t->waited = now.slices != t->slices;
			t->credit += now.run_ns > t->runtime ? (int64_t)(now.run_ns - t->runtime) : 0;
			t->runtime = now.run_ns;
		}
	}
}

/* Handles one wait status of a tracee; resumes it unless it is gone. */
static void handle_stop(struct pt_state *st, pid_t tid, int status)
{
	struct pt_thread *t = find_thread(st, tid);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		if (t)
			t->gone = true;
		if (tid == st->pid) { /* the leader's status is the process's: a tracer is told it, as a parent is */
			st->leader_ended = true;
			st->leader_status = status;
		}
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	int sig = WSTOPSIG(status);
	int event = status >> 16;
	if (!t)
		t = add_thread(st, tid); /* a new thread's first stop can arrive before its parent's clone event */
	if (event == PTRACE_EVENT_CLONE) {
		unsigned long child = 0;
		if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &child) == 0)
			add_thread(st, (pid_t)child);
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	}
	if (event == PTRACE_EVENT_STOP) {
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			/* a group stop (the process was stopped by a signal): keep it stopped, as without us */
			if (t && t->want)
				t->want = false;
			ptrace(PTRACE_LISTEN, tid, NULL, NULL);
			return;
		}
		if (t && t->want) {
			copy_sample(st, t);
			t->want = false;
		}
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	}
	if (event) { /* exec, exit, fork events: nothing to do */
		ptrace(PTRACE_CONT, tid, NULL, NULL);
		return;
	}
	/* signal-delivery-stop: deliver the signal as if we were not there */
	ptrace(PTRACE_CONT, tid, NULL, (void *)(uintptr_t)sig);
}

/* Collects every pending tracee event without blocking; returns how many. */
static size_t poll_events(struct pt_state *st)
{
	size_t n = 0;
	for (;;) {
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG | __WALL);
		if (w <= 0)
			return n;
		handle_stop(st, w, status);
		n++;
	}
}

/* Waits until no thread has an unanswered interrupt, or the deadline passes. */
static void wait_wanted(struct pt_state *st)
{
	uint64_t deadline = mono_ns() + STOP_WAIT_NS;
	for (;;) {
		poll_events(st);
		bool pending = false;
		for (size_t i = 0; i < st->nt; i++)
			if (st->t[i].want && !st->t[i].gone)
				pending = true;
		uint64_t now = mono_ns();
		if (!pending || now >= deadline)
			break;
		if (st->sigchld_fd >= 0) {
			struct pollfd pfd = { .fd = st->sigchld_fd, .events = POLLIN };
			/* at most 0.1 ms at a time: SIGCHLD is sent to the process, and where the backend runs in a thread
			 * of its own (top, metrics) another thread that does not block it takes it, so the descriptor may
			 * never wake (top --backend ptrace kept its target stopped 80% of the time so) */
			uint64_t wait = deadline - now < 100000 ? deadline - now : 100000;
			struct timespec to = ns_timespec(wait);
			if (ppoll(&pfd, 1, &to, NULL) > 0) {
				struct signalfd_siginfo si[8];
				while (read(st->sigchld_fd, si, sizeof si) > 0)
					;
			}
		} else {
			struct timespec nap = ns_timespec(20000);
			nanosleep(&nap, NULL);
		}
	}
	for (size_t i = 0; i < st->nt; i++)
		if (st->t[i].want) { /* it will stop later; handle_stop resumes it then */
			st->t[i].want = false;
			st->lost++;
		}
}

static uint32_t user_frame(struct pt_state *st, uint64_t addr, bool caller)
{
	uint64_t look = caller ? addr - 1 : addr;
	const struct map_entry *m = maps_find(st->maps, st->pid, look);
	if (!m) {
		maps_load_proc(st->maps, st->pid);
		m = maps_find(st->maps, st->pid, look);
	}
	return backend_user_frame(st->p, m, addr, caller, st->s_unknown);
}

static void record_sample(struct pt_state *st, struct pt_thread *t, uint64_t origin)
{
	uint64_t ips[MAX_FRAMES];
	size_t n = st->opts->unwind == UNWIND_FP
			   ? unwind_fp(&t->regs, t->stack, t->stack_len, ips, MAX_FRAMES)
			   : unwind_dwarf(st->unw, st->pid, &t->regs, t->stack, t->stack_len, ips, MAX_FRAMES);
	if (n == 0) {
		ips[0] = t->regs.r[UREG_IP];
		n = 1;
	}
	uint32_t frames[MAX_FRAMES];
	for (size_t i = 0; i < n; i++)
		frames[n - 1 - i] = user_frame(st, ips[i], i > 0);
	char name[PROCFS_COMM_MAX];
	procfs_comm(st->pid, t->tid, name, sizeof name);
	uint32_t thread = profile_thread(st->p, (uint32_t)st->pid, (uint32_t)t->tid, name[0] ? name : NULL);
	uint32_t stack = profile_stack_from(st->p, frames, n);
	profile_add_sample(st->p, stack, thread, t->time_ns > origin ? t->time_ns - origin : 0, 1);
	st->ticks++;
}

/* Seizes every thread of the process (again until no new one shows up). */
static enum plumb_err seize_all(struct pt_state *st, struct perr *e)
{
	for (int round = 0; round < 10; round++) {
		struct procfs_dir d;
		if (!procfs_tasks_open(&d, st->pid))
			return perr_set(e, PLUMB_EINVAL, "process %d does not exist", (int)st->pid);
		bool added = false;
		for (pid_t tid; (tid = procfs_dir_next(&d)) > 0;) {
			if (find_thread(st, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(uintptr_t)PTRACE_O_TRACECLONE) != 0) {
				int err = errno;
				if (err == ESRCH)
					continue; /* the thread ended meanwhile */
				procfs_dir_close(&d);
				char why[512];
				describe_attach_refusal(st->pid, "ptrace", err, why, sizeof why);
				return perr_set(e, err == EPERM || err == EACCES ? PLUMB_EPERM : PLUMB_EUNSUPPORTED, "%s", why);
			}
			if (!add_thread(st, tid)) {
				procfs_dir_close(&d);
				return perr_set(e, PLUMB_ENOMEM, "ptrace: out of memory");
			}
			added = true;
		}
		procfs_dir_close(&d);
		if (!added)
			break;
	}
	return PLUMB_OK;
}

/* Interrupts and detaches every thread, including threads whose creation is reported meanwhile; none stays
 * stopped (a thread in a group stop stays in it, as it would without us). */
static void detach_all(struct pt_state *st)
{
	for (size_t i = 0; i < st->nt; i++)
		if (!st->t[i].gone && ptrace(PTRACE_INTERRUPT, st->t[i].tid, NULL, NULL) != 0)
			st->t[i].gone = true;
	uint64_t deadline = mono_ns() + 1000000000ull;
	while (mono_ns() < deadline) {
		bool left = false;
		for (size_t i = 0; i < st->nt; i++)
			left |= !st->t[i].gone;
		if (!left)
			break;
		int status;
		pid_t w = waitpid(-1, &status, WNOHANG | __WALL);
		if (w < 0)
			break; /* ECHILD: no tracee left */
		if (w == 0) {
			struct timespec nap = ns_timespec(100000);
			nanosleep(&nap, NULL);
			continue;
		}
		if (WIFSTOPPED(status)) {
			int event = status >> 16, sig = WSTOPSIG(status);
			unsigned long child = 0;
			if (event == PTRACE_EVENT_CLONE && ptrace(PTRACE_GETEVENTMSG, w, NULL, &child) == 0)
				add_thread(st, (pid_t)child); /* it starts stopped and reports here */
			/* a pending signal (signal-delivery-stop) is handed back on detach */
			ptrace(PTRACE_DETACH, w, NULL, (void *)(uintptr_t)(event == 0 ? sig : 0));
		}
		struct pt_thread *t = find_thread(st, w);
		if (t)
			t->gone = true;
	}
	/* anything still attached is detached by the kernel when plumb exits, and resumed */
}

/* At most CATCH_UP intervals past due are kept: what the tracer missed is made up for by ticks that come sooner
 * (pt_loop), not without end. */
static void cap_credit(struct pt_thread *t, int64_t iv)
{
	if (t->credit > t->due + iv * CATCH_UP)
		t->credit = t->due + iv * CATCH_UP;
}

/* --mode cpu: whether to interrupt t at this tick. A sample for each interval's worth of CPU the thread used,
 * the rounding carried: a thread that ran at all since the last tick is not sampled at every tick (a server's
 * 0.2 ms bursts read 7-9 times their CPU so), nor one that waited for a CPU half the time.
 * Where a sample lands must not depend on what decides to take it. The run time in schedstat is brought up to
 * date only by the scheduler's tick and its own events, among them the thread's system calls that read a CPU
 * clock; deciding by it at the tick samples a thread soon after such a call (split attached at 1 kHz read path_a
 * 46-47% for 50 and 1.2% in clock_gettime, on a quiet machine). So a thread on a CPU is interrupted at every tick
 * and the sample is kept or dropped after it stopped, by its exact run time then (record loop). And only a thread
 * on a CPU is stopped where it runs: one waiting for a CPU stops where it was preempted, and preemption is not
 * uniform in CPU time (the scheduler acts on a used-up slice in the kernel's own paths, so on a loaded machine at
 * the thread's system calls: split beside two busy loops read 26% of its samples in clock_gettime, path_a 36-46%).
 * A due sample waits up to DEFER_MAX ticks to catch its thread on a CPU, then is taken where the thread is (on
 * one CPU, the tracer's, it never is on one at a tick). */
static bool cpu_tick_wants(struct pt_state *st, struct pt_thread *t)
{
	struct procfs_sched ss = { 0 };
	procfs_sched_read(st->pid, t->tid, &ss);
	bool first = !t->runtime;
	t->credit += t->runtime && ss.run_ns > t->runtime ? (int64_t)(ss.run_ns - t->runtime) : 0;
	t->runtime = ss.run_ns;
	t->slices = ss.slices;
	int64_t iv = (int64_t)backend_interval_ns(st->opts);
	if (!t->due) /* a random amount of CPU, not a fixed one: that would lock onto a rhythm */
		t->due = (int64_t)rand64_interval_ns(&st->rng, (uint64_t)iv);
	cap_credit(t, iv);
	if (first)
		return false;
	struct procfs_stat ps;
	t->forced = false;
	bool read = procfs_stat_read(st->pid, t->tid, &ps);
	t->cpu = read ? ps.processor : -1;
	if (read && ps.state == 'R')
		return true;
	if (t->credit < t->due)
		return false;
	if (t->deferred < DEFER_MAX) {
		t->deferred++;
		st->behind = true;
		return false;
	}
	t->forced = true;
	return true;
}

/* --mode cpu, after t stopped: whether its sample is kept — its credit reached the drawn amount, and it was not
 * put on a CPU since the tick to stop leaving a system call (it was asleep in the call or preempted at its end,
 * not running there) unless it has waited DEFER_MAX ticks. A thread preempted in user code stops where the
 * scheduler's tick found it, which is as good as a stop where it runs. A kept sample stands for one drawn amount
 * (a sample weighted by several would make counts lumpier than the binomial counts plumb diff tests); what a
 * dropped stop leaves in the credit, and any amount still due, makes the next tick come sooner (st->behind). */
static bool cpu_sample_kept(struct pt_state *st, struct pt_thread *t)
{
	int64_t iv = (int64_t)backend_interval_ns(st->opts);
	cap_credit(t, iv);
	if (t->credit < t->due)
		return false;
	if (t->waited && t->at_syscall && !t->forced && t->deferred < DEFER_MAX) {
		t->deferred++;
		st->behind = true;
		return false;
	}
	t->deferred = 0;
	t->credit -= t->due;
	t->due = (int64_t)rand64_interval_ns(&st->rng, (uint64_t)iv);
	if (t->credit >= t->due)
		st->behind = true;
	return true;
}

/* --mode cpu: the sampling thread keeps off the CPUs of the target's threads while it has others. A stopping
 * tracee wakes its tracer synchronously, which moves the tracer onto the tracee's CPU; there every tick of the
 * tracer preempts the thread it is about to interrupt, which waits for the tick to end and stops at its next
 * switch-in, where it woke from a call it slept in or where the tracer preempted it: a thread that waited for a
 * CPU to cpu_sample_kept, dropped at a system call. A server of 0.3 ms rounds attached on a quiet 2-CPU machine
 * had a new slice at 98% of its stops and got 0.5-0.55 of its CPU time in samples; kept off its CPU, 0.98-1.03. */
static void stay_off_targets(struct pt_state *st)
{
	if (!st->has_allowed)
		return;
	/* off every thread's last CPU if it can be, else off those of the threads it interrupts now */
	cpu_set_t off_all = st->allowed, off_wanted = st->allowed;
	for (size_t i = 0; i < st->nt; i++) {
		const struct pt_thread *t = &st->t[i];
		if (t->gone || t->cpu < 0 || t->cpu >= CPU_SETSIZE)
			continue;
		CPU_CLR(t->cpu, &off_all);
		if (t->tick_wants)
			CPU_CLR(t->cpu, &off_wanted);
	}
	const cpu_set_t *want = CPU_COUNT(&off_all)      ? &off_all
				: CPU_COUNT(&off_wanted) ? &off_wanted
							 : &st->allowed; /* a thread to sample on every CPU */
	if (CPU_EQUAL(want, &st->placed))
		return;
	if (sched_setaffinity(0, sizeof *want, want) == 0)
		st->placed = *want;
}

/* One tick: interrupts the threads to sample — all of them (wall), or those that ran since the last tick (cpu)
 * — copies their registers and stacks as they stop, resumes them, and unwinds the copies afterwards. */
static void pt_tick(struct pt_state *st, uint64_t origin)
{
	size_t want = 0;
	for (size_t i = 0; i < st->nt; i++) {
		struct pt_thread *t = &st->t[i];
		t->tick_wants = !t->gone && (st->opts->mode != MODE_CPU || cpu_tick_wants(st, t));
	}
	if (st->opts->mode == MODE_CPU)
		stay_off_targets(st);
	for (size_t i = 0; i < st->nt; i++) {
		struct pt_thread *t = &st->t[i];
		if (!t->tick_wants)
			continue;
		if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) == 0) {
			t->want = true;
			want++;
		}
	}
	if (!want)
		return;
	uint64_t t0 = mono_ns();
	wait_wanted(st);
	st->stopped_ns += mono_ns() - t0;
	st->stops++;
	for (size_t i = 0; i < st->nt; i++) {
		struct pt_thread *t = &st->t[i];
		if (!t->sampled)
			continue;
		t->sampled = false;
		if (st->opts->mode != MODE_CPU || cpu_sample_kept(st, t))
			record_sample(st, t, origin);
	}
	/* forget threads that ended */
	size_t k = 0;
	for (size_t i = 0; i < st->nt; i++) {
		if (st->t[i].gone)
			free(st->t[i].stack);
		else
			st->t[k++] = st->t[i];
	}
	st->nt = k;
}

/* The sampling loop: a tick every interval until every thread has exited, time is up, or we are told to stop. */
static void pt_loop(struct pt_state *st, struct record_result *res)
{
	uint64_t interval = backend_interval_ns(st->opts);
	uint64_t deadline = backend_deadline(st->opts, res->start_ns);
	rand64_seed(&st->rng, res->start_ns ^ ((uint64_t)st->pid << 32));
	uint64_t next = res->start_ns + rand64_interval_ns(&st->rng, interval);
	while (!backend_should_stop(st->opts, deadline)) {
		uint64_t now = mono_ns();
		poll_events(st);
		bool alive = false;
		for (size_t i = 0; i < st->nt; i++)
			alive |= !st->t[i].gone;
		if (!alive || (kill(st->pid, 0) != 0 && errno == ESRCH)) { /* every thread has exited (a zombie now) */
			res->target_exited = true;
			poll_events(st);
			char how[64] = "exited";
			if (st->leader_ended)
				describe_wait_status(st->leader_status, how, sizeof how);
			snprintf(res->ended, sizeof res->ended, "%s during the attach", how);
			break;
		}
		if (now < next) {
			struct timespec nap = ns_timespec(next - now);
			nanosleep(&nap, NULL);
			continue;
		}
		/* a random interval (docs/design.md §5.2): ticks at a fixed one lock onto a program's rhythm */
		next += rand64_interval_ns(&st->rng, interval);
		if (next < now)
			next = now + rand64_interval_ns(&st->rng, interval); /* behind: skip ticks rather than burst */
		st->behind = false;
		pt_tick(st, res->start_ns);
		if (st->behind) /* a sample still due (cpu mode): look again after a quarter of the interval */
			next = mono_ns() + rand64_interval_ns(&st->rng, interval / 4);
		backend_progress(st->opts, st->p, res->start_ns, st->ticks);
	}
	res->end_ns = mono_ns();
}

static enum plumb_err pt_run(const struct record_opts *opts, struct profile *p, struct record_result *res,
			     struct perr *e)
{
	if (opts->target != TARGET_PID)
		return perr_set(e, PLUMB_EUNSUPPORTED, "the ptrace backend attaches to a running process (--pid)");
	struct pt_state st = { 0 };
	st.opts = opts;
	st.has_allowed = sched_getaffinity(0, sizeof st.allowed, &st.allowed) == 0;
	st.placed = st.allowed;
	st.p = p;
	st.pid = opts->pid;
	st.stack_bytes = opts->stack_bytes ? opts->stack_bytes : 16384;
	/* SIGCHLD through a descriptor, so that a tick wakes the moment a thread has stopped. */
	sigset_t chld, old_mask;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	bool masked = sigprocmask(SIG_BLOCK, &chld, &old_mask) == 0;
	st.sigchld_fd = masked ? signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC) : -1;
	st.maps = maps_new();
	if (st.maps)
		maps_use_files(st.maps, opts->files);
	st.unw = st.maps ? unwinder_new(st.maps) : NULL;
	enum plumb_err rc = PLUMB_OK;
	if (!st.maps || !st.unw)
		rc = perr_set(e, PLUMB_ENOMEM, "ptrace: out of memory");
	else
		rc = seize_all(&st, e);
	if (!rc) {
		st.s_unknown = profile_intern_cstr(p, "[unknown]");
		maps_load_proc(st.maps, st.pid);
		res->start_ns = mono_ns();
		for (size_t i = 0; i < st.nt; i++)
			st.t[i].runtime = procfs_runtime_ns(st.pid, st.t[i].tid);
		pt_loop(&st, res);
		if (st.has_allowed && !CPU_EQUAL(&st.placed, &st.allowed)) /* the rest of plumb may run anywhere */
			sched_setaffinity(0, sizeof st.allowed, &st.allowed);
		backend_meta(p, "ptrace", backend_unwinder_name(opts), st.ticks, st.lost);
		maps_to_profile(st.maps, p, st.pid); /* for re-symbolizing viewers */
		snprintf(res->limits, sizeof res->limits,
			 "ptrace backend: user frames only; each tick stops the sampled threads (%.0f us per tick on "
			 "average)%s",
			 st.stops ? (double)st.stopped_ns / (double)st.stops / 1e3 : 0.0,
			 opts->mode == MODE_CPU ? "; cpu mode keeps the stops of running threads, one sample per drawn "
						   "interval of CPU time"
					 : "");
	}
	detach_all(&st);
	for (size_t i = 0; i < st.nt; i++)
		free(st.t[i].stack);
	free(st.t);
	unwinder_free(st.unw);
	maps_free(st.maps);
	if (st.sigchld_fd >= 0)
		close(st.sigchld_fd);
	if (masked)
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return rc;
}

const struct backend backend_ptrace = {
	.name = "ptrace",
	.wants = NULL,
	.run = pt_run,
	.targets = BACKEND_TARGET(TARGET_PID),
};
