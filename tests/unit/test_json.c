/* test_json.c — the one JSON reader (base/json.h) and the jansson trees built on it (base/json_tree.h): every
 * token kind, escapes and surrogate pairs, the caps, truncated input and the positions errors name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "base/json_tree.h"

static void test_json__every_token_kind(void **state)
{
	(void)state;
	const char *doc = " {\"a\": [null, true, false, -12.5e1, 0, \"x\\ty\"], \"b\": {}, \"c\": []}\n";
	struct perr e = PERR_INIT;
	struct json_reader j;
	jr_init(&j, doc, strlen(doc), "test", &e);
	bool first = true, flag = false;
	const char *k;
	size_t kl;
	assert_true(jr_obj_begin(&j));
	assert_int_equal(j.depth, 1);
	assert_int_equal(jr_obj_next(&j, &first, &k, &kl), 1);
	assert_true(jr_key_is(k, kl, "a"));
	assert_true(jr_arr_begin(&j));
	bool f2 = true;
	assert_int_equal(jr_arr_next(&j, &f2), 1);
	assert_int_equal(jr_peek(&j), 'n');
	assert_true(jr_lit(&j, "null", 4));
	assert_int_equal(jr_arr_next(&j, &f2), 1);
	assert_true(jr_bool(&j, &flag));
	assert_true(flag);
	assert_int_equal(jr_arr_next(&j, &f2), 1);
	assert_true(jr_bool(&j, &flag));
	assert_false(flag);
	assert_int_equal(jr_arr_next(&j, &f2), 1);
	double d;
	const char *text;
	size_t len;
	bool integer = true;
	assert_true(jr_number_span(&j, &d, &text, &len, &integer));
	assert_true(d == -125.0);
	assert_false(integer);
	assert_int_equal(len, 7);
	assert_memory_equal(text, "-12.5e1", 7);
	assert_int_equal(jr_arr_next(&j, &f2), 1);
	assert_true(jr_number_span(&j, &d, NULL, NULL, &integer));
	assert_true(d == 0 && integer);
	assert_int_equal(jr_arr_next(&j, &f2), 1);
	struct sbuf s = SBUF_INIT;
	bool esc = false;
	assert_true(jr_string(&j, &s, &text, &len, &esc));
	assert_string_equal(s.buf, "x\ty");
	assert_true(esc);
	assert_int_equal(len, 4); /* as written: x \ t y */
	assert_int_equal(jr_arr_next(&j, &f2), 0);
	assert_int_equal(jr_obj_next(&j, &first, &k, &kl), 1);
	assert_true(jr_key_is(k, kl, "b"));
	assert_true(jr_skip(&j));
	assert_int_equal(jr_obj_next(&j, &first, &k, &kl), 1);
	assert_true(jr_key_is(k, kl, "c"));
	assert_true(jr_skip(&j));
	assert_int_equal(jr_obj_next(&j, &first, &k, &kl), 0);
	assert_int_equal(j.depth, 0);
	assert_true(jr_at_end(&j));
	assert_int_equal(e.code, PLUMB_OK);
	sbuf_release(&s);
	jr_release(&j);
}

/* Decodes one string literal; NULL when the reader refused it (the reason in *why). */
static char *decode(const char *lit, char *why, size_t whylen)
{
	struct json_reader j;
	jr_init(&j, lit, strlen(lit), "test", NULL);
	struct sbuf s = SBUF_INIT;
	char *out = NULL;
	if (jr_string(&j, &s, NULL, NULL, NULL))
		out = strdup(s.buf);
	else
		snprintf(why, whylen, "%s", j.err.text);
	sbuf_release(&s);
	jr_release(&j);
	return out;
}

