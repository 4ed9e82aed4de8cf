/* gecko.c — Firefox Profiler "processed" JSON (preprocessedProfileVersion 49, the layout samply 0.13 writes):
 * one entry per thread with its own stackTable, frameTable, funcTable, resourceTable and stringArray, and a
 * top-level libs list. The frame's fields go to the format's own columns: the function name to funcTable.name,
 * the file to funcTable.fileName, the line to frameTable.line, the module to a resource and a lib (the kernel's
 * own frames to the resource "[kernel]"), the kind to the category (User, Kernel, JIT, Python), inlining to
 * frameTable.inlineDepth. funcTable.resource is an index or -1, never null.
 *
 * Sample times are the timeline's (ms from the profile start), with threadCPUDelta so the profiler shows the
 * activity. A profile without times (folded input) is not given invented ones: each distinct stack is one sample
 * with its count as the weight, the samples laid end to end, and meta.importedFrom and meta.plumb say there is
 * no timeline (plumb's reader then ignores the positions). The output is written thread by thread through a
 * streaming writer (gzipped when the destination ends in ".gz"); no step recurses. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/intern.h"
#include "base/redact.h"
#include "base/str.h"
#include "base/sbuf.h"
#include "base/u32vec.h"
#include "format/out.h"
#include "profile/label.h"

enum gk_category { CAT_OTHER = 0, CAT_USER, CAT_KERNEL, CAT_JIT, CAT_PYTHON };

static const char categories[] =
	"\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"JIT\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Python\",\"color\":\"blue\",\"subcategories\":[\"Other\"]}]";

#define GECKO_KERNEL_RESOURCE "[kernel]" /* the kernel's own frames: a resource without a lib */
#define NONE UINT32_MAX /* written as null (or -1 where the format wants an index) */

static uint32_t category(const struct frame *f)
{
	switch (f->kind) {
	case FRAME_KERNEL:
		return CAT_KERNEL;
	case FRAME_JIT:
		return CAT_JIT;
	case FRAME_PYTHON:
		return CAT_PYTHON;
	default:
		return CAT_USER;
	}
}

/* One thread's tables, indexed by their rows. */
struct thread_tables {
	struct u32vec st_prefix, st_frame;              /* stackTable */
	struct u32vec fr_func, fr_line, fr_frame;        /* frameTable (fr_frame: the profile frame of each row) */
	struct u32vec fn_name, fn_resource, fn_file;     /* funcTable */
	struct u32vec rs_lib, rs_name;                   /* resourceTable */
	struct interner strs;                            /* stringArray */
	struct interner funcs;                           /* (name, file, resource) -> func row */
};

struct gk_writer {
	const struct profile *p;
	struct fmt_out *o;
	const struct label_table *names;  /* per frame: the function's name (no location, no mark) */
	uint32_t *lib_of;                 /* module str id -> lib index + 1 (0: none) */
	uint64_t *lib_base;               /* module str id -> its lib's start (frame addresses count from it) */
	size_t *order;                    /* the timeline in time order (profile_timeline_order), NULL without */
	uint32_t *stack_row, *frame_row, *res_row; /* profile id -> row + 1 in the current thread (0: none yet) */
	struct u32vec chain;              /* scratch: a stack's unmapped nodes, innermost first */
	struct thread_tables t;
	bool oom;
};

static void tables_release(struct thread_tables *t)
{
	struct u32vec *vs[] = { &t->st_prefix, &t->st_frame, &t->fr_func, &t->fr_line, &t->fr_frame,
				&t->fn_name,   &t->fn_resource, &t->fn_file, &t->rs_lib, &t->rs_name };
	for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
		u32vec_release(vs[i]);
	interner_release(&t->strs);
	interner_release(&t->funcs);
}

static void push(struct gk_writer *w, struct u32vec *v, uint32_t x)
{
	if (!u32vec_push(v, x))
		w->oom = true;
}

static uint32_t str_row(struct gk_writer *w, const char *s, size_t n)
{
	uint32_t id = intern(&w->t.strs, s, n, NULL);
	if (id == INTERN_NOMEM) {
		w->oom = true;
		return 0;
	}
	return id;
}

