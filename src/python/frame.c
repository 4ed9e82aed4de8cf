/* frame.c — one thread's Python frames (internal.h): the chain of _PyInterpreterFrame from the thread state's
 * current frame outwards, each with its code object's name, file and current line; and those frames handed to a
 * profile as finished frames, the one way both the python backend and --native put them there. A chain is read
 * from a running thread: it is bounded (PY_MAX_FRAMES) and dropped whole when a read fails midway. */
#include "python/internal.h"

#include <string.h>

/* Walks one thread's frame chain into py->frames; returns the count, or -1 when the chain could not be read. */
int py_frames_read(struct py_proc *py, const uint8_t *ts)
{
	const struct py_layout *L = py->L;
	uint64_t cframe, frame;
	memcpy(&cframe, ts + L->tstate_cframe, 8);
	if (!cframe)
		return 0;
	if (!py_mem_ptr(py, cframe + L->cframe_current_frame, &frame))
		return -1;
	int n = 0;
	uint8_t fb[256];
	for (int steps = 0; frame && n < PY_MAX_FRAMES && steps < 2 * PY_MAX_FRAMES; steps++) {
		if (L->frame_size > sizeof fb || !py_mem_read(py, frame, fb, L->frame_size))
			return -1;
		uint64_t code_p, prev, prev_instr;
		memcpy(&code_p, fb + L->frame_code, 8);
		memcpy(&prev, fb + L->frame_previous, 8);
		memcpy(&prev_instr, fb + L->frame_prev_instr, 8);
		bool is_entry = !L->frame_no_is_entry && fb[L->frame_is_entry] != 0;
		uint8_t owner = fb[L->frame_owner];
		if (L->frame_has_cstack && owner == L->frame_owned_by_cstack) {
			/* 3.12: the shim an evaluation-loop call links in: the frame inside it is an entry frame */
			if (n > 0)
				py->frames[n - 1].is_entry = true;
			frame = prev;
			continue;
		}
		struct py_code *c = py_code_get(py, code_p);
		if (!c)
			return -1;
		uint64_t code_start = code_p + L->code_code_adaptive;
		int64_t lasti = ((int64_t)prev_instr - (int64_t)code_start) / 2;
		/* An incomplete frame (still setting up, _PyFrame_IsIncomplete) is not shown, as CPython does. */
		bool incomplete = owner != L->frame_owned_by_generator && lasti < c->firsttraceable;
		if (!incomplete) {
			struct py_frame *f = &py->frames[n++];
			f->func = c->func;
			f->file = c->file;
			f->line = (uint32_t)py_code_line(c, lasti < 0 || lasti > INT32_MAX / 2 ? -1 : (int)(lasti * 2));
			f->is_entry = is_entry;
			f->code_addr = code_p;
		} else if (is_entry && n > 0) {
			py->frames[n - 1].is_entry = true;
		}
		frame = prev;
	}
	return n;
}

uint32_t py_frames_push(struct profile *p, uint32_t parent, const struct py_frame *frames, size_t n)
{
	uint32_t node = parent;
	for (size_t i = n; i-- > 0;) {
		struct frame f = { 0 };
		f.func = profile_intern_cstr(p, frames[i].func);
		f.file = profile_intern_cstr(p, frames[i].file);
		f.line = frames[i].line;
		f.kind = FRAME_USER;
		uint32_t fid = profile_frame(p, &f);
		if (fid == PROFILE_NOMEM)
			return PROFILE_NOMEM;
		node = profile_stack(p, node, fid);
		if (node == PROFILE_NOMEM)
			return PROFILE_NOMEM;
	}
	return node;
}
