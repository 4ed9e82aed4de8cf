/* format.h — every profile format plumb reads or writes, behind one dispatcher. A reader turns bytes into
 * the one profile model; a writer turns the model into a file. Formats are sniffed from content on input
 * and chosen from the extension (or --format) on output.
 *
 * Ownership: readers return a new profile the caller frees; writers only read the profile. */
#ifndef PLUMB_FORMAT_FORMAT_H
#define PLUMB_FORMAT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "base/err.h"
#include "base/progress.h"
#include "format/stream.h"
#include "profile/profile.h"

enum fmt_kind {
	FMT_UNKNOWN = 0,
	FMT_FOLDED,      /* outermost;...;innermost COUNT */
	FMT_GECKO,       /* Firefox Profiler processed JSON (samply) */
	FMT_SPEEDSCOPE,  /* speedscope file format */
	FMT_PPROF,       /* gzipped protobuf */
	FMT_PERF_SCRIPT, /* `perf script` text (input only) */
	FMT_SVG,         /* flame graph (output only, drawn one layer up: render/output.h) */
	FMT_HOT_JSON,    /* plumb.hot.v1 summary (input of diff) */
	FMT_PERF_DATA,   /* perf.data, file or pipe mode (input only) */
	FMT_CPUPROFILE,  /* Chrome DevTools' and node --cpu-prof's .cpuprofile (input only) */
	FMT_CHROME_TRACE, /* Chrome trace-event JSON with Profile/ProfileChunk events (input only) */
	FMT_HEAPPROFILE, /* V8's sampling heap profile, .heapprofile (input only) */
	FMT_GECKO_RAW,   /* the Gecko profiler's own, unprocessed JSON (input only) */
};

/* Options readers understand (the stackcollapse-perf options for perf script, the samply sidecar). */
struct fmt_read_opts {
	const char *syms_path;   /* samply sidecar, NULL: look beside the profile */
	const char *source_path; /* the profile's path, for finding the sidecar */
	bool pid, tid, kernel, jit, addrs; /* perf script collapse options (--all = kernel + jit) */
	bool keep_timeline;      /* keep timed samples where the format has them */
	/* Warnings about skipped input (each kind reported once per read); NULL: silent. The reader formats
	 * the message, the command decides where it goes. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
	bool lenient;            /* folded: skip lines that are not "stack COUNT" (one warning) instead of failing */
	const char *sample_index; /* pprof: which sample type is the weight, by index or type name (NULL: default) */
	struct progress *progress; /* told how far the input is read (base/progress.h); NULL: no display */
};

struct fmt_write_opts {
	unsigned label_flags;    /* enum label_flags */
	bool threads;            /* folded: a root frame per thread "name (tid)" */
	const char *path;        /* set by fmt_write_file: the destination ("-" for stdout), e.g. for .gz */
	struct progress *progress; /* told how much is written (base/progress.h); NULL: no display */
};

enum fmt_kind fmt_from_name(const char *name);          /* "folded", "gecko", ... */
const char *fmt_name(enum fmt_kind kind);
enum fmt_kind fmt_from_path(const char *path);          /* by extension; FMT_UNKNOWN when none fits */
/* True when the file name has an extension that names no format ("a.xml"); a name without one ("profile") has
 * none to be wrong. Writers refuse such a name unless the format is given (docs/design.md §6.5). */
bool fmt_path_ext_unknown(const char *path);
enum fmt_kind fmt_sniff(const char *buf, size_t len);   /* by content */

/* An opened input (docs/design.md §6.6): a bounded stream and the format sniffed from its first bytes. Line
 * formats (folded, perf script) are read from the stream block by block; a document (Firefox JSON, speedscope,
 * a plumb.hot.v1 summary, pprof) is read whole, up to FMT_MAX_DOCUMENT (format/stream.h).
 * Ownership: fmt_source_close() releases what the source holds; the document stays valid until then. */
struct fmt_source {
	struct fmt_stream *st;
	enum fmt_kind kind;  /* sniffed */
	const char *doc;     /* the whole document once read (fmt_source_document), else NULL */
	size_t doc_len;
	char *doc_owned;
};
enum plumb_err fmt_source_open(struct fmt_source *src, const char *path, struct perr *e);
/* A source over buf[0..len) (not copied), e.g. for tests and fuzzers. */
enum plumb_err fmt_source_mem(struct fmt_source *src, const void *buf, size_t len, struct perr *e);
/* The rest of the input as one NUL-terminated document (at most FMT_MAX_DOCUMENT bytes). */
enum plumb_err fmt_source_document(struct fmt_source *src, const char **data, size_t *len, struct perr *e);
/* Reads the source as `kind` (FMT_UNKNOWN: as sniffed) into a new profile. Out of memory while reading is
 * PLUMB_EIO (exit 5) with how far the read got: the input is what is too big for this machine. */
enum plumb_err fmt_source_read(struct fmt_source *src, enum fmt_kind kind, const struct fmt_read_opts *opts,
			       struct profile **out, struct perr *e);
