/* test_perf_periods.c — the random periods of the perf backends (sample/perf_stack.h, docs/design.md §5.2): a
 * sample's PERF_SAMPLE_READ count is parsed where the kernel puts it, the redraw thread's peek sees it, and a
 * thread's event gets a new period at every PERF_PERIODS_BATCH-th of its own samples only — never for a sample
 * of another thread or an unknown event. The event is a real, disabled task clock of this test's thread (an
 * ioctl on it is what a redraw does); where perf_event_open is refused the last test is skipped, saying why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sample/perf_ring.h"
#include "sample/perf_stack.h"
#include "unit_skip.h"

/* a PERF_RECORD_SAMPLE of IDENTIFIER, IP, TID, TIME, READ and an empty CALLCHAIN */
static size_t sample_record(char *buf, uint64_t id, uint32_t pid, uint32_t tid, uint64_t time, uint64_t count)
{
	uint64_t f[7] = { id, 0x401000, (uint64_t)pid | (uint64_t)tid << 32, time, count, 0 };
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, (uint16_t)(sizeof h + 6 * 8) };
	memcpy(buf, &h, sizeof h);
	memcpy(buf + sizeof h, f, 6 * 8);
	return h.size;
}

static void test_perf_periods__read_count_is_parsed_after_time(void **state)
{
	(void)state;
	char rec[128];
	size_t len = sample_record(rec, 7, 100, 101, 123456789, 5000123);
	struct perf_sample sv;
	uint64_t type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN;
	assert_true(perf_sample_parse(type, rec, len, &sv));
	assert_int_equal(sv.id, 7);
	assert_int_equal(sv.tid, 101);
	assert_int_equal(sv.time, 123456789);
	assert_int_equal(sv.count, 5000123);
	assert_int_equal(sv.nr, 0);
	/* one byte short of the count: refused, not read past */
	assert_false(perf_sample_parse(type & ~(uint64_t)PERF_SAMPLE_CALLCHAIN, rec, sizeof(struct perf_event_header) + 39,
				       &sv));
}

struct peeked {
	size_t n, len;
	uint64_t count;
};

static void on_peek(void *ctx, uint32_t type, const unsigned char *body, size_t len)
{
	struct peeked *p = ctx;
	p->n++;
	p->len = len;
	if (type == PERF_RECORD_SAMPLE && len >= 40)
		memcpy(&p->count, body + 32, sizeof p->count);
}

static void test_perf_periods__peek_sees_the_count(void **state)
{
	(void)state;
	size_t data_size = 4096;
	struct perf_event_mmap_page *meta = calloc(1, sizeof *meta);
	char *data = calloc(1, data_size);
	assert_non_null(meta);
	assert_non_null(data);
	size_t len = sample_record(data, 7, 100, 101, 1, 424242);
	meta->data_head = len;
	struct perf_ring r = { .fd = -1, .meta = meta, .data = data, .data_size = data_size };
	struct peeked p = { 0 };
	assert_int_equal(perf_ring_peek(&r, on_peek, &p), 1);
	assert_int_equal(p.len, PERF_PEEK_BYTES);
	assert_int_equal(p.count, 424242);
	free(meta);
	free(data);
}

static void test_perf_periods__a_thread_event_is_redrawn_every_batch(void **state)
{
	(void)state;
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 5000000;
	a.disabled = 1;
	a.exclude_kernel = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) { /* kernel.perf_event_paranoid 3 (Debian's) refuses even this to a user */
		skip_missing_tool("permission for perf_event_open");
		return;
	}
	struct perf_periods pp;
	perf_periods_init(&pp, 5000000, 42);
	pp.sample_read = true;
	int32_t tid = (int32_t)syscall(SYS_gettid);
	assert_true(perf_periods_add(&pp, fd, tid, 5000000));
	uint64_t id = 0;
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ID, &id), 0);
	for (int i = 1; i <= 3 * PERF_PERIODS_BATCH; i++) {
		perf_periods_sampled(&pp, id, (uint32_t)tid + 1, 0, 0);  /* another thread's (inherited) sample */
		perf_periods_sampled(&pp, id + 999, (uint32_t)tid, 0, 0); /* an unknown event */
		perf_periods_sampled(&pp, id, (uint32_t)tid, 0, (uint64_t)i * 5000000);
		assert_int_equal(pp.redraws, (uint64_t)(i / PERF_PERIODS_BATCH));
	}
	/* every period given lies within the draw's range */
	assert_true(pp.ev[0].period >= 5000000 / 4);
	perf_periods_release(&pp);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_periods__read_count_is_parsed_after_time),
		cmocka_unit_test(test_perf_periods__peek_sees_the_count),
		cmocka_unit_test(test_perf_periods__a_thread_event_is_redrawn_every_batch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
