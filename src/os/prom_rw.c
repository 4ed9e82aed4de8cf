/* prom_rw.c — the remote-write request (prom_rw.h). The text is read back with the grammar prom.c writes (a
 * sample line is NAME{LABEL="VALUE",...} NUMBER, values escaped with \\ \" \n), so the series are exactly those a
 * gateway would get; then each becomes a TimeSeries of the WriteRequest:
 *   WriteRequest { repeated TimeSeries timeseries = 1; }
 *   TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2; }
 *   Label        { string name = 1; string value = 2; }
 *   Sample       { double value = 1; int64 timestamp = 2; }  (milliseconds) */
#include "os/prom_rw.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "os/http.h"

#define MAX_SERIES_LABELS 96

struct rw_label {
	const char *name;
	size_t name_len;
	size_t value_at, value_len; /* in the scratch buffer */
};

static void varint(struct sbuf *out, uint64_t v)
{
	while (v >= 0x80) {
		sbuf_addch(out, (char)(v | 0x80));
		v >>= 7;
	}
	sbuf_addch(out, (char)v);
}

static void len_field(struct sbuf *out, unsigned field, const void *data, size_t len)
{
	varint(out, (uint64_t)field << 3 | 2);
	varint(out, len);
	sbuf_add(out, data, len);
}

