/* format.c — the dispatcher: names, extensions, content sniffing, loading (with gunzip), and the tables
 * that route a kind to its reader or writer. A new format adds one row to each table. */
#include "format/format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "base/atomic.h"
#include "base/grow.h"
#include "base/readall.h"
#include "base/str.h"

static const struct {
	enum fmt_kind kind;
	const char *name;
} names[] = {
	{ FMT_FOLDED, "folded" }, { FMT_GECKO, "gecko" }, { FMT_SPEEDSCOPE, "speedscope" },
	{ FMT_PPROF, "pprof" }, { FMT_PERF_SCRIPT, "perf-script" }, { FMT_SVG, "svg" },
	{ FMT_HOT_JSON, "hot-json" },
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
	if (p == end)
		return FMT_FOLDED; /* empty input: an empty folded profile */
	size_t head = (size_t)(end - p) < 4096 ? (size_t)(end - p) : 4096;
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
	if (len >= 2 && (unsigned char)buf[0] == 0x0a && memmem(buf, len < 256 ? len : 256, "samples", 7))
		return FMT_PPROF;
	if (fmt_perf_script_sniff(buf, len))
		return FMT_PERF_SCRIPT;
	/* perf script: an event header line followed by indented "addr sym (module)" lines */
	const char *nl = memchr(p, '\n', head);
	if (nl && nl + 1 < end && (nl[1] == '\t' || (nl[1] == ' ' && nl + 2 < end && nl[2] == ' ')))
		return FMT_PERF_SCRIPT;
	return FMT_FOLDED;
}

static enum plumb_err read_all_fd(int fd, const char *path, struct fmt_input *in, struct perr *e)
{
	size_t cap = 1 << 16;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (size_t)st.st_size + 1;
	int err = read_fd_whole(fd, cap, 0, &in->data, &in->len);
	if (err == ENOMEM)
		return perr_set(e, PLUMB_ENOMEM, "out of memory reading %s", path);
	if (err)
		return perr_set(e, PLUMB_EIO, "cannot read %s: %s", path, strerror(err));
	return PLUMB_OK;
}

static enum plumb_err gunzip(struct fmt_input *in, const char *path, struct perr *e)
{
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return perr_set(e, PLUMB_ENOMEM, "cannot start gunzip for %s", path);
	size_t cap = in->len * 4 + 4096, len = 0;
	char *out = malloc(cap);
	if (!out) {
		inflateEnd(&zs);
		return perr_set(e, PLUMB_ENOMEM, "out of memory reading %s", path);
	}
	zs.next_in = (Bytef *)in->data;
	zs.avail_in = (uInt)in->len;
	int rc;
	do {
		if (cap - len < 65536) {
			size_t nc = grow_cap(cap + 1, cap);
			if (!REALLOC_ARRAY(out, nc)) {
				free(out);
				inflateEnd(&zs);
				return perr_set(e, PLUMB_ENOMEM, "out of memory reading %s", path);
			}
			cap = nc;
		}
		zs.next_out = (Bytef *)out + len;
		zs.avail_out = (uInt)(cap - len - 1);
		rc = inflate(&zs, Z_NO_FLUSH);
		len = (size_t)((char *)zs.next_out - out);
		if (rc == Z_STREAM_END && zs.avail_in > 0) /* concatenated gzip members */
			rc = inflateReset(&zs) == Z_OK ? Z_OK : Z_DATA_ERROR;
	} while (rc == Z_OK || (rc == Z_BUF_ERROR && zs.avail_in > 0));
	inflateEnd(&zs);
	if (rc != Z_STREAM_END) {
		free(out);
		return perr_set(e, PLUMB_EFORMAT, "%s: gzip data is corrupt or truncated at byte %lu", path,
				(unsigned long)zs.total_in);
	}
	out[len] = '\0';
	fmt_input_release(in);
	in->data = out;
	in->len = len;
	return PLUMB_OK;
}

/* A big regular file is mapped, not read: copying into fresh heap pages costs more than parsing it. An
 * anonymous mapping one byte longer sits under the file mapping so the data stays NUL-terminated. */
static bool map_file(int fd, struct fmt_input *in)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (1 << 20))
		return false;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)st.st_size;
	size_t total = (len + 1 + page - 1) / page * page;
	char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return false;
	if (mmap(base, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
		munmap(base, total);
		return false;
	}
	in->data = base;
	in->len = len;
	in->map_len = total;
	return true;
}

/* True when there is nothing but white space. */
static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return false;
	return true;
}

