/* evidence.c — the plumb.evidence.v1 artifact in memory: its samples, the index of them by metric name that
 * report, compare and coverage look up through, and the writer (the header through jansson, the samples
 * streamed a line each, all through the atomic writer). Reading one back is evidence_read.c. */
#include "bench/evidence.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/atomic.h"
#include "base/grow.h"
#include "base/intern.h"
#include "base/sbuf.h"
#include "base/str.h"
#include "base/utf8.h"

static void index_free(struct bench_metric_index *ix);

void bench_evidence_init(struct bench_evidence *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->git_dirty = -1;
	ev->load[0] = ev->load[1] = ev->load[2] = NAN;
	ev->seed = ev->retries = -1;
}

size_t bench_case_contended(const struct bench_case_result *c, size_t *with)
{
	size_t n = 0, w = 0;
	for (size_t i = 0; i < c->nruns; i++)
		if (c->runs[i].has_contention) {
			w++;
			n += c->runs[i].contended;
		}
	if (with)
		*with = w;
	return n;
}

static void case_release(struct bench_case_result *c)
{
	free(c->name);
	free(c->command);
	free(c->cwd);
	for (size_t i = 0; i < c->nenv; i++)
		free(c->env[i]);
	free(c->env);
	free(c->binary);
	free(c->producer);
	free(c->trust);
	free(c->status);
	free(c->prepare);
	free(c->core_metric);
	free(c->core_source);
	free(c->runs);
}

void bench_evidence_release(struct bench_evidence *ev)
{
	if (!ev)
		return;
	free(ev->suite);
	free(ev->suite_path);
	free(ev->catalog_path);
	free(ev->created);
	free(ev->cpu_model);
	free(ev->kernel);
	free(ev->hostname);
	free(ev->governor);
	free(ev->git_commit);
	free(ev->policy_source);
	free(ev->case_filter);
	free(ev->order);
	free(ev->trust);
	for (size_t i = 0; i < ev->ncases; i++)
		case_release(&ev->cases[i]);
	free(ev->cases);
	for (size_t i = 0; i < ev->nsamples; i++) {
		free(ev->samples[i].name);
		free(ev->samples[i].kind);
		free(ev->samples[i].unit);
		free(ev->samples[i].tags);
	}
	free(ev->samples);
	index_free(ev->index);
	bench_evidence_init(ev);
}

bool bench_evidence_add_sample(struct bench_evidence *ev, const char *name, const char *kind, const char *unit,
			       double value, long run, const char *tags)
{
	if (!ALLOC_GROW(ev->samples, ev->nsamples + 1, ev->samples_cap))
		return false;
	bool oom = false;
	struct bench_sample s = {
		.name = str_dup_or_null(name, &oom),
		.kind = str_dup_or_null(kind ? kind : "", &oom),
		.unit = str_dup_or_null(unit ? unit : "", &oom),
		.value = value,
		.run = run,
		.tags = str_dup_or_null(tags, &oom),
	};
	if (oom || !s.name) {
		free(s.name);
		free(s.kind);
		free(s.unit);
		free(s.tags);
		return false;
	}
	ev->samples[ev->nsamples++] = s;
	index_free(ev->index);
	ev->index = NULL;
	return true;
}

const struct bench_case_result *bench_evidence_case_of(const struct bench_evidence *ev, const char *metric)
{
	const char *dot = strchr(metric, '.');
	size_t n = dot ? (size_t)(dot - metric) : strlen(metric);
	for (size_t i = 0; i < ev->ncases; i++)
		if (strlen(ev->cases[i].name) == n && strncmp(ev->cases[i].name, metric, n) == 0)
			return &ev->cases[i];
	return NULL;
}

struct bench_metric_index {
	struct interner names; /* metric name <-> metric number (borrowed: the names point into the samples) */
	size_t n;
	size_t *start;       /* the samples of metric m are order[start[m] .. start[m + 1]) */
	size_t *order;
};

static void index_free(struct bench_metric_index *ix)
{
	if (!ix)
		return;
	interner_release(&ix->names);
	free(ix->start);
	free(ix->order);
	free(ix);
}

/* Metric number of name, or (size_t)-1. */
static size_t index_find(const struct bench_metric_index *ix, const char *name)
{
	uint32_t m = intern_find(&ix->names, name, strlen(name));
	return m == IDTAB_NONE ? (size_t)-1 : m;
}

