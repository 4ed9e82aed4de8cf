/* test_speedscope_read.c — the speedscope reader on small hand-made files with known totals: a "sampled"
 * profile in milliseconds (weights become nanoseconds, times on the timeline), an "evented" profile (open and
 * close events become the weight of the stack open between them), threads from profile names, and the errors
 * (naming key and index) on malformed input. */
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

/* kind FMT_UNKNOWN: sniffed (the document must name the speedscope schema) */
static struct profile *read_doc(const char *doc, enum fmt_kind kind, bool timeline, enum plumb_err want,
				struct perr *e)
{
	return unit_read_doc(doc, kind, timeline, want, e);
}

static const char frames[] =
	"\"shared\": {\"frames\": [{\"name\": \"main\", \"file\": \"/src/a.c\", \"line\": 3},"
	" {\"name\": \"foo\"}, {\"name\": \"bar\", \"file\": \"/src/b.c\"}]}";

static void test_speedscope_read__sampled_milliseconds(void **state)
{
	(void)state;
	char doc[1024];
	snprintf(doc, sizeof doc,
		 "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\", %s, \"profiles\": ["
		 "{\"type\": \"sampled\", \"name\": \"w (12)\", \"unit\": \"milliseconds\", \"startValue\": 0,"
		 " \"endValue\": 3.5, \"samples\": [[0, 1], [0, 2], [0, 1], [0]], \"weights\": [1, 2, 0.5, 0]}]}",
		 frames);
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(doc, FMT_UNKNOWN, true, PLUMB_OK, &e);
	assert_int_equal(profile_total_weight(p), 3500000);
	assert_string_equal(profile_str(p, profile_meta(p)->weight_unit), "nanoseconds");
	assert_string_equal(profile_str(p, profile_meta(p)->backend), "speedscope");
	/* frames: "main" has a file and line, "foo" is a label read into its fields (a name alone) */
	assert_int_equal(profile_nframes(p), 3);
	const struct frame *f0 = profile_frame_get(p, 0), *f1 = profile_frame_get(p, 1);
	assert_string_equal(profile_str(p, f0->func), "main");
	assert_string_equal(profile_str(p, f0->file), "/src/a.c");
	assert_int_equal(f0->line, 3);
	assert_string_equal(profile_str(p, f1->func), "foo");
	assert_int_equal(f1->file, 0);
	/* one thread, its tid read back from plumb's "name (tid)" */
	assert_int_equal(profile_nthreads(p), 1);
	assert_int_equal(profile_thread_get(p, 0)->tid, 12);
	assert_string_equal(profile_str(p, profile_thread_get(p, 0)->name), "w");
	size_t n;
	const struct profile_count *c = profile_counts(p, &n);
	assert_int_equal(n, 2);
	assert_int_equal(c[0].weight, 1500000); /* main;foo twice: 1 ms + 0.5 ms */
	assert_int_equal(c[1].weight, 2000000);
	/* the timeline: cumulative weights as time */
	const struct profile_sample *tl = profile_timeline(p, &n);
	assert_int_equal(n, 3);
	assert_int_equal(tl[0].time_ns, 0);
	assert_int_equal(tl[1].time_ns, 1000000);
	assert_int_equal(tl[2].time_ns, 3000000);
	assert_int_equal(tl[2].weight, 500000);
	profile_free(p);
}

