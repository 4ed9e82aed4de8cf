/* dump.c — every thread of a process, now (dump.h). The order is what keeps the stop short: everything that
 * can be read without stopping (the /proc files, the memory maps, a first read of the Python frames that fills
 * the reader's code cache) is read first; then all threads are seized (which stops nothing), interrupted, and as
 * each stops its registers and a copy of its stack are taken; the Python frame chains are read while every
 * thread stands still; every thread is detached (a signal that arrived meanwhile handed back); and only then is
 * anything unwound or symbolized. Invariant: no thread is left traced or stopped by us — a thread that stops
 * after the deadline is detached by the final sweep, or by the kernel when plumb exits. */
#include "sample/dump.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow.h"
#include "os/procfs.h"
#include "profile/profile.h"
#include "python/python.h"
#include "sample/backend.h"
#include "sample/dump_core.h"
#include "sample/python_native.h"
#include "symbol/files.h"
#include "symbol/maps.h"
#include "symbol/symbol.h"
#include "unwind/unwind.h"

#define DUMP_MAX_THREADS 4096
#define DUMP_MAX_IPS 512
#define DUMP_MAX_PY 1024
#define DUMP_STOP_WAIT_NS 300000000ull /* how long we wait for an interrupted thread to stop */
#define DUMP_PAGE 4096u

/* What is taken of one thread while it stands still. */
struct copy {
	pid_t tid;
	bool seized, stopped, have_regs;
	int pass_sig;           /* a signal that stopped it, handed back on detach */
	struct unwind_regs regs;
	uint8_t *stack;
	size_t stack_len;
	struct py_frame *py;    /* innermost first */
	size_t npy;
	bool py_read;
	str_id py_name;
	bool holds_gil;
};

struct taking {
	const struct dump_opts *o;
	struct dump *d;
	struct copy *c;
	size_t n, cap, tcap;
	size_t stack_bytes;
	struct py_proc *py;
	struct profile *raw;
	pid_t mem_pid;  /* whose memory and maps are read: the process, or a live thread when its main one has exited */
	struct span { uint64_t start, end; } *spans; /* the writable mappings, where stacks are */
	size_t nspans, capspans;
};

const char *dump_state_text(char state)
{
	switch (state) {
	case 'R': return "running";
	case 'S': return "sleeping";
	case 'D': return "disk wait";
	case 'T': return "stopped";
	case 't': return "traced";
	case 'Z': return "zombie";
	case 'X': return "dead";
	case 'I': return "idle";
	case 'P': return "parked";
	default: return "unknown";
	}
}

static struct copy *copy_of(struct taking *tk, pid_t tid)
{
	for (size_t i = 0; i < tk->n; i++)
		if (tk->c[i].tid == tid)
			return &tk->c[i];
	return NULL;
}

bool dump_parse_syscall(const char *text, long *nr, uint64_t *sp, uint64_t *pc)
{
	*nr = -2;
	if (strncmp(text, "running", 7) == 0) {
		*nr = -1;
		return false;
	}
	char *end;
	errno = 0;
	long v0 = strtol(text, &end, 10);
	if (end == text || errno || v0 < -1)
		return false; /* the kernel writes a call's number or -1, nothing else */
	*nr = v0;
	unsigned long long v[8];
	int k = 0;
	for (const char *p = end; k < 8;) {
		while (*p == ' ')
			p++;
		if (*p == '\0' || *p == '\n')
			break;
		v[k++] = strtoull(p, &end, 0);
		if (end == p)
			return false;
		p = end;
	}
	if (k < 2)
		return false;
	*sp = v[k - 2];
	*pc = v[k - 1];
	return true;
}

static bool read_syscall(pid_t pid, pid_t tid, long *nr, uint64_t *sp, uint64_t *pc)
{
	char buf[512];
	*nr = -2;
	if (procfs_read(pid, tid, "syscall", buf, sizeof buf) <= 0)
		return false;
	return dump_parse_syscall(buf, nr, sp, pc);
}

