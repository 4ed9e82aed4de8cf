/* perf_data.c — reads perf.data (tools/perf/Documentation/perf.data-file-format.txt) from a bounded stream: the
 * file header, the attribute and sample-id sections before the data, the feature sections after it (read first
 * when the input can be read at an offset: a regular file or a buffer), or a pipe's header records; then the
 * record stream, put in time order round by round (FINISHED_ROUND) as perf report does, and handed to the
 * session (perf_data_session.c). Memory is the records of about two rounds, never the file; a file cut short is
 * read to its last whole record with a warning. */
#include "format/perf_data.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/hashmap.h"

#define PERF_MAGIC2 0x32454c4946524550ULL    /* "PERFILE2" little-endian */
#define PERF_MAGIC2_SW 0x50455246494c4532ULL /* the same written big-endian */
#define FILE_HEADER_SIZE 104
#define PIPE_HEADER_SIZE 16
#define MAX_PREFIX ((size_t)64 << 20)  /* header, sample ids and attributes before the data */
#define MAX_FEATURE ((size_t)64 << 20) /* one feature section */
#define MAX_ROUND ((size_t)512 << 20)  /* records kept for ordering before they are handed on regardless */
#define MAX_CMDLINE 4096

/* Record types of perf's own (tools/perf/util/event.h), beyond the kernel's. */
enum {
	PD_HEADER_ATTR = 64,
	PD_HEADER_EVENT_TYPE = 65,
	PD_HEADER_TRACING_DATA = 66,
	PD_HEADER_BUILD_ID = 67,
	PD_FINISHED_ROUND = 68,
	PD_AUXTRACE = 71,
	PD_EVENT_UPDATE = 78,
	PD_HEADER_FEATURE = 80,
	PD_COMPRESSED = 81,
	PD_COMPRESSED2 = 83,
};
/* Feature bits (tools/perf/util/header.h). */
enum { FEAT_BUILD_ID = 2, FEAT_HOSTNAME = 3, FEAT_OSRELEASE = 4, FEAT_CMDLINE = 11, FEAT_EVENT_DESC = 12 };

struct pd_entry {
	uint64_t time, seq;
	size_t off, len;
};

struct pd_reader {
	struct fmt_stream *st;
	const struct fmt_read_opts *opts;
	struct pd_session *session;
	struct pd_attr attrs[PD_MAX_ATTRS];
	size_t nattrs;
	struct hmap id_attr;   /* sample id -> index in attrs */
	int chosen;            /* index of the event read, -1 until known */
	bool timed;            /* the events sample TIME: records are ordered */
	/* the records of the rounds not yet handed on */
	char *arena;
	size_t arena_len, arena_cap;
	struct pd_entry *ents;
	size_t nents, ents_cap;
	uint64_t seq, last_time, max_time, flush_limit;
	bool have_limit, warned_round, warned_compressed;
	char cmdline[MAX_CMDLINE];
	char hostname[256], osrelease[256];
	uint64_t records;
	/* the end of an input that cannot be read at an offset (a pipe, gzip): the feature sections, read whole */
	const char *tail;
	uint64_t tail_off;
	size_t tail_len;
};

/* The next n bytes of the stream, consumed: 1 with all of them, 0 when the data ends first (*got says how many
 * there were), -1 on error. */
static int take(struct fmt_stream *st, size_t n, const char **data, size_t *got, struct perr *e)
{
	const char *d;
	size_t len;
	if (fmt_stream_head(st, n, &d, &len, e))
		return -1;
	st->pos += len;
	st->consumed += len;
	*data = d;
	if (got)
		*got = len;
	return len == n ? 1 : 0;
}

/* Skips the stream forward to byte off of the data; false when it ends first or is already past off. */
static int skip_to(struct fmt_stream *st, uint64_t off, struct perr *e)
{
	while (fmt_stream_offset(st) < off) {
		uint64_t left = off - fmt_stream_offset(st);
		size_t n = left < ((size_t)1 << 20) ? (size_t)left : ((size_t)1 << 20);
		const char *d;
		int r = take(st, n, &d, NULL, e);
		if (r <= 0)
			return r;
	}
	return fmt_stream_offset(st) == off ? 1 : 0;
}

/* Reads len bytes at offset off of the input without the stream (a regular file or a buffer); false when the
 * input cannot be read at an offset or has fewer bytes there. */
