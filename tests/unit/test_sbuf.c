/* test_sbuf.c — the growable buffer (base/sbuf.h): buf is never NULL (the shared empty string), out of memory
 * is reported once, and the one JSON string writer and what it reads back as. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
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

static void test_sbuf__never_null(void **state)
{
	(void)state;
	struct sbuf sb = SBUF_INIT;
	assert_non_null(sb.buf);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.cap, 0);
	sbuf_reset(&sb); /* the shared "" is never written */
	sbuf_setlen(&sb, 0);
	assert_string_equal(sb.buf, "");
	sbuf_release(&sb); /* nothing to free */
	assert_non_null(sb.buf);
	sbuf_addstr(&sb, "");
	assert_string_equal(sb.buf, "");
	sbuf_addf(&sb, "%s-%d", "x", 7);
	assert_string_equal(sb.buf, "x-7");
	assert_true(sb.cap > 0);
	sbuf_setlen(&sb, 1);
	assert_string_equal(sb.buf, "x");
	sbuf_reset(&sb);
	assert_string_equal(sb.buf, "");
	sbuf_release(&sb);
	assert_ptr_equal(sb.buf, sbuf_slopbuf);
	/* a failed grow keeps the text it had, and buf stays readable */
	sbuf_addstr(&sb, "kept");
	assert_false(sbuf_grow(&sb, SIZE_MAX - 2)); /* 4 + this wraps: refused before any allocation */
	assert_true(sb.oom);
	sbuf_addstr(&sb, " dropped");
	assert_string_equal(sb.buf, "kept");
	struct perr e = PERR_INIT;
	assert_int_equal(sbuf_done(&sb, &e), PLUMB_ENOMEM);
	assert_string_equal(e.msg, "out of memory");
	/* ... and detaching it says so, freeing what it held */
	size_t len = 99;
	assert_null(sbuf_detach(&sb, &len));
	assert_int_equal(len, 0);
	assert_ptr_equal(sb.buf, sbuf_slopbuf);
	assert_false(sb.oom);
	/* a buffer that failed while still empty reads as "" */
	struct sbuf empty = SBUF_INIT;
	assert_false(sbuf_grow(&empty, SIZE_MAX));
	assert_string_equal(empty.buf, "");
	sbuf_release(&empty);
	/* an empty buffer detaches as a string of its own */
	char *d = sbuf_detach(&empty, &len);
	assert_non_null(d);
	assert_string_equal(d, "");
	assert_int_equal(len, 0);
	assert_true(d != sbuf_slopbuf);
	free(d);
	struct sbuf ok = SBUF_INIT;
	sbuf_add(&ok, "abc", 3);
	sbuf_add(&ok, NULL, 0);
	assert_int_equal(sbuf_done(&ok, &e), PLUMB_OK);
	d = sbuf_detach(&ok, &len);
	assert_string_equal(d, "abc");
	assert_int_equal(len, 3);
	free(d);
	/* a zeroed buffer (inside a calloc'd struct) is accepted; sbuf_init makes it readable */
	struct sbuf z;
	memset(&z, 0, sizeof z);
	sbuf_release(&z);
	assert_string_equal(z.buf, "");
	memset(&z, 0, sizeof z);
	sbuf_addch(&z, 'q');
	assert_string_equal(z.buf, "q");
	sbuf_release(&z);
	memset(&z, 0, sizeof z);
	sbuf_init(&z);
	assert_string_equal(z.buf, "");
	assert_string_equal(sbuf_slopbuf, ""); /* nothing ever wrote into it */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sbuf__never_null),
		cmocka_unit_test(test_sbuf__json_writer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
