/* pprof_read.c — reads pprof's profile.proto (gzipped or not: the stream inflates it) into the one profile
 * model, as `go tool pprof` reads it: any sample type, the one opts->sample_index names (an index or a type
 * name) or else the profile's default_sample_type or else the last. It reads plumb's own pprof, Go's, gperftools'
 * converted with `pprof -proto`, and Pyroscope's exports.
 *
 * The protobuf is decoded by hand, as the writer encodes it: profile.proto needs a dozen fields, libprotobuf-c
 * would need code generated from the .proto at build time (protoc-c) for them, and a reader of our own checks
 * every length against the bytes that are there and every count against the caps (format/stream.h) as it goes.
 * Nothing here recurses: messages nest three deep at most and are read by fixed functions.
 *
 * Frames: a Location's lines are its frames, innermost first (all but the last inlined into the last); the
 * Mapping gives the module, and the kind when it is the kernel's ("[kernel.kallsyms]", vmlinux) or a JIT's
 * ("[jit]", /tmp/perf-PID.map); a location without lines is a nameless frame at its module's offset. A sample's
 * labels pid, tid / thread_id, thread / thread_name and process give its thread. */
#include "format/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/str.h"
#include "base/u32vec.h"
#include "format/pprof.h"
#include "profile/label.h"

/* A span of the message being read. */
struct pb {
	const unsigned char *p, *end;
};

