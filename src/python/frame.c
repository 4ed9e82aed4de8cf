/* frame.c — one thread's Python frames (internal.h), through one interface for both kinds of chain: the
 * PyFrameObject chain of 3.8-3.10 (tstate->frame along f_back, f_lasti the instruction; every frame is one C call
 * of the evaluation loop) and the _PyInterpreterFrame chain of 3.11+ (from the _PyCFrame, or tstate itself in
 * 3.13, along previous; entry frames marked, or shim frames owned by the C stack in 3.12+). The chain is walked
 * first (one read per frame), then every frame's code object head is read in one call and each is resolved
 * against the code cache (code.c), so what a frame is named after is the object it runs at this very sample.
 * Those frames are handed to a profile as finished frames, the one way both the python backend and --native
 * put them there. A chain is read from a running thread: it is bounded (PY_MAX_FRAMES) and dropped whole when
 * a read fails midway. */
#include "python/internal.h"

#include <string.h>

/* The chain's frames as read, innermost first, into py->raw; their count, or -1 when a read failed. */
static int walk_chain(struct py_proc *py, const uint8_t *ts)
{
	const struct py_layout *L = py->L;
	uint64_t frame;
	if (L->frame_objects || L->frame_in_tstate) {
		memcpy(&frame, ts + L->tstate_frame, 8);
	} else {
		uint64_t cframe;
		memcpy(&cframe, ts + L->tstate_cframe, 8);
		if (!cframe)
			return 0;
		if (!py_mem_ptr(py, cframe + L->cframe_current_frame, &frame))
			return -1;
	}
	int n = 0;
	uint8_t fb[256];
	if (L->frame_size > sizeof fb)
		return -1;
	for (int steps = 0; frame && n < PY_MAX_FRAMES && steps < 2 * PY_MAX_FRAMES; steps++) {
		if (!py_mem_read(py, frame, fb, L->frame_size))
			return -1;
		struct py_raw_frame *r = &py->raw[n];
		uint64_t prev;
		memcpy(&r->code, fb + L->frame_code, 8);
		memcpy(&prev, fb + L->frame_previous, 8);
		if (L->frame_objects) {
			int32_t lasti;
			memcpy(&lasti, fb + L->frame_lasti, 4);
			r->lasti = lasti < 0 ? -1 : L->lasti_in_units ? 2 * (int64_t)lasti : lasti;
			r->instr = 0;
			r->owner = 0;
			r->is_entry = true; /* each PyFrameObject is run by its own call of the evaluation loop */
			n++;
		} else {
			memcpy(&r->instr, fb + L->frame_prev_instr, 8);
			r->lasti = -1;
			r->owner = fb[L->frame_owner];
			r->is_entry = !L->frame_no_is_entry && fb[L->frame_is_entry] != 0;
			if (L->frame_has_cstack && r->owner == L->frame_owned_by_cstack) {
				/* 3.12+: the shim an evaluation-loop call links in: the frame inside it is an entry frame */
				if (n > 0)
					py->raw[n - 1].is_entry = true;
			} else {
				n++;
			}
		}
		frame = prev;
	}
	return n;
}

int py_frames_read(struct py_proc *py, const uint8_t *ts)
{
	const struct py_layout *L = py->L;
	int nraw = walk_chain(py, ts);
	if (nraw <= 0)
		return nraw;
	uint64_t addrs[PY_MAX_FRAMES];
	for (int i = 0; i < nraw; i++)
		addrs[i] = py->raw[i].code;
	if (py_mem_readv(py, addrs, (size_t)nraw, L->code_size, py->heads) != (size_t)nraw)
		return -1;
	int n = 0;
	for (int i = 0; i < nraw; i++) {
		const struct py_raw_frame *r = &py->raw[i];
		struct py_code *c = py_code_get(py, r->code, py->heads + (size_t)i * L->code_size);
		if (!c)
			return -1;
		int64_t addrq = r->lasti;
		bool incomplete = false;
		if (!L->frame_objects) {
			uint64_t code_start = r->code + L->code_code_adaptive;
			int64_t lasti = ((int64_t)r->instr - (int64_t)code_start) / 2;
			addrq = lasti * 2;
			/* An incomplete frame (still setting up, _PyFrame_IsIncomplete) is not shown, as CPython does. */
			incomplete = r->owner != L->frame_owned_by_generator && lasti < c->firsttraceable;
		}
		if (!incomplete) {
			struct py_frame *f = &py->frames[n++];
			f->func = c->func;
			f->file = c->file;
			f->line = (uint32_t)py_code_line(py, c, addrq < 0 || addrq > INT32_MAX ? -1 : (int)addrq);
			f->is_entry = r->is_entry;
			f->code_addr = r->code;
		} else if (r->is_entry && n > 0) {
			py->frames[n - 1].is_entry = true;
		}
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