/* The index, built when missing (the cache is not part of the artifact's value, hence the cast). */
static const struct bench_metric_index *get_index(const struct bench_evidence *cev)
{
	struct bench_evidence *ev = (struct bench_evidence *)cev;
	if (ev->index)
		return ev->index;
	struct bench_metric_index *ix = calloc(1, sizeof *ix);
	size_t *metric_of = malloc((ev->nsamples + 1) * sizeof *metric_of);
	if (!ix || !metric_of)
		goto oom;
	ix->names = (struct interner)INTERNER_BORROW_INIT;
	for (size_t i = 0; i < ev->nsamples; i++) {
		const char *name = ev->samples[i].name;
		uint32_t m = intern(&ix->names, name, strlen(name), NULL);
		if (m == INTERN_NOMEM)
			goto oom;
		metric_of[i] = m;
	}
	ix->n = intern_count(&ix->names);
	ix->start = calloc(ix->n + 1, sizeof *ix->start);
	ix->order = malloc((ev->nsamples + 1) * sizeof *ix->order);
	if (!ix->start || !ix->order)
		goto oom;
	for (size_t i = 0; i < ev->nsamples; i++)
		ix->start[metric_of[i] + 1]++;
	for (size_t m = 0; m < ix->n; m++)
		ix->start[m + 1] += ix->start[m];
	size_t *fill = metric_of; /* reused: counting sort into order, keeping sample order within a metric */
	size_t *next = calloc(ix->n + 1, sizeof *next);
	if (!next)
		goto oom;
	for (size_t i = 0; i < ev->nsamples; i++) {
		size_t m = fill[i];
		ix->order[ix->start[m] + next[m]++] = i;
	}
	free(next);
	free(metric_of);
	ev->index = ix;
	return ix;
oom:
	free(metric_of);
	index_free(ix);
	return NULL;
}

const char **bench_evidence_metrics(const struct bench_evidence *ev, size_t *n)
{
	*n = 0;
	const struct bench_metric_index *ix = get_index(ev);
	if (!ix)
		return NULL;
	const char **out = malloc((ix->n + 1) * sizeof *out);
	if (!out)
		return NULL;
	for (size_t m = 0; m < ix->n; m++)
		out[m] = intern_str(&ix->names, (uint32_t)m);
	*n = ix->n;
	return out;
}

double *bench_evidence_values(const struct bench_evidence *ev, const char *metric, size_t *n)
{
	*n = 0;
	const struct bench_metric_index *ix = get_index(ev);
	size_t m = ix ? index_find(ix, metric) : (size_t)-1;
	if (m == (size_t)-1)
		return NULL;
	size_t count = ix->start[m + 1] - ix->start[m];
	double *v = malloc(count * sizeof *v);
	if (!v)
		return NULL;
	for (size_t k = 0; k < count; k++)
		v[k] = ev->samples[ix->order[ix->start[m] + k]].value;
	*n = count;
	return v;
}

const struct bench_sample *bench_evidence_first(const struct bench_evidence *ev, const char *metric)
{
	const struct bench_metric_index *ix = get_index(ev);
	size_t m = ix ? index_find(ix, metric) : (size_t)-1;
	if (m == (size_t)-1)
		return NULL;
	return &ev->samples[ix->order[ix->start[m]]];
}

/* ---- writing ---- */