static bool pb_varint(struct pb *b, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64 && b->p < b->end; shift += 7) {
		unsigned char c = *b->p++;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* The next field: its number, wire type and (for varints) value or (for bytes) span. */
struct pb_field {
	uint32_t num;
	unsigned wire;
	uint64_t v;
	struct pb sub;
};

/* 1: a field, 0: the end of the message, -1: malformed. */
static int pb_next(struct pb *b, struct pb_field *f)
{
	if (b->p >= b->end)
		return 0;
	uint64_t key;
	if (!pb_varint(b, &key) || (key >> 3) == 0 || (key >> 3) > UINT32_MAX)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wire = (unsigned)(key & 7);
	switch (f->wire) {
	case 0:
		return pb_varint(b, &f->v) ? 1 : -1;
	case 1:
		if (b->end - b->p < 8)
			return -1;
		memcpy(&f->v, b->p, 8);
		b->p += 8;
		return 1;
	case 5:
		if (b->end - b->p < 4)
			return -1;
		f->v = 0;
		memcpy(&f->v, b->p, 4);
		b->p += 4;
		return 1;
	case 2: {
		uint64_t n;
		if (!pb_varint(b, &n) || n > (uint64_t)(b->end - b->p))
			return -1;
		f->sub.p = b->p;
		f->sub.end = b->p + n;
		b->p += n;
		return 1;
	}
	default:
		return -1;
	}
}

/* Appends a repeated integer field's values (packed or one by one) to v. */
static bool pb_repeated(const struct pb_field *f, uint64_t **v, size_t *n, size_t *cap)
{
	if (f->wire == 0) {
		if (!ALLOC_GROW(*v, *n + 1, *cap))
			return false;
		(*v)[(*n)++] = f->v;
		return true;
	}
	if (f->wire != 2)
		return true;
	struct pb b = f->sub;
	uint64_t x;
	while (b.p < b.end) {
		if (!pb_varint(&b, &x) || !ALLOC_GROW(*v, *n + 1, *cap))
			return false;
		(*v)[(*n)++] = x;
	}
	return true;
}

struct pp_type {
	uint64_t type, unit; /* string table indexes */
};

struct pp_mapping {
	uint64_t id, start, offset, filename;
};

struct pp_line {
	uint64_t func_id, line;
};

struct pp_location {
	uint64_t id, mapping_id, address;
	uint32_t first_line, nlines; /* into lines[] */
	uint32_t first_frame, nframes; /* resolved: into frames (innermost first); nframes UINT32_MAX: not yet */
};

struct pp_function {
	uint64_t id, name, system_name, filename;
};

/* Everything decoded from the message before the samples are added. */
struct pp_doc {
	struct pb all;
	const unsigned char **strs; /* string_table entries: start and length */
	uint32_t *str_len;
	size_t nstrs, cap_strs;
	struct pp_type *types;
	size_t ntypes, cap_types;
	struct pp_type period_type;
	uint64_t period, default_type, time_nanos, duration_nanos;
	struct pp_mapping *maps;
	size_t nmaps, cap_maps;
	struct pp_location *locs;
	size_t nlocs, cap_locs;
	struct pp_line *lines;
	size_t nlines, cap_lines;
	struct pp_function *funcs;
	size_t nfuncs, cap_funcs;
	struct hmap map_index, loc_index, func_index; /* id -> index */
};

struct pp_reader {
	struct profile *p;
	const struct fmt_read_opts *o;
	struct perr *e;
	struct pp_doc d;
	size_t value_index, count_index; /* the weight's sample type; the samples/count type or SIZE_MAX */
	double scale;                    /* to the model's unit (nanoseconds from other time units) */
	struct u32vec frames;            /* resolved locations' frames */
	struct u32vec stack;             /* scratch: one sample's frames, outermost first */
	uint32_t all_thread;
	uint64_t skipped;                /* samples with a negative weight */
};

static bool bad(struct pp_reader *r, const char *what)
{
	perr_set(r->e, PLUMB_EFORMAT, "malformed pprof profile: %s", what);
	return false;
}

static bool nomem(struct pp_reader *r)
{
	perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	return false;
}

/* String i of the table ("" when out of range). */
static const char *str_at(const struct pp_doc *d, uint64_t i, size_t *len)
{
	if (i >= d->nstrs) {
		*len = 0;
		return "";
	}
	*len = d->str_len[i];
	return (const char *)d->strs[i];
}

static bool str_is(const struct pp_doc *d, uint64_t i, const char *s)
{
	size_t n;
	const char *t = str_at(d, i, &n);
	return n == strlen(s) && memcmp(t, s, n) == 0;
}

/* The varint fields numbered 1..n of message b into v[0..n-1] (zero when absent; other fields are skipped).
 * False when the message is malformed. Every flat message plumb reads (types, mappings, lines, functions) is
 * read this way. */
static bool pb_varints(struct pb b, uint64_t *v, size_t n)
{
	struct pb_field f;
	int k;
	memset(v, 0, n * sizeof *v);
	while ((k = pb_next(&b, &f)) == 1)
		if (f.wire == 0 && f.num >= 1 && f.num <= n)
			v[f.num - 1] = f.v;
	return k == 0;
}

static bool read_type(struct pb b, struct pp_type *t)
{
	uint64_t v[2];
	if (!pb_varints(b, v, 2))
		return false;
	*t = (struct pp_type){ .type = v[0], .unit = v[1] };
	return true;
}

static bool read_mapping(struct pp_reader *r, struct pb b)
{
	struct pp_doc *d = &r->d;
	uint64_t v[5];
	if (!pb_varints(b, v, 5))
		return bad(r, "a mapping is cut short");
	struct pp_mapping m = { .id = v[0], .start = v[1], .offset = v[3], .filename = v[4] };
	if (!ALLOC_GROW(d->maps, d->nmaps + 1, d->cap_maps) || !hmap_put(&d->map_index, m.id, (uint32_t)d->nmaps))
		return nomem(r);
	d->maps[d->nmaps++] = m;
	return true;
}

static bool read_location(struct pp_reader *r, struct pb b)
{
	struct pp_doc *d = &r->d;
	struct pp_location l = { 0 };
	l.first_line = (uint32_t)d->nlines;
	l.nframes = UINT32_MAX;
	struct pb_field f;
	int k;
	while ((k = pb_next(&b, &f)) == 1) {
		if (f.num == 4 && f.wire == 2) {
			uint64_t v[2];
			if (!pb_varints(f.sub, v, 2))
				return bad(r, "a location's line is cut short");
			struct pp_line ln = { .func_id = v[0], .line = v[1] };
			if (d->nlines >= UINT32_MAX || !ALLOC_GROW(d->lines, d->nlines + 1, d->cap_lines))
				return nomem(r);
			d->lines[d->nlines++] = ln;
			l.nlines++;
		} else if (f.wire == 0) {
			if (f.num == 1)
				l.id = f.v;
			else if (f.num == 2)
				l.mapping_id = f.v;
			else if (f.num == 3)
				l.address = f.v;
		}
	}
	if (k < 0)
		return bad(r, "a location is cut short");
	if (l.nlines > FMT_MAX_FRAMES)
		return bad(r, "a location has more lines than the cap on one stack");
	if (!ALLOC_GROW(d->locs, d->nlocs + 1, d->cap_locs) || !hmap_put(&d->loc_index, l.id, (uint32_t)d->nlocs))
		return nomem(r);
	d->locs[d->nlocs++] = l;
	return true;
}

static bool read_function(struct pp_reader *r, struct pb b)
{
	struct pp_doc *d = &r->d;
	uint64_t v[4];
	if (!pb_varints(b, v, 4))
		return bad(r, "a function is cut short");
	struct pp_function fn = { .id = v[0], .name = v[1], .system_name = v[2], .filename = v[3] };
	if (!ALLOC_GROW(d->funcs, d->nfuncs + 1, d->cap_funcs) || !hmap_put(&d->func_index, fn.id, (uint32_t)d->nfuncs))
		return nomem(r);
	d->funcs[d->nfuncs++] = fn;
	return true;
}

/* First pass over the Profile message: everything but the samples. */
static bool read_tables(struct pp_reader *r)
{
	struct pp_doc *d = &r->d;
	struct pb b = d->all;
	struct pb_field f;
	int k;
	while ((k = pb_next(&b, &f)) == 1) {
		bool ok = true;
		switch (f.wire == 2 ? f.num : 0) {
		case 1:
			if (!ALLOC_GROW(d->types, d->ntypes + 1, d->cap_types))
				return nomem(r);
			ok = read_type(f.sub, &d->types[d->ntypes++]) || bad(r, "a sample type is cut short");
			break;
		case 3:
			ok = read_mapping(r, f.sub);
			break;
		case 4:
			ok = read_location(r, f.sub);
			break;
		case 5:
			ok = read_function(r, f.sub);
			break;
		case 6: {
			size_t had = d->cap_strs; /* str_len follows strs' capacity: grown with it, not at every string */
			if (!ALLOC_GROW(d->strs, d->nstrs + 1, d->cap_strs) ||
			    (d->cap_strs != had && !REALLOC_ARRAY(d->str_len, d->cap_strs)))
				return nomem(r);
			d->strs[d->nstrs] = f.sub.p;
			d->str_len[d->nstrs++] = (uint32_t)(f.sub.end - f.sub.p);
			break;
		}
		case 11:
			ok = read_type(f.sub, &d->period_type) || bad(r, "the period type is cut short");
			break;
		case 0:
			if (f.wire != 0)
				break;
			if (f.num == 9)
				d->time_nanos = f.v;
			else if (f.num == 10)
				d->duration_nanos = f.v;
			else if (f.num == 12)
				d->period = f.v;
			else if (f.num == 14)
				d->default_type = f.v;
			break;
		default:
			break;
		}
		if (!ok)
			return false;
	}
	if (k < 0)
		return bad(r, "a field is cut short or has an unknown wire type");
	if (!d->ntypes)
		return bad(r, "no sample type");
	if (d->nstrs == 0 || d->str_len[0] != 0)
		return bad(r, "the string table does not start with \"\"");
	return true;
}

/* Which sample type is the weight: opts->sample_index (a number or a type name), else the default type, else
 * the last; and which one counts samples. */
static bool choose_types(struct pp_reader *r)
{
	struct pp_doc *d = &r->d;
	const char *want = r->o->sample_index;
	r->value_index = d->ntypes - 1;
	r->count_index = SIZE_MAX;
	if (want && want[0]) {
		char *end;
		unsigned long long i = strtoull(want, &end, 10);
		size_t k = d->ntypes;
		if (!*end && end != want)
			k = i < d->ntypes ? (size_t)i : d->ntypes;
		else
			for (k = 0; k < d->ntypes && !str_is(d, d->types[k].type, want); k++)
				;
		if (k >= d->ntypes) {
			char list[256] = "";
			for (size_t t = 0; t < d->ntypes; t++) {
				size_t n;
				const char *s = str_at(d, d->types[t].type, &n);
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%zu %.*s", t ? ", " : "", t,
					 (int)(n > 40 ? 40 : n), s);
			}
			perr_set(r->e, PLUMB_EINVAL, "--sample-index %s: the profile's sample types are %s", want, list);
			return false;
		}
		r->value_index = k;
	} else if (d->default_type) {
		for (size_t k = 0; k < d->ntypes; k++)
			if (d->types[k].type == d->default_type)
				r->value_index = k;
	}
	for (size_t k = 0; k < d->ntypes; k++)
		if (str_is(d, d->types[k].type, "samples") && str_is(d, d->types[k].unit, "count")) {
			r->count_index = k;
			break;
		}
	return true;
}

