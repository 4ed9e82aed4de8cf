/* test_v8_read.c — V8's and Gecko's raw formats on small hand-made documents with known totals: a trace's Profile
 * and ProfileChunks out of time order (chunks join in time order, a sample lasts until the next, times that go back
 * count as the latest, the last sample runs to endTime), a .cpuprofile with children lists and an unnamed function,
 * the old "head" form with absolute timestamps, a heap profile in bytes, an unprocessed Gecko profile with a
 * subprocess, sniffing, and the errors on malformed input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "profile/profile.h"

#include "fmt_unit.h"

static struct profile *read_doc(const char *doc, enum fmt_kind kind, enum plumb_err want, struct perr *e)
{
	return unit_read_doc(doc, kind, false, want, e);
}

static const char trace[] =
	"{\"traceEvents\": ["
	"{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 2, \"args\": {\"name\": \"Main\"}},"
	"{\"name\": \"Profile\", \"ph\": \"P\", \"pid\": 1, \"tid\": 2, \"ts\": 100, \"id\": \"0x1\","
	" \"args\": {\"data\": {\"startTime\": \"100\"}}},"
	"{\"name\": \"ProfileChunk\", \"pid\": 1, \"tid\": 3, \"ts\": 300, \"id\": \"0x1\", \"args\": {\"data\":"
	" {\"cpuProfile\": {\"nodes\": [{\"id\": 3, \"parent\": 2, \"callFrame\": {\"functionName\": \"b\"}}],"
	" \"samples\": [3, 2]}, \"timeDeltas\": [5, 7], \"endTime\": 140}}},"
	"{\"name\": \"ProfileChunk\", \"pid\": 1, \"tid\": 3, \"ts\": 200, \"id\": \"0x1\", \"args\": {\"data\":"
	" {\"cpuProfile\": {\"nodes\": [{\"id\": 1, \"callFrame\": {\"functionName\": \"(root)\"}},"
	" {\"id\": 2, \"parent\": 1, \"callFrame\": {\"functionName\": \"\", \"url\": \"x.js\", \"lineNumber\": 0}},"
	" {\"id\": 4, \"parent\": 1, \"callFrame\": {\"functionName\": \"(idle)\"}}],"
	" \"samples\": [2, 4, 2]}, \"timeDeltas\": [1, 10, -2]}}}]}";

static void test_v8_read__trace_chunks(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(trace, FMT_UNKNOWN, PLUMB_OK, &e);
	assert_string_equal(profile_str(p, profile_meta(p)->format), "chrome-trace");
	assert_string_equal(profile_str(p, profile_meta(p)->weight_unit), "nanoseconds");
	/* times 101, 111, 111 (109 went back), 116, 123, end 140: (anon) 10 + 5 + 17, (idle) 0, b 7 (µs) */
	assert_int_equal(profile_total_samples(p), 5);
	assert_int_equal(profile_total_weight(p), 39000);
	char *text = unit_folded(p);
	/* a time weight says so in the folded text's first line (docs/design.md §6.1) */
	assert_string_equal(text, "# plumb: samples=5 unit=ns\n(anonymous) (x.js:1) 32000\n(anonymous) (x.js:1);b 7000\n");
	free(text);
	assert_int_equal(profile_nthreads(p), 1);
	assert_string_equal(profile_str(p, profile_thread_get(p, 0)->name), "Main");
	assert_int_equal(profile_thread_get(p, 0)->tid, 2);
	profile_free(p);
}

static void test_v8_read__cpuprofile_and_old_form(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(
		"{\"nodes\": [{\"id\": 1, \"callFrame\": {\"functionName\": \"(root)\", \"url\": \"\", \"lineNumber\": -1},"
		" \"children\": [2, 3]}, {\"id\": 2, \"callFrame\": {\"functionName\": \"main\", \"url\": \"/a.js\","
		" \"lineNumber\": 4}, \"children\": [4]}, {\"id\": 3, \"callFrame\": {\"functionName\": \"(garbage collector)\"}},"
		" {\"id\": 4, \"callFrame\": {\"functionName\": \"\"}}],"
		" \"startTime\": 1000, \"endTime\": 1010, \"samples\": [2, 4, 3], \"timeDeltas\": [2, 3, 1]}",
		FMT_UNKNOWN, PLUMB_OK, &e);
	assert_string_equal(profile_str(p, profile_meta(p)->format), "cpuprofile");
	assert_int_equal(profile_total_samples(p), 3);
	assert_int_equal(profile_total_weight(p), 8000); /* from the first sample (1002) to endTime */
	char *text = unit_folded(p);
	assert_string_equal(text, "# plumb: samples=3 unit=ns\n(garbage collector) 4000\nmain (a.js:5) 3000\n"
				  "main (a.js:5);(anonymous) 1000\n");
	free(text);
	profile_free(p);
	/* the old form: a nested head, absolute timestamps (one more than the samples: the end) */
	p = read_doc("{\"head\": {\"functionName\": \"(root)\", \"id\": 1, \"hitCount\": 0, \"children\": [{\"functionName\":"
		     " \"f\", \"url\": \"\", \"lineNumber\": 2, \"id\": 2, \"children\": []}]}, \"startTime\": 1, \"endTime\": 1,"
		     " \"samples\": [2, 2], \"timestamps\": [1000500, 1000700, 1001000]}",
		     FMT_UNKNOWN, PLUMB_OK, &e);
	assert_int_equal(profile_total_samples(p), 2);
	assert_int_equal(profile_total_weight(p), 500000);
	profile_free(p);
}

