/* pprof.c — the pprof profile.proto format, gzipped, as `go tool pprof` reads it. Two sample types,
 * samples/count and cpu/nanoseconds (count × the sampling interval; 1 ms when the interval is unknown); one
 * location per profile frame, one function per distinct (name, file), one mapping per module; the string table
 * starts with "". The protobuf is encoded here by hand: the message is small and write-only, and a hand encoder
 * avoids generated code and a libprotobuf-c dependency for about a hundred lines. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"
#include "base/intern.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "base/utf8.h"
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
		sbuf_release(&u);
	}
	return id;
}

static uint64_t st_cstr(struct strtab *t, const char *s)
{
	return st_id(t, s, strlen(s));
}

/* A redacted path's id (a module or source file: docs/design.md §3.6). */
static uint64_t st_redacted(struct strtab *t, const char *s)
{
	struct sbuf r = SBUF_INIT;
	redact_path_append(&r, s, strlen(s));
	uint64_t id = st_id(t, r.buf, r.len);
	sbuf_release(&r);
	return id;
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
	sbuf_release(&m);
}

/* One write: the profile, its labels, the string table and the message being built. Messages are encoded in
 * the order that fills the string table: sample types, samples, mappings, functions, locations. */
struct pp_writer {
	const struct profile *p;
	struct label_table *lt;
	struct strtab st;
	struct sbuf body, m, sub;  /* the Profile message; scratch for one message and one nested message */
	uint32_t *frame_map;       /* per frame: its mapping id (0: none) */
	uint32_t *frame_func;      /* per frame: its function id */
};

/* samples: location ids leaf first; values count and nanoseconds */
static void pp_samples(struct pp_writer *w, uint64_t interval)
{
	const struct profile *p = w->p;
	size_t nc;
	const struct profile_count *counts = profile_counts(p, &nc);
	for (size_t i = 0; i < nc; i++) {
		if (!counts[i].weight || counts[i].stack == PROFILE_ROOT)
			continue;
		sbuf_reset(&w->m);
		sbuf_reset(&w->sub);
		for (uint32_t s = counts[i].stack; s != PROFILE_ROOT; s = profile_stack_parent(p, s))
			pb_varint(&w->sub, (uint64_t)profile_stack_frame(p, s) + 1);
		pb_msg(&w->m, 1, &w->sub);
		sbuf_reset(&w->sub);
		pb_varint(&w->sub, counts[i].weight);
		pb_varint(&w->sub, counts[i].weight * interval);
		pb_msg(&w->m, 2, &w->sub);
		pb_msg(&w->body, 2, &w->m);
	}
}

/* mappings: one per module (ids from 1), has_functions so pprof does not try to symbolize */
static void pp_mappings(struct pp_writer *w)
{
	struct hmap map_index = HMAP_INIT;
	uint64_t nmaps = 0;
	for (size_t f = 0, nf = profile_nframes(w->p); f < nf; f++) {
		const struct frame *fr = profile_frame_get(w->p, (uint32_t)f);
		if (!fr->module)
			continue;
		uint32_t id;
		if (!hmap_get(&map_index, fr->module, &id)) {
			id = (uint32_t)++nmaps;
			hmap_put(&map_index, fr->module, id);
			sbuf_reset(&w->m);
			pb_uint(&w->m, 1, id);
			pb_uint(&w->m, 5, st_redacted(&w->st, profile_str(w->p, fr->module)));
			pb_uint(&w->m, 7, 1);
			pb_uint(&w->m, 8, fr->file ? 1 : 0);
			pb_uint(&w->m, 9, fr->line ? 1 : 0);
			pb_msg(&w->body, 3, &w->m);
		}
		w->frame_map[f] = id;
	}
	hmap_release(&map_index);
}

/* The function name of frame f: its label for a label frame or one without a file, else its (redacted)
 * function name; kernel and JIT frames marked as the folded writer marks them. */
static void pp_func_name(struct pp_writer *w, size_t f, const struct frame *fr, struct sbuf *name)
{
	const struct label_table *lt = w->lt;
	if (fr->is_label) {
		sbuf_add(name, lt->labels[f], lt->lens[f]);
	} else {
		label_append_func_shown(name, w->p, fr);
		if (!fr->file && fr->module) { /* "[unknown] (libfoo.so)" is more use than "[unknown]" */
			sbuf_reset(name);
			sbuf_add(name, lt->labels[f], lt->lens[f]);
		}
	}
	if (fr->kind == FRAME_KERNEL && !fr->is_label)
		sbuf_addstr(name, "_[k]");
	else if (fr->kind == FRAME_JIT && !fr->is_label)
		sbuf_addstr(name, "_[j]");
}

