/* test_perf_data.c — the perf.data reader on recordings built here byte by byte, for what real files of this
 * machine's perf never hold: samples with every field before the stack that the reader must step over (addr, id,
 * stream id, cpu, group read values, raw data, a branch stack), records out of time order within a round, two
 * events told apart by their sample ids, a record cut short, a big-endian file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "profile/profile.h"

struct buf {
	char d[1 << 16];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof b->d);
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void put_header(struct buf *b, uint32_t type, uint16_t misc, uint16_t size)
{
	struct perf_event_header h = { type, misc, size };
	put(b, &h, sizeof h);
}

#define TYPE_ALL                                                                                                  \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |       \
	 PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ |        \
	 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER |            \
	 PERF_SAMPLE_STACK_USER)

/* A sample of every field up to the user stack (no registers, no stack: a misread field before them reads
 * registers that are not there): ips (innermost first) as a user callchain. */
static void put_sample(struct buf *b, uint64_t id, uint32_t tid, uint64_t time, uint64_t period, const uint64_t *ips,
		       size_t nips)
{
	uint16_t size = (uint16_t)(8 + 8 * 9 + 8 * (1 + 2 * 2) + 8 * (2 + nips) + 16 + 8 * (1 + 3) + 16);
	put_header(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, size);
	put64(b, id);                                       /* identifier */
	put64(b, ips[0]);                                   /* ip */
	put64(b, ((uint64_t)tid << 32) | tid);              /* pid, tid */
	put64(b, time);
	put64(b, 0xdead);                                   /* addr */
	put64(b, id);                                       /* id */
	put64(b, 7);                                        /* stream id */
	put64(b, 1);                                        /* cpu, res */
	put64(b, period);
	put64(b, 2);                                        /* read: group of 2, { value, id } each */
	put64(b, 11), put64(b, id), put64(b, 12), put64(b, id + 1);
	put64(b, 1 + nips);                                 /* callchain */
	put64(b, (uint64_t)PERF_CONTEXT_USER);
	for (size_t i = 0; i < nips; i++)
		put64(b, ips[i]);
	uint32_t raw = 12;                                  /* raw: u32 size, 12 bytes: 16 in all */
	put(b, &raw, 4);
	put(b, "raw-bytes-xx", 12);
	put64(b, 1);                                        /* branch stack: one { from, to, flags } */
	put64(b, 1), put64(b, 2), put64(b, 3);
	put64(b, PERF_SAMPLE_REGS_ABI_NONE);                /* user registers: none */
	put64(b, 0);                                        /* user stack: none */
}

static void put_comm(struct buf *b, uint32_t tid, const char *name, uint64_t time, uint64_t id)
{
	/* header, pid, tid, name padded to 8, then the sample_id_all trailer: tid, time, id, stream id, cpu, id */
	put_header(b, PERF_RECORD_COMM, 0, 8 + 8 + 16 + 8 * 6);
	uint32_t pt[2] = { tid, tid };
	put(b, pt, 8);
	char n[16] = { 0 };
	snprintf(n, sizeof n, "%s", name);
	put(b, n, 16);
	put64(b, ((uint64_t)tid << 32) | tid), put64(b, time), put64(b, id), put64(b, 7), put64(b, 0), put64(b, id);
}

/* A file-mode recording of nattrs events (cpu-clock, then context-switches; sample ids 100 and 200) whose data
 * is data[0..len). */
static size_t file_of(char *out, size_t cap, int nattrs, const char *data, size_t len)
{
	struct buf *b = calloc(1, sizeof *b);
	size_t attr_size = sizeof(struct perf_event_attr) + 16;
	uint64_t ids_off = 104, attrs_off = ids_off + 8 * (uint64_t)nattrs;
	uint64_t data_off = attrs_off + attr_size * (uint64_t)nattrs;
	put(b, "PERFILE2", 8);
	put64(b, 104);
	put64(b, attr_size);
	put64(b, attrs_off), put64(b, attr_size * (uint64_t)nattrs);
	put64(b, data_off), put64(b, len);
	put64(b, 0), put64(b, 0); /* event types */
	char bitmap[32] = { 0 };
	put(b, bitmap, 32);
	for (int i = 0; i < nattrs; i++)
		put64(b, 100 * (uint64_t)(i + 1));
	for (int i = 0; i < nattrs; i++) {
		struct perf_event_attr a = { 0 };
		a.type = PERF_TYPE_SOFTWARE;
		a.size = sizeof a;
		a.config = i ? PERF_COUNT_SW_CONTEXT_SWITCHES : PERF_COUNT_SW_CPU_CLOCK;
		a.sample_type = TYPE_ALL;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
		a.sample_id_all = 1;
		a.sample_regs_user = 0xff0fff;
		a.sample_stack_user = 8192;
		put(b, &a, sizeof a);
		put64(b, ids_off + 8 * (uint64_t)i), put64(b, 8);
	}
	put(b, data, len);
	assert_true(b->n <= cap);
	memcpy(out, b->d, b->n);
	size_t n = b->n;
	free(b);
	return n;
}