/* A JSON string of s; bytes that are not UTF-8 (a command line can hold anything) become '?' (base/utf8.h). */
static json_t *str_or_null(const char *s)
{
	if (!s)
		return json_null();
	size_t n = strlen(s);
	if (utf8_valid(s, n))
		return json_stringn(s, n);
	struct sbuf clean = SBUF_INIT;
	utf8_sanitize(&clean, s, n);
	json_t *j = clean.oom ? NULL : json_stringn(clean.buf, clean.len);
	sbuf_release(&clean);
	return j;
}

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *to_json(const struct bench_evidence *ev)
{
	json_t *root = json_object();
	bool ok = root != NULL; /* every set/append succeeded: no value was dropped for want of memory */
	if (!ok)
		return NULL;
	ok &= !json_object_set_new(root, "schema", json_string(BENCH_EVIDENCE_SCHEMA));
	ok &= !json_object_set_new(root, "suite", str_or_null(ev->suite));
	ok &= !json_object_set_new(root, "suite_path", str_or_null(ev->suite_path));
	ok &= !json_object_set_new(root, "catalog_path", str_or_null(ev->catalog_path));
	ok &= !json_object_set_new(root, "created", str_or_null(ev->created));
	json_t *load = json_array();
	for (int i = 0; i < 3; i++)
		ok &= !json_array_append_new(load, num_or_null(ev->load[i]));
	ok &= !json_object_set_new(root, "machine",
			    json_pack("{s:o, s:I, s:o, s:o, s:o, s:o}", "cpu_model", str_or_null(ev->cpu_model), "cores",
				      (json_int_t)ev->cores, "kernel", str_or_null(ev->kernel), "governor",
				      str_or_null(ev->governor), "load", load, "hostname", str_or_null(ev->hostname)));
	ok &= !json_object_set_new(root, "git",
			    json_pack("{s:o, s:o}", "commit", str_or_null(ev->git_commit), "dirty",
				      ev->git_dirty < 0 ? json_null() : json_boolean(ev->git_dirty)));
	ok &= !json_object_set_new(root, "policy",
			    json_pack("{s:I, s:I, s:o, s:o, s:o}", "repeats", (json_int_t)ev->repeats, "warmup",
				      (json_int_t)ev->warmup, "duration_s",
				      ev->duration_s > 0 ? json_real(ev->duration_s) : json_null(), "source",
				      str_or_null(ev->policy_source), "case_filter", str_or_null(ev->case_filter)));
	json_t *policy = json_object_get(root, "policy");
	if (policy && ev->order) {
		ok &= !json_object_set_new(policy, "order", str_or_null(ev->order));
		ok &= !json_object_set_new(policy, "seed", ev->seed >= 0 ? json_integer(ev->seed) : json_null());
		ok &= !json_object_set_new(policy, "retries", ev->retries >= 0 ? json_integer(ev->retries) : json_null());
	}
	ok &= !json_object_set_new(root, "trust", str_or_null(ev->trust));
	json_t *cases = json_array();
	for (size_t i = 0; i < ev->ncases; i++) {
		const struct bench_case_result *c = &ev->cases[i];
		json_t *env = json_array();
		for (size_t j = 0; j < c->nenv; j++)
			ok &= !json_array_append_new(env, str_or_null(c->env[j]));
		json_t *runs = json_array();
		for (size_t j = 0; j < c->nruns; j++) {
			const struct bench_run *r = &c->runs[j];
			ok &= !json_array_append_new(runs, json_pack("{s:I, s:o, s:o, s:b, s:I}", "index", (json_int_t)r->index,
							      "exit", r->signal ? json_null() : json_integer(r->exit_code),
							      "signal", r->signal ? json_integer(r->signal) : json_null(),
							      "timed_out", r->timed_out, "bad_sample_lines",
							      (json_int_t)r->bad_sample_lines));
			json_t *ro = json_array_get(runs, json_array_size(runs) - 1);
			if (ro && r->has_contention) {
				ok &= !json_object_set_new(ro, "attempts", json_integer(r->attempts));
				ok &= !json_object_set_new(
					ro, "contention",
					json_pack("{s:o, s:o, s:o, s:o, s:o, s:b}", "other_cpu_pct", num_or_null(r->other_cpu_pct),
						  "steal_pct", num_or_null(r->steal_pct), "idle_pct", num_or_null(r->idle_pct),
						  "wait_pct", num_or_null(r->wait_pct), "load", num_or_null(r->load), "contended",
						  r->contended));
				ok &= !json_object_set_new(json_object_get(ro, "contention"), "wait_ms", num_or_null(r->wait_ms));
				ok &= !json_object_set_new(json_object_get(ro, "contention"), "yardstick_ms",
							   num_or_null(r->yardstick_ms));
			}
		}
		ok &= !json_array_append_new(
			cases, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o}", "name", c->name, "command",
					 str_or_null(c->command), "cwd", str_or_null(c->cwd), "env", env, "timeout_s",
					 c->timeout_s > 0 ? json_real(c->timeout_s) : json_null(), "binary",
					 str_or_null(c->binary), "producer", str_or_null(c->producer), "trust",
					 c->trust ? c->trust : BENCH_TRUST_UNKNOWN, "status", c->status ? c->status : "ok",
					 "runs", runs));
		json_t *co = json_array_get(cases, json_array_size(cases) - 1);
		if (co && c->prepare)
			ok &= !json_object_set_new(co, "prepare", str_or_null(c->prepare));
		if (co && c->core_metric) {
			ok &= !json_object_set_new(co, "core_metric", str_or_null(c->core_metric));
			ok &= !json_object_set_new(co, "core_source", str_or_null(c->core_source));
			ok &= !json_object_set_new(co, "cpu_wall_ratio", num_or_null(c->cpu_wall_ratio));
		}
		if (co && ev->order) {
			size_t with, n = bench_case_contended(c, &with);
			ok &= !json_object_set_new(co, "reruns", json_integer(c->reruns));
			ok &= !json_object_set_new(co, "contended_runs", json_integer((json_int_t)n));
		}
	}
	ok &= !json_object_set_new(root, "cases", cases);
	if (!ok) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* Writes one sample as a line of the samples array. */
