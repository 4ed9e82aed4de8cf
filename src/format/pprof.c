/* pprof.c — the pprof profile.proto format, gzipped, as `go tool pprof` reads it. Sample types: samples/count,
 * then the weight when it is not a count of samples (cpu/nanoseconds, space/bytes, or the event's own unit), or
 * cpu/nanoseconds as samples × the period when the period is known; no period is ever invented. The frame's
 * fields go to the format's own places: the name to Function.name, the file to Function.filename, the line and
 * inlining to Location.line (an inlined frame is one more line of its caller's location, as pprof means it), the
 * module to a Mapping ("[kernel.kallsyms]" for the kernel's frames, "[jit]" for JIT frames without a map file),
 * and each sample's thread to labels (pid, tid, thread, process). The protobuf is encoded here by hand (see
 * format/pprof_read.c for why), into one growing message; the string table starts with "". */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/intern.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "base/u32vec.h"
#include "base/utf8.h"
#include "format/pprof.h"
#include "profile/label.h"

/* ---- protobuf encoding ---- */

static void pb_varint(struct sbuf *b, uint64_t v)
{
	char tmp[10];
	size_t n = 0;
	do {
		tmp[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	sbuf_add(b, tmp, n);
}

static void pb_key(struct sbuf *b, unsigned field, unsigned wire)
{
	pb_varint(b, ((uint64_t)field << 3) | wire);
}

static void pb_uint(struct sbuf *b, unsigned field, uint64_t v)
{
	if (!v)
		return; /* proto3: zero is the default and is not written */
	pb_key(b, field, 0);
	pb_varint(b, v);
}

static void pb_bytes(struct sbuf *b, unsigned field, const void *data, size_t n)
{
	pb_key(b, field, 2);
	pb_varint(b, n);
	sbuf_add(b, data, n);
}

/* An embedded message: msg's bytes under `field`. */
static void pb_msg(struct sbuf *b, unsigned field, const struct sbuf *msg)
{
	pb_bytes(b, field, msg->buf, msg->len);
}

/* ---- the string table ---- */

struct strtab {
	struct sbuf out; /* encoded string_table entries (field 6) */
	struct interner tab; /* zeroed: INTERNER_INIT */
};

static uint64_t st_id(struct strtab *t, const char *s, size_t n)
{
	bool added;
	uint32_t id = intern(&t->tab, s, n, &added);
	if (id == INTERN_NOMEM) {
		t->out.oom = true;
		return 0;
	}
	if (added) {
		struct sbuf u = SBUF_INIT;
		utf8_sanitize(&u, s, n);
		pb_bytes(&t->out, 6, u.buf, u.len);
		if (u.oom)
			t->out.oom = true;
		sbuf_release(&u);
	}
	return id;
}

static uint64_t st_cstr(struct strtab *t, const char *s)
{
	return st_id(t, s, strlen(s));
}

/* The id of s as `redact` (base/redact.h) writes it. */
static uint64_t st_redacted_by(struct strtab *t, const char *s, void (*redact)(struct sbuf *, const char *, size_t))
{
	struct sbuf r = SBUF_INIT;
	redact(&r, s, strlen(s));
	uint64_t id = st_id(t, r.buf, r.len);
	if (r.oom)
		t->out.oom = true;
	sbuf_release(&r);
	return id;
}

/* A redacted path's id (a module or source file: docs/design.md §3.6). */
static uint64_t st_redacted(struct strtab *t, const char *s)
{
	return st_redacted_by(t, s, redact_path_append);
}

/* A redacted text's id (a thread or process name: data, docs/design.md §3.6). */
static uint64_t st_redacted_text(struct strtab *t, const char *s)
{
	return st_redacted_by(t, s, redact_append);
}

static void st_release(struct strtab *t)
{
	interner_release(&t->tab);
	sbuf_release(&t->out);
}

static void value_type(struct sbuf *b, unsigned field, struct strtab *t, const char *type, const char *unit)
{
	struct sbuf m = SBUF_INIT;
	pb_uint(&m, 1, st_cstr(t, type));
	pb_uint(&m, 2, st_cstr(t, unit));
	pb_msg(b, field, &m);
	if (m.oom)
		b->oom = true;
	sbuf_release(&m);
}

/* One write: the profile, its names, the string table and the message being built. Messages are encoded in
 * the order that fills the string table: sample types, samples, mappings, functions, locations. */
struct pp_writer {
	const struct profile *p;
	struct label_table *names;  /* per frame: the function's name (no location, no mark) */
	struct strtab st;
	struct sbuf body, m, sub;   /* the Profile message; scratch for one message and one nested message */
	uint32_t *frame_map;        /* per frame: its mapping id (0: none) */
	uint32_t *frame_func;       /* per frame: its function id */
	struct interner locs;       /* location id - 1 -> its frame ids (innermost first), as bytes */
	struct u32vec chain;        /* scratch */
	struct pprof_types types;
	bool two_values;
	uint64_t factor;            /* the second value: weight × factor (the period for counted samples) */
	bool oom;
};

/* The location of the frames from stack node s up to the first frame that is not inlined (its caller's
 * location holds them as lines); *next is the node above. Returns the location id (from 1). */
static uint64_t location_of(struct pp_writer *w, uint32_t s, uint32_t *next)
{
	const struct profile *p = w->p;
	w->chain.n = 0;
	for (;;) {
		uint32_t f = profile_stack_frame(p, s);
		if (!u32vec_push(&w->chain, f))
			w->oom = true;
		s = profile_stack_parent(p, s);
		if (s == PROFILE_ROOT || !profile_frame_get(p, f)->inlined)
			break;
	}
	*next = s;
	uint32_t id = intern(&w->locs, (const char *)w->chain.v, w->chain.n * sizeof *w->chain.v, NULL);
	if (id == INTERN_NOMEM) {
		w->oom = true;
		return 0;
	}
	return (uint64_t)id + 1;
}

static void thread_labels(struct pp_writer *w, uint32_t thread)
{
	const struct profile_thread *t = profile_thread_get(w->p, thread);
	struct sbuf l = SBUF_INIT;
	const struct {
		const char *key;
		uint64_t num;
		str_id str;
		const char *text;
	} labels[] = { { "pid", t->pid, 0, NULL }, { "tid", t->tid, 0, NULL }, { "thread", 0, t->name, NULL },
		       { "process", 0, 0, profile_process_name(w->p, thread) } };
	for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++) {
		const char *text = labels[i].text ? labels[i].text : profile_str(w->p, labels[i].str);
		if (!labels[i].num && !text[0])
			continue;
		sbuf_reset(&l);
		pb_uint(&l, 1, st_cstr(&w->st, labels[i].key));
		if (text[0])
			pb_uint(&l, 2, st_redacted_text(&w->st, text));
		else
			pb_uint(&l, 3, labels[i].num);
		pb_msg(&w->m, 3, &l);
	}
	if (l.oom)
		w->oom = true;
	sbuf_release(&l);
}

/* samples: location ids leaf first; values [samples, weight] or [samples]; the thread as labels */
static void pp_samples(struct pp_writer *w)
{
	const struct profile *p = w->p;
	size_t nc;
	const struct profile_count *counts = profile_counts(p, &nc);
	for (size_t i = 0; i < nc && !w->oom; i++) {
		if (!counts[i].weight || counts[i].stack == PROFILE_ROOT)
			continue;
		sbuf_reset(&w->m);
		sbuf_reset(&w->sub);
		for (uint32_t s = counts[i].stack; s != PROFILE_ROOT;)
			pb_varint(&w->sub, location_of(w, s, &s));
		pb_msg(&w->m, 1, &w->sub);
		sbuf_reset(&w->sub);
		const uint64_t *cols = profile_count_values(p, i);
		if (cols) { /* a profile with value columns: they are the sample types */
			for (size_t k = 0; k < profile_nvalues(p); k++)
				pb_varint(&w->sub, cols[k]);
		} else {
			pb_varint(&w->sub, counts[i].samples);
			if (w->two_values)
				pb_varint(&w->sub, counts[i].weight * w->factor);
		}
		pb_msg(&w->m, 2, &w->sub);
		thread_labels(w, counts[i].thread);
		pb_msg(&w->body, 2, &w->m);
	}
}

/* The mapping name of a frame: its module, or the kernel's or the JIT's pseudo-module; NULL for none. */
static const char *mapping_name(const struct profile *p, const struct frame *fr)
{
	if (fr->module)
		return profile_str(p, fr->module);
	if (fr->kind == FRAME_KERNEL)
		return PPROF_KERNEL_MAPPING;
	if (fr->kind == FRAME_JIT)
		return PPROF_JIT_MAPPING;
	return NULL;
}

/* One Mapping message: the module's own mapping in the process when the profile has one (bounds, file offset,
 * build ID: what `go tool pprof -symbolize=local` needs to find and read the file), else just its name.
 * has_functions only when every frame of the module has a name, so pprof names the others from the file. */
static void pp_mapping_msg(struct pp_writer *w, uint32_t id, uint64_t name_id, const struct frame *fr, bool named)
{
	const struct profile_mapping *pm = fr->module ? profile_mapping_of(w->p, fr->module) : NULL;
	sbuf_reset(&w->m);
	pb_uint(&w->m, 1, id);
	if (pm) {
		pb_uint(&w->m, 2, pm->start);
		pb_uint(&w->m, 3, pm->limit);
		pb_uint(&w->m, 4, pm->offset);
	}
	pb_uint(&w->m, 5, name_id);
	if (pm && pm->build_id)
		pb_uint(&w->m, 6, st_cstr(&w->st, profile_str(w->p, pm->build_id)));
	pb_uint(&w->m, 7, named ? 1 : 0);
	pb_uint(&w->m, 8, fr->file ? 1 : 0);
	pb_uint(&w->m, 9, fr->line ? 1 : 0);
	pb_msg(&w->body, 3, &w->m);
}

/* mappings: one per module (ids from 1), the program's own first (pprof calls the profile by its first
 * mapping's file: "File: libc.so.6" when libc came first). */
static void pp_mappings(struct pp_writer *w)
{
	struct hmap map_index = HMAP_INIT, unnamed = HMAP_INIT;
	uint64_t nmaps = 0;
	size_t nf = profile_nframes(w->p), nm;
	const struct profile_mapping *maps = profile_mappings(w->p, &nm);
	str_id main_module = 0;
	for (size_t i = 0; i < nm && !main_module; i++)
		if (maps[i].main)
			main_module = maps[i].path;
	for (int want = 0; want < 2 && !main_module; want++) /* no mappings (a converted profile): main's module */
		for (size_t f = 0; f < nf && !main_module; f++) {
			const struct frame *fr = profile_frame_get(w->p, (uint32_t)f);
			if (fr->module && fr->kind == FRAME_USER && strcmp(profile_str(w->p, fr->func), want ? "_start" : "main") == 0)
				main_module = fr->module;
		}
	for (size_t f = 0; f < nf; f++) { /* the modules with a nameless frame */
		const struct frame *fr = profile_frame_get(w->p, (uint32_t)f);
		if (fr->module && !fr->func && !hmap_put(&unnamed, fr->module, 1))
			w->oom = true;
	}
	for (int pass = 0; pass < 2; pass++) /* the program's module, then the others in frame order */
		for (size_t f = 0; f < nf; f++) {
			const struct frame *fr = profile_frame_get(w->p, (uint32_t)f);
			const char *name = mapping_name(w->p, fr);
			if (pass == 0)
				w->frame_map[f] = 0;
			if (!name || (pass == 0 && (!main_module || fr->module != main_module)))
				continue;
			uint64_t name_id = st_redacted(&w->st, name);
			uint32_t id, dummy;
			if (!hmap_get(&map_index, name_id, &id)) {
				id = (uint32_t)++nmaps;
				if (!hmap_put(&map_index, name_id, id))
					w->oom = true;
				pp_mapping_msg(w, id, name_id, fr, !(fr->module && hmap_get(&unnamed, fr->module, &dummy)));
			}
			w->frame_map[f] = id;
		}
	hmap_release(&map_index);
	hmap_release(&unnamed);
}

/* functions: one per distinct (name, system name, file). The system name is the name with the frame's kernel or
 * JIT mark when the mapping does not say it already (a kernel module's frame, a JIT frame of a map file). */
static void pp_functions(struct pp_writer *w)
{
	struct interner funcs = INTERNER_INIT;
	struct sbuf sys = SBUF_INIT;
	for (size_t f = 0, nf = profile_nframes(w->p); f < nf; f++) {
		const struct frame *fr = profile_frame_get(w->p, (uint32_t)f);
		uint64_t name_id = st_id(&w->st, w->names->labels[f], w->names->lens[f]), sys_id = name_id;
		if (fr->module && (fr->kind == FRAME_KERNEL || fr->kind == FRAME_JIT) && !fr->inlined) {
			sbuf_reset(&sys);
			sbuf_add(&sys, w->names->labels[f], w->names->lens[f]);
			sbuf_addstr(&sys, fr->kind == FRAME_KERNEL ? "_[k]" : "_[j]");
			sys_id = st_id(&w->st, sys.buf, sys.len);
		}
		uint64_t file_id = fr->file ? st_redacted(&w->st, profile_str(w->p, fr->file)) : 0;
		uint64_t key[3] = { name_id, sys_id, file_id };
		bool added;
		uint32_t id = intern(&funcs, (const char *)key, sizeof key, &added);
		if (id == INTERN_NOMEM) {
			w->oom = true;
			break;
		}
		if (added) {
			sbuf_reset(&w->m);
			pb_uint(&w->m, 1, (uint64_t)id + 1);
			pb_uint(&w->m, 2, name_id);
			pb_uint(&w->m, 3, sys_id);
			pb_uint(&w->m, 4, file_id);
			pb_msg(&w->body, 5, &w->m);
		}
		w->frame_func[f] = id + 1;
	}
	if (sys.oom)
		w->oom = true;
	sbuf_release(&sys);
	interner_release(&funcs);
}

/* A location's address: in the process (the frame's ELF vaddr through its module's mapping) when the profile
 * has the mapping — a nameless frame's too, the start of its function, so pprof can name it from the file —
 * else the ELF vaddr of a named frame, or 0. The chain's one address is its innermost frame's. */
static uint64_t location_address(const struct profile *p, const uint32_t *frames, size_t n)
{
	for (size_t k = 0; k < n; k++) { /* the innermost frame's instruction (a nameless one's too) */
		const struct frame *fr = profile_frame_get(p, frames[k]);
		struct frame at = *fr;
		at.addr = profile_frame_insn(fr);
		at.offset = 0;
		uint64_t addr;
		if (!at.addr)
			continue;
		if (profile_mapping_addr(p, &at, &addr))
			return addr;
		return at.addr;
	}
	return 0;
}

/* locations: one per distinct chain (a frame and the frames inlined into it), lines innermost first */
static void pp_locations(struct pp_writer *w)
{
	for (uint32_t l = 0; l < intern_count(&w->locs); l++) {
		/* the interner keeps bytes, unaligned: the frame ids are copied out */
		size_t n = intern_len(&w->locs, l) / sizeof(uint32_t);
		w->chain.n = 0;
		for (size_t k = 0; k < n; k++) {
			uint32_t f;
			memcpy(&f, intern_str(&w->locs, l) + k * sizeof f, sizeof f);
			if (!u32vec_push(&w->chain, f)) {
				w->oom = true;
				return;
			}
		}
		const uint32_t *frames = w->chain.v;
		uint32_t outer = frames[n - 1];
		sbuf_reset(&w->m);
		pb_uint(&w->m, 1, (uint64_t)l + 1);
		pb_uint(&w->m, 2, w->frame_map[outer]);
		pb_uint(&w->m, 3, location_address(w->p, frames, n));
		for (size_t k = 0; k < n; k++) {
			sbuf_reset(&w->sub);
			pb_uint(&w->sub, 1, w->frame_func[frames[k]]);
			pb_uint(&w->sub, 2, profile_frame_get(w->p, frames[k])->line);
			pb_msg(&w->m, 4, &w->sub);
		}
		pb_msg(&w->body, 4, &w->m);
	}
}

static void pp_release(struct pp_writer *w)
{
	sbuf_release(&w->body);
	sbuf_release(&w->m);
	sbuf_release(&w->sub);
	st_release(&w->st);
	label_table_free(w->names);
	interner_release(&w->locs);
	u32vec_release(&w->chain);
	free(w->frame_map);
	free(w->frame_func);
}

void pprof_types_of(const struct profile *p, struct pprof_types *t)
{
	const struct profile_meta *m = profile_meta_const(p);
	const char *unit = profile_str(p, m->weight_unit), *mode = profile_str(p, m->mode);
	bool wall = strcmp(mode, "wall") == 0;
	memset(t, 0, sizeof *t);
	t->count_type = "samples";
	t->count_unit = "count";
	t->factor = 1;
	if (!unit[0] || strcmp(unit, "samples") == 0) {
		uint64_t total = profile_total_weight(p);
		if (m->interval_ns && m->interval_ns <= PROFILE_MAX_WEIGHT / (total ? total : 1)) {
			t->type = wall ? "wall" : "cpu";
			t->unit = "nanoseconds";
			t->factor = m->interval_ns;
		}
	} else if (strcmp(unit, "nanoseconds") == 0) {
		t->type = wall ? "wall" : "cpu";
		t->unit = "nanoseconds";
	} else if (strcmp(unit, "bytes") == 0) {
		t->type = "space";
		t->unit = "bytes";
	} else {
		t->type = unit;
		t->unit = "count";
	}
}

enum plumb_err fmt_pprof_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts, struct perr *e)
{
	struct pp_writer w;
	memset(&w, 0, sizeof w);
	w.p = p;
	sbuf_init(&w.st.out);
	sbuf_init(&w.body);
	sbuf_init(&w.m);
	sbuf_init(&w.sub);
	w.locs = (struct interner)INTERNER_INIT;
	size_t nf = profile_nframes(p);
	w.names = label_table_build(p, opts->label_flags | LABEL_FUNC_ONLY | LABEL_NO_SUFFIX);
	w.frame_map = calloc(nf ? nf : 1, sizeof *w.frame_map);
	w.frame_func = calloc(nf ? nf : 1, sizeof *w.frame_func);
	if (!w.names || !w.frame_map || !w.frame_func) {
		pp_release(&w);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	st_id(&w.st, "", 0); /* string_table[0] must be "" */
	const struct profile_meta *meta = profile_meta_const(p);
	pprof_types_of(p, &w.types);
	w.two_values = w.types.type != NULL;
	w.factor = w.types.factor;
	size_t ncols = profile_nvalues(p);
	if (ncols) { /* value columns (an allocation profile): one sample type each, the first of them the default */
		for (size_t k = 0; k < ncols; k++)
			value_type(&w.body, 1, &w.st, profile_value_name(p, k), profile_value_unit(p, k));
	} else {
		value_type(&w.body, 1, &w.st, w.types.count_type, w.types.count_unit);
		if (w.two_values)
			value_type(&w.body, 1, &w.st, w.types.type, w.types.unit);
	}
	pp_samples(&w);
	pp_mappings(&w);
	pp_functions(&w);
	pp_locations(&w);
	/* the string table follows the messages that filled it; period and default type name strings in it */
	const char *ptype = w.two_values ? w.types.type : w.types.count_type;
	const char *punit = w.two_values ? w.types.unit : w.types.count_unit;
	size_t space_col = 0; /* with columns: the first that is not a count gives the period type (space/bytes) */
	while (ncols && space_col + 1 < ncols && strcmp(profile_value_unit(p, space_col), "count") == 0)
		space_col++;
	if (ncols) {
		ptype = strcmp(profile_value_unit(p, space_col), "bytes") == 0 ? "space" : profile_value_name(p, space_col);
		punit = profile_value_unit(p, space_col);
	}
	uint64_t ptype_id = st_cstr(&w.st, ptype), punit_id = st_cstr(&w.st, punit);
	uint64_t default_id = ncols ? st_cstr(&w.st, profile_value_name(p, space_col)) : 0;
	sbuf_add(&w.body, w.st.out.buf, w.st.out.len);
	if (meta->start_unix > 0)
		pb_uint(&w.body, 9, (uint64_t)(meta->start_unix * 1e9));
	if (meta->duration_s > 0)
		pb_uint(&w.body, 10, (uint64_t)(meta->duration_s * 1e9));
	sbuf_reset(&w.m);
	pb_uint(&w.m, 1, ptype_id);
	pb_uint(&w.m, 2, punit_id);
	pb_msg(&w.body, 11, &w.m);
	/* the period in the period type's unit: the sampling period for time, one sample for counts */
	bool time_period = w.two_values && strcmp(punit, "nanoseconds") == 0;
	if (ncols) {
		if (profile_values_period(p))
			pb_uint(&w.body, 12, profile_values_period(p));
		pb_uint(&w.body, 14, default_id);
	} else if (time_period && meta->interval_ns)
		pb_uint(&w.body, 12, meta->interval_ns);
	else if (!w.two_values)
		pb_uint(&w.body, 12, 1);
	/* default_sample_type: the type that holds the profile's own weight (its count of samples, when it counts
	 * samples: the time is there too, as -sample_index=cpu) */
	if (w.two_values && !ncols)
		pb_uint(&w.body, 14, w.types.factor == 1 ? ptype_id : st_cstr(&w.st, w.types.count_type));
	enum plumb_err rc;
	if (w.oom || w.body.oom || w.st.out.oom || w.m.oom || w.sub.oom)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	else if (!(rc = fmt_gzip_write(w.body.buf, w.body.len, out, e)) && ferror(out))
		rc = perr_set(e, PLUMB_EOUTPUT, "write failed");
	pp_release(&w);
	return rc;
}
