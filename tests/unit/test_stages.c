/* test_stages.c — the stage lines of plumb.h become a plumb.stages.v1 file (docs/design.md §9.2), within caps and
 * under the trust rule, and that document reads back into the same stages; the reader refuses what the schema
 * does not allow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/stages.h"
#include "sample/stages.h"

static char dir[] = "/tmp/plumb-stages-XXXXXX";

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static json_t *convert(const char *lines, uint64_t origin, uint64_t end)
{
	char in[256], out[256];
	snprintf(in, sizeof in, "%s/lines.jsonl", dir);
	snprintf(out, sizeof out, "%s/stages.json", dir);
	unlink(in);
	if (lines)
		write_text(in, lines);
	struct perr e = PERR_INIT;
	assert_int_equal(stages_write(in, origin, end, out, &e), PLUMB_OK);
	json_error_t jerr;
	json_t *doc = json_load_file(out, 0, &jerr);
	assert_non_null(doc);
	return doc;
}

static void test_stages__command_stage_and_sorted_ms(void **state)
{
	(void)state;
	json_t *doc = convert("{\"name\": \"parse\", \"start_ns\": 3000000000, \"end_ns\": 3500000000, \"pid\": 1}\n"
			      "not json at all\n"
			      "{\"name\": \"load\", \"start_ns\": 2000500000, \"end_ns\": 2250000000, \"pid\": 1}\n"
			      "{\"name\": \"early\", \"start_ns\": 1000000000, \"end_ns\": 2100000000}\n"
			      "{\"name\": \"gone\", \"start_ns\": 100, \"end_ns\": 200}\n"
			      "{\"name\": \"backwards\", \"start_ns\": 2900000000, \"end_ns\": 2800000000}\n"
			      "{\"name\": \"cut",
			      2000000000ull, 4000000000ull);
	assert_string_equal(json_string_value(json_object_get(doc, "schema")), "plumb.stages.v1");
	assert_string_equal(json_string_value(json_object_get(doc, "time_unit")), "ms");
	assert_string_equal(json_string_value(json_object_get(doc, "time_origin")), "profile_start");
	json_t *st = json_object_get(doc, "stages");
	assert_int_equal(json_array_size(st), 4);
	const char *names[] = { "command", "early", "load", "parse" };
	double starts[] = { 0.0, 0.0, 0.5, 1000.0 }, ends[] = { 2000.0, 100.0, 250.0, 1500.0 };
	for (size_t i = 0; i < 4; i++) {
		json_t *s = json_array_get(st, i);
		assert_string_equal(json_string_value(json_object_get(s, "name")), names[i]);
		assert_float_equal(json_number_value(json_object_get(s, "start_ms")), starts[i], 1e-6);
		assert_float_equal(json_number_value(json_object_get(s, "end_ms")), ends[i], 1e-6);
	}
	json_decref(doc);
}

static void test_stages__no_lines_gives_command_only(void **state)
{
	(void)state;
	json_t *doc = convert(NULL, 10, 1000010);
	json_t *st = json_object_get(doc, "stages");
	assert_int_equal(json_array_size(st), 1);
	assert_float_equal(json_number_value(json_object_get(json_array_get(st, 0), "end_ms")), 1.0, 1e-9);
	json_decref(doc);
}

/* The caps and the trust rule on the lines a program wrote (docs/design.md §3.5): an over-long line is skipped
 * and what follows it still read; a link or a FIFO in the scratch file's place is refused, never followed or
 * waited on. */
static void test_stages__lines_within_caps_and_trusted(void **state)
{
	(void)state;
	size_t big = STAGES_LINE_MAX + 100;
	char *text = malloc(big + 200);
	assert_non_null(text);
	int n = snprintf(text, 200, "{\"name\": \"");
	memset(text + n, 'x', big);
	snprintf(text + n + big, 200, "\", \"start_ns\": 5, \"end_ns\": 6}\n"
		 "{\"name\": \"after\", \"start_ns\": 10, \"end_ns\": 20}\n");
	json_t *doc = convert(text, 0, 100);
	free(text);
	json_t *st = json_object_get(doc, "stages");
	assert_int_equal(json_array_size(st), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(st, 1), "name")), "after");
	json_decref(doc);

	char in[256], out[256], real[256];
	snprintf(in, sizeof in, "%s/lines.jsonl", dir);
	snprintf(out, sizeof out, "%s/stages.json", dir);
	snprintf(real, sizeof real, "%s/real.jsonl", dir);
	write_text(real, "{\"name\": \"x\", \"start_ns\": 1, \"end_ns\": 2}\n");
	unlink(in);
	assert_int_equal(symlink(real, in), 0);
	struct perr e = PERR_INIT;
	assert_int_equal(stages_write(in, 0, 10, out, &e), PLUMB_EIO);
	assert_non_null(strstr(e.msg, "symbolic link"));
	unlink(in);
	assert_int_equal(mkfifo(in, 0600), 0);
	assert_int_equal(stages_write(in, 0, 10, out, &e), PLUMB_EIO);
	assert_non_null(strstr(e.msg, "FIFO"));
	unlink(in);
}

