/* layout.h — where CPython keeps what plumb reads from outside, per interpreter version: byte offsets into
 * _PyRuntimeState, PyInterpreterState, PyThreadState, _PyCFrame, _PyInterpreterFrame, PyCodeObject and the
 * string/bytes objects. The numbers are data, not headers: plumb needs no Python headers at run time.
 * Each row was produced by scripts/python-layout.c (offsetof over CPython's internal headers with
 * Py_BUILD_CORE) and checked against every interpreter's headers on the machine (tests/e2e/test_python_versions.py).
 * 3.13+ also describe themselves (_Py_DebugOffsets at the start of _PyRuntime): runtime.c reads those. */
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
	uint32_t interp_threads_head;     /* threads.head (tstate_head before 3.11) */
	uint32_t interp_modules;          /* sys.modules dict */
	/* PyThreadState (tstate_size covers every field read) */
	uint32_t tstate_next;
	uint32_t tstate_cframe;           /* 3.11, 3.12: the _PyCFrame holding the current frame */
	uint32_t tstate_frame;            /* the current frame itself: tstate->frame (<= 3.10), current_frame (3.13) */
	uint32_t tstate_thread_id;        /* pthread_t of the thread (threading.get_ident()) */
	uint32_t tstate_native_thread_id; /* the kernel tid (3.11+) */
	uint32_t tstate_size;
	/* _PyCFrame */
	uint32_t cframe_current_frame;
	/* _PyInterpreterFrame, or PyFrameObject before 3.11 (frame_size covers every field read) */
	uint32_t frame_code;              /* f_code (f_executable in 3.13) */
	uint32_t frame_previous;          /* previous (f_back before 3.11) */
	uint32_t frame_prev_instr;        /* prev_instr (instr_ptr in 3.13) */
	uint32_t frame_lasti;             /* PyFrameObject.f_lasti (before 3.11) */
	uint32_t frame_is_entry;
	uint32_t frame_owner;
	uint32_t frame_size;
	uint32_t frame_owned_by_generator; /* value of FRAME_OWNED_BY_GENERATOR */
	/* PyCodeObject (code_size covers every field read) */
	uint32_t code_filename;
	uint32_t code_name;
	uint32_t code_qualname;
	uint32_t code_linetable;          /* co_linetable (co_lnotab before 3.10) */
	uint32_t code_firstlineno;
	uint32_t code_firsttraceable;
	uint32_t code_code_adaptive;      /* the bytecode (prev_instr points into it) */
	uint32_t code_version;            /* co_version (3.12+): a number given to each new code object */
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
	/* Objects, types, dicts, ints and modules: enough to read threading._active for thread names */
	uint32_t obj_type;                /* ob_type */
	uint32_t type_flags;              /* tp_flags */
	uint32_t type_dictoffset;         /* tp_dictoffset: where an instance keeps its dict (before 3.11) */
	uint32_t type_basicsize;          /* tp_basicsize: inline values follow (3.13) */
	uint32_t type_cached_keys;        /* PyHeapTypeObject.ht_cached_keys: keys of split instance dicts */
	uint32_t managed_dict_flag;       /* Py_TPFLAGS_MANAGED_DICT */
	uint32_t inline_values_flag;      /* Py_TPFLAGS_INLINE_VALUES (3.13) */
	uint32_t values_valid;            /* PyDictValues.valid (3.13) */
	uint32_t values_values;           /* PyDictValues.values (3.13) */
	uint32_t obj_values_before;       /* the instance's values pointer sits this many bytes before it */
	uint32_t obj_dict_before;         /* and its materialized dict pointer this many */
	uint32_t dict_keys;               /* PyDictObject.ma_keys */
	uint32_t dict_values;             /* PyDictObject.ma_values (split tables) */
	uint32_t dictkeys_size;           /* dk_size (before 3.11) */
	uint32_t dictkeys_log2_size;
	uint32_t dictkeys_log2_index_bytes;
	uint32_t dictkeys_kind;
	uint32_t dictkeys_nentries;
	uint32_t dictkeys_indices;        /* entries start (1 << log2_index_bytes) bytes after */
	uint32_t dict_entry_size;         /* PyDictKeyEntry: hash, key, value */
	uint32_t dict_uentry_size;        /* PyDictUnicodeEntry: key, value */
	uint32_t dict_kind_general;       /* DICT_KEYS_GENERAL */
	uint32_t long_size;               /* ob_size: sign and number of digits */
	uint32_t long_digits;             /* ob_digit */
	uint32_t long_shift;              /* bits per digit */
	uint32_t module_dict;             /* PyModuleObject.md_dict */
	/* Differences between versions; zero keeps the 3.11 meaning */
	uint8_t frame_objects;            /* <= 3.10: a chain of PyFrameObject (tstate_frame, f_back, f_lasti) */
	uint8_t lasti_in_units;           /* 3.10: f_lasti counts 2-byte code units, not bytes */
	uint8_t frame_in_tstate;          /* 3.13: the current frame is tstate_frame, no _PyCFrame */
	uint8_t no_native_tid;            /* <= 3.10: the kernel tid comes from glibc's struct pthread */
	uint8_t no_tstate_current;        /* runtime_tstate_current is not there (3.12) */
	uint8_t frame_no_is_entry;        /* frame_is_entry is not there (3.12) */
	uint8_t frame_has_cstack;         /* shim frames owned by the C stack mark evaluation-loop entries */
	uint8_t frame_owned_by_cstack;    /* value of FRAME_OWNED_BY_CSTACK */
	uint8_t no_qualname;              /* code_qualname is not there (before 3.11) */
	uint8_t linetable_kind;           /* 1 co_lnotab (3.8, 3.9), 2 PEP 626 (3.10), 3 location table (3.11+) */
	uint8_t has_code_version;         /* code_version is there (3.12+) */
	uint8_t no_thread_names;          /* the dict layout above is not known for this version */
	uint8_t obj_dict_at_offset;       /* <= 3.10: the instance dict is at tp_dictoffset */
	uint8_t dictkeys_old;             /* <= 3.10: dk_size, index width by size, general entries only */
	uint8_t dict_or_values_tagged;    /* 3.12: one word at -obj_dict_before, values (minus one) when bit 0 set */
	uint8_t long_tagged;              /* 3.12: long_size is lv_tag = digits << long_tagged | sign bits */
};

/* The row for major.minor, or NULL when this build has none. */
const struct py_layout *py_layout_find(unsigned major, unsigned minor);

#endif
