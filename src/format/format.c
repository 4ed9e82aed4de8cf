/* format.c — the dispatcher: names, extensions, content sniffing, inputs opened as bounded streams
 * (format/stream.h), and the tables that route a kind to its reader or writer. A new format adds one row to
 * each table. */
#include "format/format.h"
#include "base/json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/atomic.h"
#include "base/str.h"

static const struct {
	enum fmt_kind kind;
	const char *name;
} names[] = {
	{ FMT_FOLDED, "folded" }, { FMT_GECKO, "gecko" }, { FMT_SPEEDSCOPE, "speedscope" },
	{ FMT_PPROF, "pprof" }, { FMT_PERF_SCRIPT, "perf-script" }, { FMT_SVG, "svg" },
	{ FMT_HOT_JSON, "hot-json" }, { FMT_PERF_DATA, "perf-data" }, { FMT_CPUPROFILE, "cpuprofile" },
	{ FMT_CHROME_TRACE, "chrome-trace" }, { FMT_HEAPPROFILE, "heapprofile" }, { FMT_GECKO_RAW, "gecko-raw" },
};

enum fmt_kind fmt_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(names[i].name, name) == 0)
			return names[i].kind;
	if (strcmp(name, "firefox") == 0 || strcmp(name, "json") == 0)
		return FMT_GECKO;
	return FMT_UNKNOWN;
}

const char *fmt_name(enum fmt_kind kind)
{
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].kind == kind)
			return names[i].name;
	return "unknown";
}

enum fmt_kind fmt_from_path(const char *path)
{
	if (str_ends_with(path, ".speedscope.json"))
		return FMT_SPEEDSCOPE;
	if (str_ends_with(path, ".json") || str_ends_with(path, ".json.gz"))
		return FMT_GECKO;
	if (str_ends_with(path, ".pb.gz") || str_ends_with(path, ".pprof") || str_ends_with(path, ".pb"))
		return FMT_PPROF;
	if (str_ends_with(path, ".svg"))
		return FMT_SVG;
	if (str_ends_with(path, ".folded") || str_ends_with(path, ".txt") || str_ends_with(path, ".collapsed"))
		return FMT_FOLDED;
	return FMT_UNKNOWN;
}

bool fmt_path_ext_unknown(const char *path)
{
	if (fmt_from_path(path) != FMT_UNKNOWN)
		return false;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	return dot && dot > base && dot[1];
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p;
}

enum fmt_kind fmt_sniff(const char *buf, size_t len)
{
	const char *end = buf + len;
	const char *p = skip_ws(buf, end);
	if (fmt_perf_data_sniff(buf, len))
		return FMT_PERF_DATA;
	if (fmt_pprof_sniff(buf, len))
		return FMT_PPROF;
	if (p == end)
		return FMT_FOLDED; /* empty input: an empty folded profile */
	size_t head = (size_t)(end - p) < 4096 ? (size_t)(end - p) : 4096;
	if (*p == '[') { /* a JSON array of objects: trace events; "[unknown];main 3" is folded text */
		const char *q = skip_ws(p + 1, end);
		if (q < end && (*q == '{' || *q == ']'))
			return FMT_CHROME_TRACE;
	}
	if (*p == '{') {
		/* the "$schema" URL every speedscope file carries (not just the word: a Firefox profile of a
		 * program under a "speedscope" directory names it in its paths), near either end */
		static const char ss_schema[] = "speedscope.app/file-format-schema";
		if (memmem(p, head, ss_schema, sizeof ss_schema - 1) ||
		    memmem(end - head, head, ss_schema, sizeof ss_schema - 1))
			return FMT_SPEEDSCOPE;
		if (memmem(p, head, "\"plumb.hot.v1\"", 14))
			return FMT_HOT_JSON;
		return FMT_GECKO;
	}
	if (fmt_perf_script_sniff(buf, len))
		return FMT_PERF_SCRIPT;
	/* perf script: an event header line followed by indented "addr sym (module)" lines */
	const char *nl = memchr(p, '\n', head);
	if (nl && nl + 1 < end && (nl[1] == '\t' || (nl[1] == ' ' && nl + 2 < end && nl[2] == ' ')))
		return FMT_PERF_SCRIPT;
	return FMT_FOLDED;
}