/* The threads and what /proc says of each, before anything is stopped. */
static enum plumb_err list_threads(struct taking *tk, struct perr *e)
{
	struct dump *d = tk->d;
	struct procfs_dir dir;
	if (!procfs_tasks_open(&dir, d->pid))
		return perr_set(e, PLUMB_EINVAL, "process %d does not exist", (int)d->pid);
	for (pid_t tid; (tid = procfs_dir_next(&dir)) > 0 && tk->n < DUMP_MAX_THREADS;) {
		if (!ALLOC_GROW(tk->c, tk->n + 1, tk->cap) || !ALLOC_GROW(d->threads, tk->n + 1, tk->tcap)) {
			procfs_dir_close(&dir);
			return perr_set(e, PLUMB_ENOMEM, "dump: out of memory");
		}
		struct copy *c = &tk->c[tk->n];
		memset(c, 0, sizeof *c);
		c->tid = tid;
		tk->n++;
	}
	procfs_dir_close(&dir);
	if (tk->n == 0)
		return perr_set(e, PLUMB_EINVAL, "process %d has no threads (it has exited)", (int)d->pid);
	d->nthreads = tk->n;
	memset(d->threads, 0, tk->n * sizeof *d->threads);
	for (size_t i = 0; i < tk->n; i++) {
		struct dump_thread *t = &d->threads[i];
		t->tid = tk->c[i].tid;
		struct procfs_stat st;
		bool known = procfs_stat_read(d->pid, t->tid, &st);
		t->state = known ? st.state : '?';
		t->state_text = dump_state_text(t->state);
		snprintf(t->name, sizeof t->name, "%s", known ? st.comm : "");
		uint64_t sp, pc;
		read_syscall(d->pid, t->tid, &t->syscall, &sp, &pc);
		if (procfs_read(d->pid, t->tid, "wchan", t->wchan, sizeof t->wchan) <= 0 || strcmp(t->wchan, "0") == 0)
			t->wchan[0] = '\0';
	}
	return PLUMB_OK;
}

/* The writable mappings of the process, read before it is stopped: a stack copy ends where its mapping does. */
static void read_spans(struct taking *tk)
{
	struct procfs_maps m;
	if (!procfs_maps_open(&m, tk->mem_pid))
		return;
	struct procfs_map e;
	while (procfs_maps_next(&m, &e))
		if (e.perms[1] == 'w' && ALLOC_GROW(tk->spans, tk->nspans + 1, tk->capspans))
			tk->spans[tk->nspans++] = (struct span){ e.start, e.end };
	procfs_maps_close(&m);
}

/* How much of the stack above sp to copy: up to the end of its mapping, at most tk->stack_bytes. */
static size_t stack_want(const struct taking *tk, uint64_t sp)
{
	for (size_t i = 0; i < tk->nspans; i++)
		if (sp >= tk->spans[i].start && sp < tk->spans[i].end)
			return tk->spans[i].end - sp < tk->stack_bytes ? (size_t)(tk->spans[i].end - sp) : tk->stack_bytes;
	return tk->stack_bytes; /* a mapping made since we looked: the page-wise copy stops where memory ends */
}

/* Copies the stack above sp in pages, so that a read running off the end of the mapping keeps what it got. */
static size_t copy_stack(pid_t pid, uint64_t sp, uint8_t *buf, size_t want)
{
	struct iovec local[64], remote[64];
	size_t got = 0;
	uint64_t at = sp;
	while (got < want) {
		int k = 0;
		size_t batch = 0;
		while (k < 64 && got + batch < want) {
			size_t len = DUMP_PAGE - (size_t)(at & (DUMP_PAGE - 1));
			if (len > want - got - batch)
				len = want - got - batch;
			local[k] = (struct iovec){ buf + got + batch, len };
			remote[k] = (struct iovec){ (void *)(uintptr_t)at, len };
			at += len;
			batch += len;
			k++;
		}
		ssize_t n = process_vm_readv(pid, local, (unsigned long)k, remote, (unsigned long)k, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		if ((size_t)n < batch)
			break;
	}
	return got;
}

/* Copies the stack above sp into c->stack (allocated here, as large as the copy can be). */
static void take_stack(struct taking *tk, struct copy *c, uint64_t sp)
{
	size_t want = stack_want(tk, sp);
	c->stack_len = 0;
	if (!want || !(c->stack = malloc(want)))
		return;
	c->stack_len = copy_stack(tk->mem_pid, sp, c->stack, want);
}

static void take_regs(struct taking *tk, struct copy *c)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, c->tid, NULL, &r) != 0)
		return;
	unwind_regs_from_user(&c->regs, &r);
	take_stack(tk, c, r.rsp);
	c->have_regs = true;
}

