/* test_sbuf.c — the growable buffer (base/sbuf.h): the one JSON string writer, and what it reads back as. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json_tree.h"
#include "base/redact.h"
#include "base/sbuf.h"

static void test_sbuf__json_writer(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		size_t len;
		const char *str, *text; /* sbuf_add_json_str, sbuf_add_json_text */
	} cases[] = {
		{ "", 0, "\"\"", "\"\"" },
		{ "plain", 5, "\"plain\"", "\"plain\"" },
		{ "q\"b\\", 4, "\"q\\\"b\\\\\"", "\"q\\\"b\\\\\"" },
		{ "\n\t\r\b\f\x01\x1f\x7f", 8, "\"\\n\\t\\r\\u0008\\u000c\\u0001\\u001f\x7f\"",
		  "\"\\n\\t\\r\\u0008\\u000c\\u0001\\u001f\x7f\"" },
		{ "a\0b", 3, "\"a\\u0000b\"", "\"a\\u0000b\"" },
		{ "caf\xc3\xa9 \xf0\x9f\x98\x80", 10, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"", "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"" },
		{ "bad\xff\xfe", 5, "\"bad\xff\xfe\"", "\"bad??\"" },
		{ "over\xc0\xaf", 6, "\"over\xc0\xaf\"", "\"over??\"" },
		{ "cut\xe2\x82", 5, "\"cut\xe2\x82\"", "\"cut??\"" },
		{ "sur\xed\xa0\x80", 6, "\"sur\xed\xa0\x80\"", "\"sur???\"" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sbuf a = SBUF_INIT, b = SBUF_INIT;
		sbuf_add_json_str(&a, cases[i].in, cases[i].len);
		sbuf_add_json_text(&b, cases[i].in, cases[i].len);
		if (strcmp(a.buf, cases[i].str) != 0)
			fail_msg("case %zu: str wrote %s", i, a.buf);
		if (strcmp(b.buf, cases[i].text) != 0)
			fail_msg("case %zu: text wrote %s", i, b.buf);
		/* what the text writer writes always reads back (the NUL case aside: jansson refuses \u0000) */
		if (!memchr(cases[i].in, '\0', cases[i].len)) {
			struct jr_error err;
			json_t *v = jr_parse(b.buf, b.len, 0, &err);
			if (!v)
				fail_msg("case %zu: %s does not read back: %s", i, b.buf, err.text);
			json_decref(v);
		}
		sbuf_release(&a);
		sbuf_release(&b);
	}
	/* the redacting form: redacted, then written as text */
	struct sbuf r = SBUF_INIT;
	redact_add_json(&r, "--password=hunter2 \xff", 20);
	assert_string_equal(r.buf, "\"--password=" REDACTED " ?\"");
	sbuf_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sbuf__json_writer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