/* A path's row, redacted as a path (docs/design.md §3.6): a file or a module's name. */
static uint32_t str_row_redacted(struct gk_writer *w, const char *s)
{
	char *red = redact_path_dup(s);
	if (!red) {
		w->oom = true;
		return 0;
	}
	uint32_t id = str_row(w, red, strlen(red));
	free(red);
	return id;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* The resource row of a frame: its module's lib, or for the kernel's own frames (no module) the resource
 * "[kernel]" without a lib; NONE for a frame without either. */
static uint32_t resource_row(struct gk_writer *w, const struct frame *fr)
{
	uint32_t lib = fr->module ? w->lib_of[fr->module] : 0;
	if (!lib && !(fr->kind == FRAME_KERNEL && !fr->module))
		return NONE;
	uint32_t key = fr->module; /* 0 for the kernel's resource: string 0 is never a module */
	if (!w->res_row[key]) {
		const char *mod = fr->module ? profile_str(w->p, fr->module) : GECKO_KERNEL_RESOURCE;
		push(w, &w->t.rs_lib, lib ? lib - 1 : NONE);
		push(w, &w->t.rs_name, str_row_redacted(w, base_name(mod)));
		w->res_row[key] = (uint32_t)w->t.rs_lib.n;
	}
	return w->res_row[key] - 1;
}

static uint32_t frame_row(struct gk_writer *w, uint32_t f)
{
	if (w->frame_row[f])
		return w->frame_row[f] - 1;
	const struct frame *fr = profile_frame_get(w->p, f);
	struct thread_tables *t = &w->t;
	uint32_t name = str_row(w, w->names->labels[f], w->names->lens[f]);
	uint32_t file = fr->file ? str_row_redacted(w, profile_str(w->p, fr->file)) : NONE;
	uint32_t res = resource_row(w, fr);
	uint32_t key[3] = { name, file, res };
	bool added;
	uint32_t func = intern(&t->funcs, (const char *)key, sizeof key, &added);
	if (func == INTERN_NOMEM) {
		w->oom = true;
		func = 0;
	} else if (added) {
		push(w, &t->fn_name, name);
		push(w, &t->fn_resource, res);
		push(w, &t->fn_file, file);
	}
	push(w, &t->fr_func, func);
	push(w, &t->fr_line, fr->line ? fr->line : NONE);
	push(w, &t->fr_frame, f);
	w->frame_row[f] = (uint32_t)t->fr_func.n;
	return w->frame_row[f] - 1;
}

/* The stackTable row of profile stack s, adding its unmapped part: walked up to the first mapped node (or the
 * root), then added outermost first. */
static uint32_t stack_row(struct gk_writer *w, uint32_t s)
{
	if (s == PROFILE_ROOT)
		return NONE;
	if (w->stack_row[s])
		return w->stack_row[s] - 1;
	w->chain.n = 0;
	uint32_t at = s;
	while (at != PROFILE_ROOT && !w->stack_row[at]) {
		push(w, &w->chain, at);
		at = profile_stack_parent(w->p, at);
	}
	uint32_t prefix = at == PROFILE_ROOT ? NONE : w->stack_row[at] - 1;
	for (size_t i = w->chain.n; i-- > 0 && !w->oom;) {
		uint32_t node = w->chain.v[i];
		uint32_t fr = frame_row(w, profile_stack_frame(w->p, node));
		push(w, &w->t.st_prefix, prefix);
		push(w, &w->t.st_frame, fr);
		prefix = (uint32_t)w->t.st_frame.n - 1;
		w->stack_row[node] = prefix + 1;
	}
	return w->oom ? NONE : w->stack_row[s] - 1;
}

/* Writes a column of rows, NONE as `none` ("null" or "-1"). */
static void put_col(struct fmt_out *o, const char *key, const struct u32vec *v, const char *none)
{
	fmt_out_str(o, ",\"");
	fmt_out_str(o, key);
	fmt_out_str(o, "\":[");
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			fmt_out_ch(o, ',');
		if (v->v[i] == NONE)
			fmt_out_str(o, none);
		else
			fmt_out_u64(o, v->v[i]);
	}
	fmt_out_ch(o, ']');
}

static void put_repeat(struct fmt_out *o, const char *key, const char *value, size_t n)
{
	fmt_out_str(o, ",\"");
	fmt_out_str(o, key);
	fmt_out_str(o, "\":[");
	for (size_t i = 0; i < n; i++) {
		if (i)
			fmt_out_ch(o, ',');
		fmt_out_str(o, value);
	}
	fmt_out_ch(o, ']');
}

