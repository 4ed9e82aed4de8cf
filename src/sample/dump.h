/* dump.h — `plumb dump`: every thread of a process, now (docs/dump.md). The threads' states, system calls and
 * wait channels are read from /proc; then every thread is seized and interrupted (ptrace), its registers and a
 * copy of its stack taken — and, for CPython, the interpreter's frame chains read — and every thread is
 * detached at once; only then are the copies unwound (DWARF CFI, unwind/) and symbolized (symbol/), with each
 * evaluation-loop frame replaced by the Python frames it ran (pyn_merge, as `record --native` does).
 * --nonblocking never stops the target: Python frames as they are, and native frames from the stack pointer
 * and instruction pointer /proc/PID/task/TID/syscall gives for a blocked thread, marked as possibly torn.
 *
 * Ownership: dump_take() returns a dump the caller frees with dump_free(); every string in it lives until then. */
#ifndef PLUMB_SAMPLE_DUMP_H
#define PLUMB_SAMPLE_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"

struct dump_opts {
	pid_t pid;
	bool nonblocking;    /* never stop the target */
	size_t stack_bytes;  /* stack copied per thread (default DUMP_STACK_BYTES) */
	const char *core;    /* a core file instead of a live process (pid unused) */
	const char *exe;     /* with core: the executable (default: the one the core names) */
};
#define DUMP_STACK_BYTES (256u << 10)

enum dump_frame_kind { DUMP_NATIVE, DUMP_PYTHON };

struct dump_frame {
	enum dump_frame_kind kind;
	const char *func;    /* NULL when unknown */
	const char *file;    /* NULL when unknown */
	const char *module;  /* the ELF object (native), NULL when unknown */
	uint32_t line;       /* 0 when unknown */
	uint64_t addr;       /* native: the instruction's address (an ELF vaddr of module), 0 when unknown */
	uint64_t offset;     /* a native frame nothing names: its function's offset in module (module+0xOFFSET) */
	bool inlined;        /* inlined into the frame after it */
};

struct dump_thread {
	pid_t tid;
	char name[64];       /* comm */
	char state;          /* R S D T t Z I ..., '?' when unknown */
	const char *state_text; /* "running", "sleeping", "disk wait", "stopped", ... */
	long syscall;        /* the system call it waits in, -1 none (user space or running), -2 unknown */
	char wchan[64];      /* the kernel function it sleeps in, "" when none or unknown */
	const char *py_name; /* threading's name of a Python thread, NULL when none */
	bool holds_gil;
	bool python;         /* CPython frames were read for this thread */
	bool torn;           /* --nonblocking: the native frames were read while the thread may have run */
	bool no_native;      /* no native frames could be read (--nonblocking on a running thread) */
	size_t nframes;
	struct dump_frame *frames; /* innermost first */
};

struct dump {
	pid_t pid;
	char comm[64];
	char exe[4096];
	char python_version[32]; /* "" when the target is not CPython (or its frames could not be read) */
	bool nonblocking;
	bool core;
	uint64_t stopped_ns;     /* how long the target was stopped (0 with --nonblocking) */
	uint64_t total_ns;       /* the whole dump, symbolizing included */
	size_t nthreads;
	struct dump_thread *threads; /* the main thread first, then by tid */
	char note[256];          /* what could not be read, "" when all was */
	void *owner;             /* internal: the profile holding the strings */
};

/* Takes the dump. PLUMB_EINVAL: no such process; PLUMB_EPERM: refused (another tracer: named, with what still
 * works); PLUMB_EIO: a core file that cannot be read. */
enum plumb_err dump_take(const struct dump_opts *o, struct dump **out, struct perr *e);
void dump_free(struct dump *d);

/* Parses /proc/PID/task/TID/syscall (NUL-terminated text): "NR ARG1..ARG6 SP PC" in a system call, "-1 SP PC"
 * blocked outside one, "running". *nr is the call (-1 running or none, -2 unreadable); true with *sp and *pc when
 * the thread is blocked and they are given. Exposed for tests and the fuzz target. */
bool dump_parse_syscall(const char *text, long *nr, uint64_t *sp, uint64_t *pc);

/* The word for a /proc state letter ("running", "sleeping", "disk wait", "stopped", "traced", "zombie", "idle"). */
const char *dump_state_text(char state);

#endif
