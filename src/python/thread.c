/* thread.c — interpreters and their thread states (internal.h): every interpreter from _PyRuntime, every thread
 * state of each, the frames of each thread (frame.c), and threading's name for a thread, read from
 * threading._active ({ident: Thread}) and each Thread's _name at most every 200 ms. */
#include "python/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/grow.h"

#define PY_NAMES_EVERY_NS 200000000ULL

/* ---- thread names ---- */

static bool add_thread_name(const struct py_proc *cpy, void *ctx, uint64_t key, uint64_t thread)
{
	struct py_proc *py = ctx;
	uint64_t ident;
	if (!py_int_read(cpy, key, &ident))
		return false;
	uint64_t name_obj = py_obj_attr(cpy, thread, "_name");
	char *name = name_obj ? py_str_read(cpy, name_obj) : NULL;
	if (!name)
		return false;
	if (!ALLOC_GROW(py->names, py->nnames + 1, py->capnames)) {
		free(name);
		return true;
	}
	py->names[py->nnames++] = (struct py_name){ ident, name };
	return py->nnames >= PY_MAX_THREADS;
}

static void names_clear(struct py_proc *py)
{
	for (size_t i = 0; i < py->nnames; i++)
		free(py->names[i].name);
	py->nnames = 0;
}

void py_names_release(struct py_proc *py)
{
	names_clear(py);
	free(py->names);
	py->names = NULL;
	py->capnames = 0;
}

/* Re-reads threading._active (at most every 200 ms) into py->names. */
static void refresh_names(struct py_proc *py, uint64_t interp)
{
	uint64_t now = mono_ns();
	if (py->names_read_ns && now - py->names_read_ns < PY_NAMES_EVERY_NS)
		return;
	py->names_read_ns = now;
	uint64_t modules, threading, mdict, active;
	if (!py_mem_ptr(py, interp + py->L->interp_modules, &modules) || !modules)
		return;
	threading = py_dict_get_str(py, modules, "threading");
	if (!threading || !py_mem_ptr(py, threading + py->L->module_dict, &mdict) || !mdict)
		return;
	active = py_dict_get_str(py, mdict, "_active");
	if (!active)
		return;
	names_clear(py);
	py_dict_each(py, active, add_thread_name, py);
}

static const char *thread_name(struct py_proc *py, uint64_t interp, uint64_t ident)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < py->nnames; i++)
			if (py->names[i].ident == ident)
				return py->names[i].name;
		if (pass == 0)
			refresh_names(py, interp);
	}
	return NULL;
}

/* ---- thread states ---- */

/* The frame a thread runs now, read afresh (to tell whether it moved during a walk); false when unreadable. */
static bool current_frame(struct py_proc *py, uint64_t ts_addr, const uint8_t *ts, uint64_t *out)
{
	const struct py_layout *L = py->L;
	if (L->frame_objects || L->frame_in_tstate)
		return py_mem_ptr(py, ts_addr + L->tstate_frame, out);
	uint64_t cframe;
	memcpy(&cframe, ts + L->tstate_cframe, 8);
	if (!cframe) {
		*out = 0;
		return true;
	}
	return py_mem_ptr(py, cframe + L->cframe_current_frame, out);
}

#define PTHREAD_SCAN 2048 /* bytes of glibc's struct pthread searched for the tid */

/* Before 3.11 a thread state knows its pthread_t only: on glibc that is the address of the thread's struct
 * pthread, which holds the kernel tid. Its offset is found once per process from a thread whose tid is known:
 * the main thread's is the pid. */
static pid_t tid_of(struct py_proc *py, uint64_t pthread)
{
	int32_t tid;
	if (py->tid_off > 0)
		return py_mem_read(py, pthread + (uint64_t)py->tid_off, &tid, 4) && tid > 0 ? tid : 0;
	if (py->tid_off < 0)
		return 0;
	int32_t words[PTHREAD_SCAN / 4];
	if (!py_mem_read(py, pthread, words, sizeof words))
		return 0;
	for (size_t i = 2; i < PTHREAD_SCAN / 4; i++) {
		if (words[i] == py->pid) {
			py->tid_off = (int32_t)(i * 4);
			return py->pid;
		}
	}
	return 0; /* not the main thread: another thread state may be */
}

/* Reads the thread state at ts_addr and its frames, and calls fn with them. False when the thread state itself
 * cannot be read (the walk of this interpreter's threads ends); *next is the next thread state. */
static bool read_thread(struct py_proc *py, uint64_t interp, uint64_t ts_addr, uint64_t gil, py_thread_fn fn,
			void *ctx, uint64_t *next)
{
	const struct py_layout *L = py->L;
	uint8_t ts[512];
	if (!py_mem_read_head(py, ts_addr, ts, sizeof ts, L->tstate_size))
		return false;
	struct py_thread t = { 0 };
	uint64_t ident = py_field_u64(ts, L->tstate_thread_id);
	*next = py_field_u64(ts, L->tstate_next);
	uint64_t native = L->no_native_tid ? (uint64_t)tid_of(py, ident) : py_field_u64(ts, L->tstate_native_thread_id);
	t.tid = (pid_t)native;
	t.ident = ident;
	t.holds_gil = gil == ts_addr;
	t.name = L->no_thread_names ? NULL : thread_name(py, interp, ident);
	/* The chain is read while the thread runs: when its current frame moved meanwhile the walk may have mixed
	 * two stacks, so it is read again (twice at most). */
	int n = -1;
	for (int attempt = 0; attempt < 3; attempt++) {
		uint64_t before = 0, after = 1;
		if (L->frame_objects || L->frame_in_tstate)
			memcpy(&before, ts + L->tstate_frame, 8); /* what the walk starts from */
		else if (!current_frame(py, ts_addr, ts, &before))
			break;
		n = py_frames_read(py, ts);
		if (current_frame(py, ts_addr, ts, &after) && after == before)
			break;
		/* the thread state itself may have a new frame (or cframe) by now */
		if (!py_mem_read(py, ts_addr, ts, L->tstate_size))
			break;
	}
	if (n >= 0 && t.tid > 0) {
		t.nframes = (size_t)n;
		t.frames = py->frames;
		fn(ctx, &t);
	}
	return true;
}

enum plumb_err py_read_threads(struct py_proc *py, py_thread_fn fn, void *ctx, struct perr *e)
{
	const struct py_layout *L = py->L;
	uint64_t interp, gil = 0;
	if (!py_mem_ptr(py, py->runtime + L->runtime_interp_head, &interp))
		return perr_set(e, PLUMB_EIO, "cannot read process %d: %s", (int)py->pid, strerror(errno));
	if (!L->no_tstate_current)
		py_mem_ptr(py, py->runtime + L->runtime_tstate_current, &gil);
	for (int ni = 0; interp && ni < PY_MAX_INTERPS; ni++) {
		uint64_t ts_addr;
		if (!py_mem_ptr(py, interp + L->interp_threads_head, &ts_addr))
			break;
		for (int nt = 0; ts_addr && nt < PY_MAX_THREADS; nt++)
			if (!read_thread(py, interp, ts_addr, gil, fn, ctx, &ts_addr))
				break;
		if (!py_mem_ptr(py, interp + L->interp_next, &interp))
			break;
	}
	return PLUMB_OK;
}
