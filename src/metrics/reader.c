/* reader.c — parses and validates a plumb.metrics.v1 document (jansson: the file is bounded by its `keep`).
 * Everything is checked before it is used: a field of the wrong type, a negative size or a schema of another
 * version is PLUMB_EFORMAT with the place named, never a crash or a silently wrong figure. */
#include "metrics/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/json_tree.h"
#include "base/readall.h"
#include "os/store.h"

#define METRICS_READ_MAX (512u << 20) /* no bounded recording comes near this */
/* Times are milliseconds since the epoch: refused outside [0, 2^53] (285,000 years, and exact in a double), so
 * that no difference or sum of two of them can wrap. */
#define TIME_MAX_MS ((int64_t)1 << 53)

struct rd {
	struct perr *e;
	const char *where;
};

static bool bad(struct rd *r, const char *field, const char *what)
{
	perr_set(r->e, PLUMB_EFORMAT, "malformed metrics recording: %s%s%s %s", r->where, r->where[0] ? "." : "",
		 field, what);
	return false;
}

static bool get_int(struct rd *r, json_t *obj, const char *field, int64_t lo, int64_t hi, int64_t *out)
{
	json_t *v = json_object_get(obj, field);
	if (!v)
		return bad(r, field, "is missing");
	if (!json_is_integer(v))
		return bad(r, field, "is not a whole number");
	json_int_t x = json_integer_value(v);
	if (x < lo || x > hi)
		return bad(r, field, "is out of range");
	*out = x;
	return true;
}

static bool get_u64(struct rd *r, json_t *obj, const char *field, bool nullable, uint64_t *out)
{
	json_t *v = json_object_get(obj, field);
	if (nullable && v && json_is_null(v)) {
		*out = MPROC_UNKNOWN;
		return true;
	}
	int64_t x;
	if (!get_int(r, obj, field, 0, INT64_MAX, &x))
		return false;
	*out = (uint64_t)x;
	return true;
}

static bool get_num(struct rd *r, json_t *obj, const char *field, double *out)
{
	json_t *v = json_object_get(obj, field);
	if (!v)
		return bad(r, field, "is missing");
	if (!json_is_number(v))
		return bad(r, field, "is not a number");
	double x = json_number_value(v);
	if (!isfinite(x) || x < 0 || x > 1e15)
		return bad(r, field, "is out of range");
	*out = x;
	return true;
}

static bool get_str(struct rd *r, json_t *obj, const char *field, char *buf, size_t cap)
{
	json_t *v = json_object_get(obj, field);
	if (!v)
		return bad(r, field, "is missing");
	if (!json_is_string(v))
		return bad(r, field, "is not a string");
	snprintf(buf, cap, "%s", json_string_value(v));
	return true;
}

static bool parse_peak(struct rd *r, json_t *v, struct metrics_peak *k)
{
	memset(k, 0, sizeof *k);
	if (!v || json_is_null(v))
		return true;
	if (!json_is_object(v))
		return bad(r, "", "is not an object");
	int64_t t, pid;
	if (!get_int(r, v, "t_ms", 0, TIME_MAX_MS, &t) || !get_num(r, v, "total_cpu_pct", &k->total_cpu_pct) ||
	    !get_u64(r, v, "total_rss_bytes", false, &k->total_rss_bytes) ||
	    !get_int(r, v, "pid", 0, 0x7fffffff, &pid) || !get_str(r, v, "name", k->name, sizeof k->name) ||
	    !get_num(r, v, "cpu_pct", &k->cpu_pct) || !get_u64(r, v, "rss_bytes", false, &k->rss_bytes))
		return false;
	k->t_ms = t;
	k->pid = (int)pid;
	k->set = true;
	return true;
}

static bool parse_proc(struct rd *r, json_t *v, struct metrics_proc *p)
{
	if (!json_is_object(v))
		return bad(r, "", "is not an object");
	int64_t pid, ppid, threads;
	char role[16];
	if (!get_int(r, v, "pid", 1, 0x7fffffff, &pid) || !get_int(r, v, "ppid", 0, 0x7fffffff, &ppid) ||
	    !get_str(r, v, "name", p->name, sizeof p->name) || !get_str(r, v, "role", role, sizeof role) ||
	    !get_num(r, v, "cpu_pct", &p->cpu_pct) || !get_num(r, v, "wakeups_per_s", &p->wakeups_per_s) ||
	    !get_u64(r, v, "rss_bytes", false, &p->rss_bytes) ||
	    !get_u64(r, v, "peak_rss_bytes", false, &p->peak_rss_bytes) ||
	    !get_u64(r, v, "private_bytes", true, &p->private_bytes) ||
	    !get_int(r, v, "threads", 0, UINT32_MAX, &threads))
		return false;
	if (strcmp(role, "main") != 0 && strcmp(role, "child") != 0)
		return bad(r, "role", "is neither \"main\" nor \"child\"");
	p->pid = (int)pid;
	p->ppid = (int)ppid;
	p->main = role[0] == 'm';
	p->threads = (uint32_t)threads;
	return true;
}

