/* gecko.c — Firefox Profiler "processed" JSON as samply 0.13 writes it: preprocessedProfileVersion 49, one
 * entry per thread with its own stackTable, frameTable, funcTable, resourceTable and stringArray, and a
 * top-level libs list (one per module). Sample times are the timeline's (ms from the profile start); a profile
 * without a timeline gets one sample per distinct stack at synthesized times, one interval apart, with the
 * stack's weight. The output is gzipped when the destination ends in ".gz". */
#include "format/format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/intern.h"
#include "base/redact.h"
#include "base/str.h"
#include "base/sbuf.h"
#include "profile/label.h"

struct vec {
	uint64_t *v;
	size_t n, cap;
};

static bool vpush(struct vec *a, uint64_t x)
{
	if (!ALLOC_GROW(a->v, a->n + 1, a->cap))
		return false;
	a->v[a->n++] = x;
	return true;
}

#define NONE UINT64_MAX /* written as null */

static void put_vec(struct sbuf *b, const char *key, const struct vec *a)
{
	sbuf_addf(b, ",\"%s\":[", key);
	for (size_t i = 0; i < a->n; i++) {
		if (i)
			sbuf_addch(b, ',');
		if (a->v[i] == NONE)
			sbuf_add(b, "null", 4);
		else
			sbuf_addf(b, "%llu", (unsigned long long)a->v[i]);
	}
	sbuf_addch(b, ']');
}

static void put_repeat(struct sbuf *b, const char *key, const char *value, size_t n)
{
	sbuf_addf(b, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			sbuf_addch(b, ',');
		sbuf_addstr(b, value);
	}
	sbuf_addch(b, ']');
}

static void json_string(struct sbuf *b, const char *s, size_t n, bool redact)
{
	if (redact)
		redact_add_json(b, s, n);
	else
		sbuf_add_json_text(b, s, n);
}

/* One thread's string array. */
struct strings {
	struct interner tab; /* zeroed: INTERNER_INIT */
	struct sbuf json; /* the array's elements, comma separated */
};

static uint64_t gstr_id(struct strings *t, const char *s, size_t n)
{
	bool added;
	uint32_t id = intern(&t->tab, s, n, &added);
	if (id == INTERN_NOMEM) {
		t->json.oom = true;
		return 0;
	}
	if (added) {
		if (id)
			sbuf_addch(&t->json, ',');
		json_string(&t->json, s, n, false);
	}
	return id;
}

static void strings_release(struct strings *t)
{
	interner_release(&t->tab);
	sbuf_release(&t->json);
}

struct thread_tables {
	struct vec st_prefix, st_frame, st_cat;
	struct vec fr_address, fr_func, fr_cat, fr_line;
	struct vec fn_name, fn_resource, fn_file;
	struct vec rs_lib, rs_name;
	struct vec s_stack, s_weight;
	struct sbuf s_time;
	struct strings strs;
};

static void tables_release(struct thread_tables *t)
{
	struct vec *vs[] = { &t->st_prefix, &t->st_frame, &t->st_cat, &t->fr_address, &t->fr_func, &t->fr_cat,
			     &t->fr_line, &t->fn_name, &t->fn_resource, &t->fn_file, &t->rs_lib, &t->rs_name,
			     &t->s_stack, &t->s_weight };
	for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
		free(vs[i]->v);
	sbuf_release(&t->s_time);
	strings_release(&t->strs);
}

struct ctx {
	const struct profile *p;
	const struct label_table *lt;
	uint32_t *stack_map, *frame_map, *res_map; /* profile id -> thread table index + 1 (0: none yet) */
	uint32_t *lib_of;                           /* module str id -> lib index + 1 */
	struct hmap func_index;                     /* (name str << 32 | file str) -> func index */
	struct thread_tables t;
	bool oom;
};

static uint64_t category(const struct frame *f)
{
	return f->kind == FRAME_KERNEL ? 2 : 1;
}