/* The JSON kinds by their keys: speedscope's schema URL and plumb's summary first (fmt_sniff), then a trace
 * (an array, or "traceEvents"), V8's node trees ("callFrame" or the old "head" with "hitCount"; a heap profile
 * has "selfSize"), and a Gecko profile that was never processed (no "preprocessedProfileVersion" but
 * "threads" and "meta", anywhere) apart from the processed one. Other keys are looked for in the first 64 KiB. */
enum fmt_kind fmt_json_sniff(const char *buf, size_t len)
{
	enum fmt_kind k = fmt_sniff(buf, len);
	if (k != FMT_GECKO && k != FMT_CHROME_TRACE)
		return k;
	const char *p = skip_ws(buf, buf + len);
	size_t head = (size_t)(buf + len - p) < ((size_t)64 << 10) ? (size_t)(buf + len - p) : (size_t)64 << 10;
#define HAS(s) (memmem(p, head, s, sizeof s - 1) != NULL)
	if (k == FMT_CHROME_TRACE || HAS("\"traceEvents\""))
		return FMT_CHROME_TRACE;
	if (HAS("\"callFrame\"") || (HAS("\"head\"") && HAS("\"hitCount\"")))
		return HAS("\"selfSize\"") ? FMT_HEAPPROFILE : FMT_CPUPROFILE;
	size_t all = (size_t)(buf + len - p);
	if (!memmem(p, all, "\"preprocessedProfileVersion\"", 28) && memmem(p, all, "\"threads\"", 9) &&
	    memmem(p, all, "\"meta\"", 6))
		return FMT_GECKO_RAW;
#undef HAS
	return FMT_GECKO;
}

#define SNIFF_HEAD ((size_t)64 << 10)

/* True when there is nothing but white space. */
static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return false;
	return true;
}

static enum plumb_err source_start(struct fmt_source *src, struct perr *e)
{
	const char *head;
	size_t len;
	enum plumb_err rc = fmt_stream_head(src->st, SNIFF_HEAD, &head, &len, e);
	if (rc)
		return rc;
	/* an empty input is one that cannot be used (docs/design.md §3.2); the head is all of a short input */
	if (len < SNIFF_HEAD && blank(head, len))
		return perr_set(e, PLUMB_EFORMAT, "%s is empty: no profile in it",
				strcmp(src->st->name, "-") == 0 ? "standard input" : src->st->name);
	src->kind = fmt_sniff(head, len);
	/* a JSON document is sniffed again whole: speedscope's schema URL may be at its end, V8's and Gecko's
	 * shapes are told by their keys */
	if ((src->kind == FMT_GECKO || src->kind == FMT_CHROME_TRACE) && !(rc = fmt_source_document(src, &head, &len, e)))
		src->kind = fmt_json_sniff(head, len);
	return rc;
}

enum plumb_err fmt_source_open(struct fmt_source *src, const char *path, struct perr *e)
{
	memset(src, 0, sizeof *src);
	if (!(src->st = malloc(sizeof *src->st)))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	enum plumb_err rc = fmt_stream_open(src->st, path, e);
	return rc ? rc : source_start(src, e);
}

enum plumb_err fmt_source_mem(struct fmt_source *src, const void *buf, size_t len, struct perr *e)
{
	memset(src, 0, sizeof *src);
	if (!(src->st = malloc(sizeof *src->st)))
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	enum plumb_err rc = fmt_stream_mem(src->st, buf, len, "input", e);
	return rc ? rc : source_start(src, e);
}