/* The model's weight unit for the chosen type, and the scale to it. */
static bool set_units(struct pp_reader *r)
{
	struct pp_doc *d = &r->d;
	const struct pp_type *t = &d->types[r->value_index];
	static const struct {
		const char *unit;
		double ns;
	} times[] = { { "nanoseconds", 1 }, { "microseconds", 1e3 }, { "milliseconds", 1e6 }, { "seconds", 1e9 } };
	struct profile_meta *m = profile_meta(r->p);
	const char *unit = NULL;
	char buf[128];
	r->scale = 1;
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
		if (str_is(d, t->unit, times[i].unit)) {
			unit = "nanoseconds";
			r->scale = times[i].ns;
		}
	if (!unit && str_is(d, t->unit, "bytes"))
		unit = "bytes";
	if (!unit && (str_is(d, t->type, "samples") || !d->types[r->value_index].type))
		unit = "samples";
	if (!unit) {
		size_t n;
		const char *s = str_at(d, t->type, &n);
		snprintf(buf, sizeof buf, "%.*s", (int)(n > 100 ? 100 : n), s);
		unit = buf[0] ? buf : "samples";
	}
	m->weight_unit = profile_intern_cstr(r->p, unit);
	if (m->weight_unit == PROFILE_NOMEM)
		return nomem(r);
	if (strcmp(unit, "samples") == 0)
		r->count_index = r->value_index;
	/* the sampling period, when the period type is time */
	for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
		if (d->period && str_is(d, d->period_type.unit, times[i].unit) && d->period * times[i].ns < 1.8e19)
			m->interval_ns = (uint64_t)((double)d->period * times[i].ns);
	if (d->time_nanos)
		m->start_unix = (double)d->time_nanos / 1e9;
	if (d->duration_nanos)
		m->duration_s = (double)d->duration_nanos / 1e9;
	return true;
}