static int by_name(const void *a, const void *b)
{
	const struct rw_label *x = a, *y = b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = memcmp(x->name, y->name, n);
	return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

/* One sample line into a TimeSeries appended to out; false when the line is not of prom.c's grammar. */
static bool series(const char *line, size_t len, const struct prom_label *add, size_t nadd, int64_t t_ms,
		   struct sbuf *scratch, struct sbuf *out)
{
	struct rw_label l[MAX_SERIES_LABELS];
	size_t n = 0;
	const char *p = line, *end = line + len;
	const char *name_end = p;
	while (name_end < end && *name_end != '{' && *name_end != ' ')
		name_end++;
	if (name_end == p || name_end == end)
		return false;
	sbuf_reset(scratch);
	l[n++] = (struct rw_label){ "__name__", 8, 0, (size_t)(name_end - p) };
	sbuf_add(scratch, p, (size_t)(name_end - p));
	p = name_end;
	if (*p == '{') {
		p++;
		while (p < end && *p != '}') {
			const char *eq = memchr(p, '=', (size_t)(end - p));
			if (!eq || eq + 1 >= end || eq[1] != '"' || n == MAX_SERIES_LABELS - nadd)
				return false;
			struct rw_label *x = &l[n++];
			*x = (struct rw_label){ p, (size_t)(eq - p), scratch->len, 0 };
			for (p = eq + 2; p < end && *p != '"'; p++) {
				if (*p == '\\' && p + 1 < end) {
					p++;
					sbuf_addch(scratch, *p == 'n' ? '\n' : *p);
				} else {
					sbuf_addch(scratch, *p);
				}
			}
			if (p >= end)
				return false;
			x->value_len = scratch->len - x->value_at;
			p++;
			if (p < end && *p == ',')
				p++;
		}
		if (p >= end)
			return false;
		p++;
	}
	if (p >= end || *p != ' ')
		return false;
	char num[64];
	size_t nl = (size_t)(end - p - 1);
	if (nl == 0 || nl >= sizeof num)
		return false;
	memcpy(num, p + 1, nl);
	num[nl] = '\0';
	char *stop;
	double v = strtod(num, &stop);
	if (*stop)
		return false;
	for (size_t i = 0; i < nadd; i++) {
		l[n++] = (struct rw_label){ add[i].name, strlen(add[i].name), scratch->len, strlen(add[i].value) };
		sbuf_addstr(scratch, add[i].value);
	}
	if (scratch->oom)
		return false;
	qsort(l, n, sizeof *l, by_name);
	struct sbuf ts = SBUF_INIT, one = SBUF_INIT;
	for (size_t i = 0; i < n; i++) {
		if (i && by_name(&l[i - 1], &l[i]) == 0)
			continue; /* a label twice (an added one the text has too) is written once */
		sbuf_reset(&one);
		len_field(&one, 1, l[i].name, l[i].name_len);
		len_field(&one, 2, scratch->buf + l[i].value_at, l[i].value_len);
		len_field(&ts, 1, one.buf, one.len);
	}
	sbuf_reset(&one);
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	sbuf_addch(&one, 1 << 3 | 1); /* value: fixed64, little-endian */
	for (int b = 0; b < 8; b++)
		sbuf_addch(&one, (char)(bits >> (8 * b)));
	varint(&one, 2 << 3 | 0);
	varint(&one, (uint64_t)t_ms);
	len_field(&ts, 2, one.buf, one.len);
	len_field(out, 1, ts.buf, ts.len);
	bool ok = !ts.oom && !one.oom;
	sbuf_release(&ts);
	sbuf_release(&one);
	return ok;
}

enum plumb_err prom_rw_encode(const struct sbuf *text, const struct prom_label *add, size_t nadd, int64_t t_ms,
			      struct sbuf *out, struct perr *e)
{
	if (nadd > 16)
		return perr_set(e, PLUMB_EINVAL, "too many labels to add");
	struct sbuf scratch = SBUF_INIT;
	enum plumb_err rc = PLUMB_OK;
	size_t lineno = 0;
	for (size_t i = 0; i < text->len && rc == PLUMB_OK;) {
		const char *nl = memchr(text->buf + i, '\n', text->len - i);
		size_t len = nl ? (size_t)(nl - text->buf) - i : text->len - i;
		lineno++;
		if (len && text->buf[i] != '#' && !series(text->buf + i, len, add, nadd, t_ms, &scratch, out))
			rc = scratch.oom || out->oom ? perr_set(e, PLUMB_ENOMEM, "out of memory")
						     : perr_set(e, PLUMB_EFORMAT, "line %zu is not a sample line", lineno);
		i += len + 1;
	}
	sbuf_release(&scratch);
	return rc != PLUMB_OK ? rc : sbuf_done(out, e);
}

/* libsnappy's C API (snappy-c.h, stable since 1.0): status 0 is OK. */
static struct {
	int state;
	int (*compress)(const char *in, size_t n, char *out, size_t *out_len);
	size_t (*max_len)(size_t n);
} snappy;

static bool load_snappy(void)
{
	if (snappy.state)
		return snappy.state > 0;
	snappy.state = -1;
	void *h = dlopen("libsnappy.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return false;
	*(void **)&snappy.compress = dlsym(h, "snappy_compress");
	*(void **)&snappy.max_len = dlsym(h, "snappy_max_compressed_length");
	if (snappy.compress && snappy.max_len)
		snappy.state = 1;
	return snappy.state > 0;
}

#define NO_SNAPPY "remote-write needs libsnappy (libsnappy.so.1; Debian: apt-get install libsnappy1v5), which cannot be loaded"

enum plumb_err prom_rw_ready(struct perr *e)
{
	return load_snappy() ? PLUMB_OK : perr_set(e, PLUMB_EUNSUPPORTED, NO_SNAPPY);
}

enum plumb_err prom_rw_push(const char *url, const struct sbuf *text, const struct prom_label *add, size_t nadd,
			    struct perr *e)
{
	if (!load_snappy())
		return perr_set(e, PLUMB_EUNSUPPORTED, NO_SNAPPY);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	struct sbuf raw = SBUF_INIT;
	enum plumb_err rc = prom_rw_encode(text, add, nadd, (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000, &raw, e);
	char *packed = NULL;
	size_t packed_len = 0;
	if (rc == PLUMB_OK) {
		packed_len = snappy.max_len(raw.len);
		packed = malloc(packed_len ? packed_len : 1);
		if (!packed)
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		else if (snappy.compress(raw.buf, raw.len, packed, &packed_len) != 0)
			rc = perr_set(e, PLUMB_ENOMEM, "snappy could not compress the request");
	}
	if (rc == PLUMB_OK) {
		static const char *const headers[] = { "Content-Encoding: snappy", "X-Prometheus-Remote-Write-Version: 0.1.0",
						       NULL };
		struct http_request rq = { "POST", url, "application/x-protobuf", packed, packed_len, headers };
		rc = http_send(&rq, NULL, e);
	}
	free(packed);
	sbuf_release(&raw);
	return rc;
}