enum plumb_err fmt_source_document(struct fmt_source *src, const char **data, size_t *len, struct perr *e)
{
	if (!src->doc) {
		/* every JSON format is read with base/json.h, which takes no string longer than JR_MAX_STRING */
		if (src->kind == FMT_GECKO || src->kind == FMT_SPEEDSCOPE || src->kind == FMT_HOT_JSON)
			src->st->json_string_max = JR_MAX_STRING;
		enum plumb_err rc = fmt_stream_rest(src->st, FMT_MAX_DOCUMENT, &src->doc, &src->doc_len,
						    &src->doc_owned, e);
		if (rc)
			return rc;
	}
	*data = src->doc;
	*len = src->doc_len;
	return PLUMB_OK;
}

void fmt_source_close(struct fmt_source *src)
{
	if (src->st)
		fmt_stream_close(src->st);
	free(src->st);
	free(src->doc_owned);
	memset(src, 0, sizeof *src);
}

typedef enum plumb_err (*reader_fn)(const char *buf, size_t len, const struct fmt_read_opts *opts,
				    struct profile *p, struct perr *e);
typedef enum plumb_err (*stream_reader_fn)(struct fmt_stream *st, const struct fmt_read_opts *opts,
					   struct profile *p, struct perr *e);
typedef enum plumb_err (*writer_fn)(const struct profile *p, FILE *out, const struct fmt_write_opts *opts,
				    struct perr *e);

/* Line formats read from the stream, documents read whole. */
static const struct {
	enum fmt_kind kind;
	stream_reader_fn stream;
	reader_fn doc;
} readers[] = {
	{ FMT_FOLDED, fmt_folded_read_stream, NULL },
	{ FMT_PERF_SCRIPT, fmt_perf_script_read_stream, NULL },
	{ FMT_PERF_DATA, fmt_perf_data_read_stream, NULL },
	{ FMT_GECKO, NULL, fmt_gecko_read },
	{ FMT_SPEEDSCOPE, NULL, fmt_speedscope_read },
	{ FMT_PPROF, NULL, fmt_pprof_read },
	{ FMT_CPUPROFILE, NULL, fmt_cpuprofile_read },
	{ FMT_CHROME_TRACE, NULL, fmt_chrome_trace_read },
	{ FMT_HEAPPROFILE, NULL, fmt_heapprofile_read },
	{ FMT_GECKO_RAW, NULL, fmt_gecko_raw_read },
};

static const struct {
	enum fmt_kind kind;
	writer_fn write;
} writers[] = {
	{ FMT_FOLDED, fmt_folded_write },
	{ FMT_SPEEDSCOPE, fmt_speedscope_write },
	{ FMT_PPROF, fmt_pprof_write },
	{ FMT_GECKO, fmt_gecko_write },
};

/* plumb's own JSON documents that are not profiles, and what reads each: a reader that is handed one says what
 * the file is instead of advising the Firefox Profiler. */
static const struct {
	const char *schema, *what, *use;
} plumb_documents[] = {
	{ "plumb.metrics.v1", "a metrics recording", "plumb metrics --path FILE" },
	{ "plumb.evidence.v1", "a bench evidence artifact", "plumb bench report FILE" },
	{ "plumb.stages.v1", "a stage file", "plumb hot PROFILE --stages FILE" },
	{ "plumb.hot-diff.v1", "the output of plumb diff --json", NULL },
	{ "plumb.bench.report.v1", "the output of plumb bench report --json", NULL },
	{ "plumb.bench.compare.v1", "the output of plumb bench compare --json", NULL },
	{ "plumb.catalog.v1", "a bench catalog", "plumb bench owners --catalog FILE" },
};

