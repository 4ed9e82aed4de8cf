/* gecko_read.c — reads Firefox Profiler "processed" profiles (what samply writes), preprocessedProfileVersion
 * 41 to 66, into the one profile model: format/gecko_doc.c captures the document's columns, format/gecko_syms.c
 * reads samply's `.syms.json` symbol sidecar, and this file resolves the columns into frames, stacks and
 * samples once the whole document has been read (keys come in any order: shared tables after threads). A
 * bad index anywhere is PLUMB_EFORMAT naming the thread, table and row. */
#include "format/format.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/json.h"
#include "format/gecko_doc.h"
#include "format/gecko_syms.h"
#include "profile/label.h"

#define GECKO_MIN_VERSION 41
#define GECKO_MAX_VERSION 66

struct resolve {
	struct profile *p;
	struct perr *e;
	const struct gdoc *d;
	str_id *lib_module;     /* per lib: interned module (path or name) */
	const struct sym_lib **lib_syms; /* per lib: its sidecar table, NULL without one */
};

/* The tables one thread reads: its own where it has them, the shared ones (v60+) otherwise. Each table is
 * taken as a whole. Borrowed from the document. */
struct tview {
	const struct gtables *stack, *frame, *func, *res;
	const struct gtables *sources; /* the one holding sources.filename; NULL when neither has it */
	const struct strarr *strings;
};

static void table_view(const struct gdoc *d, size_t ti, struct tview *v)
{
	const struct gtables *T = &d->threads[ti].t, *SH = &d->shared;
	v->stack = T->has_stack ? T : SH;
	v->frame = T->has_frame ? T : SH;
	v->func = T->has_func ? T : SH;
	v->res = T->has_res ? T : SH;
	v->sources = T->has_sources ? T : (SH->has_sources ? SH : NULL);
	v->strings = T->strings.present ? &T->strings : &SH->strings;
}

