/* stream.h — every input is read as a bounded stream (docs/design.md §6.6): a window of bytes refilled from a
 * file, a pipe or a buffer, gunzipped on the way (zlib's streaming inflate) when the data starts with the gzip
 * magic, and decoded to UTF-8 when it starts with a UTF-16 byte-order mark (little- or big-endian; an unpaired
 * surrogate reads as U+FFFD; a UTF-8 byte-order mark is dropped), so a reader's memory grows with what the profile holds, never with the input's
 * length. The caps, each
 * ending the read with PLUMB_EFORMAT (exit 5) and where it stopped:
 *   FMT_MAX_LINE      one line of a text format (folded, perf script)
 *   FMT_MAX_FRAMES    frames in one stack, in every reader
 *   FMT_MAX_STREAM    bytes of a compressed input after decompression, or of a pipe or FIFO (a regular file
 *                     ends at its size)
 *   FMT_MAX_DOCUMENT  a document read whole (Firefox JSON, speedscope, pprof), after decompression
 * Character devices, sockets and directories are refused at once (only "-" reads whatever stdin is), and a
 * FIFO that gives no data within 5 s; text formats refuse a NUL byte (binary data is not a profile).
 *
 * Ownership: a struct fmt_stream is the caller's (fmt_stream_close releases what it holds); spans it hands out
 * point into its window and stay valid until the next call on the stream. */
#ifndef PLUMB_FORMAT_STREAM_H
#define PLUMB_FORMAT_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "base/err.h"
#include "base/progress.h"

#define FMT_MAX_LINE ((size_t)64 << 20)
#define FMT_MAX_FRAMES ((size_t)1 << 22)
#define FMT_MAX_STREAM ((uint64_t)4 << 30)
#define FMT_MAX_DOCUMENT ((size_t)2 << 30)

struct fmt_stream {
	const char *name;        /* the path as given ("-": stdin), for messages */
	int fd;                  /* -1 for a buffer */
	bool close_fd;
	bool regular;            /* a regular file: it ends at its size */
	const unsigned char *mem; /* a buffer source */
	size_t mem_len, mem_pos;
	/* decompression */
	bool gz, zinit;
	z_stream zs;
	unsigned char *raw;      /* compressed bytes read, not inflated yet */
	size_t raw_cap;
	bool raw_eof;
	int utf16;               /* 1 little-endian, 2 big-endian UTF-16 (after its byte-order mark), read as UTF-8 */
	size_t raw_pos, raw_len; /* UTF-16 bytes read, not decoded yet: raw[raw_pos, raw_len) */
	/* the window: buf[pos, end) is data not handed out yet */
	char *buf;
	size_t cap, pos, end;
	bool eof;                /* no more data after buf[end) */
	uint64_t total;          /* bytes of (decompressed) data produced so far */
	uint64_t max_total;      /* 0: none */
	size_t max_line;
	bool text;               /* refuse NUL bytes */
	bool text_checked;
	uint64_t consumed;       /* bytes handed out before buf[pos] */
	size_t json_string_max;  /* fmt_stream_rest of a JSON document: a string longer than this ends it (0: off) */
	struct progress *progress; /* told the raw bytes read of the input's size (NULL: none) */
	uint64_t raw_read, raw_size; /* bytes read from the file (compressed, for gzip); its size, 0 unknown */
};

/* Opens path ("-": stdin) as a stream; gzip is recognised by its magic. PLUMB_EIO when it cannot be opened
 * (with the system's reason), PLUMB_EFORMAT for a device, socket or directory. */
enum plumb_err fmt_stream_open(struct fmt_stream *st, const char *path, struct perr *e);
/* A stream over buf[0..len) (not copied: it must outlive the stream); gzip is recognised as for files. */
enum plumb_err fmt_stream_mem(struct fmt_stream *st, const void *buf, size_t len, const char *name, struct perr *e);
void fmt_stream_close(struct fmt_stream *st);

/* The first bytes of the data (up to n, fewer at the end), without consuming them: for sniffing. */
enum plumb_err fmt_stream_head(struct fmt_stream *st, size_t n, const char **data, size_t *len, struct perr *e);

/* The next block of whole lines (ending with '\n', or the last line of the data without one): 1 with *data and
 * *len set, 0 at the end, -1 on error (a line over the cap, a NUL byte in a text stream, a read error). */
int fmt_stream_lines(struct fmt_stream *st, const char **data, size_t *len, struct perr *e);

/* The rest of the data as one NUL-terminated buffer of at most max bytes (*owned: free() it; NULL when the
 * stream's own window is handed out, valid until fmt_stream_close). Over max: PLUMB_EFORMAT naming the cap. */
enum plumb_err fmt_stream_rest(struct fmt_stream *st, size_t max, const char **data, size_t *len, char **owned,
			       struct perr *e);

/* Runs a text reader over buf[0..len) through a stream of its own named `name` (for messages): the buffer form of
 * a reader that reads streams (fmt_folded_read_opts, fmt_perf_script_read). */
struct fmt_read_opts;
struct profile;
typedef enum plumb_err (*fmt_stream_reader)(struct fmt_stream *st, const struct fmt_read_opts *opts,
					    struct profile *p, struct perr *e);
enum plumb_err fmt_stream_read_buf(const char *buf, size_t len, const char *name, fmt_stream_reader read,
				   const struct fmt_read_opts *opts, struct profile *p, struct perr *e);

/* Bytes of data handed out so far (for "stopped at byte N" messages). */
static inline uint64_t fmt_stream_offset(const struct fmt_stream *st)
{
	return st->consumed;
}

/* "64 MiB", "4 GiB": a cap as people read it. */
const char *fmt_size_text(uint64_t bytes, char *buf, size_t n);

#endif