/* One wait status of a tracee we interrupted. */
static void on_status(struct taking *tk, pid_t w, int status)
{
	struct copy *c = copy_of(tk, w);
	if (!c)
		return;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		c->seized = false; /* gone */
		c->stopped = true;
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	int event = status >> 16;
	if (event == 0)
		c->pass_sig = WSTOPSIG(status); /* signal-delivery-stop: the signal is handed back on detach */
	if (!c->stopped) {
		c->stopped = true;
		take_regs(tk, c);
	}
}

/* Waits for every interrupted thread to stop (SIGCHLD wakes us), copying each as it does. */
static void wait_stops(struct taking *tk)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	uint64_t deadline = mono_ns() + DUMP_STOP_WAIT_NS;
	for (;;) {
		int status;
		pid_t w;
		while ((w = waitpid(-1, &status, WNOHANG | __WALL)) > 0)
			on_status(tk, w, status);
		bool pending = false;
		for (size_t i = 0; i < tk->n; i++)
			pending |= tk->c[i].seized && !tk->c[i].stopped;
		uint64_t now = mono_ns();
		if (!pending || now >= deadline || w < 0)
			return;
		struct timespec to = ns_timespec(deadline - now < 2000000 ? deadline - now : 2000000);
		sigtimedwait(&chld, NULL, &to);
	}
}

static void collect_py(void *ctx, const struct py_thread *t)
{
	struct taking *tk = ctx;
	struct copy *c = copy_of(tk, t->tid);
	if (!c)
		return;
	if (!c->py)
		c->py = malloc(DUMP_MAX_PY * sizeof *c->py);
	if (!c->py)
		return;
	c->npy = t->nframes < DUMP_MAX_PY ? t->nframes : DUMP_MAX_PY;
	memcpy(c->py, t->frames, c->npy * sizeof *c->py);
	c->py_read = true;
	c->holds_gil = t->holds_gil;
	c->py_name = t->name ? profile_intern_cstr(tk->raw, t->name) : 0;
}

static void read_python(struct taking *tk)
{
	if (!tk->py)
		return;
	for (size_t i = 0; i < tk->n; i++)
		tk->c[i].py_read = false, tk->c[i].npy = 0;
	struct perr e = PERR_INIT;
	py_read_threads(tk->py, collect_py, tk, &e);
}