enum plumb_err fmt_load(const char *path, struct fmt_input *in, struct perr *e)
{
	in->data = NULL;
	in->len = 0;
	in->map_len = 0;
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) /* docs/design.md §3.2: a path that is not there is 3, one that cannot be read 5 */
		return perr_set(e, errno == ENOENT || errno == ENOTDIR ? PLUMB_ENOENT : PLUMB_EIO, "cannot read %s: %s",
				path, strerror(errno));
	enum plumb_err rc = map_file(fd, in) ? PLUMB_OK : read_all_fd(fd, path, in, e);
	if (fd != 0)
		close(fd);
	if (rc)
		return rc;
	if (in->len >= 2 && (unsigned char)in->data[0] == 0x1f && (unsigned char)in->data[1] == 0x8b) {
		rc = gunzip(in, path, e);
		if (rc) {
			fmt_input_release(in);
			return rc;
		}
	}
	if (blank(in->data, in->len)) { /* an empty input is one that cannot be used (docs/design.md §3.2) */
		fmt_input_release(in);
		return perr_set(e, PLUMB_EFORMAT, "%s is empty: no profile in it",
				strcmp(path, "-") == 0 ? "standard input" : path);
	}
	return PLUMB_OK;
}

void fmt_input_release(struct fmt_input *in)
{
	if (in->map_len)
		munmap(in->data, in->map_len);
	else
		free(in->data);
	in->data = NULL;
	in->len = 0;
	in->map_len = 0;
}

typedef enum plumb_err (*reader_fn)(const char *buf, size_t len, const struct fmt_read_opts *opts,
				    struct profile *p, struct perr *e);
typedef enum plumb_err (*writer_fn)(const struct profile *p, FILE *out, const struct fmt_write_opts *opts,
				    struct perr *e);

static enum plumb_err read_folded(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				  struct perr *e)
{
	return fmt_folded_read_opts(buf, len, opts, p, e);
}

static const struct {
	enum fmt_kind kind;
	reader_fn read;
} readers[] = {
	{ FMT_FOLDED, read_folded },
	{ FMT_PERF_SCRIPT, fmt_perf_script_read },
	{ FMT_GECKO, fmt_gecko_read },
	{ FMT_SPEEDSCOPE, fmt_speedscope_read },
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
		const char *use = plumb_documents[i].use, *file = use ? strstr(use, "FILE") : NULL;
		if (strlen(plumb_documents[i].schema) != (size_t)(q - v) ||
		    memcmp(plumb_documents[i].schema, v, (size_t)(q - v)) != 0)
			continue;
		if (!use)
			return perr_set(e, PLUMB_EFORMAT, "%s is %s (%s), not a profile", name, plumb_documents[i].what,
					plumb_documents[i].schema);
		return perr_set(e, PLUMB_EFORMAT, "%s is %s (%s), not a profile: read it with `%.*s%s%s`", name,
				plumb_documents[i].what, plumb_documents[i].schema, (int)(file - use), use,
				path ? path : "FILE", file + 4);
	}
	return perr_set(e, PLUMB_EFORMAT, "%s is a plumb document (%.*s), not a profile", name, (int)(q - v), v);
}

enum plumb_err fmt_read_buf(const char *buf, size_t len, enum fmt_kind kind, const struct fmt_read_opts *opts,
			    struct profile **out, struct perr *e)
{
	static const struct fmt_read_opts no_opts;
	if (!opts)
		opts = &no_opts;
	if (kind == FMT_UNKNOWN)
		kind = fmt_sniff(buf, len);
	if (kind == FMT_GECKO && not_a_profile(buf, len, opts->source_path, e))
		return e->code;
	for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++) {
		if (readers[i].kind != kind)
			continue;
		struct profile *p = profile_new();
		if (!p)
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		profile_keep_timeline(p, opts->keep_timeline);
		enum plumb_err rc = readers[i].read(buf, len, opts, p, e);
		if (rc) {
			profile_free(p);
			return rc;
		}
		*out = p;
		return PLUMB_OK;
	}
	return perr_set(e, PLUMB_EFORMAT, "reading %s profiles is not supported", fmt_name(kind));
}

enum plumb_err fmt_read_file(const char *path, enum fmt_kind hint, const struct fmt_read_opts *opts,
			     struct profile **out, struct perr *e)
{
	struct fmt_input in;
	enum plumb_err rc = fmt_load(path, &in, e);
	if (rc)
		return rc;
	struct fmt_read_opts o = opts ? *opts : (struct fmt_read_opts){ 0 };
	if (!o.source_path)
		o.source_path = path;
	rc = fmt_read_buf(in.data, in.len, hint, &o, out, e);
	if (rc && e->msg[0] && !strstr(e->msg, path)) {
		char tmp[PERR_MSG_MAX];
		snprintf(tmp, sizeof tmp, "%s: %s", path, e->msg);
		memcpy(e->msg, tmp, sizeof tmp);
	}
	fmt_input_release(&in);
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
		atomic_abort(&af);
		return rc;
	}
	return atomic_commit(&af, e);
}