static const char *base_name(const char *s, size_t n, size_t *out)
{
	const char *b = s + n;
	while (b > s && b[-1] != '/')
		b--;
	*out = (size_t)(s + n - b);
	return b;
}

/* A mapping's file as the frame's module and kind: the kernel's and the JIT pseudo-mappings give a kind and no
 * module. */
static void mapping_module(const struct pp_doc *d, const struct pp_mapping *m, struct label_parts *lp)
{
	size_t n;
	const char *s = m ? str_at(d, m->filename, &n) : "";
	n = m ? n : 0;
	lp->module = s;
	lp->module_len = n;
	if ((n == strlen(PPROF_KERNEL_MAPPING) && memcmp(s, PPROF_KERNEL_MAPPING, n) == 0) ||
	    (n >= 7 && memcmp(s, "[kernel", 7) == 0) || memmem(s, n, "vmlinux", 7)) {
		lp->kind = FRAME_KERNEL;
		lp->module_len = 0;
	} else if (n == strlen(PPROF_JIT_MAPPING) && memcmp(s, PPROF_JIT_MAPPING, n) == 0) {
		lp->kind = FRAME_JIT;
		lp->module_len = 0;
	} else {
		/* a perf map ("/tmp/perf-PID.map", or its base name as a label keeps it), or a jitdump library */
		size_t bl;
		const char *b = base_name(s, n, &bl);
		if ((bl > 9 && memcmp(b, "perf-", 5) == 0 && mem_ends_with(b, bl, ".map")) ||
		    (bl > 7 && memcmp(b, "jitted-", 7) == 0))
			lp->kind = FRAME_JIT;
	}
}

