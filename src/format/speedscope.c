/* speedscope.c — the speedscope file format (https://www.speedscope.app/file-format-schema.json): one shared
 * frame table (a frame per profile frame, named by its redacted label) and one "sampled" profile per thread.
 * With a timeline the samples are in time order with their weights; without one each distinct stack appears
 * once with its aggregated weight (speedscope's "left heavy" and "sandwich" views are the same either way). */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "profile/label.h"

/* Writes a JSON string literal for s (redacted when `redact`). */
static void json_str(FILE *out, struct sbuf *tmp, const char *s, size_t n, bool redact)
{
	sbuf_reset(tmp);
	if (redact)
		redact_add_json(tmp, s, n);
	else
		sbuf_add_json_text(tmp, s, n);
	if (tmp->oom) /* out of memory: an empty name keeps the document valid */
		fputs("\"\"", out);
	else
		fwrite(tmp->buf, 1, tmp->len, out);
}

/* Appends the stack's frame ids outermost first to out as a JSON array. */
static bool write_stack(FILE *out, const struct profile *p, uint32_t stack, uint32_t **scratch, size_t *cap)
{
	uint32_t depth = profile_stack_depth(p, stack);
	if (!ALLOC_GROW(*scratch, depth, *cap))
		return false;
	uint32_t i = depth;
	for (uint32_t s = stack; s != PROFILE_ROOT; s = profile_stack_parent(p, s))
		(*scratch)[--i] = profile_stack_frame(p, s);
	fputc('[', out);
	for (i = 0; i < depth; i++)
		fprintf(out, i ? ",%u" : "%u", (*scratch)[i]);
	fputc(']', out);
	return true;
}

enum plumb_err fmt_speedscope_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts,
				    struct perr *e)
{
	struct label_table *lt = label_table_build(p, opts->label_flags);
	struct sbuf tmp = SBUF_INIT;
	uint32_t *scratch = NULL;
	size_t scap = 0;
	size_t nthreads = profile_nthreads(p), nc, nt;
	const struct profile_count *counts = profile_counts(p, &nc);
	const struct profile_sample *tl = profile_timeline(p, &nt);
	uint64_t *tw = calloc(nthreads ? nthreads : 1, sizeof *tw);
	enum plumb_err rc = PLUMB_OK;
	if (!lt || !tw) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto done;
	}
	const struct profile_meta *m = profile_meta_const(p);
	const char *unit = strcmp(profile_str(p, m->weight_unit), "nanoseconds") == 0 ? "nanoseconds" : "none";
	const char *cmd = profile_str(p, m->command);
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"plumb\",\"name\":", out);
	json_str(out, &tmp, cmd[0] ? cmd : "plumb profile", strlen(cmd[0] ? cmd : "plumb profile"), true);
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
	for (size_t f = 0; f < lt->n; f++) {
		const struct frame *fr = profile_frame_get(p, (uint32_t)f);
		fputs(f ? ",{\"name\":" : "{\"name\":", out);
		json_str(out, &tmp, lt->labels[f], lt->lens[f], false); /* labels are redacted already */
		const char *file = profile_str(p, fr->file);
		if (!fr->is_label && file[0]) {
			fputs(",\"file\":", out);
			json_str(out, &tmp, file, strlen(file), true);
			if (fr->line)
				fprintf(out, ",\"line\":%u", fr->line);
		}
		fputc('}', out);
	}
	fputs("]},\"profiles\":[", out);
	for (size_t i = 0; i < nc; i++)
		tw[counts[i].thread] += counts[i].weight;
	bool first_profile = true;
	for (size_t t = 0; t < nthreads; t++) {
		if (!tw[t])
			continue;
		const struct profile_thread *th = profile_thread_get(p, (uint32_t)t);
		const char *tname = profile_str(p, th->name);
		fputs(first_profile ? "{\"type\":\"sampled\",\"name\":" : ",{\"type\":\"sampled\",\"name\":", out);
		first_profile = false;
		sbuf_reset(&tmp);
		char name[300];
		if (th->tid)
			snprintf(name, sizeof name, "%s (%u)", tname[0] ? tname : "thread", th->tid);
		else
			snprintf(name, sizeof name, "%s", tname[0] ? tname : "all");
		json_str(out, &tmp, name, strlen(name), true);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%llu,\"samples\":[", unit,
			(unsigned long long)tw[t]);
		bool first = true;
		size_t n = nt ? nt : nc;
		for (size_t i = 0; i < n; i++) {
			uint32_t st = nt ? tl[i].stack : counts[i].stack, thr = nt ? tl[i].thread : counts[i].thread;
			uint64_t w = nt ? tl[i].weight : counts[i].weight;
			if (thr != t || !w)
				continue;
			if (!first)
				fputc(',', out);
			first = false;
			if (!write_stack(out, p, st, &scratch, &scap)) {
				rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
				goto done;
			}
		}
		fputs("],\"weights\":[", out);
		first = true;
		for (size_t i = 0; i < n; i++) {
			uint32_t thr = nt ? tl[i].thread : counts[i].thread;
			uint64_t w = nt ? tl[i].weight : counts[i].weight;
			if (thr != t || !w)
				continue;
			fprintf(out, first ? "%llu" : ",%llu", (unsigned long long)w);
			first = false;
		}
		fputs("]}", out);
	}
	fputs("]}\n", out);
	if (ferror(out))
		rc = perr_set(e, PLUMB_EOUTPUT, "write failed");
done:
	free(tw);
	free(scratch);
	sbuf_release(&tmp);
	label_table_free(lt);
	return rc;
}