/* PLUMB_EFORMAT naming what a plumb document that is not a profile is, or PLUMB_OK when buf is none. */
static enum plumb_err not_a_profile(const char *buf, size_t len, const char *path, struct perr *e)
{
	const char *p = skip_ws(buf, buf + len);
	size_t head = (size_t)(buf + len - p) < 4096 ? (size_t)(buf + len - p) : 4096;
	const char *k = p < buf + len && *p == '{' ? memmem(p, head, "\"schema\"", 8) : NULL;
	if (!k)
		return PLUMB_OK;
	const char *end = p + head, *v = skip_ws(k + 8, end);
	if (v >= end || *v != ':' || (v = skip_ws(v + 1, end)) >= end || *v != '"')
		return PLUMB_OK;
	v++;
	const char *q = memchr(v, '"', (size_t)(end - v));
	if (!q || q - v < 6 || memcmp(v, "plumb.", 6) != 0)
		return PLUMB_OK;
	const char *name = path ? path : "the input";
	for (size_t i = 0; i < sizeof plumb_documents / sizeof plumb_documents[0]; i++) {
		const char *use = plumb_documents[i].use, *file = use ? strstr(use, " FILE") : NULL;
		if (strlen(plumb_documents[i].schema) != (size_t)(q - v) ||
		    memcmp(plumb_documents[i].schema, v, (size_t)(q - v)) != 0)
			continue;
		if (!use)
			return perr_set(e, PLUMB_EFORMAT, "%s is %s (%s), not a profile", name, plumb_documents[i].what,
					plumb_documents[i].schema);
		return perr_set(e, PLUMB_EFORMAT, "%s is %s (%s), not a profile: read it with `%.*s%s%s`", name,
				plumb_documents[i].what, plumb_documents[i].schema, (int)(file + 1 - use), use,
				path ? path : "FILE", file + 5);
	}
	return perr_set(e, PLUMB_EFORMAT, "%s is a plumb document (%.*s), not a profile", name, (int)(q - v), v);
}

/* Out of memory while reading is the input's doing (exit 5), said with how far the read got. */
static enum plumb_err read_failed(struct fmt_source *src, const struct profile *p, enum plumb_err rc, struct perr *e)
{
	if (rc != PLUMB_ENOMEM)
		return rc;
	char size[32];
	uint64_t at = src->doc ? src->doc_len : fmt_stream_offset(src->st);
	return perr_set(e, PLUMB_EIO, "out of memory after %s of input, with %zu distinct stacks: the profile is too "
			"big for this machine's memory", fmt_size_text(at, size, sizeof size),
			p ? profile_nstacks(p) - 1 : (size_t)0);
}

enum plumb_err fmt_source_read(struct fmt_source *src, enum fmt_kind kind, const struct fmt_read_opts *opts,
			       struct profile **out, struct perr *e)
{
	static const struct fmt_read_opts no_opts;
	if (!opts)
		opts = &no_opts;
	if (kind == FMT_UNKNOWN)
		kind = src->kind;
	src->st->progress = opts->progress;
	if (kind == FMT_GECKO) {
		const char *doc;
		size_t dlen;
		enum plumb_err rc = fmt_source_document(src, &doc, &dlen, e);
		if (rc || (rc = not_a_profile(doc, dlen, opts->source_path, e)))
			return rc;
	}
	for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
		if (readers[i].kind != kind)
			continue;
		struct profile *p = profile_new();
		if (!p)
			return read_failed(src, NULL, perr_set(e, PLUMB_ENOMEM, "out of memory"), e);
		profile_keep_timeline(p, opts->keep_timeline);
		enum plumb_err rc;
		if (readers[i].stream) {
			rc = readers[i].stream(src->st, opts, p, e);
		} else {
			const char *data;
			size_t len;
			rc = fmt_source_document(src, &data, &len, e);
			if (!rc)
				rc = readers[i].doc(data, len, opts, p, e);
		}
		if (!rc)
			profile_meta(p)->format = profile_intern_cstr(p, fmt_name(kind));
		size_t ncounts = 0;
		if (!rc && (profile_counts(p, &ncounts), ncounts == 0)) /* nothing read: empty, all comments, not this
									    format at all (docs/design.md §3.2) */
			rc = perr_set(e, PLUMB_EFORMAT, "%s holds no sample: nothing in it reads as a %s profile",
				      opts->source_path ? opts->source_path : "the input", fmt_name(kind));
		if (rc) {
			rc = read_failed(src, p, rc, e);
			profile_free(p);
			return rc;
		}
		*out = p;
		return PLUMB_OK;
	}
	return perr_set(e, PLUMB_EFORMAT, "reading %s profiles is not supported", fmt_name(kind));
}