/* The name of a function as a frame's: "[unknown]" and "<module>+0xOFFSET" (what plumb writes for a frame
 * without a name) are nameless frames. */
static void function_name(const char *name, size_t n, struct label_parts *lp)
{
	lp->func = name;
	lp->func_len = n;
	if (n == 9 && memcmp(name, "[unknown]", 9) == 0) {
		lp->func_len = 0;
		return;
	}
	size_t bl;
	const char *b = lp->module_len ? base_name(lp->module, lp->module_len, &bl) : NULL;
	uint64_t off;
	if (b && n > bl + 3 && memcmp(name, b, bl) == 0 && memcmp(name + bl, "+0x", 3) == 0 &&
	    label_hex(name + bl + 3, n - bl - 3, &off) && off) {
		lp->func_len = 0;
		lp->addr = off;
		lp->offset = true;
	}
}

/* Frame id of p with the instruction address insn (its module's; a Location's address is its innermost line's),
 * as profile_frame_insn reads it back: addr for a named frame, insn for a nameless one. */
static uint32_t with_insn(struct profile *p, uint32_t id, uint64_t insn)
{
	struct frame f = *profile_frame_get(p, id);
	if (f.kind != FRAME_USER || !insn)
		return id;
	if (f.offset)
		f.insn = insn;
	else
		f.addr = insn;
	return profile_frame(p, &f);
}

/* The frames of location index li, innermost first, resolved once into r->frames. */
static bool resolve_location(struct pp_reader *r, size_t li)
{
	struct pp_doc *d = &r->d;
	struct pp_location *l = &d->locs[li];
	uint32_t mi;
	const struct pp_mapping *m = l->mapping_id && hmap_get(&d->map_index, l->mapping_id, &mi) ? &d->maps[mi] : NULL;
	l->first_frame = (uint32_t)r->frames.n;
	l->nframes = 0;
	for (uint32_t k = 0; k < l->nlines || (k == 0 && l->nlines == 0); k++) {
		struct label_parts lp;
		memset(&lp, 0, sizeof lp);
		mapping_module(d, m, &lp);
		if (l->nlines) {
			const struct pp_line *ln = &d->lines[l->first_line + k];
			uint32_t fi;
			const struct pp_function *fn =
				hmap_get(&d->func_index, ln->func_id, &fi) ? &d->funcs[fi] : NULL;
			size_t nl = 0, fl = 0, sl = 0;
			const char *name = fn ? str_at(d, fn->name, &nl) : "";
			const char *sys = fn ? str_at(d, fn->system_name, &sl) : "";
			if (fn && !nl) {
				name = sys;
				nl = sl;
			}
			/* plumb's kernel and JIT marks for frames whose mapping does not say it: the system name */
			if (sl == nl + 4 && memcmp(sys, name, nl) == 0 && memcmp(sys + nl, "_[k]", 4) == 0)
				lp.kind = FRAME_KERNEL;
			else if (sl == nl + 4 && memcmp(sys, name, nl) == 0 && memcmp(sys + nl, "_[j]", 4) == 0)
				lp.kind = FRAME_JIT;
			function_name(name, nl, &lp);
			lp.file = fn ? str_at(d, fn->filename, &fl) : "";
			lp.file_len = fl;
			lp.line = ln->line <= UINT32_MAX ? (uint32_t)ln->line : 0;
			lp.inlined = k + 1 < l->nlines;
		} else if (m && l->address >= m->start) {
			lp.addr = l->address - m->start + m->offset; /* a nameless frame at its module's offset */
			lp.offset = lp.module_len != 0;
		}
		if (lp.inlined && lp.kind != FRAME_USER)
			lp.kind = FRAME_USER; /* one mark per frame: an inlined frame is marked inlined */
		uint32_t id = label_parts_frame(r->p, &lp);
		if (id != PROFILE_NOMEM && k == 0 && l->nlines && m && l->address >= m->start)
			id = with_insn(r->p, id, l->address - m->start + m->offset);
		if (id == PROFILE_NOMEM || !u32vec_push(&r->frames, id))
			return nomem(r);
		l->nframes++;
	}
	return true;
}