static void test_v8_read__heapprofile(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(
		"{\"head\": {\"callFrame\": {\"functionName\": \"(root)\"}, \"selfSize\": 0, \"id\": 1, \"children\": ["
		"{\"callFrame\": {\"functionName\": \"alloc\", \"url\": \"m.js\", \"lineNumber\": 9}, \"selfSize\": 4096,"
		" \"id\": 2, \"children\": [{\"callFrame\": {\"functionName\": \"\"}, \"selfSize\": 100, \"id\": 3,"
		" \"children\": []}]}]}, \"samples\": [{\"size\": 4096, \"nodeId\": 2, \"ordinal\": 1}]}",
		FMT_UNKNOWN, PLUMB_OK, &e);
	assert_string_equal(profile_str(p, profile_meta(p)->format), "heapprofile");
	assert_string_equal(profile_str(p, profile_meta(p)->weight_unit), "bytes");
	assert_int_equal(profile_total_weight(p), 4196);
	assert_int_equal(profile_total_samples(p), 1);
	char *text = unit_folded(p);
	assert_string_equal(text, "# plumb: samples=1 unit=bytes\nalloc (m.js:10) 4096\nalloc (m.js:10);(anonymous) 100\n");
	free(text);
	profile_free(p);
}

static void test_v8_read__gecko_raw(void **state)
{
	(void)state;
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(
		"{\"meta\": {\"version\": 12, \"startTime\": 1000, \"interval\": 0.5}, \"threads\": [{\"name\": \"GeckoMain\","
		" \"tid\": 7, \"pid\": 5, \"samples\": {\"schema\": {\"stack\": 0, \"time\": 1}, \"data\": [[1, 0.5], [null, 1],"
		" [1, 1.5]]}, \"stackTable\": {\"schema\": {\"prefix\": 0, \"frame\": 1}, \"data\": [[null, 0], [0, 1]]},"
		" \"frameTable\": {\"schema\": {\"location\": 0}, \"data\": [[0], [1]]},"
		" \"stringTable\": [\"(root)\", \"alpha (http://h/a.js:3:14)\"]}],"
		" \"processes\": [{\"meta\": {\"version\": 12, \"startTime\": 1002}, \"threads\": [{\"name\": \"GeckoMain\","
		" \"tid\": 9, \"samples\": {\"schema\": {\"stack\": 0}, \"data\": [[0]]}, \"stackTable\": {\"schema\":"
		" {\"prefix\": 0, \"frame\": 1}, \"data\": [[null, 0]]}, \"frameTable\": {\"schema\": {\"location\": 0},"
		" \"data\": [[0]]}, \"stringTable\": [\"js::RunScript\"]}]}]}",
		FMT_UNKNOWN, PLUMB_OK, &e);
	assert_string_equal(profile_str(p, profile_meta(p)->format), "gecko-raw");
	assert_int_equal(profile_total_samples(p), 3);
	assert_int_equal(profile_meta(p)->interval_ns, 500000);
	assert_int_equal(profile_nthreads(p), 2);
	char *text = unit_folded(p);
	assert_string_equal(text, "(root);alpha (h/a.js:3) 2\njs::RunScript 1\n");
	free(text);
	profile_free(p);
}

