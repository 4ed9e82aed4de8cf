/* gzip_out.c — gzip-compressed output for writers whose formats are gzipped (pprof, .json.gz). */
#include "format/format.h"
#include "format/out.h"

#include <string.h>
#include <zlib.h>

enum plumb_err fmt_gzip_write(const void *data, size_t len, FILE *out, struct perr *e)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (deflateInit2(&zs, FMT_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return perr_set(e, PLUMB_ENOMEM, "cannot start gzip");
	unsigned char buf[1 << 16];
	const unsigned char *in = data;
	size_t left = len;
	int rc = Z_OK;
	do {
		size_t chunk = left > (1u << 30) ? (1u << 30) : left;
		zs.next_in = (Bytef *)in;
		zs.avail_in = (uInt)chunk;
		in += chunk;
		left -= chunk;
		int flush = left ? Z_NO_FLUSH : Z_FINISH;
		do {
			zs.next_out = buf;
			zs.avail_out = sizeof buf;
			rc = deflate(&zs, flush);
			fwrite(buf, 1, sizeof buf - zs.avail_out, out);
		} while (zs.avail_out == 0 || (flush == Z_FINISH && rc == Z_OK));
	} while (left);
	deflateEnd(&zs);
	if (rc != Z_STREAM_END)
		return perr_set(e, PLUMB_EOUTPUT, "gzip failed");
	return PLUMB_OK;
}