/* How the samples' weights and times are written. */
struct gk_units {
	bool ms;            /* weights are nanoseconds: written as "tracing-ms" milliseconds */
	const char *type;   /* samples.weightType */
	uint64_t period_ns; /* the sampling period when known, else 0 */
	bool timed;         /* the samples have times */
};

/* One thread's samples, in time order or (without a timeline) one per distinct stack laid end to end. The
 * columns are written as they are made; the stack rows they name are added to the thread's tables. */
static size_t write_samples(struct gk_writer *w, uint32_t th, const struct gk_units *u)
{
	const struct profile *p = w->p;
	struct fmt_out *o = w->o;
	size_t nc, nt;
	const struct profile_count *counts = profile_counts(p, &nc);
	const struct profile_sample *tl = profile_timeline(p, &nt);
	const struct profile_meta *m = profile_meta_const(p);
	size_t n = u->timed ? nt : nc, ns = 0;
	/* pass 0: stacks; 1: times; 2: weights; 3: threadCPUDelta (µs); 4: plumb's sample counts */
	static const char *const keys[] = { "\"stack\":[", "],\"time\":[", "],\"weight\":[", "],\"threadCPUDelta\":[",
					    "],\"plumbSamples\":[" };
	for (int pass = 0; pass < 5; pass++) {
		fmt_out_str(o, keys[pass]);
		uint64_t pos_ns = 0, prev_ns = 0;
		bool first = true;
		for (size_t k = 0; k < n; k++) {
			size_t i = u->timed ? w->order[k] : k; /* a thread's range is its first and last sample's */
			uint32_t thr = u->timed ? tl[i].thread : counts[i].thread;
			uint64_t wt = u->timed ? tl[i].weight : counts[i].weight;
			uint64_t samples = u->timed ? tl[i].samples : counts[i].samples;
			if (thr != th || !wt)
				continue;
			if (!first)
				fmt_out_ch(o, ',');
			first = false;
			/* the sample's time and length in nanoseconds: its own time, or its place end to end */
			uint64_t len_ns = u->ms ? wt : samples * (u->period_ns ? u->period_ns : 1000000);
			uint64_t t_ns = u->timed ? (tl[i].time_ns > m->clock_origin_ns ? tl[i].time_ns - m->clock_origin_ns
										     : 0)
						 : pos_ns;
			switch (pass) {
			case 0:
				fmt_out_u64(o, stack_row(w, u->timed ? tl[i].stack : counts[i].stack));
				ns++;
				break;
			case 1:
				fmt_out_fixed(o, t_ns / 1000000, t_ns % 1000000, 6);
				break;
			case 2:
				if (u->ms)
					fmt_out_fixed(o, wt / 1000000, wt % 1000000, 6);
				else
					fmt_out_u64(o, wt);
				break;
			case 3: {
				/* CPU time since the thread's previous sample: the sample's own length when it is known,
				 * else the time since the previous sample */
				uint64_t d = u->ms || u->period_ns || !u->timed ? len_ns : t_ns - (t_ns > prev_ns ? prev_ns : t_ns);
				fmt_out_u64(o, d / 1000);
				break;
			}
			default:
				fmt_out_u64(o, samples);
			}
			pos_ns += len_ns;
			prev_ns = t_ns;
		}
	}
	fmt_out_ch(o, ']');
	return ns;
}

/* An allocation profile's samples again as the thread's native allocations (the Firefox Profiler's unbalanced
 * table: time, bytes, stack), which its allocation views and tracks read. The stacks are the samples' rows. */
static void write_allocations(struct gk_writer *w, uint32_t th)
{
	const struct profile *p = w->p;
	struct fmt_out *o = w->o;
	size_t nt, n = 0;
	const struct profile_sample *tl = profile_timeline(p, &nt);
	uint64_t origin = profile_meta_const(p)->clock_origin_ns;
	static const char *const keys[] = { "},\"nativeAllocations\":{\"weightType\":\"bytes\",\"time\":[",
					    "],\"weight\":[", "],\"stack\":[" };
	for (int pass = 0; pass < 3; pass++) {
		fmt_out_str(o, keys[pass]);
		bool first = true;
		for (size_t k = 0; k < nt; k++) {
			size_t i = w->order[k];
			if (tl[i].thread != th || !tl[i].weight)
				continue;
			if (!first)
				fmt_out_ch(o, ',');
			first = false;
			uint64_t t_ns = tl[i].time_ns > origin ? tl[i].time_ns - origin : 0;
			if (pass == 0)
				fmt_out_fixed(o, t_ns / 1000000, t_ns % 1000000, 6);
			else if (pass == 1)
				fmt_out_u64(o, tl[i].weight);
			else {
				fmt_out_u64(o, stack_row(w, tl[i].stack));
				n++;
			}
		}
	}
	fmt_out_str(o, "],\"length\":");
	fmt_out_u64(o, n);
}