static bool parse_sample(struct rd *r, json_t *v, struct metrics_sample *s, size_t index)
{
	char where[64];
	snprintf(where, sizeof where, "samples[%zu]", index);
	r->where = where;
	if (!json_is_object(v))
		return bad(r, "", "is not an object");
	if (!get_int(r, v, "t_ms", 0, TIME_MAX_MS, &s->t_ms))
		return false;
	if (json_object_get(v, "scan_ms") && !get_int(r, v, "scan_ms", 0, TIME_MAX_MS, &s->scan_ms))
		return false;
	json_t *tot = json_object_get(v, "totals");
	if (!json_is_object(tot))
		return bad(r, "totals", "is missing or not an object");
	int64_t nproc, threads;
	if (!get_int(r, tot, "processes", 0, UINT32_MAX, &nproc) || !get_num(r, tot, "cpu_pct", &s->totals.cpu_pct) ||
	    !get_num(r, tot, "wakeups_per_s", &s->totals.wakeups_per_s) ||
	    !get_u64(r, tot, "rss_bytes", false, &s->totals.rss_bytes) ||
	    !get_u64(r, tot, "private_bytes", false, &s->totals.private_bytes) ||
	    !get_int(r, tot, "threads", 0, UINT32_MAX, &threads))
		return false;
	s->totals.processes = (uint32_t)nproc;
	s->totals.threads = (uint32_t)threads;
	json_t *procs = json_object_get(v, "processes");
	if (!json_is_array(procs))
		return bad(r, "processes", "is missing or not an array");
	size_t n = json_array_size(procs);
	if (n) {
		s->procs = calloc(n, sizeof *s->procs);
		if (!s->procs) {
			perr_set(r->e, PLUMB_ENOMEM, "out of memory");
			return false;
		}
	}
	for (size_t i = 0; i < n; i++) {
		char pwhere[96];
		snprintf(pwhere, sizeof pwhere, "samples[%zu].processes[%zu]", index, i);
		r->where = pwhere;
		if (!parse_proc(r, json_array_get(procs, i), &s->procs[i]))
			return false;
		s->nprocs++;
	}
	return true;
}

void metrics_doc_release(struct metrics_doc *doc)
{
	if (doc->samples)
		for (size_t i = 0; i < doc->nsamples; i++)
			free(doc->samples[i].procs);
	free(doc->samples);
	free(doc->root_command);
	memset(doc, 0, sizeof *doc);
}