static void test_json__escapes_and_surrogates(void **state)
{
	(void)state;
	static const struct {
		const char *lit, *want;
	} good[] = {
		{ "\"\"", "" },
		{ "\"plain\"", "plain" },
		{ "\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", "\" \\ / \b \f \n \r \t" },
		{ "\"\\u0041\\u00e9\\u20AC\"", "A\xc3\xa9\xe2\x82\xac" },         /* 1, 2 and 3 bytes */
		{ "\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80" },                     /* a surrogate pair: 4 bytes */
		{ "\"\\ud83dx\"", "\xef\xbf\xbdx" },                              /* a lone high surrogate */
		{ "\"\\ude00\"", "\xef\xbf\xbd" },                                /* a lone low surrogate */
		{ "\"\\ud83d\\u0041\"", "\xef\xbf\xbd" "A" },                     /* high then not a low */
		{ "\"caf\xc3\xa9\"", "caf\xc3\xa9" },                             /* raw UTF-8 passes through */
	};
	char why[160];
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		char *got = decode(good[i].lit, why, sizeof why);
		if (!got)
			fail_msg("case %zu: refused: %s", i, why);
		if (strcmp(got, good[i].want) != 0)
			fail_msg("case %zu: '%s' != '%s'", i, got, good[i].want);
		free(got);
	}
	static const struct {
		const char *lit, *why;
	} bad[] = {
		{ "\"\\x\"", "bad escape" },      { "\"\\u12\"", "bad \\u escape" }, { "\"\\u12G4\"", "bad \\u escape" },
		{ "\"a\nb\"", "control character" }, { "\"abc", "end of input" },  { "\"ab\\", "end of input" },
		{ "abc", "expected a string" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *got = decode(bad[i].lit, why, sizeof why);
		if (got)
			fail_msg("case %zu: accepted as '%s'", i, got);
		if (!strstr(why, bad[i].why))
			fail_msg("case %zu: '%s' lacks '%s'", i, why, bad[i].why);
	}
}

static void test_json__numbers(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		double want;
	} good[] = {
		{ "0", 0 },           { "-0", -0.0 },        { "7", 7 },          { "123.456", 123.456 },
		{ "1e3", 1000 },      { "1E+3", 1000 },      { "25e-1", 2.5 },    { "0.000001", 1e-6 },
		{ "12345678901234567890", 12345678901234567890.0 },             { "1.7976931348623157e308", 1.7976931348623157e308 },
		{ "4.9e-324", 4.9e-324 }, { "0.1", 0.1 },     { "-2.5", -2.5 },
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		struct json_reader j;
		jr_init(&j, good[i].text, strlen(good[i].text), "test", NULL);
		double d = NAN;
		if (!jr_number(&j, &d) || d != good[i].want || !jr_at_end(&j))
			fail_msg("case %zu: %s read as %.17g", i, good[i].text, d);
		jr_release(&j);
	}
	static const char *const bad[] = { "-", ".5", "1.", "1e", "1e+", "+1", "-x" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct json_reader j;
		jr_init(&j, bad[i], strlen(bad[i]), "test", NULL);
		double d;
		if (jr_number(&j, &d))
			fail_msg("case %zu: '%s' accepted", i, bad[i]);
		jr_release(&j);
	}
}

/* Skips doc and returns the reader's error message ("" when it was valid). */
static const char *skip_error(const char *doc, size_t len, int max_depth)
{
	static struct perr e;
	e = (struct perr)PERR_INIT;
	struct json_reader j;
	jr_init(&j, doc, len, "bad doc", &e);
	if (max_depth)
		j.max_depth = max_depth;
	if (jr_skip(&j) && !jr_at_end(&j))
		jr_fail(&j, "trailing data");
	jr_release(&j);
	return e.msg;
}

static void test_json__depth_cap(void **state)
{
	(void)state;
	char doc[2 * JR_MAX_DEPTH + 10];
	memset(doc, '[', JR_MAX_DEPTH);
	memset(doc + JR_MAX_DEPTH, ']', JR_MAX_DEPTH);
	assert_string_equal(skip_error(doc, 2 * JR_MAX_DEPTH, 0), ""); /* exactly the cap */
	memset(doc, '[', JR_MAX_DEPTH + 1);
	memset(doc + JR_MAX_DEPTH + 1, ']', JR_MAX_DEPTH + 1);
	const char *msg = skip_error(doc, 2 * JR_MAX_DEPTH + 2, 0);
	assert_non_null(strstr(msg, "nested too deeply"));
	assert_non_null(strstr(msg, "byte 256")); /* the bracket that went over */
	assert_non_null(strstr(skip_error("{\"a\": {\"b\": [1]}}", 17, 2), "nested too deeply"));
	assert_string_equal(skip_error("{\"a\": {\"b\": 1}}", 15, 2), "");
	/* a tree refuses it too (jansson itself would take 2048 levels) */
	struct jr_error err;
	assert_null(jr_parse(doc, 2 * JR_MAX_DEPTH + 2, 0, &err));
	assert_non_null(strstr(err.text, "nested too deeply"));
}