static uint64_t thread_frame(struct ctx *c, uint32_t f)
{
	if (c->frame_map[f])
		return c->frame_map[f] - 1;
	const struct frame *fr = profile_frame_get(c->p, f);
	struct thread_tables *t = &c->t;
	/* A finished label (folded, perf script) is the name, as is. A symbolized frame gives the function alone,
	 * with its file, line and library in their own columns, so a reader rebuilds the same label. */
	uint64_t name;
	if (fr->is_label) {
		name = gstr_id(&t->strs, c->lt->labels[f], c->lt->lens[f]);
	} else {
		struct sbuf fn = SBUF_INIT;
		label_append_func_shown(&fn, c->p, fr);
		name = fn.oom ? 0 : gstr_id(&t->strs, fn.buf, fn.len);
		sbuf_release(&fn);
	}
	uint64_t file = NONE;
	if (!fr->is_label && fr->file) {
		char *red = redact_path_dup(profile_str(c->p, fr->file));
		file = red ? gstr_id(&t->strs, red, strlen(red)) : NONE;
		free(red);
	}
	uint64_t res = NONE;
	if (!fr->is_label && fr->module && c->lib_of[fr->module]) {
		if (!c->res_map[fr->module]) {
			const char *mod = profile_str(c->p, fr->module);
			const char *base = strrchr(mod, '/');
			base = base ? base + 1 : mod;
			char *red = redact_path_dup(base);
			if (!vpush(&t->rs_lib, c->lib_of[fr->module] - 1) ||
			    !vpush(&t->rs_name, red ? gstr_id(&t->strs, red, strlen(red)) : 0))
				c->oom = true;
			free(red);
			c->res_map[fr->module] = (uint32_t)t->rs_lib.n;
		}
		res = c->res_map[fr->module] - 1;
	}
	uint64_t key = (name << 32) ^ (file == NONE ? 0xffffffffu : file) ^ (res == NONE ? 0 : (res + 1) << 48);
	uint32_t func;
	if (!hmap_get(&c->func_index, key, &func)) {
		func = (uint32_t)t->fn_name.n;
		if (!hmap_put(&c->func_index, key, func) || !vpush(&t->fn_name, name) || !vpush(&t->fn_resource, res) ||
		    !vpush(&t->fn_file, file))
			c->oom = true;
	}
	if (!vpush(&t->fr_address, fr->addr ? fr->addr : NONE) || !vpush(&t->fr_func, func) ||
	    !vpush(&t->fr_cat, category(fr)) || !vpush(&t->fr_line, fr->line ? fr->line : NONE))
		c->oom = true;
	c->frame_map[f] = (uint32_t)t->fr_func.n;
	return c->frame_map[f] - 1;
}

static uint64_t thread_stack(struct ctx *c, uint32_t s)
{
	if (s == PROFILE_ROOT)
		return NONE;
	if (c->stack_map[s])
		return c->stack_map[s] - 1;
	uint64_t prefix = thread_stack(c, profile_stack_parent(c->p, s));
	uint32_t f = profile_stack_frame(c->p, s);
	uint64_t fr = thread_frame(c, f);
	struct thread_tables *t = &c->t;
	if (!vpush(&t->st_prefix, prefix) || !vpush(&t->st_frame, fr) ||
	    !vpush(&t->st_cat, category(profile_frame_get(c->p, f))))
		c->oom = true;
	c->stack_map[s] = (uint32_t)t->st_frame.n;
	return c->stack_map[s] - 1;
}