/* The thread of a sample's labels (the thread "all" without any). */
static uint32_t sample_thread(struct pp_reader *r, struct pb b)
{
	struct pp_doc *d = &r->d;
	uint64_t pid = 0, tid = 0, tname = 0, pname = 0;
	bool any = false;
	struct pb_field f;
	while (pb_next(&b, &f) == 1) {
		if (f.num != 3 || f.wire != 2)
			continue;
		uint64_t key = 0, str = 0, num = 0;
		struct pb_field g;
		while (pb_next(&f.sub, &g) == 1) {
			if (g.wire != 0)
				continue;
			if (g.num == 1)
				key = g.v;
			else if (g.num == 2)
				str = g.v;
			else if (g.num == 3)
				num = g.v;
		}
		if (str_is(d, key, "pid"))
			pid = num, any = true;
		else if (str_is(d, key, "tid") || str_is(d, key, "thread_id"))
			tid = num, any = true;
		else if (str_is(d, key, "thread") || str_is(d, key, "thread_name"))
			tname = str, any = true;
		else if (str_is(d, key, "process") || str_is(d, key, "process_name"))
			pname = str, any = true;
	}
	if (!any) {
		if (r->all_thread == PROFILE_NOMEM)
			r->all_thread = profile_thread(r->p, 0, 0, "all");
		return r->all_thread;
	}
	size_t n;
	const char *s = str_at(d, tname, &n);
	char *name = strndup(s, n);
	uint32_t id = name ? profile_thread(r->p, (uint32_t)pid, (uint32_t)tid, name) : PROFILE_NOMEM;
	free(name);
	s = str_at(d, pname, &n);
	if (id != PROFILE_NOMEM && !profile_thread_set_process(r->p, id, s, n))
		id = PROFILE_NOMEM;
	return id;
}

/* One Sample message: its stack, weight, sample count and thread. */
static bool read_sample(struct pp_reader *r, struct pb b, uint64_t **locs, size_t *cap_locs, uint64_t **vals,
			size_t *cap_vals)
{
	struct pp_doc *d = &r->d;
	size_t nlocs = 0, nvals = 0;
	struct pb s = b;
	struct pb_field f;
	int k;
	while ((k = pb_next(&s, &f)) == 1) {
		if (f.num == 1 && !pb_repeated(&f, locs, &nlocs, cap_locs))
			return nomem(r);
		if (f.num == 2 && !pb_repeated(&f, vals, &nvals, cap_vals))
			return nomem(r);
	}
	if (k < 0)
		return bad(r, "a sample is cut short");
	if (nvals != d->ntypes)
		return bad(r, "a sample has a different number of values than there are sample types");
	int64_t w = (int64_t)(*vals)[r->value_index];
	if (w <= 0) {
		r->skipped += w < 0;
		return true;
	}
	double weight = (double)w * r->scale;
	int64_t c = r->count_index == SIZE_MAX ? 1 : (int64_t)(*vals)[r->count_index];
	if (weight >= 9.2e18)
		return bad(r, "a sample's value is too large");
	/* leaf first in the file; the model wants the outermost first */
	r->stack.n = 0;
	for (size_t i = nlocs; i-- > 0;) {
		uint32_t li;
		if (!hmap_get(&d->loc_index, (*locs)[i], &li))
			return bad(r, "a sample names a location that is not there");
		if (d->locs[li].nframes == UINT32_MAX && !resolve_location(r, li))
			return false;
		const struct pp_location *l = &d->locs[li];
		if (r->stack.n + l->nframes > FMT_MAX_FRAMES) {
			perr_set(r->e, PLUMB_EFORMAT, "a sample has more than %zu frames, the cap on one stack "
				 "(docs/design.md §6.6)", (size_t)FMT_MAX_FRAMES);
			return false;
		}
		for (uint32_t j = l->nframes; j-- > 0;)
			if (!u32vec_push(&r->stack, r->frames.v[l->first_frame + j]))
				return nomem(r);
	}
	uint32_t thread = sample_thread(r, b);
	uint32_t st = profile_stack_from(r->p, r->stack.v, r->stack.n);
	if (thread == PROFILE_NOMEM || st == PROFILE_NOMEM)
		return nomem(r);
	if (!profile_add_weighted(r->p, st, thread, 0, (uint64_t)weight, c > 0 ? (uint64_t)c : 0)) {
		if (profile_overflowed(r->p))
			return bad(r, "the sample values add up past what a profile can count");
		return nomem(r);
	}
	return true;
}

