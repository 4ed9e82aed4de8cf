/* label.c — builds frame labels (DESIGN §1) and the per-output table of redacted labels, so each distinct
 * frame is labelled and redacted once however many samples or lines use it. */
#include "profile/label.h"

#include <stdlib.h>
#include <string.h>

#include "base/redact.h"

const char *label_short_path(const char *path)
{
	const char *last = strrchr(path, '/');
	if (!last)
		return path;
	const char *p = last;
	while (p > path && p[-1] != '/')
		p--;
	/* p starts the second-to-last component; when it is empty ("/file.c") keep just the file */
	return p == last ? last + 1 : p;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

void label_append(struct sbuf *out, const struct profile *p, uint32_t frame_id, unsigned flags)
{
	const struct frame *f = profile_frame_get(p, frame_id);
	if (!f) {
		sbuf_addstr(out, "[unknown]");
		return;
	}
	const char *func = profile_str(p, f->func);
	if (f->is_label) {
		sbuf_addstr(out, func);
		return;
	}
	const char *file = profile_str(p, f->file);
	const char *module = profile_str(p, f->module);
	sbuf_addstr(out, func[0] ? func : "[unknown]");
	if (!(flags & LABEL_FUNC_ONLY)) {
		if (file[0]) {
			sbuf_addstr(out, " (");
			sbuf_addstr(out, label_short_path(file));
			if (f->line && !(flags & LABEL_NO_LINES))
				sbuf_addf(out, ":%u", f->line);
			sbuf_addch(out, ')');
		} else if (module[0]) {
			sbuf_addstr(out, " (");
			sbuf_addstr(out, base_name(module));
			sbuf_addch(out, ')');
		}
	}
	if (!(flags & LABEL_NO_SUFFIX)) {
		if (f->kind == FRAME_KERNEL)
			sbuf_addstr(out, "_[k]");
		else if (f->kind == FRAME_JIT)
			sbuf_addstr(out, "_[j]");
	}
}

struct label_table *label_table_build(const struct profile *p, unsigned flags)
{
	struct label_table *t = calloc(1, sizeof *t);
	size_t n = profile_nframes(p);
	if (!t)
		return NULL;
	t->n = n;
	t->labels = calloc(n ? n : 1, sizeof *t->labels);
	t->lens = calloc(n ? n : 1, sizeof *t->lens);
	if (!t->labels || !t->lens) {
		label_table_free(t);
		return NULL;
	}
	struct sbuf raw = SBUF_INIT, red = SBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		sbuf_reset(&raw);
		sbuf_reset(&red);
		label_append(&raw, p, (uint32_t)i, flags);
		redact_append(&red, raw.buf, raw.len);
		if (red.oom || raw.oom || !(t->labels[i] = malloc(red.len + 1))) {
			sbuf_release(&raw);
			sbuf_release(&red);
			label_table_free(t);
			return NULL;
		}
		memcpy(t->labels[i], red.buf, red.len + 1);
		t->lens[i] = red.len;
	}
	sbuf_release(&raw);
	sbuf_release(&red);
	return t;
}

void label_table_free(struct label_table *t)
{
	if (!t)
		return;
	if (t->labels)
		for (size_t i = 0; i < t->n; i++)
			free(t->labels[i]);
	free(t->labels);
	free(t->lens);
	free(t);
}