/* functions: one per distinct (name, file) */
static void pp_functions(struct pp_writer *w)
{
	struct hmap func_index = HMAP_INIT;
	uint64_t nfuncs = 0;
	for (size_t f = 0, nf = profile_nframes(w->p); f < nf; f++) {
		const struct frame *fr = profile_frame_get(w->p, (uint32_t)f);
		struct sbuf name = SBUF_INIT;
		pp_func_name(w, f, fr, &name);
		uint64_t name_id = st_id(&w->st, name.buf, name.len);
		sbuf_release(&name);
		uint64_t file_id = fr->file && !fr->is_label ? st_redacted(&w->st, profile_str(w->p, fr->file)) : 0;
		uint64_t key = (name_id << 32) ^ file_id;
		uint32_t id;
		if (!hmap_get(&func_index, key, &id)) {
			id = (uint32_t)++nfuncs;
			hmap_put(&func_index, key, id);
			sbuf_reset(&w->m);
			pb_uint(&w->m, 1, id);
			pb_uint(&w->m, 2, name_id);
			pb_uint(&w->m, 3, name_id);
			pb_uint(&w->m, 4, file_id);
			pb_msg(&w->body, 5, &w->m);
		}
		w->frame_func[f] = id;
	}
	hmap_release(&func_index);
}

/* locations: one per frame (id = frame id + 1) */
static void pp_locations(struct pp_writer *w)
{
	for (size_t f = 0, nf = profile_nframes(w->p); f < nf; f++) {
		const struct frame *fr = profile_frame_get(w->p, (uint32_t)f);
		sbuf_reset(&w->m);
		pb_uint(&w->m, 1, f + 1);
		pb_uint(&w->m, 2, w->frame_map[f]);
		pb_uint(&w->m, 3, fr->addr);
		sbuf_reset(&w->sub);
		pb_uint(&w->sub, 1, w->frame_func[f]);
		pb_uint(&w->sub, 2, fr->line);
		pb_msg(&w->m, 4, &w->sub);
		pb_msg(&w->body, 4, &w->m);
	}
}

static void pp_release(struct pp_writer *w)
{
	sbuf_release(&w->body);
	sbuf_release(&w->m);
	sbuf_release(&w->sub);
	st_release(&w->st);
	label_table_free(w->lt);
	free(w->frame_map);
	free(w->frame_func);
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
	size_t nf = profile_nframes(p);
	w.lt = label_table_build(p, opts->label_flags | LABEL_NO_SUFFIX);
	w.frame_map = calloc(nf ? nf : 1, sizeof *w.frame_map);
	w.frame_func = calloc(nf ? nf : 1, sizeof *w.frame_func);
	if (!w.lt || !w.frame_map || !w.frame_func) {
		pp_release(&w);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	st_id(&w.st, "", 0); /* string_table[0] must be "" */
	const struct profile_meta *meta = profile_meta_const(p);
	uint64_t interval = meta->interval_ns ? meta->interval_ns : 1000000;
	value_type(&w.body, 1, &w.st, "samples", "count");
	value_type(&w.body, 1, &w.st, "cpu", "nanoseconds");
	pp_samples(&w, interval);
	pp_mappings(&w);
	pp_functions(&w);
	pp_locations(&w);
	/* the string table follows the messages that filled it */
	sbuf_add(&w.body, w.st.out.buf, w.st.out.len);
	if (meta->start_unix > 0)
		pb_uint(&w.body, 9, (uint64_t)(meta->start_unix * 1e9));
	if (meta->duration_s > 0)
		pb_uint(&w.body, 10, (uint64_t)(meta->duration_s * 1e9));
	value_type(&w.body, 11, &w.st, "cpu", "nanoseconds"); /* both strings are in the table already */
	pb_uint(&w.body, 12, interval);
	enum plumb_err rc;
	if (w.body.oom || w.st.out.oom || w.m.oom || w.sub.oom)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	else if (!(rc = fmt_gzip_write(w.body.buf, w.body.len, out, e)) && ferror(out))
		rc = perr_set(e, PLUMB_EOUTPUT, "write failed");
	pp_release(&w);
	return rc;
}
