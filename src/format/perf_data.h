/* perf_data.h — inside format/ only: the two halves of the perf.data reader. perf_data.c reads the container
 * (the file header, attribute and feature sections, or a pipe's header records) and hands each record of the
 * stream, in time order, to perf_data_session.c, which keeps the processes' maps and names, turns samples into
 * stacks (frame-pointer callchains as recorded, DWARF stack copies unwound by unwind/) and symbolizes them
 * (symbol/) into the profile being read; perf_data_files.c finds the files it names by build ID.
 *
 * Ownership: a pd_session borrows the profile and the read options for its life; strings it is given are
 * copied. */
#ifndef PLUMB_FORMAT_PERF_DATA_H
#define PLUMB_FORMAT_PERF_DATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

#define PD_MAX_ATTRS 256 /* events in one file */
#define PERF_RECORD_USER_TYPE_START 64 /* perf's own record types start here (tools/perf/util/event.h) */

/* One event of the file: its attributes (zero-filled past what the file holds), the sample ids that name it,
 * and its name (EVENT_DESC, else made from type and config). */
struct pd_attr {
	struct perf_event_attr attr;
	uint64_t *ids;
	size_t nids;
	char name[64];
};

struct pd_session;
struct pd_files;

/* A u32 and a u64 read without assuming alignment (a recording is the host's byte order, checked at open). */
static inline uint32_t rd32(const char *p)
{
	uint32_t v;
	__builtin_memcpy(&v, p, 4);
	return v;
}
static inline uint64_t rd64(const char *p)
{
	uint64_t v;
	__builtin_memcpy(&v, p, 8);
	return v;
}

/* A record's type and misc (its header read without assuming alignment). */
static inline uint32_t rec_type(const char *rec)
{
	return rd32(rec);
}
static inline uint16_t rec_misc(const char *rec)
{
	uint16_t v;
	__builtin_memcpy(&v, rec + 4, 2);
	return v;
}

/* perf_data_files.c: the recording's files by build ID, and the kernel's names. */
struct pd_files *fmt_pd_files_new(const struct fmt_read_opts *opts);
void fmt_pd_files_free(struct pd_files *f);
/* A build ID for a file (a HEADER_BUILD_ID entry, an MMAP2 record); "[kernel.kallsyms]" names the kernel. */
void fmt_pd_files_build_id(struct pd_files *f, const char *path, const uint8_t *id, size_t len);
/* The file to open for what the recording calls path (a string of f's, or path itself). */
const char *fmt_pd_files_use(struct pd_files *f, const char *path);
/* The name of kernel address addr when the recorded kernel is not the running one (*running false; NULL when
 * nothing names it); with *running true the symbolizer names it from the running kernel. */
const char *fmt_pd_files_kernel_name(struct pd_files *f, uint64_t addr, bool *running);
/* Where the recording's kernel map ("[kernel.kallsyms]_text", pgoff) says _text was. */
void fmt_pd_files_kernel_text(struct pd_files *f, uint64_t text);
/* Says what could not be named. */
void fmt_pd_files_finish(struct pd_files *f);

struct pd_session *fmt_pd_session_new(struct profile *out, const struct fmt_read_opts *opts);
void fmt_pd_session_free(struct pd_session *s);
/* A build ID for a file (a HEADER_BUILD_ID entry); "[kernel.kallsyms]" names the kernel. */
void fmt_pd_session_build_id(struct pd_session *s, const char *path, const uint8_t *id, size_t len);
/* One record of the data stream, of the chosen event when it is a sample (attr: that event). Records of other
 * types than the ones read (MMAP, MMAP2, COMM, FORK, EXIT, LOST, THROTTLE, SAMPLE) are ignored. trailer_type is
 * the sample_type that lays out the sample_id_all trailer of non-sample records (0: none). */
enum plumb_err fmt_pd_session_record(struct pd_session *s, const struct pd_attr *attr, const char *rec, size_t len,
				     struct perr *e);
/* Samples of another event than the one read (counted for the warning). */
void fmt_pd_session_other_event(struct pd_session *s);
/* The profile's metadata once the stream is read: the event read, its unit, the command line, the warnings. */
enum plumb_err fmt_pd_session_finish(struct pd_session *s, const struct pd_attr *attr, size_t nattrs,
				     const char *cmdline, struct perr *e);
/* The time of a record for ordering: a sample's TIME field, a non-sample record's sample_id_all trailer; false
 * when it has none. */
bool fmt_pd_record_time(const struct perf_event_attr *attr, const char *rec, size_t len, uint64_t *time);
/* Warns once (the warning is the reader's, opts->warn). */
void fmt_pd_warn(const struct fmt_read_opts *opts, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