static bool read_at(const struct pd_reader *r, uint64_t off, void *buf, size_t len)
{
	const struct fmt_stream *st = r->st;
	if (r->tail)
		return off >= r->tail_off && off - r->tail_off <= r->tail_len && len <= r->tail_len - (off - r->tail_off) &&
		       (memcpy(buf, r->tail + (off - r->tail_off), len), true);
	if (st->gz)
		return false;
	if (st->mem)
		return off <= st->mem_len && len <= st->mem_len - off && (memcpy(buf, st->mem + off, len), true);
	if (st->fd < 0 || !st->regular)
		return false;
	size_t done = 0;
	while (done < len) {
		ssize_t got = pread(st->fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		done += (size_t)got;
	}
	return true;
}

static bool can_read_at(const struct fmt_stream *st)
{
	return !st->gz && (st->mem || (st->fd >= 0 && st->regular));
}

/* --- events ----------------------------------------------------------------------------------------------------- */

static void default_name(struct pd_attr *a)
{
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults", "context-switches",
					  "cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
					  "emulation-faults", "dummy", "bpf-output", "cgroup-switches" };
	static const char *const hw[] = { "cycles", "instructions", "cache-references", "cache-misses",
					  "branch-instructions", "branch-misses", "bus-cycles",
					  "stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles" };
	const struct perf_event_attr *at = &a->attr;
	if (at->type == PERF_TYPE_SOFTWARE && at->config < sizeof sw / sizeof sw[0])
		snprintf(a->name, sizeof a->name, "%s", sw[at->config]);
	else if (at->type == PERF_TYPE_HARDWARE && at->config < sizeof hw / sizeof hw[0])
		snprintf(a->name, sizeof a->name, "%s", hw[at->config]);
	else
		snprintf(a->name, sizeof a->name, "event-%u-%llx", at->type, (unsigned long long)at->config);
}

/* Keeps an event name from the file as printable ASCII (it goes into messages and outputs). */
static void set_name(struct pd_attr *a, const char *s, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len && s[i] && n + 1 < sizeof a->name; i++)
		a->name[n++] = s[i] > ' ' && s[i] < 127 ? s[i] : '_';
	a->name[n] = '\0';
	if (!n)
		default_name(a);
}

static bool is_dummy(const struct pd_attr *a)
{
	return a->attr.type == PERF_TYPE_SOFTWARE && a->attr.config == PERF_COUNT_SW_DUMMY;
}

/* Adds an event: attr_bytes of perf_event_attr (its own size field may say fewer), then its sample ids. */
static enum plumb_err add_attr(struct pd_reader *r, const char *attr, size_t attr_bytes, const char *ids,
			       size_t nids, struct perr *e)
{
	if (r->nattrs >= PD_MAX_ATTRS)
		return perr_set(e, PLUMB_EFORMAT, "more than %d events in one recording", PD_MAX_ATTRS);
	struct pd_attr *a = &r->attrs[r->nattrs];
	memset(a, 0, sizeof *a);
	memcpy(&a->attr, attr, attr_bytes < sizeof a->attr ? attr_bytes : sizeof a->attr);
	if (nids && !(a->ids = malloc(nids * sizeof *a->ids)))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < nids; i++) {
		a->ids[i] = rd64(ids + 8 * i);
		if (!hmap_put(&r->id_attr, a->ids[i], (uint32_t)r->nattrs))
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	a->nids = nids;
	default_name(a);
	if (a->attr.sample_type & PERF_SAMPLE_TIME)
		r->timed = true;
	r->nattrs++;
	return PLUMB_OK;
}

/* The event a sample or a sample_id_all trailer belongs to: by its id when the events carry one, else the
 * first. */
static int attr_of(struct pd_reader *r, const char *rec, size_t len)
{
	if (!r->nattrs)
		return -1;
	uint64_t t = r->attrs[0].attr.sample_type, id;
	uint32_t at;
	if (r->nattrs == 1)
		return 0;
	if (t & PERF_SAMPLE_IDENTIFIER) {
		if (rec_type(rec) == PERF_RECORD_SAMPLE && len >= 16)
			id = rd64(rec + 8);
		else if (rec_type(rec) != PERF_RECORD_SAMPLE && r->attrs[0].attr.sample_id_all && len >= 16)
			id = rd64(rec + len - 8);
		else
			return 0;
	} else if ((t & PERF_SAMPLE_ID) && rec_type(rec) == PERF_RECORD_SAMPLE) {
		size_t off = 8 + 8 * (!!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
				      !!(t & PERF_SAMPLE_ADDR));
		if (off + 8 > len)
			return -1;
		id = rd64(rec + off);
	} else {
		return 0;
	}
	return hmap_get(&r->id_attr, id, &at) ? (int)at : -1;
}