/* One thread, or nothing when it has no samples (returns false then). */
static bool write_thread(struct gk_writer *w, uint32_t th, const struct gk_units *u, bool first)
{
	const struct profile *p = w->p;
	struct fmt_out *o = w->o;
	size_t nc;
	const struct profile_count *counts = profile_counts(p, &nc);
	bool any = false;
	for (size_t i = 0; i < nc && !any; i++)
		any = counts[i].thread == th && counts[i].weight;
	if (!any)
		return false;
	const struct profile_thread *t = profile_thread_get(p, th);
	const char *name = profile_str(p, t->name), *proc = profile_process_name(p, th);
	if (!name[0])
		name = "thread";
	if (!proc[0])
		proc = name;
	fmt_out_str(o, first ? "{\"name\":" : ",{\"name\":");
	fmt_out_json(o, name, strlen(name), true);
	fmt_out_str(o, ",\"processName\":");
	fmt_out_json(o, proc, strlen(proc), true);
	fmt_out_str(o, ",\"processType\":\"default\",\"pid\":\"");
	fmt_out_u64(o, t->pid);
	fmt_out_str(o, "\",\"tid\":");
	fmt_out_u64(o, t->tid);
	fmt_out_str(o, t->pid == t->tid ? ",\"isMainThread\":true" : ",\"isMainThread\":false");
	fmt_out_str(o, ",\"registerTime\":0,\"unregisterTime\":null,\"processStartupTime\":0,"
		       "\"processShutdownTime\":null,\"pausedRanges\":[]"
		       ",\"markers\":{\"length\":0,\"category\":[],\"data\":[],\"endTime\":[],\"name\":[],"
		       "\"phase\":[],\"startTime\":[]}"
		       ",\"nativeSymbols\":{\"length\":0,\"address\":[],\"functionSize\":[],\"libIndex\":[],\"name\":[]}"
		       ",\"samples\":{\"weightType\":\"");
	fmt_out_str(o, u->type);
	fmt_out_str(o, "\",");
	size_t ns = write_samples(w, th, u);
	fmt_out_str(o, ",\"length\":");
	fmt_out_u64(o, ns);
	if (u->timed && strcmp(u->type, "bytes") == 0)
		write_allocations(w, th);
	struct thread_tables *tt = &w->t;
	size_t nst = tt->st_frame.n, nfr = tt->fr_func.n, nfn = tt->fn_name.n, nrs = tt->rs_lib.n;
	fmt_out_str(o, "},\"stackTable\":{\"length\":");
	fmt_out_u64(o, nst);
	put_col(o, "prefix", &tt->st_prefix, "null");
	put_col(o, "frame", &tt->st_frame, "null");
	fmt_out_str(o, ",\"category\":[");
	for (size_t i = 0; i < nst; i++) {
		if (i)
			fmt_out_ch(o, ',');
		fmt_out_u64(o, category(profile_frame_get(p, tt->fr_frame.v[tt->st_frame.v[i]])));
	}
	fmt_out_ch(o, ']');
	put_repeat(o, "subcategory", "0", nst);
	fmt_out_str(o, "},\"frameTable\":{\"length\":");
	fmt_out_u64(o, nfr);
	fmt_out_str(o, ",\"address\":[");
	for (size_t i = 0; i < nfr; i++) {
		const struct frame *fr = profile_frame_get(p, tt->fr_frame.v[i]);
		uint64_t addr;
		if (i)
			fmt_out_ch(o, ',');
		uint64_t insn = profile_frame_insn(fr); /* a nameless frame's instruction, beside its name's offset */
		struct frame at = *fr;
		at.addr = insn;
		at.offset = 0;
		if (fr->module && w->lib_of[fr->module] && profile_mapping_addr(p, &at, &addr) && addr >= w->lib_base[fr->module])
			fmt_out_u64(o, addr - w->lib_base[fr->module]); /* relative to its lib, as the profiler symbolizes */
		else if (insn && insn < (1ULL << 53)) /* what a JavaScript number holds exactly */
			fmt_out_u64(o, insn);
		else
			fmt_out_str(o, "-1");
	}
	fmt_out_str(o, "],\"inlineDepth\":[");
	for (size_t i = 0; i < nfr; i++) {
		if (i)
			fmt_out_ch(o, ',');
		fmt_out_ch(o, profile_frame_get(p, tt->fr_frame.v[i])->inlined ? '1' : '0');
	}
	fmt_out_str(o, "],\"category\":[");
	for (size_t i = 0; i < nfr; i++) {
		if (i)
			fmt_out_ch(o, ',');
		fmt_out_u64(o, category(profile_frame_get(p, tt->fr_frame.v[i])));
	}
	fmt_out_ch(o, ']');
	put_repeat(o, "subcategory", "0", nfr);
	put_col(o, "func", &tt->fr_func, "null");
	put_repeat(o, "nativeSymbol", "null", nfr);
	put_repeat(o, "innerWindowID", "null", nfr);
	put_repeat(o, "implementation", "null", nfr);
	put_col(o, "line", &tt->fr_line, "null");
	put_repeat(o, "column", "null", nfr);
	fmt_out_str(o, "},\"funcTable\":{\"length\":");
	fmt_out_u64(o, nfn);
	put_col(o, "name", &tt->fn_name, "null");
	put_repeat(o, "isJS", "false", nfn);
	put_repeat(o, "relevantForJS", "false", nfn);
	put_col(o, "resource", &tt->fn_resource, "-1");
	put_col(o, "fileName", &tt->fn_file, "null");
	put_repeat(o, "lineNumber", "null", nfn);
	put_repeat(o, "columnNumber", "null", nfn);
	fmt_out_str(o, "},\"resourceTable\":{\"length\":");
	fmt_out_u64(o, nrs);
	put_col(o, "lib", &tt->rs_lib, "null");
	put_col(o, "name", &tt->rs_name, "null");
	put_repeat(o, "host", "null", nrs);
	fmt_out_str(o, ",\"type\":[");
	for (size_t i = 0; i < nrs; i++) /* a library (1), or the kernel's resource without one (0, unknown) */
		fmt_out_str(o, tt->rs_lib.v[i] == NONE ? (i ? ",0" : "0") : (i ? ",1" : "1"));
	fmt_out_ch(o, ']');
	fmt_out_str(o, "},\"stringArray\":[");
	for (uint32_t i = 0; i < intern_count(&tt->strs); i++) {
		if (i)
			fmt_out_ch(o, ',');
		fmt_out_json(o, intern_str(&tt->strs, i), intern_len(&tt->strs, i), false);
	}
	fmt_out_str(o, "]}");
	return true;
}