static void test_v8_read__malformed_says_why(void **state)
{
	(void)state;
	static const struct {
		enum fmt_kind kind;
		const char *doc, *msg;
	} cases[] = {
		{ FMT_CPUPROFILE, "{\"nodes\": [{\"id\": 1, \"callFrame\": {}, \"parent\": 2}, {\"id\": 2, \"callFrame\": {},"
		  " \"parent\": 1}], \"samples\": [1], \"timeDeltas\": [1]}", "form a cycle" },
		{ FMT_CPUPROFILE, "{\"nodes\": [{\"id\": 1, \"callFrame\": {}}], \"samples\": [1, 1], \"timeDeltas\": [1]}",
		  "has 2 samples but 1 timeDeltas" },
		{ FMT_CPUPROFILE, "{\"nodes\": [{\"id\": 1}], \"samples\": [], \"timeDeltas\": []}", "callFrame is missing" },
		{ FMT_CPUPROFILE, "{\"nodes\": [{\"id\": 1, \"callFrame\": {}}, {\"id\": 1, \"callFrame\": {}}],"
		  " \"samples\": []}", "node id 1 appears twice" },
		{ FMT_CPUPROFILE, "[1]", "the top level is not an object" },
		{ FMT_CHROME_TRACE, "[{\"name\": \"X\", \"ph\": \"B\"}]", "no CPU profile in the trace" },
		{ FMT_CHROME_TRACE, "{\"traceEvents\": [{\"name\": \"Profile\", \"id\": \"1\"}, {\"name\": \"ProfileChunk\","
		  " \"id\": \"1\", \"ts\": 1, \"args\": {\"data\": {\"cpuProfile\": {\"samples\": [\"x\"]}}}}]}",
		  "samples[0] is not a node id" },
		{ FMT_HEAPPROFILE, "{\"head\": {\"callFrame\": {}, \"selfSize\": -1}}", "selfSize is not a size" },
		{ FMT_GECKO_RAW, "{\"meta\": {}, \"threads\": []}", "no meta.version" },
		{ FMT_GECKO_RAW, "{\"meta\": {\"version\": 1}, \"threads\": [{\"samples\": {\"schema\": {\"stack\": 0},"
		  " \"data\": []}, \"stackTable\": {\"schema\": {\"prefix\": 0, \"frame\": 1}, \"data\": [[0, 0]]},"
		  " \"frameTable\": {\"schema\": {\"location\": 0}, \"data\": [[0]]}, \"stringTable\": [\"f\"]}]}",
		  "prefix is not an earlier stack" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct perr e = PERR_INIT;
		struct profile *p = NULL;
		struct fmt_read_opts o = { 0 };
		size_t n = strlen(cases[i].doc);
		char *buf = malloc(n);
		memcpy(buf, cases[i].doc, n);
		enum plumb_err rc = fmt_read_buf(buf, n, cases[i].kind, &o, &p, &e);
		free(buf);
		if (rc != PLUMB_EFORMAT || !strstr(e.msg, cases[i].msg))
			fail_msg("case %zu: rc %d, message \"%s\", wanted \"%s\"", i, (int)rc, e.msg, cases[i].msg);
		assert_null(p);
	}
}

/* Sniffing tells the JSON kinds apart by their keys. */
static void test_v8_read__sniff(void **state)
{
	(void)state;
	static const struct {
		const char *doc;
		enum fmt_kind kind;
	} cases[] = {
		{ "{\"nodes\": [{\"id\": 1, \"callFrame\": {}}]}", FMT_CPUPROFILE },
		{ "{\"head\": {\"functionName\": \"(root)\", \"hitCount\": 0}}", FMT_CPUPROFILE },
		{ "{\"head\": {\"callFrame\": {}, \"selfSize\": 0}}", FMT_HEAPPROFILE },
		{ " [{\"name\": \"Profile\"}]", FMT_CHROME_TRACE },
		{ "{\"metadata\": {}, \"traceEvents\": []}", FMT_CHROME_TRACE },
		{ "{\"meta\": {\"version\": 12}, \"threads\": []}", FMT_GECKO_RAW },
		{ "{\"meta\": {\"version\": 12, \"preprocessedProfileVersion\": 49}, \"threads\": []}", FMT_GECKO },
		{ "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\"}", FMT_SPEEDSCOPE },
		{ "[unknown];main 3\n", FMT_FOLDED },  /* folded text that starts like an array */
		{ "[\n  {\"ph\": \"X\"}]", FMT_CHROME_TRACE },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (fmt_json_sniff(cases[i].doc, strlen(cases[i].doc)) != cases[i].kind)
			fail_msg("case %zu: sniffed %s, wanted %s", i, fmt_name(fmt_json_sniff(cases[i].doc,
				 strlen(cases[i].doc))), fmt_name(cases[i].kind));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v8_read__trace_chunks),
		cmocka_unit_test(test_v8_read__cpuprofile_and_old_form),
		cmocka_unit_test(test_v8_read__heapprofile),
		cmocka_unit_test(test_v8_read__gecko_raw),
		cmocka_unit_test(test_v8_read__malformed_says_why),
		cmocka_unit_test(test_v8_read__sniff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