static int warnings;
static char last_warning[512];
static void on_warn(void *ctx, const char *msg)
{
	(void)ctx;
	warnings++;
	snprintf(last_warning, sizeof last_warning, "%s", msg);
}

static struct profile *read_rec(const char *rec, size_t n, const char *index, enum plumb_err want)
{
	struct fmt_read_opts o = { 0 };
	o.sample_index = index;
	o.warn = on_warn;
	warnings = 0;
	last_warning[0] = '\0';
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	char *copy = malloc(n); /* an exact-size copy: nothing may be read past it */
	memcpy(copy, rec, n);
	assert_int_equal(fmt_read_buf(copy, n, FMT_UNKNOWN, &o, &p, &e), want);
	free(copy);
	return p;
}

/* The data of the tests: the thread's name, then samples of both events, the second round out of time order. */
static size_t two_event_data(struct buf *d)
{
	static const uint64_t a[] = { 0x1000, 0x2000 }, c[] = { 0x3000 };
	d->n = 0;
	put_comm(d, 42, "worker", 5, 100);
	put_sample(d, 100, 42, 30, 1000, a, 2);
	put_sample(d, 100, 42, 10, 2000, c, 1); /* earlier than the one before it, in the same round */
	put_sample(d, 200, 42, 20, 1, c, 1);
	put_header(d, 68, 0, 8); /* FINISHED_ROUND */
	put_sample(d, 100, 42, 40, 4000, a, 2);
	return d->n;
}

static void test_perf_data__fields_stepped_over_and_events_apart(void **state)
{
	(void)state;
	struct buf *d = calloc(1, sizeof *d);
	static char file[1 << 17];
	size_t n = file_of(file, sizeof file, 2, d->d, two_event_data(d));
	struct profile *p = read_rec(file, n, NULL, PLUMB_OK);
	assert_int_equal(profile_total_samples(p), 3);
	assert_int_equal(profile_total_weight(p), 7000); /* cpu-clock's periods, never context-switches' */
	assert_string_equal(profile_str(p, profile_meta_const(p)->weight_unit), "nanoseconds");
	assert_int_equal(profile_nthreads(p), 1);
	assert_string_equal(profile_str(p, profile_thread_get(p, 0)->name), "worker");
	assert_true(strstr(last_warning, "2 events") != NULL);
	profile_free(p);
	p = read_rec(file, n, "context-switches", PLUMB_OK);
	assert_int_equal(profile_total_samples(p), 1);
	assert_string_equal(profile_str(p, profile_meta_const(p)->weight_unit), "context-switches");
	profile_free(p);
	assert_null(read_rec(file, n, "cycles", PLUMB_EINVAL));
	free(d);
}

static void test_perf_data__time_order_within_a_round(void **state)
{
	(void)state;
	struct buf *d = calloc(1, sizeof *d);
	static char file[1 << 17];
	size_t n = file_of(file, sizeof file, 2, d->d, two_event_data(d));
	struct fmt_read_opts o = { 0 };
	o.keep_timeline = true;
	struct profile *p = NULL;
	struct perr e = PERR_INIT;
	assert_int_equal(fmt_read_buf(file, n, FMT_UNKNOWN, &o, &p, &e), PLUMB_OK);
	size_t ns;
	const struct profile_sample *tl = profile_timeline(p, &ns);
	assert_int_equal(ns, 3);
	assert_true(tl[0].time_ns == 10 && tl[1].time_ns == 30 && tl[2].time_ns == 40);
	profile_free(p);
	free(d);
}

static void test_perf_data__cut_short_reads_whole_records(void **state)
{
	(void)state;
	struct buf *d = calloc(1, sizeof *d);
	static char file[1 << 17];
	size_t n = file_of(file, sizeof file, 2, d->d, two_event_data(d));
	struct profile *p = read_rec(file, n - 20, NULL, PLUMB_OK); /* into the last sample */
	assert_int_equal(profile_total_samples(p), 2);
	assert_true(warnings >= 1);
	profile_free(p);
	p = read_rec(file, 60, NULL, PLUMB_EFORMAT); /* into the header */
	assert_null(p);
	memcpy(file, "2ELIFREP", 8);
	assert_null(read_rec(file, n, NULL, PLUMB_EUNSUPPORTED));
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_data__fields_stepped_over_and_events_apart),
		cmocka_unit_test(test_perf_data__time_order_within_a_round),
		cmocka_unit_test(test_perf_data__cut_short_reads_whole_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