static void write_thread(struct sbuf *b, struct ctx *c, const struct profile_thread *th, size_t nsamples)
{
	struct thread_tables *t = &c->t;
	const char *name = profile_str(c->p, th->name);
	sbuf_addstr(b, "{\"name\":");
	json_string(b, name[0] ? name : "thread", strlen(name[0] ? name : "thread"), true);
	sbuf_addstr(b, ",\"processName\":");
	json_string(b, name[0] ? name : "process", strlen(name[0] ? name : "process"), true);
	sbuf_addf(b, ",\"processType\":\"default\",\"pid\":\"%u\",\"tid\":%u,\"isMainThread\":%s,"
		     "\"registerTime\":0,\"unregisterTime\":null,\"processStartupTime\":0,"
		     "\"processShutdownTime\":null,\"pausedRanges\":[]",
		  th->pid, th->tid, th->pid == th->tid ? "true" : "false");
	sbuf_addstr(b, ",\"markers\":{\"length\":0,\"category\":[],\"data\":[],\"endTime\":[],\"name\":[],"
		       "\"phase\":[],\"startTime\":[]}");
	sbuf_addstr(b, ",\"nativeSymbols\":{\"length\":0,\"address\":[],\"functionSize\":[],\"libIndex\":[],"
		       "\"name\":[]}");
	/* the Firefox Profiler knows three weight types: a time weight goes out as "tracing-ms" (milliseconds,
	 * written with every nanosecond), bytes as "bytes", any other unit as a count of samples */
	const char *unit = profile_str(c->p, profile_meta_const(c->p)->weight_unit);
	bool ms = strcmp(unit, "nanoseconds") == 0;
	sbuf_addf(b, ",\"samples\":{\"length\":%zu,\"weightType\":\"%s\"", nsamples,
		  ms ? "tracing-ms" : strcmp(unit, "bytes") == 0 ? "bytes" : "samples");
	put_vec(b, "stack", &t->s_stack);
	sbuf_addf(b, ",\"time\":[%s]", t->s_time.buf);
	if (ms) {
		sbuf_addstr(b, ",\"weight\":[");
		for (size_t i = 0; i < t->s_weight.n; i++)
			sbuf_addf(b, "%s%llu.%06llu", i ? "," : "", (unsigned long long)(t->s_weight.v[i] / 1000000),
				  (unsigned long long)(t->s_weight.v[i] % 1000000));
		sbuf_addch(b, ']');
	} else {
		put_vec(b, "weight", &t->s_weight);
	}
	sbuf_addch(b, '}');
	sbuf_addf(b, ",\"stackTable\":{\"length\":%zu", t->st_frame.n);
	put_vec(b, "prefix", &t->st_prefix);
	put_vec(b, "frame", &t->st_frame);
	put_vec(b, "category", &t->st_cat);
	put_repeat(b, "subcategory", "0", t->st_frame.n);
	sbuf_addch(b, '}');
	sbuf_addf(b, ",\"frameTable\":{\"length\":%zu", t->fr_func.n);
	put_vec(b, "address", &t->fr_address);
	put_repeat(b, "inlineDepth", "0", t->fr_func.n);
	put_vec(b, "category", &t->fr_cat);
	put_repeat(b, "subcategory", "0", t->fr_func.n);
	put_vec(b, "func", &t->fr_func);
	put_repeat(b, "nativeSymbol", "null", t->fr_func.n);
	put_repeat(b, "innerWindowID", "null", t->fr_func.n);
	put_repeat(b, "implementation", "null", t->fr_func.n);
	put_vec(b, "line", &t->fr_line);
	put_repeat(b, "column", "null", t->fr_func.n);
	sbuf_addch(b, '}');
	sbuf_addf(b, ",\"funcTable\":{\"length\":%zu", t->fn_name.n);
	put_vec(b, "name", &t->fn_name);
	put_repeat(b, "isJS", "false", t->fn_name.n);
	put_repeat(b, "relevantForJS", "false", t->fn_name.n);
	put_vec(b, "resource", &t->fn_resource);
	put_vec(b, "fileName", &t->fn_file);
	put_repeat(b, "lineNumber", "null", t->fn_name.n);
	put_repeat(b, "columnNumber", "null", t->fn_name.n);
	sbuf_addch(b, '}');
	sbuf_addf(b, ",\"resourceTable\":{\"length\":%zu", t->rs_lib.n);
	put_vec(b, "lib", &t->rs_lib);
	put_vec(b, "name", &t->rs_name);
	put_repeat(b, "host", "null", t->rs_lib.n);
	put_repeat(b, "type", "1", t->rs_lib.n);
	sbuf_addch(b, '}');
	sbuf_addf(b, ",\"stringArray\":[%s]}", t->strs.json.buf);
}