void fmt_source_close(struct fmt_source *src);

/* Reads any supported input; `hint` FMT_UNKNOWN sniffs the content. */
enum plumb_err fmt_read_file(const char *path, enum fmt_kind hint, const struct fmt_read_opts *opts,
			     struct profile **out, struct perr *e);
enum plumb_err fmt_read_buf(const char *buf, size_t len, enum fmt_kind kind, const struct fmt_read_opts *opts,
			    struct profile **out, struct perr *e);

/* PLUMB_EOUTPUT "cannot write PATH: <err's text>" (EIO when err is 0): what a writer's failure says. */
enum plumb_err fmt_write_failed(const char *path, int err, struct perr *e);
/* Writes the profile atomically to path ("-" stdout) in the given format. FMT_SVG is not a format writer's
 * (the flame graph is drawn in render/): it is PLUMB_EUNSUPPORTED here; commands call render_write_file. */
enum plumb_err fmt_write_file(const struct profile *p, const char *path, enum fmt_kind kind,
			      const struct fmt_write_opts *opts, struct perr *e);

/* The individual readers and writers (each in its own file). Readers fill `p`, a fresh profile. */
enum plumb_err fmt_folded_read(const char *buf, size_t len, struct profile *p, struct perr *e);
enum plumb_err fmt_folded_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts,
				struct perr *e);

/* Firefox Profiler processed JSON (versions 41-66) with samply's .syms.json sidecar (opts->syms_path, or
 * found beside opts->source_path). Malformed input is PLUMB_EFORMAT with the byte offset and schema path. */
enum plumb_err fmt_gecko_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
			      struct perr *e);
/* Writes data gzip-compressed to out (pprof, .json.gz). */
enum plumb_err fmt_gzip_write(const void *data, size_t len, FILE *out, struct perr *e);
/* perf script text (stackcollapse-perf semantics, see src/format/perf_script.c). */
/* True when the text looks like `perf script` output (an event line, then a stack line). */
bool fmt_perf_script_sniff(const char *buf, size_t len);
enum plumb_err fmt_perf_script_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				    struct perr *e);
/* Folded, with the options (lenient mode, warnings). fmt_folded_read is the strict form. */
enum plumb_err fmt_folded_read_opts(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				    struct perr *e);
/* The line formats read from a stream. */
enum plumb_err fmt_folded_read_stream(struct fmt_stream *st, const struct fmt_read_opts *opts, struct profile *p,
				      struct perr *e);
enum plumb_err fmt_perf_script_read_stream(struct fmt_stream *st, const struct fmt_read_opts *opts, struct profile *p,
					   struct perr *e);
/* pprof (profile.proto, gzipped or not): the sample type opts->sample_index chooses (default: the profile's
 * default_sample_type, else the last, as `go tool pprof` does). */
enum plumb_err fmt_pprof_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
			      struct perr *e);
/* True when the bytes start like a profile.proto message (a sample_type ValueType first). */
bool fmt_pprof_sniff(const char *buf, size_t len);
/* perf.data (perf record's file or pipe output), read from the stream and symbolized (format/perf_data.c): the
 * event opts->sample_index names (number or name; default the first), weighed by its periods. */
enum plumb_err fmt_perf_data_read_stream(struct fmt_stream *st, const struct fmt_read_opts *opts, struct profile *p,
					 struct perr *e);
/* True when the bytes start with perf.data's magic. */
bool fmt_perf_data_sniff(const char *buf, size_t len);
enum plumb_err fmt_speedscope_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts,
				    struct perr *e);
enum plumb_err fmt_pprof_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts, struct perr *e);
enum plumb_err fmt_gecko_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts, struct perr *e);

/* speedscope file format: "sampled" and "evented" profiles, one thread each; time units become nanoseconds.
 * Malformed input is PLUMB_EFORMAT naming the key and index. */
enum plumb_err fmt_speedscope_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				   struct perr *e);

/* V8's formats (format/v8_read.c): a .cpuprofile (and its old "head" form) and a trace's Profile/ProfileChunk
 * events weigh each sample its time in nanoseconds, one thread per CPU profile; a .heapprofile weighs bytes.
 * Malformed input is PLUMB_EFORMAT naming the key and index. */
enum plumb_err fmt_cpuprofile_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				   struct perr *e);
enum plumb_err fmt_chrome_trace_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				     struct perr *e);
enum plumb_err fmt_heapprofile_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				    struct perr *e);
/* The Gecko profiler's unprocessed JSON (format/gecko_raw_read.c): schema'd tables per thread, subprocesses in
 * "processes", and the same wrapped in a Firefox DevTools export ("profile"). */
enum plumb_err fmt_gecko_raw_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				  struct perr *e);
/* Which JSON profile a document is by its content (the whole document): one of the JSON kinds above. */
enum fmt_kind fmt_json_sniff(const char *buf, size_t len);

#endif
