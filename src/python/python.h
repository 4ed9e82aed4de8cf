/* python.h — reads a running CPython interpreter's own frames from outside (docs/design.md §5.6):
 * finds the interpreter (the executable or its libpython) in /proc/PID/maps, its version (Py_Version, else the
 * soname), _PyRuntime from the ELF symbols, and walks interpreters -> thread states -> frames -> code objects
 * with process_vm_readv. The target is never stopped: a chain read while it changes is dropped, not trusted.
 *
 * Ownership: py_open() returns a reader the caller frees with py_close(). Frames handed to a py_thread_fn
 * point into the reader's code cache and stay valid until py_close(). */
#ifndef PLUMB_PYTHON_PYTHON_H
#define PLUMB_PYTHON_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"
#include "profile/profile.h"

/* What an ELF file says about being CPython. */
struct py_binary_info {
	bool is_python;       /* defines _PyRuntime, or needs libpython */
	unsigned major, minor; /* 0.0 when unknown */
	bool supported;       /* this build has a layout for major.minor */
};

/* Probes an executable path (argv[0] resolved on PATH; a "#!" script's interpreter is followed). */
bool py_probe_command(const char *argv0, struct py_binary_info *out);
/* True when argv0 (resolved on PATH) is a "#!" script rather than a binary. */
bool py_command_is_script(const char *argv0);
/* Probes a running process (its executable and mapped libpython). */
bool py_probe_pid(pid_t pid, struct py_binary_info *out);

struct py_frame {
	const char *func;     /* co_name (co_qualname with qualname) */
	const char *file;     /* co_filename */
	uint32_t line;        /* current line (0 when unknown) */
	bool is_entry;        /* the outermost frame run by one C call of the evaluation loop */
	uint64_t code_addr;   /* the code object's address (stable per function while it lives) */
};

struct py_thread {
	pid_t tid;            /* kernel thread id (native_thread_id) */
	uint64_t ident;       /* threading.get_ident() */
	bool holds_gil;
	const char *name;     /* threading's name when it could be read, else NULL */
	size_t nframes;
	const struct py_frame *frames; /* innermost first */
};

struct py_proc;

/* Attaches the reader to pid. PLUMB_EUNSUPPORTED: not CPython or no layout for its version;
 * PLUMB_EPERM: its memory cannot be read; PLUMB_ENOENT: the interpreter is not initialized yet. */
enum plumb_err py_open(pid_t pid, struct py_proc **out, struct perr *e);
void py_close(struct py_proc *py);
/* "3.11.2" */
const char *py_version(const struct py_proc *py);

typedef void (*py_thread_fn)(void *ctx, const struct py_thread *t);
/* Reads every thread's frame chain once and calls fn per thread. Returns PLUMB_EIO when the process is gone
 * or its interpreter state cannot be read at all; a single inconsistent thread is skipped. */
enum plumb_err py_read_threads(struct py_proc *py, py_thread_fn fn, void *ctx, struct perr *e);

/* Adds Python frames (innermost first, as a py_thread holds them) below stack node parent of p as finished
 * frames (func, file, line), outermost first; returns the innermost node, PROFILE_NOMEM when out of memory. */
uint32_t py_frames_push(struct profile *p, uint32_t parent, const struct py_frame *frames, size_t n);

/* The line of byte offset addrq in a 3.11+ location table (co_linetable), starting at firstlineno;
 * -1 when the instruction has no line. Exposed for tests. */
int py_linetable_line(const uint8_t *table, size_t len, int firstlineno, int addrq);
/* The same for 3.8/3.9's co_lnotab and 3.10's PEP 626 co_linetable. */
int py_lnotab_line(const uint8_t *table, size_t len, int firstlineno, int addrq);
int py_pep626_line(const uint8_t *table, size_t len, int firstlineno, int addrq);

/* Module-relative address range [start, end) of the evaluation loop (_PyEval_EvalFrameDefault) in the
 * interpreter's ELF object, and that object's path: for merging with native stacks. False when unknown. */
bool py_eval_range(const struct py_proc *py, const char **module, uint64_t *vaddr_start, uint64_t *vaddr_end);

#endif