/* The Breakpad id of a GNU build ID (lowercase hex): its first 16 bytes as a GUID (the first three fields byte-swapped,
 * as Breakpad and the Firefox Profiler's symbol servers spell an ELF file's id), uppercase, then the age 0. */
static void breakpad_id(const char *build_id, char out[34])
{
	static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	size_t n = strlen(build_id);
	for (int i = 0; i < 16; i++) {
		size_t at = (size_t)order[i] * 2;
		for (int h = 0; h < 2; h++) {
			char c = at + (size_t)h < n ? build_id[at + (size_t)h] : '0';
			out[2 * i + h] = c >= 'a' && c <= 'f' ? (char)(c - 'a' + 'A') : c;
		}
	}
	out[32] = '0';
	out[33] = '\0';
}

/* libs: one per module, with its mapping when the profile has one (start, end, offset, the build ID as
 * breakpadId and codeId), which is what the profiler needs to symbolize a frame from its address. */
static void write_libs(struct gk_writer *w)
{
	const struct profile *p = w->p;
	size_t nlibs = 0;
	for (size_t f = 0, nf = profile_nframes(p); f < nf; f++) {
		const struct frame *fr = profile_frame_get(p, (uint32_t)f);
		if (!fr->module || w->lib_of[fr->module])
			continue;
		w->lib_of[fr->module] = (uint32_t)++nlibs;
		const struct profile_mapping *pm = fr->kind == FRAME_USER ? profile_mapping_of(p, fr->module) : NULL;
		const char *mod = profile_str(p, fr->module), *base = base_name(mod);
		fmt_out_str(w->o, nlibs > 1 ? ",{\"name\":" : "{\"name\":");
		fmt_out_json(w->o, base, strlen(base), true);
		fmt_out_str(w->o, ",\"path\":");
		fmt_out_json(w->o, mod, strlen(mod), true);
		fmt_out_str(w->o, ",\"debugName\":");
		fmt_out_json(w->o, base, strlen(base), true);
		fmt_out_str(w->o, ",\"debugPath\":");
		fmt_out_json(w->o, mod, strlen(mod), true);
		if (pm) {
			w->lib_base[fr->module] = pm->start - pm->offset; /* where the file's first byte would be mapped */
			fmt_out_str(w->o, ",\"start\":");
			fmt_out_u64(w->o, pm->start - pm->offset);
			fmt_out_str(w->o, ",\"end\":");
			fmt_out_u64(w->o, pm->limit);
			fmt_out_str(w->o, ",\"offset\":");
			fmt_out_u64(w->o, 0);
		}
		const char *id = pm ? profile_str(p, pm->build_id) : "";
		if (id[0]) {
			char bp[34];
			breakpad_id(id, bp);
			fmt_out_str(w->o, ",\"breakpadId\":\"");
			fmt_out_str(w->o, bp);
			fmt_out_str(w->o, "\",\"codeId\":\"");
			fmt_out_str(w->o, id);
			fmt_out_str(w->o, "\",\"arch\":\"x86_64\"}");
		} else {
			fmt_out_str(w->o, ",\"breakpadId\":\"\",\"codeId\":null,\"arch\":\"\"}");
		}
	}
}