/* Picks the event read: opts->sample_index by number or name, else the first that is not perf's dummy. */
static enum plumb_err choose_event(struct pd_reader *r, struct perr *e)
{
	const char *want = r->opts->sample_index;
	r->chosen = -1;
	for (size_t i = 0; i < r->nattrs; i++) {
		const struct pd_attr *a = &r->attrs[i];
		if (want) {
			char num[24];
			snprintf(num, sizeof num, "%zu", i);
			size_t wl = strlen(want);
			/* the name as perf shows it, or without its modifiers ("cpu-clock" for "cpu-clock:ppp") */
			if (strcmp(want, num) == 0 || strcmp(want, a->name) == 0 ||
			    (strncmp(want, a->name, wl) == 0 && a->name[wl] == ':')) {
				r->chosen = (int)i;
				break;
			}
		} else if (!is_dummy(a)) {
			r->chosen = (int)i;
			break;
		}
	}
	if (r->chosen < 0 && want) {
		char list[512] = "";
		size_t n = 0;
		for (size_t i = 0; i < r->nattrs && n < sizeof list - 80; i++)
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%zu %s", i ? ", " : "", i, r->attrs[i].name);
		return perr_set(e, PLUMB_EINVAL, "the recording has no event '%.60s' (it has %s)", want, list);
	}
	if (r->chosen < 0)
		r->chosen = 0;
	return PLUMB_OK;
}

/* --- feature sections ------------------------------------------------------------------------------------------- */

/* A perf_header_string at buf[*p..len): u32 length (padding included), then the text; NULL when it does not fit. */
static const char *header_string(const char *buf, size_t len, size_t *p, size_t *slen)
{
	if (len - *p < 4)
		return NULL;
	uint32_t n = rd32(buf + *p);
	if (n > len - *p - 4)
		return NULL;
	const char *s = buf + *p + 4;
	*slen = strnlen(s, n);
	*p += 4 + n;
	return s;
}

static void copy_printable(char *dst, size_t n, const char *s, size_t len)
{
	size_t k = 0;
	for (size_t i = 0; i < len && k + 1 < n; i++)
		dst[k++] = (unsigned char)s[i] >= ' ' && s[i] != 127 ? s[i] : '?';
	dst[k] = '\0';
}

/* BUILD_ID: build_id_event records { header, pid, build_id[24], filename[] }. */
static void feature_build_ids(struct pd_reader *r, const char *buf, size_t len)
{
	size_t p = 0;
	while (len - p >= 8 + 4 + 24) {
		uint16_t misc = rd32(buf + p + 4) & 0xffff, size = (uint16_t)(rd32(buf + p + 4) >> 16);
		if (size < 8 + 4 + 24 || size > len - p)
			return;
		size_t idlen = 20;
		if (misc & (1 << 15)) /* PERF_RECORD_MISC_BUILD_ID_SIZE: the size is in byte 20 */
			idlen = (uint8_t)buf[p + 12 + 20];
		if (idlen > 20)
			idlen = 20;
		char name[4096];
		size_t nlen = strnlen(buf + p + 36, size - 36);
		if (nlen >= sizeof name)
			nlen = sizeof name - 1;
		memcpy(name, buf + p + 36, nlen);
		name[nlen] = '\0';
		if (idlen && name[0])
			fmt_pd_session_build_id(r->session, name, (const uint8_t *)buf + p + 12, idlen);
		p += size;
	}
}

/* EVENT_DESC: u32 nr, u32 attr_size, then per event: attr, u32 nr_ids, a header string (its name), u64 ids[]. */
static void feature_event_desc(struct pd_reader *r, const char *buf, size_t len)
{
	if (len < 8)
		return;
	uint32_t nr = rd32(buf), asz = rd32(buf + 4);
	size_t p = 8;
	for (uint32_t i = 0; i < nr; i++) {
		if (asz < 8 || asz > len - p || len - p - asz < 4)
			return;
		const char *attr = buf + p;
		p += asz;
		uint32_t nids = rd32(buf + p);
		p += 4;
		size_t slen;
		const char *name = header_string(buf, len, &p, &slen);
		if (!name || nids > (len - p) / 8)
			return;
		/* the event whose first id is this one's, else the one at the same place */
		size_t at = i;
		uint32_t found;
		if (nids && hmap_get(&r->id_attr, rd64(buf + p), &found))
			at = found;
		if (at < r->nattrs && memcmp(&r->attrs[at].attr.type, attr, 4) == 0)
			set_name(&r->attrs[at], name, slen);
		p += 8 * (size_t)nids;
	}
}