static void test_json__string_cap(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	const char *doc = "[\"0123456789\", \"01234567890\"]";
	struct json_reader j;
	jr_init(&j, doc, strlen(doc), "capped", &e);
	j.max_string = 10;
	assert_false(jr_skip(&j));
	assert_non_null(strstr(e.msg, "a string longer than 10 bytes"));
	assert_non_null(strstr(e.msg, "byte 15")); /* the opening quote of the long one */
	jr_release(&j);
}

static void test_json__truncated_everywhere(void **state)
{
	(void)state;
	const char *doc = "{\"k\": [1, -2.5e3, \"s\\u00e9\", true, false, null, {\"x\": []}], \"z\": 0}";
	size_t n = strlen(doc);
	for (size_t cut = 0; cut < n; cut++) {
		const char *msg = skip_error(doc, cut, 0);
		if (!strstr(msg, cut ? "unexpected end of input (the input is truncated)" : "the input is empty"))
			fail_msg("cut at %zu: '%s'", cut, msg);
		char where[32];
		snprintf(where, sizeof where, "at byte %zu", cut);
		if (!strstr(msg, where))
			fail_msg("cut at %zu: '%s' lacks '%s'", cut, msg, where);
		struct jr_error err;
		assert_null(jr_parse(doc, cut, 0, &err));
		assert_int_equal(err.offset, cut);
	}
	assert_string_equal(skip_error(doc, n, 0), "");
}

