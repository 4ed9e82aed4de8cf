/* stages.c — reads and writes plumb.stages.v1 (docs/design.md §9.2). The writer emits a fixed key order so equal
 * stage lists are equal bytes; the reader takes the document through a jansson tree (stage files are small) and
 * accepts only what the writer's schema allows (a missing schema or time_unit is taken as plumb's). */
#include "format/stages.h"

#include <stdlib.h>
#include <string.h>

#include "base/json_tree.h"
#include "base/redact.h"
#include "base/str.h"

void fmt_stages_write(struct sbuf *out, const struct fmt_stage *stages, size_t n)
{
	sbuf_addstr(out, "{\"schema\": \"" STAGES_SCHEMA "\", \"time_unit\": \"ms\", \"time_origin\": \"profile_start\", "
			 "\"stages\": [\n");
	for (size_t i = 0; i < n; i++) {
		sbuf_addstr(out, i ? ",\n  {\"name\": " : "  {\"name\": ");
		sbuf_add_json_str(out, stages[i].name, strlen(stages[i].name));
		sbuf_addf(out, ", \"start_ms\": %.3f, \"end_ms\": %.3f}", stages[i].start_ms, stages[i].end_ms);
	}
	sbuf_addstr(out, "\n]}\n");
}

void fmt_stages_free(struct fmt_stage *stages, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(stages[i].name);
	free(stages);
}

/* The stages of a parsed document. */
static enum plumb_err from_tree(json_t *root, const char *name, struct fmt_stage **out, size_t *nout,
				struct perr *e)
{
	json_t *schema = json_object_get(root, "schema"), *unit = json_object_get(root, "time_unit");
	json_t *stages = json_object_get(root, "stages");
	const char *sv = json_string_value(schema);
	if (schema && (!sv || !str_ends_with(sv, "stages.v1")))
		return perr_set(e, PLUMB_EFORMAT, "stage file %s: schema %s is not understood (expected " STAGES_SCHEMA ")",
				name, sv ? sv : "(not a string)");
	if (unit && (!json_is_string(unit) || strcmp(json_string_value(unit), "ms") != 0))
		return perr_set(e, PLUMB_EFORMAT, "stage file %s: time_unit must be \"ms\"", name);
	if (!json_is_array(stages))
		return perr_set(e, PLUMB_EFORMAT, "stage file %s: no \"stages\" array", name);
	size_t n = json_array_size(stages);
	struct fmt_stage *st = calloc(n + 1, sizeof *st);
	if (!st)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_array_get(stages, i);
		json_t *sname = json_object_get(s, "name"), *a = json_object_get(s, "start_ms"),
		       *b = json_object_get(s, "end_ms");
		if (!json_is_string(sname) || !json_is_number(a) || !json_is_number(b) ||
		    json_number_value(b) < json_number_value(a)) {
			fmt_stages_free(st, i);
			return perr_set(e, PLUMB_EFORMAT,
					"stage file %s: stages[%zu] needs a name, start_ms and end_ms >= start_ms", name, i);
		}
		st[i].name = redact_dup(json_string_value(sname)); /* whoever wrote the file: redacted as text (§3.6) */
		st[i].start_ms = json_number_value(a);
		st[i].end_ms = json_number_value(b);
		if (!st[i].name) {
			fmt_stages_free(st, i);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
	}
	*out = st;
	*nout = n;
	return PLUMB_OK;
}

static enum plumb_err parse_error(const struct jr_error *je, const char *name, struct perr *e)
{
	return perr_set(e, PLUMB_EFORMAT, "stage file %s: %s (line %zu, column %zu)", name, je->text, je->line,
			je->column);
}

enum plumb_err fmt_stages_read(const char *buf, size_t len, const char *name, struct fmt_stage **stages, size_t *n,
			       struct perr *e)
{
	struct jr_error je;
	json_t *root = jr_parse(buf, len, 0, &je);
	if (!root)
		return parse_error(&je, name, e);
	enum plumb_err rc = from_tree(root, name, stages, n, e);
	json_decref(root);
	return rc;
}

enum plumb_err fmt_stages_load(const char *path, struct fmt_stage **stages, size_t *n, struct perr *e)
{
	struct jr_error je;
	json_t *root = jr_parse_file(path, "stage file", FMT_STAGES_MAX, 0, &je, e);
	if (!root)
		return je.line < 1 ? je.code : parse_error(&je, path, e); /* not read: e names the file already */
	enum plumb_err rc = from_tree(root, path, stages, n, e);
	json_decref(root);
	return rc;
}