static bool read_samples(struct pp_reader *r)
{
	struct pb b = r->d.all;
	struct pb_field f;
	uint64_t *locs = NULL, *vals = NULL;
	size_t cl = 0, cv = 0;
	bool ok = true;
	while (ok && pb_next(&b, &f) == 1)
		if (f.num == 2 && f.wire == 2)
			ok = read_sample(r, f.sub, &locs, &cl, &vals, &cv);
	free(locs);
	free(vals);
	return ok;
}

static void doc_release(struct pp_doc *d)
{
	free(d->strs);
	free(d->str_len);
	free(d->types);
	free(d->maps);
	free(d->locs);
	free(d->lines);
	free(d->funcs);
	hmap_release(&d->map_index);
	hmap_release(&d->loc_index);
	hmap_release(&d->func_index);
}

bool fmt_pprof_sniff(const char *buf, size_t len)
{
	/* the first fields are Profile's, each with its own wire type, and one of them is a sample_type (field 1)
	 * holding a ValueType; Go writes time_nanos (9) before it */
	struct pb b = { (const unsigned char *)buf, (const unsigned char *)buf + len };
	struct pb_field f;
	for (int i = 0; i < 16 && pb_next(&b, &f) == 1; i++) {
		bool bytes = f.num <= 6 || f.num == 11;
		if (f.num > 14 || (bytes ? f.wire != 2 : f.wire != 0 && !(f.num == 13 && f.wire == 2)))
			return false;
		if (f.num == 1)
			return f.sub.end > f.sub.p && f.sub.p[0] == 0x08;
	}
	return false;
}

enum plumb_err fmt_pprof_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
			      struct perr *e)
{
	struct pp_reader r;
	memset(&r, 0, sizeof r);
	r.p = p;
	r.o = opts;
	r.e = e;
	r.all_thread = PROFILE_NOMEM;
	r.d.all.p = (const unsigned char *)buf;
	r.d.all.end = (const unsigned char *)buf + len;
	profile_keep_timeline(p, false); /* pprof samples have no times */
	bool ok = read_tables(&r) && choose_types(&r) && set_units(&r) && read_samples(&r);
	if (ok && profile_nthreads(p) == 0 && profile_thread(p, 0, 0, "all") == PROFILE_NOMEM)
		ok = nomem(&r);
	if (ok) {
		struct profile_meta *m = profile_meta(p);
		m->backend = profile_intern_cstr(p, "pprof");
		if (r.skipped && opts->warn) {
			char msg[160];
			snprintf(msg, sizeof msg, "skipped %llu samples with a negative value (a difference of two profiles)",
				 (unsigned long long)r.skipped);
			opts->warn(opts->warn_ctx, msg);
		}
	}
	doc_release(&r.d);
	u32vec_release(&r.frames);
	u32vec_release(&r.stack);
	return ok ? PLUMB_OK : (e->code ? e->code : PLUMB_EFORMAT);
}