static void test_speedscope_read__evented(void **state)
{
	(void)state;
	char doc[1024];
	snprintf(doc, sizeof doc,
		 "{%s, \"profiles\": [{\"type\": \"evented\", \"name\": \"x\", \"unit\": \"none\", \"startValue\": 0,"
		 " \"endValue\": 12, \"events\": [{\"type\": \"O\", \"frame\": 0, \"at\": 0},"
		 " {\"type\": \"O\", \"frame\": 1, \"at\": 2}, {\"type\": \"C\", \"frame\": 1, \"at\": 5},"
		 " {\"type\": \"O\", \"frame\": 2, \"at\": 5}, {\"type\": \"C\", \"frame\": 2, \"at\": 6},"
		 " {\"type\": \"C\", \"frame\": 0, \"at\": 10}, {\"type\": \"O\", \"frame\": 1, \"at\": 11},"
		 " {\"type\": \"C\", \"frame\": 1, \"at\": 12}]}],"
		 " \"exporter\": \"other\"}",
		 frames);
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(doc, FMT_SPEEDSCOPE, true, PLUMB_OK, &e);
	/* main [0,2) + [6,10), main;foo [2,5), main;bar [5,6), foo [11,12) */
	assert_int_equal(profile_total_weight(p), 11);
	assert_false(profile_has_timeline(p)); /* unit "none": no times */
	assert_string_equal(profile_str(p, profile_meta(p)->weight_unit), "samples");
	char *text = unit_folded(p);
	assert_string_equal(text, "main (src/a.c:3) 6\nmain (src/a.c:3);foo 3\nfoo 1\n"
				 "main (src/a.c:3);bar (src/b.c) 1\n");
	free(text);
	profile_free(p);
}

static void test_speedscope_read__threads_per_profile(void **state)
{
	(void)state;
	char doc[1024];
	snprintf(doc, sizeof doc,
		 "{%s, \"profiles\": [{\"type\": \"sampled\", \"name\": \"a\", \"unit\": \"none\", \"samples\": [[1]],"
		 " \"weights\": [2]}, {\"type\": \"sampled\", \"name\": \"b (7)\", \"samples\": [[2]], \"weights\": [3]},"
		 " {\"type\": \"evented\", \"name\": \"c\", \"unit\": \"seconds\", \"startValue\": 1, \"endValue\": 2,"
		 " \"events\": [{\"type\": \"O\", \"frame\": 0, \"at\": 1}, {\"type\": \"C\", \"frame\": 0, \"at\": 1.25}]}]}",
		 frames);
	struct perr e = PERR_INIT;
	struct profile *p = read_doc(doc, FMT_SPEEDSCOPE, true, PLUMB_OK, &e);
	assert_int_equal(profile_nthreads(p), 3);
	assert_string_equal(profile_str(p, profile_thread_get(p, 0)->name), "a");
	assert_int_equal(profile_thread_get(p, 1)->tid, 7);
	assert_string_equal(profile_str(p, profile_thread_get(p, 1)->name), "b");
	assert_string_equal(profile_str(p, profile_thread_get(p, 2)->name), "c");
	assert_int_not_equal(profile_thread_get(p, 2)->tid, profile_thread_get(p, 0)->tid);
	size_t n;
	const struct profile_count *c = profile_counts(p, &n);
	assert_int_equal(n, 3);
	assert_int_equal(c[2].weight, 250000000); /* 0.25 s */
	profile_free(p);
}