/* Seizes every thread, interrupts them all, copies each as it stops, reads the Python frames, detaches. */
static enum plumb_err stop_and_copy(struct taking *tk, struct perr *e)
{
	struct dump *d = tk->d;
	/* SIGCHLD is how a stop is told: blocked, sigtimedwait waits for it (wait_stops) */
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	bool masked = sigprocmask(SIG_BLOCK, &chld, &old) == 0;
	for (size_t i = 0; i < tk->n; i++) {
		struct copy *c = &tk->c[i];
		char state = d->threads[i].state;
		if (state == 'Z' || state == 'X')
			continue; /* a thread that has exited (a main thread that called pthread_exit): no stack to read */
		if (ptrace(PTRACE_SEIZE, c->tid, NULL, NULL) == 0) {
			c->seized = true;
			continue;
		}
		int err = errno;
		if (err == ESRCH)
			continue; /* the thread ended meanwhile */
		/* the threads seized so far are running: a tracee is detached only from a stop */
		for (size_t k = 0; k < i; k++)
			if (tk->c[k].seized && ptrace(PTRACE_INTERRUPT, tk->c[k].tid, NULL, NULL) != 0)
				tk->c[k].seized = false;
		wait_stops(tk);
		for (size_t k = 0; k < i; k++)
			if (tk->c[k].seized && tk->c[k].stopped &&
			    ptrace(PTRACE_DETACH, tk->c[k].tid, NULL, (void *)(uintptr_t)tk->c[k].pass_sig) == 0)
				tk->c[k].seized = false;
		if (masked)
			sigprocmask(SIG_SETMASK, &old, NULL);
		char why[512];
		/* the thread's own status names its tracer (one thread may be traced alone: strace -p TID) */
		describe_attach_refusal(c->tid, "ptrace", err, why, sizeof why);
		return perr_set(e, err == EPERM || err == EACCES ? PLUMB_EPERM : PLUMB_EUNSUPPORTED,
				"%s; `plumb dump --nonblocking` still reads the process without attaching", why);
	}
	uint64_t t0 = mono_ns();
	for (size_t i = 0; i < tk->n; i++)
		if (tk->c[i].seized && ptrace(PTRACE_INTERRUPT, tk->c[i].tid, NULL, NULL) != 0)
			tk->c[i].seized = false;
	wait_stops(tk);
	read_python(tk);
	for (size_t i = 0; i < tk->n; i++) {
		struct copy *c = &tk->c[i];
		if (c->seized && c->stopped && ptrace(PTRACE_DETACH, c->tid, NULL, (void *)(uintptr_t)c->pass_sig) == 0)
			c->seized = false;
	}
	d->stopped_ns = mono_ns() - t0;
	if (masked)
		sigprocmask(SIG_SETMASK, &old, NULL);
	return PLUMB_OK;
}

/* A thread that stopped after the deadline is detached now (it stopped at our interrupt; nothing else holds it). */
static void late_sweep(struct taking *tk)
{
	for (size_t i = 0; i < tk->n; i++) {
		struct copy *c = &tk->c[i];
		if (!c->seized)
			continue;
		int status;
		if (waitpid(c->tid, &status, WNOHANG | __WALL) == c->tid && WIFSTOPPED(status))
			ptrace(PTRACE_DETACH, c->tid, NULL,
			       (void *)(uintptr_t)((status >> 16) == 0 ? WSTOPSIG(status) : 0));
	}
}

/* --nonblocking: a blocked thread's stack from the sp and pc /proc gives, checked against a second look. */
static void copy_nonblocking(struct taking *tk)
{
	pid_t pid = tk->d->pid;
	for (size_t i = 0; i < tk->n; i++) {
		struct copy *c = &tk->c[i];
		long nr;
		uint64_t sp, pc;
		if (!read_syscall(pid, c->tid, &nr, &sp, &pc) || sp == 0 || pc == 0)
			continue;
		memset(&c->regs, 0, sizeof c->regs);
		c->regs.r[UREG_SP] = sp;
		c->regs.r[UREG_IP] = pc;
		take_stack(tk, c, sp);
		c->have_regs = c->stack_len > 0;
		long nr2;
		uint64_t sp2, pc2;
		/* still blocked at the same place after the copy: what was copied did not move under us */
		c->stopped = read_syscall(pid, c->tid, &nr2, &sp2, &pc2) && nr2 == nr && sp2 == sp && pc2 == pc;
	}
	read_python(tk);
}

/* The raw stack of one thread into the raw profile: native frames unwound, eval-loop frames replaced by the
 * Python frames they ran. Returns the stack node (PROFILE_ROOT when there is nothing). */