static void write_meta(struct gk_writer *w, const struct gk_units *u)
{
	const struct profile *p = w->p;
	const struct profile_meta *m = profile_meta_const(p);
	struct fmt_out *o = w->o;
	const char *cmd = profile_str(p, m->command), *wu = profile_str(p, m->weight_unit);
	uint64_t iv = u->period_ns ? u->period_ns : 1000000;
	fmt_out_str(o, "{\"meta\":{\"version\":24,\"preprocessedProfileVersion\":49,\"processType\":0,"
		       "\"debug\":false,\"symbolicated\":true,\"stackwalk\":1,\"interval\":");
	fmt_out_fixed(o, iv / 1000000, iv % 1000000, 6);
	fmt_out_str(o, ",\"startTime\":");
	uint64_t start_us = m->start_unix > 0 ? (uint64_t)(m->start_unix * 1e6) : 0;
	fmt_out_fixed(o, start_us / 1000, start_us % 1000, 3);
	/* the profile's range (ms from startTime): the profiler shows it whole, not just from the first sample */
	double end_ms = m->duration_s > 0 ? m->duration_s * 1e3 : 0;
	size_t nt;
	const struct profile_sample *tl = profile_timeline(p, &nt);
	for (size_t i = 0; u->timed && i < nt; i++) {
		double t = tl[i].time_ns > m->clock_origin_ns ? (double)(tl[i].time_ns - m->clock_origin_ns) / 1e6 : 0;
		if (t + (double)iv / 1e6 > end_ms)
			end_ms = t + (double)iv / 1e6;
	}
	uint64_t end_us = (uint64_t)(end_ms * 1e3);
	if (u->timed) { /* samples laid end to end have no range of their own to state */
		fmt_out_str(o, ",\"profilingStartTime\":0,\"profilingEndTime\":");
		fmt_out_fixed(o, end_us / 1000, end_us % 1000, 3);
	}
	const char *os = profile_str(p, m->os);
	if (os[0]) { /* "Linux x86_64": the system, then the machine */
		fmt_out_str(o, ",\"oscpu\":");
		fmt_out_json(o, os, strlen(os), true);
		size_t sys = strcspn(os, " ");
		fmt_out_str(o, ",\"platform\":");
		fmt_out_json(o, os, sys, true);
	}
	fmt_out_str(o, ",\"product\":");
	fmt_out_json(o, cmd[0] ? cmd : "plumb", strlen(cmd[0] ? cmd : "plumb"), true);
	fmt_out_str(o, ",\"importedFrom\":");
	fmt_out_str(o, u->timed ? "\"plumb\"" : "\"plumb (no sample times: one sample per stack, laid end to end)\"");
	fmt_out_str(o, ",\"plumb\":{\"timeline\":");
	fmt_out_str(o, u->timed ? "true" : "false");
	fmt_out_str(o, ",\"weightUnit\":");
	fmt_out_json(o, wu[0] ? wu : "samples", strlen(wu[0] ? wu : "samples"), false);
	fmt_out_str(o, ",\"intervalNs\":");
	fmt_out_u64(o, u->period_ns);
	fmt_out_str(o, "},");
	fmt_out_str(o, categories);
	fmt_out_str(o, ",\"extensions\":{\"baseURL\":[],\"id\":[],\"length\":0,\"name\":[]},"
		       "\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"\\u00b5s\"},"
		       "\"pausedRanges\":[],\"markerSchema\":[],\"usesOnlyOneStackType\":true,"
		       "\"doesNotUseFrameImplementation\":true,\"sourceCodeIsNotOnSearchfox\":true},\"libs\":[");
}