static void test_speedscope_read__malformed_says_where(void **state)
{
	(void)state;
	static const struct {
		const char *doc, *msg;
	} cases[] = {
		{ "{\"shared\": {\"frames\": []}, \"profiles\": [", "the input is truncated) (line 1" },
		{ "[]", "top level is not an object" },
		{ "{\"profiles\": []}", "\"shared\" is missing" },
		{ "{\"shared\": {\"frames\": [{\"file\": \"x\"}]}, \"profiles\": []}", "shared.frames[0].name" },
		{ "{\"shared\": {\"frames\": [{\"name\": \"f\", \"file\": \"x\", \"line\": -1}]}, \"profiles\": []}",
		  "shared.frames[0].line" },
		{ "{\"shared\": {\"frames\": []}}", "\"profiles\" is missing" },
		{ "{\"shared\": {\"frames\": []}, \"profiles\": [{\"type\": \"x\"}]}", "profiles[0].type" },
		{ "{\"shared\": {\"frames\": [{\"name\": \"f\"}]}, \"profiles\": [{\"type\": \"sampled\","
		  " \"samples\": [[0], [0, 1]], \"weights\": [1, 1]}]}",
		  "profiles[0].samples[1][1] is not a frame index (1 frames)" },
		{ "{\"shared\": {\"frames\": [{\"name\": \"f\"}]}, \"profiles\": [{\"type\": \"sampled\","
		  " \"samples\": [[0]], \"weights\": [1, 2]}]}",
		  "profiles[0] has 1 samples but 2 weights" },
		{ "{\"shared\": {\"frames\": [{\"name\": \"f\"}]}, \"profiles\": [{\"type\": \"sampled\","
		  " \"samples\": [[0]], \"weights\": [-1]}]}",
		  "profiles[0].weights[0]" },
		{ "{\"shared\": {\"frames\": [{\"name\": \"f\"}, {\"name\": \"g\"}]}, \"profiles\": [{\"type\": \"evented\","
		  " \"events\": [{\"type\": \"O\", \"frame\": 0, \"at\": 0}, {\"type\": \"C\", \"frame\": 1, \"at\": 1}]}]}",
		  "profiles[0].events[1] closes frame 1 but frame 0 is open" },
		{ "{\"shared\": {\"frames\": [{\"name\": \"f\"}]}, \"profiles\": [{\"type\": \"evented\","
		  " \"events\": [{\"type\": \"O\", \"frame\": 0, \"at\": 5}, {\"type\": \"C\", \"frame\": 0, \"at\": 1}]}]}",
		  "profiles[0].events[1].at goes back in time" },
		{ "{\"shared\": {\"frames\": [{\"name\": \"f\"}]}, \"profiles\": [{\"type\": \"evented\","
		  " \"events\": [{\"type\": \"X\", \"frame\": 0, \"at\": 5}]}]}",
		  "profiles[0].events[0].type" },
		{ "{\"shared\": {\"frames\": [{\"name\": \"f\"}]}, \"profiles\": [{\"type\": \"evented\", \"endValue\": 9,"
		  " \"events\": [{\"type\": \"O\", \"frame\": 0, \"at\": 5}]}]}",
		  "profiles[0]: frame 0 is opened and never closed" },
		{ "{\"shared\": {\"frames\": [{\"name\": \"f\"}]}, \"profiles\": [{\"type\": \"sampled\", \"unit\": \"seconds\","
		  " \"samples\": [[0], [0]], \"weights\": [1e10, 1e10]}]}",
		  "profiles[0].weights[0]: weights add up to more than plumb can count" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct perr e = PERR_INIT;
		struct profile *p = NULL;
		struct fmt_read_opts o = { 0 };
		size_t n = strlen(cases[i].doc);
		char *buf = malloc(n);
		memcpy(buf, cases[i].doc, n);
		enum plumb_err rc = fmt_read_buf(buf, n, FMT_SPEEDSCOPE, &o, &p, &e);
		free(buf);
		if (rc != PLUMB_EFORMAT || !strstr(e.msg, cases[i].msg))
			fail_msg("case %zu: rc %d, message \"%s\", wanted \"%s\"", i, (int)rc, e.msg, cases[i].msg);
		assert_null(p);
		assert_non_null(strstr(e.msg, "speedscope"));
	}
}

/* Sniffing: the speedscope "$schema" URL near either end of a JSON document, not the bare word (a Firefox
 * profile of a program under a "speedscope" directory names it in its paths). */
static void test_speedscope_read__sniff(void **state)
{
	(void)state;
	static const char gecko[] = "{\"meta\": {\"product\": \"/work/speedscope/build/x\"}, \"threads\": []}";
	assert_int_equal(fmt_sniff(gecko, strlen(gecko)), FMT_GECKO);
	/* "$schema" last, after a frame table longer than the sniffed head */
	char *doc = malloc(20000);
	size_t n = (size_t)sprintf(doc, "{\"shared\": {\"frames\": [");
	for (int i = 0; i < 500; i++)
		n += (size_t)sprintf(doc + n, "%s{\"name\": \"f%d\"}", i ? ", " : "", i);
	n += (size_t)sprintf(doc + n, "]}, \"profiles\": [], \"$schema\": "
			     "\"https://www.speedscope.app/file-format-schema.json\"}");
	assert_true(n > 8192);
	assert_int_equal(fmt_sniff(doc, n), FMT_SPEEDSCOPE);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_speedscope_read__sampled_milliseconds),
		cmocka_unit_test(test_speedscope_read__evented),
		cmocka_unit_test(test_speedscope_read__threads_per_profile),
		cmocka_unit_test(test_speedscope_read__malformed_says_where),
		cmocka_unit_test(test_speedscope_read__sniff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
