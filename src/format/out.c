/* out.c — the writers' block buffer with optional streaming gzip (format/out.h). Bytes collect in a 64 KiB
 * block; a full block goes to the FILE, through deflate when compressing. */
#include "format/out.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/redact.h"

#define OUT_BLOCK (1 << 16)

struct fmt_out {
	FILE *fp;
	bool gz, zinit, failed, oom;
	z_stream zs;
	size_t used;
	uint64_t written;          /* bytes handed to the writer before buf */
	struct progress *progress;
	struct sbuf tmp;
	char buf[OUT_BLOCK];
	unsigned char zbuf[OUT_BLOCK];
};

struct fmt_out *fmt_out_new(FILE *fp, bool gzip)
{
	struct fmt_out *o = malloc(sizeof *o);
	if (!o)
		return NULL;
	memset(o, 0, offsetof(struct fmt_out, buf));
	o->fp = fp;
	o->gz = gzip;
	sbuf_init(&o->tmp);
	if (gzip) {
		if (deflateInit2(&o->zs, FMT_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(o);
			return NULL;
		}
		o->zinit = true;
	}
	return o;
}

static void deflate_out(struct fmt_out *o, const void *data, size_t n, int flush)
{
	o->zs.next_in = (Bytef *)data;
	o->zs.avail_in = (uInt)n;
	int rc;
	do {
		o->zs.next_out = o->zbuf;
		o->zs.avail_out = sizeof o->zbuf;
		rc = deflate(&o->zs, flush);
		if (rc == Z_STREAM_ERROR) {
			o->failed = true;
			return;
		}
		size_t have = sizeof o->zbuf - o->zs.avail_out;
		if (have && fwrite(o->zbuf, 1, have, o->fp) != have)
			o->failed = true;
	} while (o->zs.avail_out == 0 || (flush == Z_FINISH && rc == Z_OK));
}

void fmt_out_progress(struct fmt_out *o, struct progress *p)
{
	o->progress = p;
}

static void flush_block(struct fmt_out *o)
{
	if (!o->used)
		return;
	o->written += o->used;
	progress_bytes(o->progress, o->written, 0);
	if (o->gz)
		deflate_out(o, o->buf, o->used, Z_NO_FLUSH);
	else if (fwrite(o->buf, 1, o->used, o->fp) != o->used)
		o->failed = true;
	o->used = 0;
}

void fmt_out_bytes(struct fmt_out *o, const void *s, size_t n)
{
	const char *p = s;
	while (n) {
		if (o->used == OUT_BLOCK)
			flush_block(o);
		size_t k = OUT_BLOCK - o->used < n ? OUT_BLOCK - o->used : n;
		memcpy(o->buf + o->used, p, k);
		o->used += k;
		p += k;
		n -= k;
	}
}

void fmt_out_str(struct fmt_out *o, const char *s)
{
	fmt_out_bytes(o, s, strlen(s));
}

void fmt_out_ch(struct fmt_out *o, char c)
{
	if (o->used == OUT_BLOCK)
		flush_block(o);
	o->buf[o->used++] = c;
}

void fmt_out_u64(struct fmt_out *o, uint64_t v)
{
	char num[24];
	size_t i = sizeof num;
	do
		num[--i] = (char)('0' + v % 10);
	while ((v /= 10));
	fmt_out_bytes(o, num + i, sizeof num - i);
}

void fmt_out_fixed(struct fmt_out *o, uint64_t whole, uint64_t frac, unsigned decimals)
{
	fmt_out_u64(o, whole);
	char d[24];
	unsigned n = decimals < sizeof d ? decimals : (unsigned)sizeof d;
	for (unsigned i = n; i-- > 0;) {
		d[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	while (n && d[n - 1] == '0')
		n--;
	if (n) {
		fmt_out_ch(o, '.');
		fmt_out_bytes(o, d, n);
	}
}

void fmt_out_json(struct fmt_out *o, const char *s, size_t n, bool redact)
{
	sbuf_reset(&o->tmp);
	if (redact)
		redact_add_json(&o->tmp, s, n);
	else
		sbuf_add_json_text(&o->tmp, s, n);
	if (o->tmp.oom) {
		o->oom = true;
		fmt_out_bytes(o, "\"\"", 2); /* the document stays valid; the writer reports the failure */
		return;
	}
	fmt_out_bytes(o, o->tmp.buf, o->tmp.len);
}

void fmt_out_fail(struct fmt_out *o)
{
	o->oom = true;
}

enum plumb_err fmt_out_close(struct fmt_out *o, struct perr *e)
{
	flush_block(o);
	if (o->gz) {
		deflate_out(o, NULL, 0, Z_FINISH);
		deflateEnd(&o->zs);
	}
	bool failed = o->failed || ferror(o->fp), oom = o->oom;
	sbuf_release(&o->tmp);
	free(o);
	if (oom)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (failed)
		return perr_set(e, PLUMB_EOUTPUT, "write failed");
	return PLUMB_OK;
}