static void sample_line(struct sbuf *sb, const struct bench_sample *s)
{
	sbuf_addstr(sb, "  {\"name\": ");
	sbuf_add_json_str(sb, s->name, strlen(s->name));
	sbuf_addstr(sb, ", \"kind\": ");
	sbuf_add_json_str(sb, s->kind, strlen(s->kind));
	sbuf_addstr(sb, ", \"unit\": ");
	sbuf_add_json_str(sb, s->unit, strlen(s->unit));
	if (isfinite(s->value)) {
		char num[40];
		snprintf(num, sizeof num, "%.15g", s->value); /* short, and exact when it reads back the same */
		if (strtod(num, NULL) != s->value)
			snprintf(num, sizeof num, "%.17g", s->value);
		sbuf_addf(sb, ", \"value\": %s", num);
	} else
		sbuf_addstr(sb, ", \"value\": null");
	sbuf_addf(sb, ", \"run\": %ld", s->run);
	if (s->tags) {
		sbuf_addstr(sb, ", \"tags\": ");
		sbuf_addstr(sb, s->tags); /* JSON text made by jansson */
	}
	sbuf_addch(sb, '}');
}

/* The header (everything but the samples) goes through jansson; the samples, which can be millions, are
 * streamed one line each, so writing costs no document tree per sample. */
enum plumb_err bench_evidence_write(const struct bench_evidence *ev, const char *path, struct perr *e)
{
	struct atomic_file af;
	enum plumb_err rc = atomic_open(&af, path, e);
	return rc ? rc : bench_evidence_write_to(ev, &af, e);
}

enum plumb_err bench_evidence_write_to(const struct bench_evidence *ev, struct atomic_file *out, struct perr *e)
{
	const char *path = out->path;
	json_t *root = to_json(ev);
	if (!root) {
		atomic_abort(out);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	char *head = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
	json_decref(root);
	size_t hlen = head ? strlen(head) : 0;
	if (!head || hlen < 2 || head[hlen - 1] != '}') {
		free(head);
		atomic_abort(out);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	while (hlen > 1 && (head[hlen - 2] == '\n' || head[hlen - 2] == ' '))
		hlen--; /* keep "...last field", drop the newline before the closing brace */
	struct atomic_file af = *out;
	bool ok = fwrite(head, 1, hlen - 1, af.fp) == hlen - 1 && fputs(",\n \"samples\": [", af.fp) != EOF;
	free(head);
	struct sbuf line = SBUF_INIT;
	for (size_t i = 0; ok && i < ev->nsamples; i++) {
		sbuf_reset(&line);
		sbuf_addstr(&line, i ? ",\n" : "\n");
		sample_line(&line, &ev->samples[i]);
		ok = !line.oom && fwrite(line.buf, 1, line.len, af.fp) == line.len;
	}
	sbuf_release(&line);
	ok = ok && fputs(ev->nsamples ? "\n ]\n}\n" : "]\n}\n", af.fp) != EOF;
	if (!ok) {
		int err = errno;
		char *shown = strdup(path);
		atomic_abort(&af);
		enum plumb_err rc = perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", shown ? shown : "the artifact",
					     strerror(err));
		free(shown);
		return rc;
	}
	return atomic_commit(&af, e);
}
