/* test_perf_ring.c — task records as the kernel writes them: a COMM record's time comes from its sample_id_all
 * trailer, wherever the events' sample_type puts it (the perf_event backend orders a thread's names by it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/perf_event.h>
#include <string.h>

#include "sample/perf_ring.h"

/* A COMM record for pid/tid named `name`, its trailer the fields sample_type asks for, time `time`. */
static size_t comm_record(unsigned char *buf, uint64_t sample_type, const char *name, uint64_t time)
{
	struct perf_event_header h = { .type = PERF_RECORD_COMM, .misc = 0 };
	uint32_t pt[2] = { 41, 42 };
	size_t n = sizeof h;
	memcpy(buf + n, pt, sizeof pt);
	n += sizeof pt;
	size_t len = strlen(name) + 1, padded = (len + 7) & ~(size_t)7;
	memset(buf + n, 0, padded);
	memcpy(buf + n, name, len);
	n += padded;
	const uint64_t order[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
				   PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER };
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		if (!(sample_type & order[i]))
			continue;
		uint64_t v = order[i] == PERF_SAMPLE_TIME ? time : 0x7777777777777777ull;
		memcpy(buf + n, &v, sizeof v);
		n += sizeof v;
	}
	h.size = (uint16_t)n;
	memcpy(buf, &h, sizeof h);
	return n;
}

static void test_perf_ring__comm_time_from_the_trailer(void **state)
{
	(void)state;
	unsigned char buf[256];
	const uint64_t types[] = {
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN,
		PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_ID,
		PERF_SAMPLE_TIME,
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		size_t n = comm_record(buf, types[i], "pw=hunter2COMM", 123456789012ull + i);
		struct perf_task_rec t;
		assert_true(perf_task_parse((const char *)buf, n, types[i], &t));
		assert_int_equal(t.type, PERF_RECORD_COMM);
		assert_int_equal(t.tid, 42);
		assert_string_equal(t.name, "pw=hunter2COMM");
		assert_int_equal(t.time, 123456789012ull + i);
	}
	/* no time asked for, or a record cut before its trailer: 0, never a byte of the name */
	size_t n = comm_record(buf, PERF_SAMPLE_TID, "secrets", 5);
	struct perf_task_rec t;
	assert_true(perf_task_parse((const char *)buf, n, PERF_SAMPLE_TID, &t));
	assert_int_equal(t.time, 0);
	n = comm_record(buf, 0, "secrets", 5);
	assert_true(perf_task_parse((const char *)buf, n, PERF_SAMPLE_TID | PERF_SAMPLE_TIME, &t));
	assert_int_equal(t.time, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_ring__comm_time_from_the_trailer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