static void test_stages__unwritable_output(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	assert_int_equal(stages_write(NULL, 0, 1, "/nonexistent-dir/x/stages.json", &e), PLUMB_EOUTPUT);
}

static void test_stages__write_then_read_gives_the_stages(void **state)
{
	(void)state;
	const struct fmt_stage in[] = { { (char *)"command", 0.0, 2000.0 }, { (char *)"load \"x\"", 0.5, 250.25 },
					{ (char *)"parse", 1000.0, 1500.125 } };
	struct sbuf sb = SBUF_INIT;
	fmt_stages_write(&sb, in, 3);
	assert_false(sb.oom);
	struct fmt_stage *out = NULL;
	size_t n = 0;
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_stages_read(sb.buf, sb.len, "mem", &out, &n, &e), PLUMB_OK);
	assert_int_equal(n, 3);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(out[i].name, in[i].name);
		assert_float_equal(out[i].start_ms, in[i].start_ms, 1e-9);
		assert_float_equal(out[i].end_ms, in[i].end_ms, 1e-9);
	}
	/* writing what was read gives the same bytes */
	struct sbuf again = SBUF_INIT;
	fmt_stages_write(&again, out, n);
	assert_string_equal(again.buf, sb.buf);
	fmt_stages_free(out, n);
	sbuf_release(&sb);
	sbuf_release(&again);
}

static void test_stages__reader_refuses(void **state)
{
	(void)state;
	static const struct {
		const char *doc, *message;
	} cases[] = {
		{ "{\"schema\": \"plumb.stages.v2\", \"stages\": []}", "schema plumb.stages.v2 is not understood" },
		{ "{\"schema\": 1, \"stages\": []}", "schema (not a string)" },
		{ "{\"time_unit\": \"s\", \"stages\": []}", "time_unit must be \"ms\"" },
		{ "{\"schema\": \"plumb.stages.v1\"}", "no \"stages\" array" },
		{ "{\"stages\": [{\"name\": \"a\", \"start_ms\": 5, \"end_ms\": 4}]}", "stages[0] needs a name" },
		{ "{\"stages\": [{\"name\": \"a\", \"start_ms\": 1, \"end_ms\": 2}, {\"start_ms\": 1}]}",
		  "stages[1] needs a name" },
		{ "{\"stages\": [", "stage file doc: " },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct fmt_stage *out = NULL;
		size_t n = 0;
		struct perr e = PERR_INIT;
		assert_int_equal(fmt_stages_read(cases[i].doc, strlen(cases[i].doc), "doc", &out, &n, &e), PLUMB_EFORMAT);
		assert_non_null(strstr(e.msg, cases[i].message));
		assert_null(out);
	}
	/* no schema and no unit: taken as plumb's */
	const char ok[] = "{\"stages\": [{\"name\": \"a\", \"start_ms\": 1, \"end_ms\": 1}]}";
	struct fmt_stage *out = NULL;
	size_t n = 0;
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_stages_read(ok, sizeof ok - 1, "doc", &out, &n, &e), PLUMB_OK);
	assert_int_equal(n, 1);
	fmt_stages_free(out, n);
	assert_int_equal(fmt_stages_load("/nonexistent-dir/stages.json", &out, &n, &e), PLUMB_ENOENT); /* exit 3 */
	assert_non_null(strstr(e.msg, "cannot read the stage file /nonexistent-dir/stages.json"));
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stages__command_stage_and_sorted_ms),
		cmocka_unit_test(test_stages__no_lines_gives_command_only),
		cmocka_unit_test(test_stages__lines_within_caps_and_trusted),
		cmocka_unit_test(test_stages__unwritable_output),
		cmocka_unit_test(test_stages__write_then_read_gives_the_stages),
		cmocka_unit_test(test_stages__reader_refuses),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