static void feature(struct pd_reader *r, unsigned bit, const char *buf, size_t len)
{
	size_t p = 0, slen;
	const char *s;
	switch (bit) {
	case FEAT_BUILD_ID:
		feature_build_ids(r, buf, len);
		break;
	case FEAT_HOSTNAME:
		if ((s = header_string(buf, len, &p, &slen)))
			copy_printable(r->hostname, sizeof r->hostname, s, slen);
		break;
	case FEAT_OSRELEASE:
		if ((s = header_string(buf, len, &p, &slen)))
			copy_printable(r->osrelease, sizeof r->osrelease, s, slen);
		break;
	case FEAT_CMDLINE: {
		if (len < 4)
			break;
		uint32_t nr = rd32(buf);
		size_t n = 0;
		p = 4;
		for (uint32_t i = 0; i < nr && (s = header_string(buf, len, &p, &slen)); i++) {
			if (n + 2 >= sizeof r->cmdline)
				break;
			if (n)
				r->cmdline[n++] = ' ';
			copy_printable(r->cmdline + n, sizeof r->cmdline - n, s, slen);
			n += strlen(r->cmdline + n);
		}
		break;
	}
	case FEAT_EVENT_DESC:
		feature_event_desc(r, buf, len);
		break;
	default:
		break;
	}
}

/* The feature sections of a file: a table of {offset, size} for each bit set in the header's bitmap, at the end
 * of the data. Read at their offsets; what cannot be read (a file cut short) is warned about once. */
static void read_features(struct pd_reader *r, const char *bitmap, uint64_t at)
{
	unsigned bits[256], n = 0;
	for (unsigned b = 0; b < 256; b++)
		if ((unsigned char)bitmap[b / 8] & (1u << (b % 8)))
			bits[n++] = b;
	if (!n)
		return;
	char table[256 * 16];
	if (!read_at(r, at, table, (size_t)n * 16)) {
		fmt_pd_warn(r->opts, "the recording's feature sections (build IDs, event names) are missing: the "
				     "file was cut short");
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t off = rd64(table + 16 * i), size = rd64(table + 16 * i + 8);
		if (!size || size > MAX_FEATURE)
			continue;
		char *buf = malloc((size_t)size);
		if (!buf)
			return;
		if (read_at(r, off, buf, (size_t)size))
			feature(r, bits[i], buf, (size_t)size);
		free(buf);
	}
}

/* --- the record stream ------------------------------------------------------------------------------------------- */