enum plumb_err fmt_gecko_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts, struct perr *e)
{
	struct sbuf b = SBUF_INIT;
	struct ctx c;
	memset(&c, 0, sizeof c);
	c.p = p;
	enum plumb_err rc = PLUMB_OK;
	size_t nstacks = profile_nstacks(p), nframes = profile_nframes(p), nstr = profile_nstrings(p);
	size_t nthreads = profile_nthreads(p), nc, nt;
	const struct profile_count *counts = profile_counts(p, &nc);
	const struct profile_sample *tl = profile_timeline(p, &nt);
	const struct profile_meta *m = profile_meta_const(p);
	struct label_table *lt = label_table_build(p, opts->label_flags);
	c.lt = lt;
	c.stack_map = calloc(nstacks, sizeof *c.stack_map);
	c.frame_map = calloc(nframes ? nframes : 1, sizeof *c.frame_map);
	c.res_map = calloc(nstr, sizeof *c.res_map);
	c.lib_of = calloc(nstr, sizeof *c.lib_of);
	if (!lt || !c.stack_map || !c.frame_map || !c.res_map || !c.lib_of)
		goto oom;
	double interval_ms = m->interval_ns ? (double)m->interval_ns / 1e6 : 1.0;
	const char *cmd = profile_str(p, m->command);
	/* meta */
	sbuf_addstr(&b, "{\"meta\":{\"version\":24,\"preprocessedProfileVersion\":49,\"processType\":0,"
			"\"debug\":false,\"symbolicated\":true,\"interval\":");
	sbuf_addf(&b, "%.6g,\"startTime\":%.3f,\"product\":", interval_ms, m->start_unix * 1000.0);
	json_string(&b, cmd[0] ? cmd : "plumb", strlen(cmd[0] ? cmd : "plumb"), true);
	sbuf_addstr(&b, ",\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
			"{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
			"{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]}],"
			"\"extensions\":{\"baseURL\":[],\"id\":[],\"length\":0,\"name\":[]},"
			"\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"\\u00b5s\"},"
			"\"pausedRanges\":[],\"markerSchema\":[],\"usesOnlyOneStackType\":true,"
			"\"doesNotUseFrameImplementation\":true,\"sourceCodeIsNotOnSearchfox\":true},\"libs\":[");
	/* libs: one per module */
	size_t nlibs = 0;
	for (size_t f = 0; f < nframes; f++) {
		const struct frame *fr = profile_frame_get(p, (uint32_t)f);
		if (fr->is_label || !fr->module || c.lib_of[fr->module])
			continue;
		c.lib_of[fr->module] = (uint32_t)++nlibs;
		const char *mod = profile_str(p, fr->module);
		const char *base = strrchr(mod, '/');
		base = base ? base + 1 : mod;
		sbuf_addstr(&b, nlibs > 1 ? ",{\"name\":" : "{\"name\":");
		json_string(&b, base, strlen(base), true);
		sbuf_addstr(&b, ",\"path\":");
		json_string(&b, mod, strlen(mod), true);
		sbuf_addstr(&b, ",\"debugName\":");
		json_string(&b, base, strlen(base), true);
		sbuf_addstr(&b, ",\"debugPath\":");
		json_string(&b, mod, strlen(mod), true);
		sbuf_addstr(&b, ",\"breakpadId\":\"\",\"codeId\":null,\"arch\":\"\"}");
	}
	sbuf_addstr(&b, "],\"threads\":[");
	bool first_thread = true;
	for (size_t th = 0; th < nthreads; th++) {
		memset(&c.t, 0, sizeof c.t);
		sbuf_init(&c.t.s_time);
		sbuf_init(&c.t.strs.json);
		hmap_release(&c.func_index);
		memset(c.stack_map, 0, nstacks * sizeof *c.stack_map);
		memset(c.frame_map, 0, (nframes ? nframes : 1) * sizeof *c.frame_map);
		memset(c.res_map, 0, nstr * sizeof *c.res_map);
		size_t ns = 0;
		double synth = 0;
		size_t n = nt ? nt : nc;
		for (size_t i = 0; i < n; i++) {
			uint32_t thr = nt ? tl[i].thread : counts[i].thread;
			uint64_t w = nt ? tl[i].weight : counts[i].weight;
			if (thr != th || !w)
				continue;
			uint32_t st = nt ? tl[i].stack : counts[i].stack;
			double time_ms;
			if (nt) {
				uint64_t t0 = m->clock_origin_ns;
				time_ms = tl[i].time_ns >= t0 ? (double)(tl[i].time_ns - t0) / 1e6 : 0;
			} else {
				time_ms = synth;
				synth += interval_ms * (double)w;
			}
			if (!vpush(&c.t.s_stack, thread_stack(&c, st)) || !vpush(&c.t.s_weight, w))
				c.oom = true;
			sbuf_addf(&c.t.s_time, ns ? ",%.6f" : "%.6f", time_ms);
			ns++;
		}
		if (ns) {
			if (!first_thread)
				sbuf_addch(&b, ',');
			first_thread = false;
			write_thread(&b, &c, profile_thread_get(p, (uint32_t)th), ns);
		}
		bool bad = c.oom || c.t.s_time.oom || c.t.strs.json.oom;
		tables_release(&c.t);
		if (bad)
			goto oom;
	}
	sbuf_addstr(&b, "],\"pages\":[],\"profilerOverhead\":[],\"counters\":[]}\n");
	if (b.oom)
		goto oom;
	if (opts->path && str_ends_with(opts->path, ".gz"))
		rc = fmt_gzip_write(b.buf, b.len, out, e);
	else
		fwrite(b.buf, 1, b.len, out);
	if (!rc && ferror(out))
		rc = perr_set(e, PLUMB_EOUTPUT, "write failed");
	goto done;
oom:
	rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
done:
	hmap_release(&c.func_index);
	free(c.stack_map);
	free(c.frame_map);
	free(c.res_map);
	free(c.lib_of);
	label_table_free(lt);
	sbuf_release(&b);
	return rc;
}