static uint32_t raw_stack(struct taking *tk, struct maps *maps, struct unwinder *unw, struct copy *c,
			  bool *no_native)
{
	static uint64_t ips[DUMP_MAX_IPS];
	static int is_eval[DUMP_MAX_IPS];
	static uint32_t raw_ids[DUMP_MAX_IPS];
	static long merged[DUMP_MAX_IPS + DUMP_MAX_PY];
	size_t nips = 0;
	const char *eval_module = NULL;
	uint64_t eval_start = 0, eval_end = 0;
	bool has_eval = tk->py && py_eval_range(tk->py, &eval_module, &eval_start, &eval_end);
	if (c->have_regs) {
		nips = unwind_dwarf(unw, tk->mem_pid, &c->regs, c->stack, c->stack_len, ips, DUMP_MAX_IPS);
		if (nips == 0) {
			ips[0] = c->regs.r[UREG_IP];
			nips = 1;
		}
	}
	*no_native = nips == 0;
	str_id unknown = profile_intern_cstr(tk->raw, "[unknown]");
	for (size_t i = 0; i < nips; i++) {
		uint64_t look = i > 0 && ips[i] ? ips[i] - 1 : ips[i];
		const struct map_entry *me = maps_find(maps, tk->mem_pid, look);
		uint64_t va = me ? maps_vaddr(me, look) : 0;
		is_eval[i] = me && has_eval && strcmp(me->path, eval_module) == 0 && va >= eval_start && va < eval_end;
		raw_ids[i] = backend_user_frame(tk->raw, me, ips[i], i > 0, unknown);
		if (raw_ids[i] == PROFILE_NOMEM)
			return PROFILE_NOMEM;
	}
	size_t n = pyn_merge(is_eval, nips, c->py, c->npy, merged, sizeof merged / sizeof merged[0]);
	uint32_t node = PROFILE_ROOT;
	for (size_t i = n; i-- > 0 && node != PROFILE_NOMEM;)
		node = merged[i] >= 0 ? profile_stack(tk->raw, node, raw_ids[merged[i]])
				      : py_frames_push(tk->raw, node, &c->py[-merged[i] - 1], 1);
	return node;
}

/* The symbolized frames of thread ti (profile thread th of sym), innermost first, into d->threads[ti]. */
static enum plumb_err fill_frames(struct dump *d, size_t ti, const struct profile *sym, uint32_t node,
				  struct perr *e)
{
	struct dump_thread *t = &d->threads[ti];
	size_t depth = node == PROFILE_ROOT ? 0 : profile_stack_depth(sym, node);
	t->frames = calloc(depth ? depth : 1, sizeof *t->frames);
	if (!t->frames)
		return perr_set(e, PLUMB_ENOMEM, "dump: out of memory");
	size_t k = 0;
	for (uint32_t s = node; s != PROFILE_ROOT && k < depth; s = profile_stack_parent(sym, s)) {
		const struct frame *f = profile_frame_get(sym, profile_stack_frame(sym, s));
		struct dump_frame *df = &t->frames[k++];
		df->kind = f->kind == FRAME_PYTHON ? DUMP_PYTHON : DUMP_NATIVE;
		df->func = f->func ? profile_str(sym, f->func) : NULL;
		df->file = f->file ? profile_str(sym, f->file) : NULL;
		df->module = f->module ? profile_str(sym, f->module) : NULL;
		df->line = f->line;
		df->addr = f->offset ? 0 : f->addr;
		df->offset = f->offset ? f->addr : 0;
		df->inlined = f->inlined;
	}
	t->nframes = k;
	return PLUMB_OK;
}