static bool parse_doc(struct rd *r, json_t *root, struct metrics_doc *doc)
{
	r->where = "";
	if (!json_is_object(root))
		return bad(r, "document", "is not a JSON object");
	json_t *schema = json_object_get(root, "schema");
	if (!json_is_string(schema)) {
		perr_set(r->e, PLUMB_EFORMAT, "not a plumb metrics recording (no \"schema\" field)");
		return false;
	}
	const char *sv = json_string_value(schema);
	if (strcmp(sv, METRICS_SCHEMA) != 0) {
		if (strncmp(sv, "plumb.metrics.", 14) == 0)
			perr_set(r->e, PLUMB_EFORMAT,
				 "metrics recording of schema '%.64s', which this build does not understand (it reads "
				 "%s)", sv, METRICS_SCHEMA);
		else
			perr_set(r->e, PLUMB_EFORMAT, "not a plumb metrics recording (schema '%.64s')", sv);
		return false;
	}
	char state[16];
	int64_t keep, started, updated, taken, root_pid;
	if (!get_str(r, root, "name", doc->name, sizeof doc->name) || !get_str(r, root, "state", state, sizeof state) ||
	    !get_num(r, root, "every_s", &doc->every_s) || !get_int(r, root, "keep", 1, METRICS_KEEP_MAX, &keep) ||
	    !get_int(r, root, "started_ms", 0, TIME_MAX_MS, &started) ||
	    !get_int(r, root, "updated_ms", 0, TIME_MAX_MS, &updated) ||
	    !get_int(r, root, "samples_taken", 0, INT64_MAX, &taken))
		return false;
	if (strcmp(state, "recording") != 0 && strcmp(state, "ended") != 0)
		return bad(r, "state", "is neither \"recording\" nor \"ended\"");
	doc->ended = state[0] == 'e';
	doc->keep = (uint64_t)keep;
	doc->started_ms = started;
	doc->updated_ms = updated;
	doc->samples_taken = (uint64_t)taken;

	json_t *rt = json_object_get(root, "root");
	if (!json_is_object(rt))
		return bad(r, "root", "is missing or not an object");
	r->where = "root";
	if (!get_int(r, rt, "pid", 0, 0x7fffffff, &root_pid) ||
	    !get_str(r, rt, "name", doc->root_name, sizeof doc->root_name))
		return false;
	doc->root_pid = (int)root_pid;
	json_t *cmd = json_object_get(rt, "command");
	if (cmd && !json_is_null(cmd)) {
		if (!json_is_string(cmd))
			return bad(r, "command", "is not a string");
		doc->root_command = strdup(json_string_value(cmd));
		if (!doc->root_command) {
			perr_set(r->e, PLUMB_ENOMEM, "out of memory");
			return false;
		}
	}

	json_t *pr = json_object_get(root, "peak_recording");
	if (pr && !json_is_null(pr)) {
		if (!json_is_object(pr))
			return bad(r, "peak_recording", "is not an object");
		r->where = "peak_recording.cpu";
		if (!parse_peak(r, json_object_get(pr, "cpu"), &doc->rec_cpu))
			return false;
		r->where = "peak_recording.memory";
		if (!parse_peak(r, json_object_get(pr, "memory"), &doc->rec_mem))
			return false;
	}

	r->where = "";
	json_t *samples = json_object_get(root, "samples");
	if (!json_is_array(samples))
		return bad(r, "samples", "is missing or not an array");
	size_t n = json_array_size(samples);
	if (n > doc->keep)
		return bad(r, "samples", "holds more samples than its keep bound");
	if (n) {
		doc->samples = calloc(n, sizeof *doc->samples);
		if (!doc->samples) {
			perr_set(r->e, PLUMB_ENOMEM, "out of memory");
			return false;
		}
	}
	for (size_t i = 0; i < n; i++) {
		doc->nsamples++;
		if (!parse_sample(r, json_array_get(samples, i), &doc->samples[i], i))
			return false;
	}
	return true;
}

enum plumb_err metrics_doc_parse(const char *buf, size_t len, struct metrics_doc *doc, struct perr *e)
{
	memset(doc, 0, sizeof *doc);
	struct jr_error jerr;
	json_t *root = jr_parse(buf, len, JR_TREE_NO_DUPLICATES, &jerr);
	if (!root) {
		if (len == 0)
			return perr_set(e, PLUMB_EFORMAT, "the metrics recording is empty");
		return perr_set(e, PLUMB_EFORMAT, "the metrics recording is not valid JSON (line %zu, column %zu: %s)",
				jerr.line, jerr.column, jerr.text);
	}
	struct rd r = { e, "" };
	bool ok = parse_doc(&r, root, doc);
	json_decref(root);
	if (!ok) {
		metrics_doc_release(doc);
		return e && e->code ? e->code : PLUMB_EFORMAT;
	}
	return PLUMB_OK;
}

/* Parses buf (which it takes) as the recording at path: EFORMAT messages name the file; *raw gets buf when asked
 * for and the parse succeeded, else buf is freed. */
static enum plumb_err parse_named(char *buf, size_t len, const char *path, struct metrics_doc *doc, char **raw,
				  size_t *raw_len, struct perr *e)
{
	enum plumb_err rc = metrics_doc_parse(buf, len, doc, e);
	if (rc == PLUMB_EFORMAT && e) { /* name the file */
		char msg[PERR_MSG_MAX];
		snprintf(msg, sizeof msg, "%s", e->msg);
		perr_set(e, PLUMB_EFORMAT, "%s: %s", path, msg);
	}
	if (rc == PLUMB_OK && raw) {
		*raw = buf;
		*raw_len = len;
	} else {
		free(buf);
	}
	return rc;
}