static enum plumb_err hand_on(struct pd_reader *r, const char *rec, size_t len, struct perr *e)
{
	const struct pd_attr *attr = NULL;
	if (rec_type(rec) == PERF_RECORD_SAMPLE) {
		int at = attr_of(r, rec, len);
		if (at < 0)
			return PLUMB_OK; /* a sample of no event the file describes */
		if (at != r->chosen) {
			if (!is_dummy(&r->attrs[at]))
				fmt_pd_session_other_event(r->session);
			return PLUMB_OK;
		}
		attr = &r->attrs[at];
	}
	return fmt_pd_session_record(r->session, attr, rec, len, e);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct pd_entry *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Hands on the kept records up to time limit (all: every one), in time order; the rest stay. */
static enum plumb_err flush(struct pd_reader *r, bool all, uint64_t limit, struct perr *e)
{
	if (!r->nents)
		return PLUMB_OK;
	qsort(r->ents, r->nents, sizeof *r->ents, entry_cmp);
	size_t i = 0;
	for (; i < r->nents && (all || r->ents[i].time <= limit); i++) {
		enum plumb_err rc = hand_on(r, r->arena + r->ents[i].off, r->ents[i].len, e);
		if (rc)
			return rc;
	}
	/* keep the rest, moved to the arena's start */
	size_t keep = r->nents - i, used = 0;
	struct pd_entry *rest = r->ents + i;
	if (keep) {
		char *na = malloc(r->arena_cap);
		if (!na)
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		for (size_t k = 0; k < keep; k++) {
			memcpy(na + used, r->arena + rest[k].off, rest[k].len);
			rest[k].off = used;
			used += (rest[k].len + 7) & ~(size_t)7;
		}
		memmove(r->ents, rest, keep * sizeof *rest);
		free(r->arena);
		r->arena = na;
	}
	r->nents = keep;
	r->arena_len = used;
	return PLUMB_OK;
}

/* One record of the data, in file order: kept for ordering (or handed on at once when nothing has times). */
static enum plumb_err on_record(struct pd_reader *r, const char *rec, size_t len, struct perr *e)
{
	r->records++;
	if (rec_type(rec) == PD_FINISHED_ROUND) {
		enum plumb_err rc = r->timed && r->have_limit ? flush(r, false, r->flush_limit, e) : PLUMB_OK;
		r->flush_limit = r->max_time;
		r->have_limit = true;
		return rc;
	}
	if (rec_type(rec) >= PERF_RECORD_USER_TYPE_START && rec_type(rec) != PD_FINISHED_ROUND)
		return PLUMB_OK; /* perf's own records are the reader's (pipe headers), not the stream's */
	if (!r->timed)
		return hand_on(r, rec, len, e);
	uint64_t t;
	int at = attr_of(r, rec, len);
	if (fmt_pd_record_time(&r->attrs[at < 0 ? 0 : at].attr, rec, len, &t))
		r->last_time = t;
	else
		t = r->last_time;
	if (t > r->max_time)
		r->max_time = t;
	if (r->arena_len + len > MAX_ROUND) {
		if (!r->warned_round)
			fmt_pd_warn(r->opts, "a round of records passes %zu MiB: records are ordered in smaller batches",
				    MAX_ROUND >> 20);
		r->warned_round = true;
		enum plumb_err rc = flush(r, true, 0, e);
		if (rc)
			return rc;
	}
	size_t need = r->arena_len + ((len + 7) & ~(size_t)7);
	if (need > r->arena_cap) {
		size_t nc = grow_cap(need, r->arena_cap);
		char *na = realloc(r->arena, nc);
		if (!na)
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		r->arena = na;
		r->arena_cap = nc;
	}
	if (r->nents == r->ents_cap) {
		size_t nc = grow_cap(r->nents + 1, r->ents_cap);
		struct pd_entry *ne = realloc_array(r->ents, nc, sizeof *ne);
		if (!ne)
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		r->ents = ne;
		r->ents_cap = nc;
	}
	memcpy(r->arena + r->arena_len, rec, len);
	r->ents[r->nents++] = (struct pd_entry){ t, r->seq++, r->arena_len, len };
	r->arena_len = need;
	return PLUMB_OK;
}

/* A pipe's header records: events, features and build IDs that a file keeps in its sections. */
static enum plumb_err on_pipe_header(struct pd_reader *r, const char *rec, size_t len, struct perr *e)
{
	if (rec_type(rec) == PD_HEADER_ATTR) {
		if (len < 8 + 8)
			return perr_set(e, PLUMB_EFORMAT, "a HEADER_ATTR record of %zu bytes", len);
		uint32_t asz = rd32(rec + 12);
		if (asz < 64 || asz > len - 8)
			asz = (uint32_t)(len - 8 < sizeof(struct perf_event_attr) ? len - 8 : sizeof(struct perf_event_attr));
		return add_attr(r, rec + 8, asz, rec + 8 + asz, (len - 8 - asz) / 8, e);
	}
	if (rec_type(rec) == PD_HEADER_FEATURE && len >= 16) {
		uint64_t bit = rd64(rec + 8);
		if (bit < 256)
			feature(r, (unsigned)bit, rec + 16, len - 16);
	} else if (rec_type(rec) == PD_HEADER_BUILD_ID) {
		feature_build_ids(r, rec, len);
	}
	return PLUMB_OK;
}

/* Reads records from the stream up to byte end of the data (0: to the end of the input). */
static enum plumb_err read_records(struct pd_reader *r, uint64_t end, bool pipe, struct perr *e)
{
	struct fmt_stream *st = r->st;
	for (;;) {
		uint64_t at = fmt_stream_offset(st);
		if (end && at >= end)
			return PLUMB_OK;
		const char *d;
		size_t have;
		if (fmt_stream_head(st, 8, &d, &have, e))
			return e->code;
		if (have == 0)
			break;
		uint16_t size = (uint16_t)(rd32(d + 4) >> 16);
		uint32_t type = rd32(d);
		if (have < 8 || size < 8 || (end && at + size > end)) {
			if (have < 8 || size >= 8)
				goto cut;
			return perr_set(e, PLUMB_EFORMAT, "a record of %u bytes at byte %llu: not a perf.data record "
							  "stream", size, (unsigned long long)at);
		}
		if (take(st, size, &d, &have, e) < 0)
			return e->code;
		if (have < size)
			goto cut;
		/* records followed by a payload of their own size */
		uint64_t payload = 0;
		if (type == PD_AUXTRACE && size >= 16)
			payload = rd64(d + 8);
		else if (type == PD_HEADER_TRACING_DATA && size >= 12)
			payload = rd32(d + 8);
		if ((type == PD_COMPRESSED || type == PD_COMPRESSED2) && !r->warned_compressed) {
			r->warned_compressed = true;
			fmt_pd_warn(r->opts, "the recording has compressed records (perf record -z), which plumb does "
					     "not read: decompress it with `perf inject -i IN -o OUT`");
		}
		enum plumb_err rc = pipe && type >= PERF_RECORD_USER_TYPE_START && type != PD_FINISHED_ROUND
					    ? on_pipe_header(r, d, size, e)
					    : on_record(r, d, size, e);
		if (rc)
			return rc;
		if (payload) {
			int s = skip_to(st, fmt_stream_offset(st) + payload, e);
			if (s < 0)
				return e->code;
			if (s == 0)
				goto cut;
		}
		if (pipe && r->chosen < 0 && r->nattrs && type < PERF_RECORD_USER_TYPE_START &&
		    (rc = choose_event(r, e)))
			return rc;
	}
	if (end)
		goto cut;
	return PLUMB_OK;
cut:
	fmt_pd_warn(r->opts, "the recording ends inside a record at byte %llu (it was cut short): read the %llu "
			     "whole records before it", (unsigned long long)fmt_stream_offset(st),
		    (unsigned long long)r->records);
	return PLUMB_OK;
}

static enum plumb_err read_file_header(struct pd_reader *r, const char *head, uint64_t *data_off, uint64_t *data_end,
				       uint64_t *feat_at, struct perr *e)
{
	uint64_t attr_size = rd64(head + 16), attrs_off = rd64(head + 24), attrs_size = rd64(head + 32);
	uint64_t doff = rd64(head + 40), dsize = rd64(head + 48);
	if (doff < FILE_HEADER_SIZE || doff > MAX_PREFIX)
		return perr_set(e, PLUMB_EFORMAT, "perf.data header: the data starts at byte %llu",
				(unsigned long long)doff);
	if (attr_size < 16 + 64 || attr_size > 4096 || attrs_size / attr_size > PD_MAX_ATTRS ||
	    attrs_off > doff || attrs_size > doff - attrs_off)
		return perr_set(e, PLUMB_EFORMAT, "perf.data header: no attribute section before the data");
	const char *prefix;
	size_t got;
	int t = take(r->st, (size_t)doff, &prefix, &got, e);
	if (t < 0)
		return e->code;
	if (t == 0)
		return perr_set(e, PLUMB_EFORMAT, "the recording was cut short before its data (%zu bytes)", got);
	/* copy: the window moves on while the data is read */
	char *copy = malloc((size_t)doff);
	if (!copy)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	memcpy(copy, prefix, (size_t)doff);
	enum plumb_err rc = PLUMB_OK;
	for (uint64_t i = 0; i < attrs_size / attr_size && !rc; i++) {
		const char *fa = copy + attrs_off + i * attr_size;
		uint64_t ids_off = rd64(fa + attr_size - 16), ids_size = rd64(fa + attr_size - 8);
		const char *ids = NULL;
		size_t nids = 0;
		if (ids_size && ids_off <= doff && ids_size <= doff - ids_off) {
			ids = copy + ids_off;
			nids = (size_t)(ids_size / 8);
		}
		rc = add_attr(r, fa, (size_t)attr_size - 16, ids, nids, e);
	}
	free(copy);
	if (!rc && !r->nattrs)
		rc = perr_set(e, PLUMB_EFORMAT, "the recording describes no event");
	*data_off = doff;
	*data_end = dsize ? doff + dsize : 0;
	*feat_at = dsize ? doff + dsize : 0;
	return rc;
}

static enum plumb_err read_perf_data(struct pd_reader *r, struct profile *p, struct perr *e)
{
	const char *head;
	size_t len;
	if (fmt_stream_head(r->st, FILE_HEADER_SIZE, &head, &len, e))
		return e->code;
	if (len < PIPE_HEADER_SIZE)
		return perr_set(e, PLUMB_EFORMAT, "the recording was cut short inside its header (%zu bytes)", len);
	if (rd64(head) == PERF_MAGIC2_SW)
		return perr_set(e, PLUMB_EUNSUPPORTED, "a big-endian perf.data file: read it on its own machine "
						       "with `perf script`");
	if (rd64(head) != PERF_MAGIC2)
		return perr_set(e, PLUMB_EFORMAT, "not a perf.data file (no PERFILE2 magic)");
	uint64_t hsize = rd64(head + 8);
	if (hsize == PIPE_HEADER_SIZE) {
		const char *d;
		if (take(r->st, PIPE_HEADER_SIZE, &d, NULL, e) < 0)
			return e->code;
		return read_records(r, 0, true, e);
	}
	if (hsize != FILE_HEADER_SIZE)
		return perr_set(e, PLUMB_EFORMAT, "a perf.data header of %llu bytes (perf writes 104, or 16 in pipe mode)",
				(unsigned long long)hsize);
	if (len < FILE_HEADER_SIZE)
		return perr_set(e, PLUMB_EFORMAT, "the recording was cut short inside its header (%zu bytes of 104)", len);
	char bitmap[32];
	memcpy(bitmap, head + 72, 32);
	uint64_t doff = 0, dend = 0, feat_at = 0;
	enum plumb_err rc = read_file_header(r, head, &doff, &dend, &feat_at, e);
	if (rc)
		return rc;
	bool random = can_read_at(r->st);
	if (random && feat_at)
		read_features(r, bitmap, feat_at);
	if (!dend)
		fmt_pd_warn(r->opts, "the recording's header gives no data size (perf record did not finish): read "
				     "the records to the end of the file");
	if ((rc = choose_event(r, e)) || (rc = read_records(r, dend, false, e)))
		return rc;
	if (!random && feat_at) { /* the features follow the data: what they name is known only now */
		char *owned = NULL;
		int s = skip_to(r->st, feat_at, e);
		if (s < 0)
			return e->code;
		if (s > 0 && !(rc = fmt_stream_rest(r->st, MAX_FEATURE * 4, &r->tail, &r->tail_len, &owned, e))) {
			r->tail_off = feat_at;
			read_features(r, bitmap, feat_at);
		}
		r->tail = NULL;
		free(owned);
		if (rc == PLUMB_EFORMAT) { /* feature sections past the cap: the samples are still good */
			fmt_pd_warn(r->opts, "the recording's feature sections are too big to read: %s", e->msg);
			*e = (struct perr)PERR_INIT;
			rc = PLUMB_OK;
		}
	}
	(void)p;
	return rc;
}

/* The events that are not perf's dummy (which carries side-band records, never samples). */
static size_t real_events(const struct pd_reader *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nattrs; i++)
		n += !is_dummy(&r->attrs[i]);
	return n;
}

enum plumb_err fmt_perf_data_read_stream(struct fmt_stream *st, const struct fmt_read_opts *opts, struct profile *p,
					 struct perr *e)
{
	static const struct fmt_read_opts no_opts;
	struct pd_reader *r = calloc(1, sizeof *r);
	if (!r)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	r->st = st;
	r->opts = opts ? opts : &no_opts;
	r->chosen = -1;
	st->text = false;
	enum plumb_err rc;
	if (!(r->session = fmt_pd_session_new(p, r->opts)))
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	else if (!(rc = read_perf_data(r, p, e)) && !(rc = flush(r, true, 0, e)))
		rc = fmt_pd_session_finish(r->session, r->chosen >= 0 ? &r->attrs[r->chosen] : NULL, real_events(r),
					   r->cmdline, e);
	fmt_pd_session_free(r->session);
	for (size_t i = 0; i < r->nattrs; i++)
		free(r->attrs[i].ids);
	hmap_release(&r->id_attr);
	free(r->arena);
	free(r->ents);
	free(r);
	return rc;
}

bool fmt_perf_data_sniff(const char *buf, size_t len)
{
	return len >= 8 && (rd64(buf) == PERF_MAGIC2 || rd64(buf) == PERF_MAGIC2_SW);
}
