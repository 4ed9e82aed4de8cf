/* stream.c — inputs as bounded streams (format/stream.h). The window grows only as far as one line needs (up to
 * FMT_MAX_LINE); data is moved to the window's start before it grows, so memory stays at the longest line plus
 * one read, whatever the input's length. */
#include "format/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"

#define READ_CHUNK ((size_t)1 << 20)
#define RAW_CHUNK ((size_t)1 << 18)
#define FIFO_WAIT_MS 5000

const char *fmt_size_text(uint64_t bytes, char *buf, size_t n)
{
	if (bytes >= ((uint64_t)1 << 30) && bytes % ((uint64_t)1 << 30) == 0)
		snprintf(buf, n, "%llu GiB", (unsigned long long)(bytes >> 30));
	else if (bytes >= ((uint64_t)1 << 20))
		snprintf(buf, n, "%.0f MiB", (double)bytes / 1048576.0);
	else
		snprintf(buf, n, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

static void init(struct fmt_stream *st, const char *name)
{
	memset(st, 0, sizeof *st);
	st->name = name;
	st->fd = -1;
	st->max_line = FMT_MAX_LINE;
	st->max_total = FMT_MAX_STREAM;
}

/* Reads raw bytes (from the fd or the buffer) into dst; 0 at the end, -1 on error (errno). */
static ssize_t raw_read(struct fmt_stream *st, void *dst, size_t n)
{
	if (st->fd < 0) {
		size_t k = st->mem_len - st->mem_pos < n ? st->mem_len - st->mem_pos : n;
		memcpy(dst, st->mem + st->mem_pos, k);
		st->mem_pos += k;
		return (ssize_t)k;
	}
	for (;;) {
		ssize_t r = read(st->fd, dst, n);
		if (r > 0) {
			st->raw_read += (uint64_t)r;
			progress_bytes(st->progress, st->raw_read, st->raw_size);
		}
		if (r >= 0 || errno != EINTR)
			return r;
	}
}

static enum plumb_err read_error(struct fmt_stream *st, struct perr *e)
{
	return perr_set(e, PLUMB_EIO, "cannot read %s: %s", st->name, strerror(errno));
}

/* The first raw bytes decide: gzip magic starts an inflating stream, a UTF-16 byte-order mark a decoding one. */
static enum plumb_err start(struct fmt_stream *st, struct perr *e)
{
	st->cap = READ_CHUNK;
	st->buf = malloc(st->cap + 1);
	if (!st->buf)
		return perr_set(e, PLUMB_ENOMEM, "out of memory opening %s", st->name);
	/* two bytes tell; a short read is fine (they are data then) */
	size_t got = 0;
	while (got < 2) {
		ssize_t r = raw_read(st, st->buf + got, 2 - got);
		if (r < 0)
			return read_error(st, e);
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got == 2 && (unsigned char)st->buf[0] == 0x1f && (unsigned char)st->buf[1] == 0x8b) {
		st->gz = true;
		st->raw_cap = RAW_CHUNK;
		st->raw = malloc(st->raw_cap);
		if (!st->raw || inflateInit2(&st->zs, 15 + 32) != Z_OK)
			return perr_set(e, PLUMB_ENOMEM, "out of memory opening %s", st->name);
		st->zinit = true;
		memcpy(st->raw, st->buf, 2);
		st->zs.next_in = st->raw;
		st->zs.avail_in = 2;
		return PLUMB_OK;
	}
	if (got == 2 && (unsigned char)st->buf[0] == 0xff && (unsigned char)st->buf[1] == 0xfe)
		st->utf16 = 1;
	else if (got == 2 && (unsigned char)st->buf[0] == 0xfe && (unsigned char)st->buf[1] == 0xff)
		st->utf16 = 2;
	if (st->utf16) {
		/* the byte-order mark is no data */
		st->raw_cap = RAW_CHUNK;
		if (!(st->raw = malloc(st->raw_cap)))
			return perr_set(e, PLUMB_ENOMEM, "out of memory opening %s", st->name);
		return PLUMB_OK;
	}
	if (got == 2 && (unsigned char)st->buf[0] == 0xef && (unsigned char)st->buf[1] == 0xbb) {
		/* a UTF-8 byte-order mark is no data either */
		ssize_t r = raw_read(st, st->buf + 2, 1);
		if (r < 0)
			return read_error(st, e);
		got += (size_t)r;
		if (got == 3 && (unsigned char)st->buf[2] == 0xbf)
			got = 0;
		else if (got < 3)
			st->eof = true;
		st->end = got;
		st->total = got;
		return PLUMB_OK;
	}
	st->end = got;
	st->total = got;
	if (got < 2)
		st->eof = true;
	return PLUMB_OK;
}

enum plumb_err fmt_stream_open(struct fmt_stream *st, const char *path, struct perr *e)
{
	init(st, path);
	bool is_stdin = strcmp(path, "-") == 0;
	/* opened without blocking: a FIFO without a writer must not hang the open (reads block again below) */
	st->fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (st->fd < 0)
		/* docs/design.md §3.2: a path that is not there is 3, one that cannot be read 5 */
		return perr_set(e, errno == ENOENT || errno == ENOTDIR ? PLUMB_ENOENT : PLUMB_EIO, "cannot read %s: %s",
				path, strerror(errno));
	st->close_fd = !is_stdin;
	struct stat sb;
	if (fstat(st->fd, &sb) != 0)
		return read_error(st, e);
	if (!is_stdin) {
		const char *what = S_ISDIR(sb.st_mode)    ? "a directory"
				   : S_ISCHR(sb.st_mode)  ? "a character device"
				   : S_ISBLK(sb.st_mode)  ? "a block device"
				   : S_ISSOCK(sb.st_mode) ? "a socket"
							  : NULL;
		if (what)
			return perr_set(e, PLUMB_EFORMAT, "%s is %s, not a profile", path, what);
		/* a FIFO must start giving data (or close) within FIFO_WAIT_MS: one that never does is not read */
		struct pollfd pfd = { st->fd, POLLIN, 0 };
		if (S_ISFIFO(sb.st_mode) && poll(&pfd, 1, FIFO_WAIT_MS) == 0)
			return perr_set(e, PLUMB_EFORMAT, "%s is a FIFO that gave no data in %d s", path,
					FIFO_WAIT_MS / 1000);
		int fl = fcntl(st->fd, F_GETFL);
		if (fl < 0 || fcntl(st->fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
			return read_error(st, e);
	}
	st->regular = S_ISREG(sb.st_mode);
	if (st->regular) {
		posix_fadvise(st->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		st->raw_size = (uint64_t)sb.st_size;
	}
	return start(st, e);
}

enum plumb_err fmt_stream_mem(struct fmt_stream *st, const void *buf, size_t len, const char *name, struct perr *e)
{
	init(st, name);
	st->mem = buf;
	st->mem_len = len;
	st->regular = true;
	return start(st, e);
}

void fmt_stream_close(struct fmt_stream *st)
{
	if (st->close_fd && st->fd >= 0)
		close(st->fd);
	if (st->zinit)
		inflateEnd(&st->zs);
	free(st->raw);
	free(st->buf);
	st->buf = NULL;
	st->raw = NULL;
	st->fd = -1;
	st->zinit = false;
}

static enum plumb_err over_cap(struct fmt_stream *st, struct perr *e)
{
	char cap[32];
	fmt_size_text(st->max_total, cap, sizeof cap);
	return perr_set(e, PLUMB_EFORMAT,
			"%s: stopped after %s of %s: the cap on a stream's length (docs/design.md §6.6); decompress it "
			"to a file if it is really that big", st->name, cap, st->gz ? "decompressed data" : "a pipe");
}

/* Inflates into buf[end, cap): returns bytes produced (0 with eof set at the end), or -1 on error. */
static ssize_t inflate_some(struct fmt_stream *st, struct perr *e)
{
	for (;;) {
		if (st->zs.avail_in == 0 && !st->raw_eof) {
			ssize_t r = raw_read(st, st->raw, st->raw_cap);
			if (r < 0) {
				read_error(st, e);
				return -1;
			}
			if (r == 0)
				st->raw_eof = true;
			st->zs.next_in = st->raw;
			st->zs.avail_in = (uInt)r;
		}
		st->zs.next_out = (Bytef *)st->buf + st->end;
		st->zs.avail_out = (uInt)(st->cap - st->end);
		int rc = inflate(&st->zs, Z_NO_FLUSH);
		size_t made = (size_t)((char *)st->zs.next_out - (st->buf + st->end));
		if (rc == Z_STREAM_END) {
			/* concatenated gzip members go on; trailing bytes that are not gzip end it */
			if (st->zs.avail_in == 0 && !st->raw_eof) {
				ssize_t r = raw_read(st, st->raw, st->raw_cap);
				if (r < 0) {
					read_error(st, e);
					return -1;
				}
				st->zs.next_in = st->raw;
				st->zs.avail_in = (uInt)r;
				if (r == 0)
					st->raw_eof = true;
			}
			if (st->zs.avail_in == 0 || inflateReset(&st->zs) != Z_OK)
				st->eof = true;
		} else if (rc != Z_OK && !(rc == Z_BUF_ERROR && made)) {
			if (rc == Z_BUF_ERROR && st->raw_eof && st->zs.avail_in == 0) {
				perr_set(e, PLUMB_EFORMAT, "%s: the gzip data ends early (truncated) after %llu bytes",
					 st->name, (unsigned long long)st->zs.total_in);
				return -1;
			}
			if (rc == Z_MEM_ERROR)
				perr_set(e, PLUMB_ENOMEM, "out of memory decompressing %s", st->name);
			else
				perr_set(e, PLUMB_EFORMAT, "%s: the gzip data is corrupt at byte %llu", st->name,
					 (unsigned long long)st->zs.total_in);
			return -1;
		}
		if (made || st->eof)
			return (ssize_t)made;
	}
}

static char *utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		*out++ = (char)cp;
	} else if (cp < 0x800) {
		*out++ = (char)(0xc0 | cp >> 6);
		*out++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*out++ = (char)(0xe0 | cp >> 12);
		*out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*out++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*out++ = (char)(0xf0 | cp >> 18);
		*out++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*out++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*out++ = (char)(0x80 | (cp & 0x3f));
	}
	return out;
}

/* Decodes UTF-16 into UTF-8 in buf[end, cap) (fill keeps at least 8 bytes of room): returns bytes produced (0
 * with eof set at the end), or -1 on error. A lone surrogate is U+FFFD; an odd last byte is dropped. */
static ssize_t utf16_some(struct fmt_stream *st, struct perr *e)
{
	for (;;) {
		size_t have = st->raw_len - st->raw_pos;
		if (have < 4 && !st->raw_eof) {
			memmove(st->raw, st->raw + st->raw_pos, have);
			st->raw_pos = 0;
			st->raw_len = have;
			ssize_t r = raw_read(st, st->raw + have, st->raw_cap - have);
			if (r < 0) {
				read_error(st, e);
				return -1;
			}
			if (r == 0)
				st->raw_eof = true;
			st->raw_len += (size_t)r;
			continue;
		}
		const unsigned char *in = st->raw + st->raw_pos, *ie = st->raw + st->raw_len;
		char *start = st->buf + st->end, *out = start, *oe = st->buf + st->cap;
		bool le = st->utf16 == 1;
		while (ie - in >= 2 && oe - out >= 4) {
			uint32_t u = le ? (uint32_t)in[0] | (uint32_t)in[1] << 8 : (uint32_t)in[0] << 8 | in[1];
			size_t used = 2;
			if (u >= 0xd800 && u < 0xdc00) {
				if (ie - in < 4 && !st->raw_eof)
					break; /* the pair's second half is in the next read */
				uint32_t u2 = ie - in < 4 ? 0 : le ? (uint32_t)in[2] | (uint32_t)in[3] << 8
								   : (uint32_t)in[2] << 8 | in[3];
				if (u2 >= 0xdc00 && u2 < 0xe000) {
					u = 0x10000 + ((u - 0xd800) << 10) + (u2 - 0xdc00);
					used = 4;
				} else {
					u = 0xfffd;
				}
			} else if (u >= 0xdc00 && u < 0xe000) {
				u = 0xfffd;
			}
			out = utf8_put(out, u);
			in += used;
		}
		st->raw_pos = (size_t)(in - st->raw);
		if (st->raw_eof && ie - in < 2)
			st->eof = true;
		if (out > start || st->eof)
			return (ssize_t)(out - start);
	}
}

/* Reads more data into the window: unread data moves to its start first, and the window doubles when it is full
 * (or holds less than `need` bytes). Returns 1 when data came, 0 at the end, -1 on error. */
static int fill(struct fmt_stream *st, size_t need, struct perr *e)
{
	if (st->eof)
		return 0;
	if (st->pos > 0 && (st->pos >= st->cap / 2 || st->end == st->cap)) {
		memmove(st->buf, st->buf + st->pos, st->end - st->pos);
		st->end -= st->pos;
		st->pos = 0;
	}
	if (st->end == st->cap || need > st->cap || (st->utf16 && st->cap - st->end < 8)) {
		size_t nc = st->cap * 2 < need ? need : st->cap * 2;
		char *nb = realloc(st->buf, nc + 1);
		if (!nb) {
			perr_set(e, PLUMB_ENOMEM, "out of memory reading %s (a line of %zu bytes)", st->name, need);
			return -1;
		}
		st->buf = nb;
		st->cap = nc;
	}
	ssize_t got;
	if (st->gz) {
		got = inflate_some(st, e);
	} else if (st->utf16) {
		got = utf16_some(st, e);
	} else {
		size_t room = st->cap - st->end;
		got = raw_read(st, st->buf + st->end, room < READ_CHUNK ? room : READ_CHUNK);
		if (got < 0)
			read_error(st, e);
		else if (got == 0)
			st->eof = true;
	}
	if (got < 0)
		return -1;
	if (st->text && got > 0 && memchr(st->buf + st->end, '\0', (size_t)got)) {
		const char *z = memchr(st->buf + st->end, '\0', (size_t)got);
		perr_set(e, PLUMB_EFORMAT, "%s: a NUL byte at byte %llu: binary data, not a text profile", st->name,
			 (unsigned long long)(st->total + (uint64_t)(z - (st->buf + st->end))));
		return -1;
	}
	st->end += (size_t)got;
	st->total += (uint64_t)got;
	if ((st->gz || st->utf16 || !st->regular) && st->max_total && st->total > st->max_total) {
		over_cap(st, e);
		return -1;
	}
	return got > 0 ? 1 : 0;
}

enum plumb_err fmt_stream_head(struct fmt_stream *st, size_t n, const char **data, size_t *len, struct perr *e)
{
	while (st->end - st->pos < n) {
		int r = fill(st, n, e);
		if (r < 0)
			return e->code;
		if (r == 0)
			break;
	}
	*data = st->buf + st->pos;
	*len = st->end - st->pos < n ? st->end - st->pos : n;
	return PLUMB_OK;
}

int fmt_stream_lines(struct fmt_stream *st, const char **data, size_t *len, struct perr *e)
{
	if (st->text && !st->text_checked) { /* what came before the stream was a text stream */
		st->text_checked = true;
		const char *z = st->end > st->pos ? memchr(st->buf + st->pos, '\0', st->end - st->pos) : NULL;
		if (z) {
			perr_set(e, PLUMB_EFORMAT, "%s: a NUL byte at byte %llu: binary data, not a text profile",
				 st->name, (unsigned long long)(st->consumed + (uint64_t)(z - (st->buf + st->pos))));
			return -1;
		}
	}
	size_t scanned = 0; /* bytes of the window already known to hold no newline */
	for (;;) {
		size_t have = st->end - st->pos;
		const char *last = have > scanned ? memrchr(st->buf + st->pos + scanned, '\n', have - scanned) : NULL;
		if (last || (st->eof && have)) {
			size_t n = last ? (size_t)(last + 1 - (st->buf + st->pos)) : have;
			*data = st->buf + st->pos;
			*len = n;
			st->pos += n;
			st->consumed += n;
			return 1;
		}
		if (st->eof)
			return 0;
		if (have >= st->max_line) {
			char cap[32];
			perr_set(e, PLUMB_EFORMAT,
				 "%s: a line at byte %llu is longer than %s, the cap on one line (docs/design.md §6.6)",
				 st->name, (unsigned long long)st->consumed, fmt_size_text(st->max_line, cap, sizeof cap));
			return -1;
		}
		scanned = have;
		if (fill(st, have + 1, e) < 0)
			return -1;
	}
}

/* Where a JSON document's strings stand while it arrives: inside one, after a backslash, how long it is so far. */
struct json_watch {
	bool in_string, escaped;
	size_t run;
};

/* Watches p[from..to) (memchr from quote to quote: a byte at a time was a fifth of reading a 120 MB profile): the
 * index of the byte that made a string longer than max, or SIZE_MAX. An escape counts its two bytes. */
static size_t json_watch(struct json_watch *w, const char *p, size_t from, size_t to, size_t max)
{
	size_t i = from;
	while (i < to) {
		if (w->escaped) {
			w->escaped = false;
			w->run++;
			i++;
			continue;
		}
		const char *q = memchr(p + i, '"', to - i);
		if (!w->in_string) {
			if (!q)
				return SIZE_MAX;
			w->in_string = true;
			w->run = 0;
			i = (size_t)(q - p) + 1;
			continue;
		}
		size_t end = q ? (size_t)(q - p) : to;
		const char *b = memchr(p + i, '\\', end - i);
		size_t stop = b ? (size_t)(b - p) : end;
		if (w->run + (stop - i) > max)
			return i + (max - w->run);
		w->run += stop - i;
		if (b) {
			w->escaped = true;
			w->run++;
			i = stop + 1;
		} else if (q) {
			w->in_string = false;
			i = end + 1;
		} else {
			i = to;
		}
	}
	return SIZE_MAX;
}

enum plumb_err fmt_stream_rest(struct fmt_stream *st, size_t max, const char **data, size_t *len, char **owned,
			       struct perr *e)
{
	*owned = NULL;
	struct stat sb;
	if (st->fd >= 0 && !st->gz && fstat(st->fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (uint64_t)sb.st_size <= max && (size_t)sb.st_size + 1 > st->cap) {
		/* a regular file's size is known: one buffer of that size, no doubling */
		char *nb = realloc(st->buf, (size_t)sb.st_size + READ_CHUNK + 1);
		if (!nb)
			return perr_set(e, PLUMB_ENOMEM, "out of memory reading %s (%lld bytes)", st->name,
					(long long)sb.st_size);
		st->buf = nb;
		st->cap = (size_t)sb.st_size + READ_CHUNK;
	}
	/* a JSON document: its strings are watched as the bytes arrive, so that one longer than the JSON reader takes
	 * ends the read at that cap, not after gigabytes of it have been kept (docs/design.md §6.6) */
	struct json_watch w = { 0 };
	size_t scanned = 0;
	for (;;) {
		size_t have = st->end - st->pos;
		if (st->json_string_max) {
			size_t over = json_watch(&w, st->buf + st->pos, scanned, have, st->json_string_max);
			if (over != SIZE_MAX) {
				char cap[32];
				return perr_set(e, PLUMB_EFORMAT,
						"%s: a JSON string of more than %s at byte %llu, the cap on one string "
						"(docs/design.md §6.6)",
						st->name, fmt_size_text(st->json_string_max, cap, sizeof cap),
						(unsigned long long)(st->consumed + over - st->json_string_max));
			}
			scanned = have;
		}
		if (have > max) {
			char cap[32];
			return perr_set(e, PLUMB_EFORMAT,
					"%s: more than %s of data, the cap on a document read whole (docs/design.md §6.6)",
					st->name, fmt_size_text(max, cap, sizeof cap));
		}
		int r = fill(st, have + 1, e);
		if (r < 0)
			return e->code;
		if (r == 0)
			break;
	}
	st->buf[st->end] = '\0';
	*data = st->buf + st->pos;
	*len = st->end - st->pos;
	st->consumed += *len;
	st->pos = st->end;
	return PLUMB_OK;
}

enum plumb_err fmt_stream_read_buf(const char *buf, size_t len, const char *name, fmt_stream_reader read,
				   const struct fmt_read_opts *opts, struct profile *p, struct perr *e)
{
	struct fmt_stream st;
	enum plumb_err rc = fmt_stream_mem(&st, buf, len, name, e);
	if (!rc)
		rc = read(&st, opts, p, e);
	fmt_stream_close(&st);
	return rc;
}