enum plumb_err metrics_doc_read_file(const char *path, struct metrics_doc *doc, char **raw, size_t *raw_len,
				     struct perr *e)
{
	memset(doc, 0, sizeof *doc);
	if (raw)
		*raw = NULL;
	/* the input rule (base/readall.h, docs/design.md §3.5): a device or a FIFO is refused unopened or unread
	 * (a recording is a regular file, replaced by rename), a larger file unread */
	int fd;
	enum plumb_err rc = read_input_open_file(path, "metrics recording", METRICS_READ_MAX, &fd, NULL, e);
	if (rc == PLUMB_ENOENT)
		return perr_set(e, PLUMB_ENOENT, "no recording at %s", path);
	if (rc)
		return rc;
	/* the file is replaced by rename, never rewritten in place: this fd sees one version */
	char *buf;
	size_t len;
	rc = read_input_fd(fd, path, "metrics recording", METRICS_READ_MAX, &buf, &len, e);
	close(fd);
	if (rc)
		return rc;
	return parse_named(buf, len, path, doc, raw, raw_len, e);
}

enum plumb_err metrics_doc_read_stored(const char *name, struct metrics_doc *doc, char **raw, size_t *raw_len,
				       struct perr *e)
{
	memset(doc, 0, sizeof *doc);
	if (raw)
		*raw = NULL;
	char path[PATH_MAX], *buf;
	size_t len;
	enum plumb_err rc = store_path(&STORE_METRICS, name, path, sizeof path, e);
	if (!rc)
		rc = store_load(&STORE_METRICS, name, &buf, &len, e);
	if (rc == PLUMB_ENOENT)
		return perr_set(e, PLUMB_ENOENT, "no recording at %s", path);
	return rc ? rc : parse_named(buf, len, path, doc, raw, raw_len, e);
}

static void skip_none(void *ctx, const struct perr *why)
{
	(void)ctx;
	(void)why;
}

/* Reads one recording file of the store into n: the newest so far, or one of the others. */
static enum plumb_err consider(struct metrics_newest *n, const char *name, const char *path,
			       void (*skipped)(void *ctx, const struct perr *why), void *ctx, struct perr *e)
{
	struct metrics_doc cand;
	char *raw = NULL;
	size_t len = 0;
	struct perr ce = PERR_INIT;
	n->nfiles++;
	if (metrics_doc_read_stored(name, &cand, &raw, &len, &ce)) {
		if (ce.code == PLUMB_ENOENT) { /* removed meanwhile */
			n->nfiles--;
			return PLUMB_OK;
		}
		skipped(ctx, &ce);
		if (!n->nbad++)
			n->first_bad = ce;
		return PLUMB_OK;
	}
	if (!ALLOC_GROW(n->others, n->nothers + 1, n->others_cap)) {
		metrics_doc_release(&cand);
		free(raw);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	bool newest = !n->found || cand.updated_ms > n->doc.updated_ms;
	struct metrics_doc *other = newest ? &n->doc : &cand;
	if (n->found || !newest)
		snprintf(n->others[n->nothers++], METRICS_NAME_MAX, "%s", other->name);
	if (!newest) {
		metrics_doc_release(&cand);
		free(raw);
		return PLUMB_OK;
	}
	if (n->found) {
		metrics_doc_release(&n->doc);
		free(n->raw);
	}
	n->doc = cand;
	n->raw = raw;
	n->raw_len = len;
	n->found = true;
	snprintf(n->path, sizeof n->path, "%s", path);
	return PLUMB_OK;
}

enum plumb_err metrics_store_newest(struct metrics_newest *n, void (*skipped)(void *ctx, const struct perr *why),
				    void *ctx, struct perr *e)
{
	memset(n, 0, sizeof *n);
	char **names;
	size_t nnames;
	enum plumb_err rc = store_dir(&STORE_METRICS, n->dir, sizeof n->dir, e);
	if (!rc)
		rc = store_list(&STORE_METRICS, &names, &nnames, e);
	if (rc)
		return rc;
	for (size_t i = 0; i < nnames && !rc; i++) {
		char path[PATH_MAX];
		struct perr pe = PERR_INIT;
		if (store_path(&STORE_METRICS, names[i], path, sizeof path, &pe) == PLUMB_OK)
			rc = consider(n, names[i], path, skipped ? skipped : skip_none, ctx, e);
	}
	store_list_free(names, nnames);
	if (rc)
		metrics_newest_release(n);
	return rc;
}

void metrics_newest_release(struct metrics_newest *n)
{
	if (n->found)
		metrics_doc_release(&n->doc);
	free(n->raw);
	free(n->others);
	memset(n, 0, sizeof *n);
}