enum plumb_err fmt_read_buf(const char *buf, size_t len, enum fmt_kind kind, const struct fmt_read_opts *opts,
			    struct profile **out, struct perr *e)
{
	struct fmt_source src;
	enum plumb_err rc = fmt_source_mem(&src, buf, len, e);
	if (!rc)
		rc = fmt_source_read(&src, kind, opts, out, e);
	fmt_source_close(&src);
	return rc;
}

/* Prefixes the path to a message that does not name it yet — nor the --syms file, whose own failure it is. */
static void name_path(struct perr *e, const char *path, const struct fmt_read_opts *opts)
{
	if (e->msg[0] && !strstr(e->msg, path) && !(opts && opts->syms_path && strstr(e->msg, opts->syms_path))) {
		char tmp[PERR_MSG_MAX];
		snprintf(tmp, sizeof tmp, "%s: %s", path, e->msg);
		memcpy(e->msg, tmp, sizeof tmp);
	}
}

enum plumb_err fmt_read_file(const char *path, enum fmt_kind hint, const struct fmt_read_opts *opts,
			     struct profile **out, struct perr *e)
{
	struct fmt_source src;
	enum plumb_err rc = fmt_source_open(&src, path, e);
	struct fmt_read_opts o = opts ? *opts : (struct fmt_read_opts){ 0 };
	if (!o.source_path)
		o.source_path = path;
	if (!rc)
		rc = fmt_source_read(&src, hint, &o, out, e);
	if (rc)
		name_path(e, path, opts);
	fmt_source_close(&src);
	return rc;
}

enum plumb_err fmt_write_failed(const char *path, int err, struct perr *e)
{
	return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", strcmp(path, "-") == 0 ? "standard output" : path,
			strerror(err ? err : EIO));
}

enum plumb_err fmt_write_file(const struct profile *p, const char *path, enum fmt_kind kind,
			      const struct fmt_write_opts *opts, struct perr *e)
{
	static const struct fmt_write_opts no_opts;
	if (!opts)
		opts = &no_opts;
	if (kind == FMT_SVG)
		return perr_set(e, PLUMB_EUNSUPPORTED, "fmt_write_file does not draw flame graphs: write svg "
						      "through render_write_file (render/output.h)");
	writer_fn write = NULL;
	for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
		if (writers[i].kind == kind)
			write = writers[i].write;
	if (!write)
		return perr_set(e, PLUMB_EINVAL, "writing %s files is not supported", fmt_name(kind));
	struct fmt_write_opts o = *opts;
	o.path = path;
	struct atomic_file af;
	enum plumb_err rc = atomic_open(&af, path, e);
	if (rc)
		return rc;
	errno = 0;
	rc = write(p, af.fp, &o, e);
	if (rc == PLUMB_EOUTPUT) /* the write that failed names the path and the reason (docs/design.md §3.3) */
		fmt_write_failed(path, errno, e);
	if (rc) {
		int err = errno;
		if (rc == PLUMB_EOUTPUT && ferror(af.fp)) /* the writer saw its stream fail: say where and why */
			perr_set(e, rc, "cannot write %s: %s", path, strerror(err ? err : EIO));
		atomic_abort(&af);
		return rc;
	}
	return atomic_commit(&af, e);
}