static bool looks_like_address(const char *s, size_t n)
{
	if (n < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	for (size_t i = 2; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool res_fail(struct resolve *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool res_fail(struct resolve *r, const char *fmt, ...)
{
	char msg[PERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	perr_set(r->e, strcmp(msg, "out of memory") == 0 ? PLUMB_ENOMEM : PLUMB_EFORMAT, "%s", msg);
	return false;
}

/* A frame the profile names only by its address, named through the sidecar's entry for it. samply keeps one
 * entry per symbol, its inline frames taken at the first address looked up: right for the function and its
 * file, not for other addresses' lines or inline chains. So the frame gets the symbol, the outermost frame's
 * file, and no line. */
static bool apply_sidecar(struct resolve *r, const struct sym_entry *E, struct frame *fr)
{
	const struct sym_frame *outer = E->nframes ? &E->frames[E->nframes - 1] : NULL;
	if (outer && outer->file) {
		fr->file = profile_intern_cstr(r->p, outer->file);
		fr->line = 0;
		if (fr->file == PROFILE_NOMEM)
			return res_fail(r, "out of memory");
	}
	if (!E->symbol && outer && outer->function)
		fr->func = profile_intern_cstr(r->p, outer->function);
	else if (E->symbol)
		fr->func = profile_intern_cstr(r->p, E->symbol);
	if (fr->func == PROFILE_NOMEM)
		return res_fail(r, "out of memory");
	return true;
}

/* The file of funcTable row func: its fileName string, else its source's filename (v56+). */
static str_id func_file(struct resolve *r, const struct tview *v, size_t func)
{
	const struct gtables *FN = v->func, *SRC = v->sources;
	size_t nstr = v->strings->n, file_i, src_i, flen;
	if (gdoc_index(&FN->func_file, func, nstr, &file_i) ||
	    (SRC && gdoc_index(&FN->func_source, func, SRC->src_filename.n, &src_i) &&
	     gdoc_index(&SRC->src_filename, src_i, nstr, &file_i))) {
		const char *file = gdoc_str(v->strings, file_i, &flen);
		return profile_intern(r->p, file, flen);
	}
	return 0;
}

/* The frame's kind: its category's name (Kernel, JIT, Python), or a kernel module. The kernel's own image
 * ("[kernel.kallsyms]", or plumb's resource "[kernel]") is a kind, not a module: in plumb's model the kernel's
 * own frames have none, whichever format they come from. */
static void frame_kind_of(struct resolve *r, const struct gtables *FT, size_t f, struct frame *fr)
{
	size_t cat;
	const char *cname = gdoc_index(&FT->frame_category, f, r->d->ncategories, &cat) ? r->d->categories[cat] : NULL;
	if (cname && strcmp(cname, "Kernel") == 0)
		fr->kind = FRAME_KERNEL;
	else if (cname && strcmp(cname, "JIT") == 0)
		fr->kind = FRAME_JIT;
	else if (cname && strcmp(cname, "Python") == 0)
		fr->kind = FRAME_PYTHON;
	const char *mod = profile_str(r->p, fr->module);
	if (strncmp(mod, "[kernel", 7) == 0 || strstr(mod, "vmlinux"))
		fr->kind = FRAME_KERNEL;
	/* the kernel's own image is a kind, not a module: its frames have none (plumb writes them as "[kernel]") */
	if (strcmp(mod, "[kernel]") == 0 || strcmp(mod, "[kernel.kallsyms]") == 0)
		fr->module = 0;
	if (fr->inlined && fr->kind != FRAME_PYTHON)
		fr->kind = FRAME_USER; /* one mark per frame (docs/design.md §4.1) */
}

/* "[unknown]" and "<module>+0xOFFSET" (what plumb writes for a frame without a name) name no function. */
static void nameless(struct resolve *r, const char *name, size_t n, struct frame *fr)
{
	if (n == 9 && memcmp(name, "[unknown]", 9) == 0) {
		fr->func = 0;
		return;
	}
	const char *mod = profile_str(r->p, fr->module), *base = strrchr(mod, '/');
	base = base ? base + 1 : mod;
	size_t bl = strlen(base);
	if (!bl || n <= bl + 3 || memcmp(name, base, bl) != 0 || memcmp(name + bl, "+0x", 3) != 0)
		return;
	uint64_t off;
	if (label_hex(name + bl + 3, n - bl - 3, &off) && off) {
		fr->func = 0;
		fr->insn = fr->addr; /* frameTable.address: the instruction (0 when not written) */
		fr->addr = off;
		fr->offset = 1;
	}
}

/* Resolves frameTable row f of thread ti into a chain of profile frames (outermost first). */
static bool resolve_frame(struct resolve *r, size_t ti, const struct tview *v, size_t f, uint32_t *chain,
			  size_t *nchain)
{
	const struct gtables *FT = v->frame, *FN = v->func, *RS = v->res;
	const struct strarr *S = v->strings;
	size_t func, nfunc = FN->func_name.n, nstr = S->n;
	if (!gdoc_index(&FT->frame_func, f, nfunc, &func))
		return res_fail(r, "threads[%zu]: frameTable.func[%zu] is not a valid funcTable index", ti, f);
	size_t name_i;
	if (!gdoc_index(&FN->func_name, func, nstr, &name_i))
		return res_fail(r, "threads[%zu]: funcTable.name[%zu] is not a valid string index", ti, func);
	struct frame fr = { 0 };
	size_t nlen;
	const char *name = gdoc_str(S, name_i, &nlen);
	fr.func = profile_intern(r->p, name, nlen);
	fr.file = func_file(r, v, func);
	double line = NAN;
	if (FT->frame_line.present && f < FT->frame_line.n)
		line = FT->frame_line.v[f];
	if (!(line > 0) && FN->func_line.present && func < FN->func_line.n)
		line = FN->func_line.v[func];
	if (line > 0 && line < 4e9)
		fr.line = (uint32_t)line;
	size_t res, lib = SIZE_MAX, nres = RS->res_lib.n > RS->res_name.n ? RS->res_lib.n : RS->res_name.n;
	const struct sym_lib *syms = NULL;
	if (gdoc_index(&FN->func_resource, func, nres, &res)) {
		size_t rn, rl;
		if (gdoc_index(&RS->res_lib, res, r->d->nlibs, &lib)) {
			syms = r->lib_syms[lib];
			fr.module = r->lib_module[lib];
		} else if (gdoc_index(&RS->res_name, res, nstr, &rn)) {
			const char *rs = gdoc_str(S, rn, &rl);
			fr.module = profile_intern(r->p, rs, rl);
		}
	}
	double addr = FT->frame_address.present && f < FT->frame_address.n ? FT->frame_address.v[f] : NAN;
	if (addr >= 0 && addr < 1.8e19)
		fr.addr = (uint64_t)addr;
	double depth = FT->frame_inline_depth.present && f < FT->frame_inline_depth.n ? FT->frame_inline_depth.v[f] : 0;
	fr.inlined = depth > 0;
	if (fr.func == PROFILE_NOMEM || fr.file == PROFILE_NOMEM || fr.module == PROFILE_NOMEM)
		return res_fail(r, "out of memory");
	frame_kind_of(r, FT, f, &fr);
	nameless(r, name, nlen, &fr);
	*nchain = 0;
	/* symbolicate through the sidecar: names that are only an address */
	if (syms && addr >= 0 && (nlen == 0 || looks_like_address(name, nlen))) {
		const struct sym_entry *E = sidecar_lookup(syms, fr.addr);
		if (E && (E->symbol || E->nframes) && !apply_sidecar(r, E, &fr))
			return false;
	}
	uint32_t id = profile_frame(r->p, &fr);
	if (id == PROFILE_NOMEM)
		return res_fail(r, "out of memory");
	chain[(*nchain)++] = id;
	return true;
}

static uint32_t parse_u32(const char *s)
{
	if (!s)
		return 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	return end != s && v <= UINT32_MAX ? (uint32_t)v : 0;
}

/* The stackTable row i's prefix row, or NAN when it has none. */
static double stack_prefix(const struct gtables *T, size_t i)
{
	if (!T->stack_prefix.present && T->stack_prefix_offset.present) {
		double off = i < T->stack_prefix_offset.n ? T->stack_prefix_offset.v[i] : NAN;
		return off > 0 ? (double)i - off : NAN;
	}
	if (T->stack_prefix.present && i < T->stack_prefix.n)
		return T->stack_prefix.v[i];
	return NAN;
}

/* Frames resolved so far: frameTable row f's chain is chains[fstart[f] .. + flen[f]) (flen 0: not yet). */
struct frame_chains {
	uint32_t *fstart, *chains;
	uint8_t *flen;
	size_t nchains, capchains;
};

/* Every stackTable row of thread ti into a node of the profile's prefix tree: sid[row]. */
static bool resolve_stacks(struct resolve *r, size_t ti, const struct tview *v, uint32_t *sid)
{
	size_t nstacks = v->stack->stack_frame.n, nframes = v->frame->frame_func.n;
	struct frame_chains fc = { 0 };
	fc.fstart = malloc((nframes + 1) * sizeof *fc.fstart);
	fc.flen = calloc(nframes + 1, 1);
	bool ok = (fc.fstart && fc.flen) || res_fail(r, "out of memory");
	for (size_t i = 0; ok && i < nstacks; i++) {
		size_t f, prefix_node = PROFILE_ROOT;
		if (!gdoc_index(&v->stack->stack_frame, i, nframes, &f)) {
			ok = res_fail(r, "threads[%zu]: stackTable.frame[%zu] is not a valid frameTable index", ti, i);
			break;
		}
		double pv = stack_prefix(v->stack, i);
		if (!isnan(pv)) {
			if (!(pv >= 0 && pv < (double)i && pv == floor(pv))) {
				ok = res_fail(r, "threads[%zu]: stackTable row %zu "
						 "has a prefix that is not an earlier row", ti, i);
				break;
			}
			prefix_node = sid[(size_t)pv];
		}
		if (!fc.flen[f]) {
			uint32_t chain[64];
			size_t n = 0;
			if (!(ok = resolve_frame(r, ti, v, f, chain, &n)))
				break;
			if (!ALLOC_GROW(fc.chains, fc.nchains + n, fc.capchains)) {
				ok = res_fail(r, "out of memory");
				break;
			}
			memcpy(fc.chains + fc.nchains, chain, n * sizeof *chain);
			fc.fstart[f] = (uint32_t)fc.nchains;
			fc.flen[f] = (uint8_t)n;
			fc.nchains += n;
		}
		uint32_t node = (uint32_t)prefix_node;
		for (size_t k = 0; ok && k < fc.flen[f]; k++) {
			node = profile_stack(r->p, node, fc.chains[fc.fstart[f] + k]);
			if (node == PROFILE_NOMEM)
				ok = res_fail(r, "out of memory");
		}
		sid[i] = node;
	}
	free(fc.fstart);
	free(fc.flen);
	free(fc.chains);
	return ok;
}

/* A thread's sample columns, checked to be long enough. */
struct sample_cols {
	size_t ti, n, nstacks;
	const double *stack, *weight; /* weight NULL: every sample weighs 1 */
	double scale;                 /* of the weights */
	const double *time;           /* NULL when the samples are summed */
	bool deltas;                  /* time holds the differences from the previous sample */
	const double *counts;         /* plumb's own: the samples each row stands for; NULL when absent */
	bool weight_is_count;         /* the weights count samples */
};

/* The samples row i stands for: plumb's count when it wrote one, the weight when it counts samples, else one. */
static inline uint64_t samples_at(const struct sample_cols *c, size_t i, uint64_t weight)
{
	if (c->counts && c->counts[i] >= 0 && c->counts[i] < 9e18)
		return (uint64_t)c->counts[i];
	return c->weight_is_count ? weight : 1;
}

/* Sample i's stackTable row and weight: 1, or 0 for a sample without a stack (e.g. while idle: no frames to
 * count), or -1 (with the message) when its stack or weight is not valid. */
static inline int sample_at(struct resolve *r, const struct sample_cols *c, size_t i, size_t *row, uint64_t *weight)
{
	double sv = c->stack[i];
	if (isnan(sv))
		return 0;
	if (!(sv >= 0 && sv < (double)c->nstacks && sv == floor(sv))) {
		res_fail(r, "threads[%zu]: samples.stack[%zu] is not a valid stackTable index", c->ti, i);
		return -1;
	}
	*row = (size_t)sv;
	*weight = 1;
	if (!c->weight)
		return 1;
	double wv = c->weight[i];
	if (isnan(wv))
		wv = 1;
	wv *= c->scale;
	if (!(wv >= 0 && wv < 1.8e19)) {
		res_fail(r, "threads[%zu]: samples.weight[%zu] is negative or too large", c->ti, i);
		return -1;
	}
	*weight = (uint64_t)llround(wv);
	return 1;
}

/* Without a timeline: summed per stack row first, one model update per distinct stack, not per sample. */
static bool samples_summed(struct resolve *r, const struct sample_cols *c, uint32_t thread, const uint32_t *sid)
{
	uint64_t *agg = calloc(2 * (c->nstacks + 1), sizeof *agg), *nsamp = agg + c->nstacks + 1;
	if (!agg)
		return res_fail(r, "out of memory");
	bool ok = true;
	for (size_t i = 0; i < c->n; i++) {
		size_t row;
		uint64_t weight;
		int got = sample_at(r, c, i, &row, &weight);
		if (got < 0) {
			ok = false;
			break;
		}
		if (got && (agg[row] + weight < agg[row] || nsamp[row] + samples_at(c, i, weight) < nsamp[row])) {
			ok = res_fail(r, "threads[%zu]: the weights add up past what a profile can count", c->ti);
			break;
		}
		if (got) {
			agg[row] += weight;
			nsamp[row] += samples_at(c, i, weight);
		}
	}
	for (size_t i = 0; ok && i < c->nstacks; i++) {
		if (agg[i] && !profile_add_weighted(r->p, sid[i], thread, 0, agg[i], nsamp[i]))
			ok = res_fail(r, profile_overflowed(r->p) ? "the weights add up past what a profile can count"
								  : "out of memory");
	}
	free(agg);
	return ok;
}

/* With a timeline: one model sample per sample, at its time in whole nanoseconds. */
static bool samples_timed(struct resolve *r, const struct sample_cols *c, uint32_t thread, const uint32_t *sid)
{
	double t = 0;
	for (size_t i = 0; i < c->n; i++) {
		double tv = c->time[i];
		if (isnan(tv))
			tv = 0;
		t = c->deltas ? t + tv : tv;
		size_t row;
		uint64_t weight;
		int got = sample_at(r, c, i, &row, &weight);
		if (got < 0)
			return false;
		if (!got)
			continue;
		double ns = t * 1e6;
		uint64_t tns = ns > 0 && ns < 1.8e19 ? (uint64_t)llround(ns) : 0;
		if (!profile_add_weighted(r->p, sid[row], thread, tns, weight, samples_at(c, i, weight)))
			return res_fail(r, profile_overflowed(r->p) ? "the weights add up past what a profile can count"
								    : "out of memory");
	}
	return true;
}

/* Thread ti's samples, on the stack nodes sid[] of its nstacks rows, timed or summed. */
static bool resolve_samples(struct resolve *r, size_t ti, uint32_t thread, const uint32_t *sid, size_t nstacks,
			    bool timed)
{
	const struct gthread *th = &r->d->threads[ti];
	struct sample_cols c = { .ti = ti, .n = th->s_stack.n, .nstacks = nstacks, .stack = th->s_stack.v };
	if (th->s_weight.present && th->s_weight.n < c.n)
		return res_fail(r, "threads[%zu]: samples.weight has %zu entries for %zu samples", ti, th->s_weight.n,
				c.n);
	const struct col *tc = th->s_time.present ? &th->s_time : &th->s_time_deltas;
	c.deltas = !th->s_time.present;
	if (timed && tc->n < c.n)
		return res_fail(r, "threads[%zu]: samples.%s has %zu entries for %zu samples", ti,
				c.deltas ? "timeDeltas" : "time", tc->n, c.n);
	c.weight = th->s_weight.present ? th->s_weight.v : NULL;
	/* "tracing-ms" weights are milliseconds: kept as nanoseconds, the model's time unit */
	c.scale = th->weight_type && strcmp(th->weight_type, "tracing-ms") == 0 ? 1e6 : 1;
	const char *pu = r->d->plumb_weight_unit;
	c.weight_is_count = (!th->weight_type || strcmp(th->weight_type, "samples") == 0) &&
			    (!pu || strcmp(pu, "samples") == 0);
	if (th->s_plumb_samples.present && th->s_plumb_samples.n >= c.n)
		c.counts = th->s_plumb_samples.v;
	if (!timed)
		return samples_summed(r, &c, thread, sid);
	c.time = tc->v;
	return samples_timed(r, &c, thread, sid);
}

static bool resolve_thread(struct resolve *r, size_t ti, bool timed)
{
	const struct gthread *th = &r->d->threads[ti];
	struct tview view;
	table_view(r->d, ti, &view);
	const char *tname = th->name && th->name[0] ? th->name : (th->process_name ? th->process_name : "");
	uint32_t thread = profile_thread(r->p, parse_u32(th->pid), parse_u32(th->tid), tname);
	if (thread == PROFILE_NOMEM || (th->process_name && !profile_thread_set_process(r->p, thread, th->process_name,
											 strlen(th->process_name))))
		return res_fail(r, "out of memory");
	if (th->s_stack.n == 0)
		return true;
	size_t nstacks = view.stack->stack_frame.n;
	uint32_t *sid = malloc((nstacks + 1) * sizeof *sid);
	if (!sid)
		return res_fail(r, "out of memory");
	bool ok = resolve_stacks(r, ti, &view, sid) && resolve_samples(r, ti, thread, sid, nstacks, timed);
	free(sid);
	return ok;
}

/* Per library: the module name frames get (its path, else its name) and its sidecar table. */
static enum plumb_err resolve_libs(struct resolve *r, const struct sidecar *sc)
{
	const struct gdoc *d = r->d;
	r->lib_module = calloc(d->nlibs + 1, sizeof *r->lib_module);
	r->lib_syms = calloc(d->nlibs + 1, sizeof *r->lib_syms);
	if (!r->lib_module || !r->lib_syms)
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < d->nlibs; i++) {
		const struct glib *L = &d->libs[i];
		const char *m = L->path && L->path[0] ? L->path : (L->name ? L->name : "");
		r->lib_module[i] = profile_intern_cstr(r->p, m);
		if (r->lib_module[i] == PROFILE_NOMEM)
			return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
		if (sc)
			r->lib_syms[i] = sidecar_lib(sc, L->debug_id, L->code_id, L->debug_name, L->name);
	}
	return PLUMB_OK;
}

/* The document's version must be one this reader knows. */
static enum plumb_err check_version(const struct gdoc *d, struct perr *e)
{
	if (!d->has_meta || isnan(d->version))
		return perr_set(e, PLUMB_EFORMAT,
				"not a processed Firefox Profiler profile (no meta.preprocessedProfileVersion); "
				"load it in profiler.firefox.com and save it again, or record with samply");
	if (d->version < GECKO_MIN_VERSION || d->version > GECKO_MAX_VERSION)
		return perr_set(e, PLUMB_EFORMAT,
				"Firefox profile format version %g is not understood (this build reads %d to %d)",
				d->version, GECKO_MIN_VERSION, GECKO_MAX_VERSION);
	return PLUMB_OK;
}

/* The sidecar named in the options, or found beside the profile; *sc stays NULL when there is none. */
static enum plumb_err load_sidecar(const struct fmt_read_opts *opts, struct sidecar **sc, struct perr *e)
{
	const char *syms = opts ? opts->syms_path : NULL;
	char *found = NULL;
	if (!syms && opts)
		syms = found = sidecar_find(opts->source_path);
	enum plumb_err rc = syms ? sidecar_load(syms, sc, e) : PLUMB_OK;
	free(found);
	return rc;
}

/* Resolves every thread into p once the document, the version and the sidecar are in hand. */
static enum plumb_err resolve_all(struct resolve *r)
{
	const struct gdoc *d = r->d;
	struct profile *p = r->p;
	/* timestamps only when every thread that has samples has times (and plumb did not write positions) */
	bool timed = d->want_times && (!d->has_plumb || d->plumb_timeline);
	for (size_t i = 0; i < d->nthreads; i++)
		if (d->threads[i].s_stack.n && !d->threads[i].s_time.present && !d->threads[i].s_time_deltas.present)
			timed = false;
	if (!timed)
		profile_keep_timeline(p, false);
	struct profile_meta *meta = profile_meta(p);
	meta->backend = profile_intern_cstr(p, "gecko");
	if (d->profiling_start > 0 && d->profiling_start < 1.8e13)
		meta->clock_origin_ns = (uint64_t)(d->profiling_start * 1e6);
	for (size_t i = 0; i < d->nthreads; i++) {
		if (!resolve_thread(r, i, timed))
			return r->e->code ? r->e->code : PLUMB_EFORMAT;
		const char *wt = d->threads[i].weight_type;
		if (wt && wt[0] && strcmp(wt, "samples") != 0)
			meta->weight_unit = profile_intern_cstr(p, strcmp(wt, "tracing-ms") == 0 ? "nanoseconds" : wt);
	}
	/* plumb's own: the unit the Firefox format has no name for, and the period */
	if (d->plumb_weight_unit && d->plumb_weight_unit[0])
		meta->weight_unit = profile_intern_cstr(p, d->plumb_weight_unit);
	if (d->has_plumb)
		meta->interval_ns = d->plumb_interval_ns > 0 && d->plumb_interval_ns < 1.8e19
					    ? (uint64_t)d->plumb_interval_ns : 0;
	else if (d->interval_ms > 0 && d->interval_ms < 1e9)
		meta->interval_ns = (uint64_t)llround(d->interval_ms * 1e6);
	if (meta->weight_unit == PROFILE_NOMEM)
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	return PLUMB_OK;
}

enum plumb_err fmt_gecko_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
			      struct perr *e)
{
	struct json_reader j;
	jr_init(&j, buf, len, "malformed Firefox profile", e);
	struct gdoc d;
	memset(&d, 0, sizeof d);
	d.want_times = profile_has_timeline(p);
	d.version = NAN;
	d.profiling_start = NAN;
	d.interval_ms = NAN;
	d.plumb_interval_ns = NAN;
	struct sidecar *sc = NULL;
	struct resolve r = { .p = p, .e = e, .d = &d };
	enum plumb_err rc;
	if (!gdoc_read(&j, &d))
		rc = e->code ? e->code : PLUMB_EFORMAT;
	else if (!(rc = check_version(&d, e)) && !(rc = load_sidecar(opts, &sc, e)) && !(rc = resolve_libs(&r, sc)))
		rc = resolve_all(&r);
	free(r.lib_module);
	free(r.lib_syms);
	sidecar_free(sc);
	gdoc_release(&d);
	jr_release(&j);
	return rc;
}