enum plumb_err fmt_gecko_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts, struct perr *e)
{
	struct gk_writer w;
	memset(&w, 0, sizeof w);
	w.p = p;
	size_t nstacks = profile_nstacks(p), nframes = profile_nframes(p), nstr = profile_nstrings(p);
	struct label_table *names = label_table_build(p, opts->label_flags | LABEL_FUNC_ONLY | LABEL_NO_SUFFIX);
	w.names = names;
	w.o = fmt_out_new(out, opts->path && str_ends_with(opts->path, ".gz"));
	if (w.o)
		fmt_out_progress(w.o, opts->progress);
	w.stack_row = malloc(nstacks * sizeof *w.stack_row);
	w.frame_row = malloc((nframes ? nframes : 1) * sizeof *w.frame_row);
	w.res_row = malloc(nstr * sizeof *w.res_row);
	w.lib_of = calloc(nstr, sizeof *w.lib_of);
	w.lib_base = calloc(nstr, sizeof *w.lib_base);
	size_t nt;
	w.order = profile_timeline_order(p, &nt);
	if (!names || !w.o || !w.stack_row || !w.frame_row || !w.res_row || !w.lib_of || !w.lib_base || (nt && !w.order)) {
		w.oom = true;
		goto done;
	}
	const struct profile_meta *m = profile_meta_const(p);
	const char *unit = profile_str(p, m->weight_unit);
	struct gk_units u = { .type = "samples", .period_ns = m->interval_ns, .timed = profile_has_times(p) };
	/* the Firefox Profiler knows three weight types: a time weight goes out as "tracing-ms" (milliseconds,
	 * written with every nanosecond), bytes as "bytes", any other unit as a count ("samples"; meta.plumb
	 * keeps its name) */
	if (strcmp(unit, "nanoseconds") == 0) {
		u.ms = true;
		u.type = "tracing-ms";
	} else if (strcmp(unit, "bytes") == 0) {
		u.type = "bytes";
	}
	write_meta(&w, &u);
	write_libs(&w);
	fmt_out_str(w.o, "],\"threads\":[");
	bool first = true;
	for (size_t th = 0; th < profile_nthreads(p) && !w.oom; th++) {
		memset(&w.t, 0, sizeof w.t);
		memset(w.stack_row, 0, nstacks * sizeof *w.stack_row);
		memset(w.frame_row, 0, (nframes ? nframes : 1) * sizeof *w.frame_row);
		memset(w.res_row, 0, nstr * sizeof *w.res_row);
		if (write_thread(&w, (uint32_t)th, &u, first))
			first = false;
		tables_release(&w.t);
	}
	fmt_out_str(w.o, "],\"pages\":[],\"profilerOverhead\":[],\"counters\":[]}\n");
done:
	u32vec_release(&w.chain);
	free(w.stack_row);
	free(w.frame_row);
	free(w.res_row);
	free(w.lib_of);
	free(w.lib_base);
	free(w.order);
	label_table_free(names);
	if (!w.o)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (w.oom)
		fmt_out_fail(w.o);
	return fmt_out_close(w.o, e);
}
