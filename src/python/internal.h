/* internal.h — what the files of the CPython reader share (not the module's contract, python.h is): the reader
 * struct and one function set per file, split by the object each reads, as Austin's py_*.c are:
 *   runtime.c  finding the interpreter (ELF facts, _PyRuntime, the version) and the reader's lifecycle;
 *   thread.c   interpreters and their thread states, and threading's names for them;
 *   frame.c    one thread's chain of _PyInterpreterFrame, and handing those frames to a profile;
 *   code.c     code objects (a cache by address, checked against the object at every sample) and line tables;
 *   object.c   the target's memory and the plain objects read through it: str, int, dict, instance attributes.
 * Calls point one way only: runtime -> thread -> frame -> code -> object (and each of them -> object).
 * Every read is process_vm_readv of a process that keeps running: a failed or inconsistent read drops the
 * chain it belongs to, never the reader. */
#ifndef PLUMB_PYTHON_INTERNAL_H
#define PLUMB_PYTHON_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/hashmap.h"
#include "python/layout.h"
#include "python/python.h"

#define PY_MAX_FRAMES 1024
#define PY_MAX_THREADS 4096
#define PY_MAX_INTERPS 64
#define PY_MAX_STR 4096
#define PY_MAX_LINETABLE (1 << 20)
#define PY_MAX_DICT 16384

/* What tells one code object from another that was given the same address after it was freed: the fields a
 * frame's label comes from, compared on every sample against the object (code.c). */
struct py_code_ident {
	uint64_t type_p;               /* ob_type: still a code object */
	uint64_t name_p, file_p, qual_p, lt_p;
	int32_t firstlineno;
	uint32_t version;              /* co_version (3.12+), unique per code object */
};

/* One code object as read (code.c): what a frame running it shows. */
struct py_code {
	uint64_t addr;
	struct py_code_ident id;
	char *func;
	char *file;
	int firstlineno;
	int firsttraceable;
	uint8_t *linetable;
	size_t linetable_len;
	uint32_t last_addrq; /* one-entry line cache: most samples of a frame hit the same instruction */
	int last_line;
};

/* One frame of a chain as read, before its code object is (frame.c). */
struct py_raw_frame {
	uint64_t code;
	uint64_t instr;      /* prev_instr / instr_ptr (3.11+) */
	int64_t lasti;       /* byte offset of the instruction (before 3.11), -1 unknown */
	uint8_t owner;
	bool is_entry;
};

/* threading.get_ident() -> threading's name for that thread (thread.c). */
struct py_name {
	uint64_t ident;
	char *name;
};

struct py_proc {
	pid_t pid;
	const struct py_layout *L;   /* &layout */
	struct py_layout layout;     /* the table's row, with 3.13+'s _Py_DebugOffsets read over it */
	bool debug_offsets;          /* layout was checked against _Py_DebugOffsets */
	uint64_t code_type;          /* address of PyCode_Type, 0 when unknown */
	int32_t tid_off;             /* <= 3.10: offset of the kernel tid in glibc's struct pthread, -1 not found */
	char version[32];
	char module[PATH_MAX];   /* the ELF object that holds the interpreter */
	uint64_t bias;           /* runtime address = vaddr + bias */
	uint64_t runtime;        /* absolute address of _PyRuntime */
	bool has_eval;
	uint64_t eval_start, eval_end;
	struct hmap code_index;  /* code addr -> index in codes */
	struct py_code *codes;
	size_t ncodes, capcodes;
	struct py_frame *frames; /* scratch for one thread */
	struct py_raw_frame *raw; /* scratch: the chain as read */
	uint8_t *heads;          /* scratch: each raw frame's code object head, read in one call */
	struct py_name *names;
	size_t nnames, capnames;
	uint64_t names_read_ns;  /* when threading._active was last read */
};

/* ---- object.c: memory and plain objects ---- */

/* Reads len bytes at addr of the target; false for a NULL address or a short or failed read (errno set). */
bool py_mem_read(const struct py_proc *py, uint64_t addr, void *buf, size_t len);
/* Reads the first n bytes of the object at addr into buf, which holds cap: false when n passes cap (a layout
 * with a larger object than the caller expects) or the read fails. */
bool py_mem_read_head(const struct py_proc *py, uint64_t addr, uint8_t *buf, size_t cap, size_t n);
/* A field of an object read into obj, at byte offset off (from the layout), without assuming alignment. */
static inline int64_t py_field_i64(const uint8_t *obj, size_t off)
{
	int64_t v;
	__builtin_memcpy(&v, obj + off, sizeof v);
	return v;
}
static inline uint64_t py_field_u64(const uint8_t *obj, size_t off)
{
	return (uint64_t)py_field_i64(obj, off);
}
static inline uint32_t py_field_u32(const uint8_t *obj, size_t off)
{
	uint32_t v;
	__builtin_memcpy(&v, obj + off, sizeof v);
	return v;
}
/* Reads len bytes at each of n addresses into out (n * len bytes) in as few system calls as it takes; returns
 * how many of them, from the first, were read whole. */
size_t py_mem_readv(const struct py_proc *py, const uint64_t *addrs, size_t n, size_t len, uint8_t *out);
/* Reads one pointer at addr. */
bool py_mem_ptr(const struct py_proc *py, uint64_t addr, uint64_t *out);
/* A str object as a malloc'd UTF-8 string (compact strings of at most PY_MAX_STR characters; others NULL). */
char *py_str_read(const struct py_proc *py, uint64_t addr);
/* An int object that fits 64 bits and is not negative. */
bool py_int_read(const struct py_proc *py, uint64_t obj, uint64_t *out);
/* Called for each live (key, value) of a dict; returning true stops the walk. */
typedef bool (*py_dict_fn)(const struct py_proc *py, void *ctx, uint64_t key, uint64_t value);
/* Walks a dict object; false when it cannot be read. */
bool py_dict_each(const struct py_proc *py, uint64_t dict, py_dict_fn fn, void *ctx);
/* The value under the str key `key` of a dict object, 0 when absent or unreadable. */
uint64_t py_dict_get_str(const struct py_proc *py, uint64_t dict, const char *key);
/* An instance attribute of obj (a managed dict: split values, or a materialized dict); 0 when absent. */
uint64_t py_obj_attr(const struct py_proc *py, uint64_t obj, const char *name);

/* ---- code.c: code objects ---- */

/* The code object at addr whose first code_size bytes, read at this sample, are head: the cached entry when it
 * is still the same object (struct py_code_ident), else read afresh; NULL when unreadable or not a code object. */
struct py_code *py_code_get(struct py_proc *py, uint64_t addr, const uint8_t *head);
/* The line of byte offset addrq in c (its first line when the table has none). */
int py_code_line(const struct py_proc *py, struct py_code *c, int addrq);
/* Frees the code cache. */
void py_codes_release(struct py_proc *py);

/* ---- frame.c: one thread's frames ---- */

/* Walks the frame chain of the thread state ts (its first bytes, as read) into py->frames; returns the count,
 * or -1 when the chain could not be read. */
int py_frames_read(struct py_proc *py, const uint8_t *ts);

/* ---- thread.c: thread states ---- */

/* Frees the thread names. */
void py_names_release(struct py_proc *py);

#endif