static void test_json__error_offsets(void **state)
{
	(void)state;
	static const struct {
		const char *doc;
		size_t offset, line, column;
		const char *why;
	} cases[] = {
		{ "[1,, 2]", 3, 1, 4, "expected a value" },
		{ "{\"a\" 1}", 5, 1, 6, "expected ':'" },
		{ "{\"a\": 1 \"b\": 2}", 8, 1, 9, "expected ',' or '}'" },
		{ "[1 2]", 3, 1, 4, "expected ',' or ']'" },
		{ "[\n  tru\n]", 4, 2, 3, "invalid literal" },
		{ "[1]\n\n  x", 7, 3, 3, "trailing data" },
		{ "{1: 2}", 1, 1, 2, "expected a string" },
		{ "[01]", 2, 1, 3, "expected ',' or ']'" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct jr_error err;
		json_t *v = jr_parse(cases[i].doc, strlen(cases[i].doc), 0, &err);
		if (v)
			fail_msg("case %zu: accepted", i);
		if (err.offset != cases[i].offset || err.line != cases[i].line || err.column != cases[i].column ||
		    !strstr(err.text, cases[i].why))
			fail_msg("case %zu: byte %zu line %zu column %zu '%s'", i, err.offset, err.line, err.column,
				 err.text);
	}
	/* the message names the path the caller set and the position */
	struct perr e = PERR_INIT;
	struct json_reader j;
	jr_init(&j, "{\"a\": [1, x]}", 13, "malformed thing", &e);
	jr_where(&j, "a[%d]", 1);
	assert_false(jr_skip(&j));
	assert_string_equal(e.msg, "malformed thing at byte 10 in a[1]: expected a value (line 1, column 11)");
	assert_int_equal(e.code, PLUMB_EFORMAT);
	jr_release(&j);
}

static void test_json__escaped_keys(void **state)
{
	(void)state;
	const char *doc = "{\"pl\\u0061in\": 1, \"b\": 2}";
	struct json_reader j;
	jr_init(&j, doc, strlen(doc), "test", NULL);
	bool first = true;
	const char *k;
	size_t kl;
	assert_true(jr_obj_begin(&j));
	assert_int_equal(jr_obj_next(&j, &first, &k, &kl), 1);
	assert_true(jr_key_is(k, kl, "plain"));
	assert_true(jr_skip(&j));
	assert_int_equal(jr_obj_next(&j, &first, &k, &kl), 1);
	assert_true(jr_key_is(k, kl, "b"));
	assert_ptr_equal(k, doc + 19); /* no escapes: the key points into the text */
	assert_true(jr_skip(&j));
	assert_int_equal(jr_obj_next(&j, &first, &k, &kl), 0);
	jr_release(&j);
}

static void test_json__tree(void **state)
{
	(void)state;
	const char *doc = "{\"i\": 9223372036854775807, \"n\": -9223372036854775808, \"r\": 1.5, \"e\": 1e2,"
			  " \"s\": \"\\ud83d\\ude00\", \"a\": [true, false, null, {}], \"k\": 1, \"k\": 2}";
	struct jr_error err;
	json_t *v = jr_parse(doc, strlen(doc), 0, &err);
	assert_non_null(v);
	assert_true(json_is_integer(json_object_get(v, "i")));
	assert_true(json_integer_value(json_object_get(v, "i")) == 9223372036854775807LL);
	assert_true(json_integer_value(json_object_get(v, "n")) == -9223372036854775807LL - 1);
	assert_true(json_is_real(json_object_get(v, "r")) && json_real_value(json_object_get(v, "r")) == 1.5);
	assert_true(json_is_real(json_object_get(v, "e")) && json_real_value(json_object_get(v, "e")) == 100);
	assert_string_equal(json_string_value(json_object_get(v, "s")), "\xf0\x9f\x98\x80");
	json_t *a = json_object_get(v, "a");
	assert_int_equal(json_array_size(a), 4);
	assert_true(json_is_true(json_array_get(a, 0)) && json_is_false(json_array_get(a, 1)));
	assert_true(json_is_null(json_array_get(a, 2)) && json_is_object(json_array_get(a, 3)));
	assert_int_equal(json_integer_value(json_object_get(v, "k")), 2); /* the last one wins */
	json_decref(v);
	assert_null(jr_parse(doc, strlen(doc), JR_TREE_NO_DUPLICATES, &err));
	assert_non_null(strstr(err.text, "duplicate key"));
	/* one value, the rest of the line unread */
	v = jr_parse("{\"x\": 1} garbage", 16, JR_TREE_FIRST_VALUE, &err);
	assert_non_null(v);
	json_decref(v);
	assert_null(jr_parse("{\"x\": 1} garbage", 16, 0, &err));
	/* what jansson refuses is refused here too */
	static const struct {
		const char *doc, *why;
	} bad[] = {
		{ "9223372036854775808", "integer out of range" },
		{ "-9223372036854775809", "integer out of range" },
		{ "1e999", "number out of range" },
		{ "\"a\\u0000b\"", "\\u0000" },
		{ "\"\xff\"", "not valid UTF-8" },
		{ "{\"\xc3\": 1}", "not valid UTF-8" },
		{ "", "the input is empty" },
		{ "   ", "the input is empty" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		v = jr_parse(bad[i].doc, strlen(bad[i].doc), 0, &err);
		if (v || !strstr(err.text, bad[i].why))
			fail_msg("case %zu: %s", i, v ? "accepted" : err.text);
	}
	/* a scalar document is a value like any other */
	v = jr_parse(" 42 ", 4, 0, &err);
	assert_true(json_is_integer(v) && json_integer_value(v) == 42);
	json_decref(v);
}

static void test_json__tree_file(void **state)
{
	(void)state;
	char path[] = "/tmp/plumb-test-jsonXXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\"a\": [1,\n 2,]}", 15), 15);
	close(fd);
	struct jr_error err;
	struct perr e = PERR_INIT;
	assert_null(jr_parse_file(path, "test file", 1 << 20, 0, &err, &e));
	assert_int_equal(err.line, 2);
	assert_int_equal(err.offset, 13);
	assert_null(jr_parse_file(path, "test file", 8, 0, &err, &e)); /* over the cap: refused unread */
	assert_int_equal(err.line, 0);
	assert_int_equal(e.code, PLUMB_EFORMAT);
	assert_non_null(strstr(e.msg, "larger than the cap of 8 bytes"));
	unlink(path);
	assert_null(jr_parse_file(path, "test file", 1 << 20, 0, &err, &e));
	assert_int_equal(err.line, 0);
	assert_int_equal(err.code, PLUMB_ENOENT);
	assert_non_null(strstr(e.msg, "No such file or directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json__every_token_kind),
		cmocka_unit_test(test_json__escapes_and_surrogates),
		cmocka_unit_test(test_json__numbers),
		cmocka_unit_test(test_json__depth_cap),
		cmocka_unit_test(test_json__string_cap),
		cmocka_unit_test(test_json__truncated_everywhere),
		cmocka_unit_test(test_json__error_offsets),
		cmocka_unit_test(test_json__escaped_keys),
		cmocka_unit_test(test_json__tree),
		cmocka_unit_test(test_json__tree_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
