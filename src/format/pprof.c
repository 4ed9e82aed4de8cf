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

enum plumb_err fmt_pprof_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts, struct perr *e)
{
	struct strtab st;
	memset(&st, 0, sizeof st);
	sbuf_init(&st.out);
	struct sbuf body = SBUF_INIT, m = SBUF_INIT, sub = SBUF_INIT;
	struct hmap func_index = HMAP_INIT, map_index = HMAP_INIT;
	struct label_table *lt = label_table_build(p, opts->label_flags | LABEL_NO_SUFFIX);
	enum plumb_err rc = PLUMB_OK;
	size_t nf = profile_nframes(p), nc;
	if (!lt) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto done;
	}
	st_id(&st, "", 0); /* string_table[0] must be "" */
	const struct profile_meta *meta = profile_meta_const(p);
	uint64_t interval = meta->interval_ns ? meta->interval_ns : 1000000;

	value_type(&body, 1, &st, "samples", "count");
	value_type(&body, 1, &st, "cpu", "nanoseconds");

	/* samples: location ids leaf first; values count and nanoseconds */
	const struct profile_count *counts = profile_counts(p, &nc);
	for (size_t i = 0; i < nc; i++) {
		if (!counts[i].weight || counts[i].stack == PROFILE_ROOT)
			continue;
		sbuf_reset(&m);
		sbuf_reset(&sub);
		for (uint32_t s = counts[i].stack; s != PROFILE_ROOT; s = profile_stack_parent(p, s))
			pb_varint(&sub, (uint64_t)profile_stack_frame(p, s) + 1);
		pb_msg(&m, 1, &sub);
		sbuf_reset(&sub);
		pb_varint(&sub, counts[i].weight);
		pb_varint(&sub, counts[i].weight * interval);
		pb_msg(&m, 2, &sub);
		pb_msg(&body, 2, &m);
	}

	/* mappings: one per module (ids from 1), has_functions so pprof does not try to symbolize */
	uint64_t nmaps = 0;
	uint32_t *frame_map = calloc(nf ? nf : 1, sizeof *frame_map);
	uint32_t *frame_func = calloc(nf ? nf : 1, sizeof *frame_func);
	if (!frame_map || !frame_func) {
		free(frame_map);
		free(frame_func);
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t f = 0; f < nf; f++) {
		const struct frame *fr = profile_frame_get(p, (uint32_t)f);
		if (!fr->module)
			continue;
		uint32_t id;
		if (!hmap_get(&map_index, fr->module, &id)) {
			id = (uint32_t)++nmaps;
			hmap_put(&map_index, fr->module, id);
			sbuf_reset(&m);
			pb_uint(&m, 1, id);
			pb_uint(&m, 5, st_redacted(&st, profile_str(p, fr->module)));
			pb_uint(&m, 7, 1);
			pb_uint(&m, 8, fr->file ? 1 : 0);
			pb_uint(&m, 9, fr->line ? 1 : 0);
			pb_msg(&body, 3, &m);
		}
		frame_map[f] = id;
	}
	/* functions: one per distinct (name, file) */
	uint64_t nfuncs = 0;
	for (size_t f = 0; f < nf; f++) {
		const struct frame *fr = profile_frame_get(p, (uint32_t)f);
		struct sbuf name = SBUF_INIT;
		if (fr->is_label) {
			sbuf_add(&name, lt->labels[f], lt->lens[f]);
		} else {
			label_append_func_shown(&name, p, fr);
			if (!fr->file && fr->module) { /* "[unknown] (libfoo.so)" is more use than "[unknown]" */
				sbuf_reset(&name);
				sbuf_add(&name, lt->labels[f], lt->lens[f]);
			}
		}
		if (fr->kind == FRAME_KERNEL && !fr->is_label)
			sbuf_addstr(&name, "_[k]");
		else if (fr->kind == FRAME_JIT && !fr->is_label)
			sbuf_addstr(&name, "_[j]");
		uint64_t name_id = st_id(&st, name.buf, name.len);
		sbuf_release(&name);
		uint64_t file_id = fr->file && !fr->is_label ? st_redacted(&st, profile_str(p, fr->file)) : 0;
		uint64_t key = (name_id << 32) ^ file_id;
		uint32_t id;
		if (!hmap_get(&func_index, key, &id)) {
			id = (uint32_t)++nfuncs;
			hmap_put(&func_index, key, id);
			sbuf_reset(&m);
			pb_uint(&m, 1, id);
			pb_uint(&m, 2, name_id);
			pb_uint(&m, 3, name_id);
			pb_uint(&m, 4, file_id);
			pb_msg(&body, 5, &m);
		}
		frame_func[f] = id;
	}
	/* locations: one per frame (id = frame id + 1) */
	for (size_t f = 0; f < nf; f++) {
		const struct frame *fr = profile_frame_get(p, (uint32_t)f);
		sbuf_reset(&m);
		pb_uint(&m, 1, f + 1);
		pb_uint(&m, 2, frame_map[f]);
		pb_uint(&m, 3, fr->addr);
		sbuf_reset(&sub);
		pb_uint(&sub, 1, frame_func[f]);
		pb_uint(&sub, 2, fr->line);
		pb_msg(&m, 4, &sub);
		pb_msg(&body, 4, &m);
	}
	free(frame_map);
	free(frame_func);
	/* the string table follows the messages that filled it */
	sbuf_add(&body, st.out.buf, st.out.len);
	if (meta->start_unix > 0)
		pb_uint(&body, 9, (uint64_t)(meta->start_unix * 1e9));
	if (meta->duration_s > 0)
		pb_uint(&body, 10, (uint64_t)(meta->duration_s * 1e9));
	value_type(&body, 11, &st, "cpu", "nanoseconds"); /* both strings are in the table already */
	pb_uint(&body, 12, interval);
	if (body.oom || st.out.oom || m.oom || sub.oom) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto done;
	}
	rc = fmt_gzip_write(body.buf, body.len, out, e);
	if (!rc && ferror(out))
		rc = perr_set(e, PLUMB_EOUTPUT, "write failed");
done:
	hmap_release(&func_index);
	hmap_release(&map_index);
	sbuf_release(&body);
	sbuf_release(&m);
	sbuf_release(&sub);
	st_release(&st);
	label_table_free(lt);
	return rc;
}
