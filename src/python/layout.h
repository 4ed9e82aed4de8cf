/* layout.h — where CPython keeps what plumb reads from outside, per interpreter version: byte offsets into
 * _PyRuntimeState, PyInterpreterState, PyThreadState, _PyCFrame, _PyInterpreterFrame, PyCodeObject and the
 * string/bytes objects. The numbers are data, not headers: plumb needs no Python headers at run time.
 * Each row was produced by scripts/python-layout.c (offsetof over CPython's internal headers with
 * Py_BUILD_CORE) and checked by a test on that version (tests/e2e/test_python.py). */
#ifndef PLUMB_PYTHON_LAYOUT_H
#define PLUMB_PYTHON_LAYOUT_H

#include <stdint.h>

struct py_layout {
	unsigned major, minor;
	/* _PyRuntimeState */
	uint32_t runtime_interp_head;     /* interpreters.head */
	uint32_t runtime_tstate_current;  /* gilstate.tstate_current: the thread holding the GIL */
	/* PyInterpreterState */
	uint32_t interp_next;
	uint32_t interp_threads_head;     /* threads.head */
	uint32_t interp_modules;          /* sys.modules dict */
	/* PyThreadState */
	uint32_t tstate_next;
	uint32_t tstate_cframe;
	uint32_t tstate_thread_id;        /* pthread_t of the thread (threading.get_ident()) */
	uint32_t tstate_native_thread_id; /* the kernel tid */
	/* _PyCFrame */
	uint32_t cframe_current_frame;
	/* _PyInterpreterFrame (frame_size covers every field read) */
	uint32_t frame_code;
	uint32_t frame_previous;
	uint32_t frame_prev_instr;
	uint32_t frame_is_entry;
	uint32_t frame_owner;
	uint32_t frame_size;
	uint32_t frame_owned_by_generator; /* value of FRAME_OWNED_BY_GENERATOR */
	/* PyCodeObject (code_size covers every field read) */
	uint32_t code_filename;
	uint32_t code_name;
	uint32_t code_qualname;
	uint32_t code_linetable;
	uint32_t code_firstlineno;
	uint32_t code_firsttraceable;
	uint32_t code_code_adaptive;      /* the bytecode (prev_instr points into it) */
	uint32_t code_size;
	/* PyUnicodeObject: compact strings keep their characters right after the header */
	uint32_t str_length;
	uint32_t str_state;               /* the bit-field word: kind, compact, ascii */
	uint32_t str_kind_shift;
	uint32_t str_compact_bit;
	uint32_t str_ascii_bit;
	uint32_t str_ascii_size;          /* sizeof(PyASCIIObject): data of a compact ASCII string */
	uint32_t str_compact_size;        /* sizeof(PyCompactUnicodeObject): data of other compact strings */
	/* PyBytesObject */
	uint32_t bytes_size;              /* ob_size */
	uint32_t bytes_data;              /* ob_sval */
};

/* The row for major.minor, or NULL when this build has none. */
const struct py_layout *py_layout_find(unsigned major, unsigned minor);

#endif