static int by_main_then_tid(const void *a, const void *b, void *pid)
{
	const struct dump_thread *x = a, *y = b;
	pid_t p = *(const pid_t *)pid;
	if ((x->tid == p) != (y->tid == p))
		return x->tid == p ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Symbolizes the raw profile (one sample per thread, profile thread (d->pid, tid)) into d->threads' frames. */
static enum plumb_err symbolize(struct dump *d, const struct profile *raw, struct sym_files *files, struct perr *e)
{
	struct sym_opts so = { .files = files };
	struct profile *sym = NULL;
	enum plumb_err rc = sym_resolve_profile(raw, &so, &sym, e);
	if (rc)
		return rc;
	d->owner = sym;
	size_t ncounts;
	const struct profile_count *counts = profile_counts(sym, &ncounts);
	for (size_t i = 0; i < d->nthreads && !rc; i++) {
		uint32_t node = PROFILE_ROOT;
		for (size_t k = 0; k < ncounts; k++)
			if (profile_thread_get(sym, counts[k].thread)->tid == (uint32_t)d->threads[i].tid)
				node = counts[k].stack;
		rc = fill_frames(d, i, sym, node, e);
	}
	return rc;
}

/* Unwinds every copy into the raw profile, then symbolizes it into d->threads. */
static enum plumb_err build(struct taking *tk, struct maps *maps, struct unwinder *unw, struct sym_files *files,
			    struct perr *e)
{
	struct dump *d = tk->d;
	for (size_t i = 0; i < tk->n; i++) {
		struct copy *c = &tk->c[i];
		struct dump_thread *t = &d->threads[i];
		bool no_native = true;
		uint32_t node = raw_stack(tk, maps, unw, c, &no_native);
		uint32_t th = profile_thread(tk->raw, (uint32_t)d->pid, (uint32_t)c->tid, t->name);
		if (node == PROFILE_NOMEM || th == PROFILE_NOMEM || !profile_add_sample(tk->raw, node, th, 0, 1))
			return perr_set(e, PLUMB_ENOMEM, "dump: out of memory");
		t->python = c->py_read;
		t->holds_gil = c->holds_gil;
		t->no_native = no_native;
		t->torn = d->nonblocking && c->have_regs && !c->stopped;
	}
	/* only now: a string of the raw profile stays where it is until the next one is added */
	for (size_t i = 0; i < tk->n; i++)
		if (tk->c[i].py_name)
			d->threads[i].py_name = profile_str(tk->raw, tk->c[i].py_name);
	return symbolize(d, tk->raw, files, e);
}

static void free_taking(struct taking *tk)
{
	for (size_t i = 0; i < tk->n; i++) {
		free(tk->c[i].stack);
		free(tk->c[i].py);
	}
	free(tk->c);
	free(tk->spans);
	py_close(tk->py);
}

/* The live process: everything read, stopped briefly (unless nonblocking), unwound and symbolized. */
static enum plumb_err take_live(struct taking *tk, struct perr *e)
{
	struct dump *d = tk->d;
	enum plumb_err rc = list_threads(tk, e);
	if (rc)
		return rc;
	tk->mem_pid = d->pid;
	bool leader_gone = false;
	for (size_t i = 0; i < d->nthreads; i++)
		leader_gone |= d->threads[i].tid == d->pid && (d->threads[i].state == 'Z' || d->threads[i].state == 'X');
	for (size_t i = 0; i < d->nthreads && leader_gone; i++)
		if (d->threads[i].state != 'Z' && d->threads[i].state != 'X') {
			tk->mem_pid = d->threads[i].tid; /* /proc/TID/maps and TID's memory are the process's */
			break;
		}
	procfs_comm(d->pid, 0, d->comm, sizeof d->comm);
	if (procfs_exe(d->pid, d->exe, sizeof d->exe) < 0)
		d->exe[0] = '\0';
	/* another tracer, of the process or of one thread alone (strace -p TID): said before anything is stopped */
	for (size_t i = 0; i < d->nthreads && !d->nonblocking; i++) {
		struct procfs_status st;
		if (!procfs_status_read(d->pid, d->threads[i].tid, &st) || st.tracer_pid <= 0)
			continue;
		char why[512];
		describe_attach_refusal(d->threads[i].tid, "ptrace", EPERM, why, sizeof why);
		return perr_set(e, PLUMB_EPERM, "%s; `plumb dump --nonblocking` still reads the process without attaching",
				why);
	}
	read_spans(tk);
	struct perr pe = PERR_INIT;
	struct py_binary_info pi;
	if (py_open(d->pid, &tk->py, &pe) == PLUMB_OK) {
		snprintf(d->python_version, sizeof d->python_version, "%s", py_version(tk->py));
		read_python(tk); /* fills the reader's code cache, so the read while stopped is short */
	} else {
		tk->py = NULL;
		if (py_probe_pid(d->pid, &pi) && pi.is_python)
			snprintf(d->note, sizeof d->note, "a CPython process whose Python frames cannot be read (%s): "
				 "native frames only", pe.msg[0] ? pe.msg : perr_strerror(pe.code));
	}
	struct sym_files *files = sym_files_new();
	struct maps *maps = maps_new();
	struct unwinder *unw = maps ? unwinder_new(maps) : NULL;
	if (!maps || !unw)
		rc = perr_set(e, PLUMB_ENOMEM, "dump: out of memory");
	if (!rc) {
		maps_use_files(maps, files);
		maps_load_proc(maps, tk->mem_pid);
		rc = d->nonblocking ? (copy_nonblocking(tk), PLUMB_OK) : stop_and_copy(tk, e);
	}
	if (!rc && !d->nonblocking)
		late_sweep(tk);
	if (!rc)
		rc = build(tk, maps, unw, files, e);
	if (!d->nonblocking)
		late_sweep(tk);
	unwinder_free(unw);
	maps_free(maps);
	sym_files_free(files);
	return rc;
}

/* A process whose main thread has exited (a zombie) while others run is still there to dump. */
static bool live_thread(pid_t pid)
{
	struct procfs_dir dir;
	if (!procfs_tasks_open(&dir, pid))
		return false;
	bool live = false;
	for (pid_t tid; !live && (tid = procfs_dir_next(&dir)) > 0;) {
		struct procfs_stat st;
		live = procfs_stat_read(pid, tid, &st) && st.state != 'Z' && st.state != 'X';
	}
	procfs_dir_close(&dir);
	return live;
}

enum plumb_err dump_take(const struct dump_opts *o, struct dump **out, struct perr *e)
{
	*out = NULL;
	uint64_t t0 = mono_ns();
	struct dump *d = calloc(1, sizeof *d);
	struct taking tk = { .o = o, .d = d, .stack_bytes = o->stack_bytes ? o->stack_bytes : DUMP_STACK_BYTES };
	if (!d || !(tk.raw = profile_new())) {
		free(d);
		return perr_set(e, PLUMB_ENOMEM, "dump: out of memory");
	}
	d->pid = o->pid;
	d->nonblocking = o->nonblocking;
	enum plumb_err rc;
	if (o->core) {
		d->core = true;
		rc = dump_core_read(o->core, o->exe, d, tk.raw, e);
		for (size_t i = 0; i < d->nthreads; i++)
			d->threads[i].state_text = dump_state_text(d->threads[i].state);
		if (!rc)
			rc = symbolize(d, tk.raw, NULL, e);
	} else if (o->pid <= 0 || !(procfs_alive(o->pid) || live_thread(o->pid))) {
		rc = perr_set(e, PLUMB_EINVAL, "process %d does not exist (or has exited)", (int)o->pid);
	} else {
		rc = take_live(&tk, e);
	}
	free_taking(&tk);
	if (!rc && d->nthreads > 1)
		qsort_r(d->threads, d->nthreads, sizeof *d->threads, by_main_then_tid, &d->pid);
	d->total_ns = mono_ns() - t0;
	/* the strings of py_name live in the raw profile: keep it beside the symbolized one */
	struct profile **keep = malloc(2 * sizeof *keep);
	if (!keep) {
		profile_free(tk.raw);
		profile_free(d->owner);
		d->owner = NULL;
		dump_free(d);
		return perr_set(e, PLUMB_ENOMEM, "dump: out of memory");
	}
	keep[0] = tk.raw;
	keep[1] = d->owner;
	d->owner = keep;
	if (rc) {
		dump_free(d);
		return rc;
	}
	*out = d;
	return PLUMB_OK;
}

void dump_free(struct dump *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nthreads; i++)
		free(d->threads[i].frames);
	free(d->threads);
	struct profile **keep = d->owner;
	if (keep) {
		profile_free(keep[0]);
		profile_free(keep[1]);
		free(keep);
	}
	free(d);
}
