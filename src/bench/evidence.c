/* evidence.c — the plumb.evidence.v1 artifact in memory, written with jansson through the atomic writer and
 * read back with every field's type checked (a malformed artifact names the field that is wrong). */
#include "bench/evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/grow.h"
#include "base/intern.h"
#include "base/json_tree.h"
#include "base/readall.h"
#include "base/sbuf.h"
#include "base/utf8.h"

static void index_free(struct bench_metric_index *ix);

void bench_evidence_init(struct bench_evidence *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->git_dirty = -1;
	ev->load[0] = ev->load[1] = ev->load[2] = NAN;
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
	free(ev->governor);
	free(ev->git_commit);
	free(ev->policy_source);
	free(ev->case_filter);
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

static char *dup_or_null(const char *s, bool *oom)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

bool bench_evidence_add_sample(struct bench_evidence *ev, const char *name, const char *kind, const char *unit,
			       double value, long run, const char *tags)
{
	if (!ALLOC_GROW(ev->samples, ev->nsamples + 1, ev->samples_cap))
		return false;
	bool oom = false;
	struct bench_sample s = {
		.name = dup_or_null(name, &oom),
		.kind = dup_or_null(kind ? kind : "", &oom),
		.unit = dup_or_null(unit ? unit : "", &oom),
		.value = value,
		.run = run,
		.tags = dup_or_null(tags, &oom),
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

/* A JSON string of s; bytes that are not UTF-8 (a command line can hold anything) become '?'. */
static json_t *str_or_null(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (j)
		return j;
	char *copy = strdup(s);
	if (!copy)
		return NULL;
	for (char *c = copy; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(copy);
	free(copy);
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
			    json_pack("{s:o, s:I, s:o, s:o, s:o}", "cpu_model", str_or_null(ev->cpu_model), "cores",
				      (json_int_t)ev->cores, "kernel", str_or_null(ev->kernel), "governor",
				      str_or_null(ev->governor), "load", load));
	ok &= !json_object_set_new(root, "git",
			    json_pack("{s:o, s:o}", "commit", str_or_null(ev->git_commit), "dirty",
				      ev->git_dirty < 0 ? json_null() : json_boolean(ev->git_dirty)));
	ok &= !json_object_set_new(root, "policy",
			    json_pack("{s:I, s:I, s:o, s:o, s:o}", "repeats", (json_int_t)ev->repeats, "warmup",
				      (json_int_t)ev->warmup, "duration_s",
				      ev->duration_s > 0 ? json_real(ev->duration_s) : json_null(), "source",
				      str_or_null(ev->policy_source), "case_filter", str_or_null(ev->case_filter)));
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
		}
		ok &= !json_array_append_new(
			cases, json_pack("{s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o}", "name", c->name, "command",
					 str_or_null(c->command), "cwd", str_or_null(c->cwd), "env", env, "timeout_s",
					 c->timeout_s > 0 ? json_real(c->timeout_s) : json_null(), "binary",
					 str_or_null(c->binary), "producer", str_or_null(c->producer), "trust",
					 c->trust ? c->trust : BENCH_TRUST_UNKNOWN, "status", c->status ? c->status : "ok",
					 "runs", runs));
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
	json_t *root = to_json(ev);
	if (!root)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	char *head = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
	json_decref(root);
	size_t hlen = head ? strlen(head) : 0;
	if (!head || hlen < 2 || head[hlen - 1] != '}') {
		free(head);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	while (hlen > 1 && (head[hlen - 2] == '\n' || head[hlen - 2] == ' '))
		hlen--; /* keep "...last field", drop the newline before the closing brace */
	struct atomic_file af;
	enum plumb_err rc = atomic_open(&af, path, e);
	if (rc != PLUMB_OK) {
		free(head);
		return rc;
	}
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
		atomic_abort(&af);
		return perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", path, strerror(err));
	}
	return atomic_commit(&af, e);
}

/* ---- reading ---- */

struct rd {
	const char *what;
	struct perr *e;
	bool oom;
	const char *mapped; /* the artifact's text when it is a file mapping (pages behind the reader are dropped) */
	size_t dropped;     /* bytes of it dropped so far */
};

static enum plumb_err bad(struct rd *r, const char *field, const char *want)
{
	return perr_set(r->e, PLUMB_EFORMAT, "%s: %s %s (not a %s artifact this build reads?)", r->what, field, want,
			BENCH_EVIDENCE_SCHEMA);
}

/* optional string: absent or null leaves *out NULL */
static bool get_str(struct rd *r, json_t *obj, const char *key, char **out, bool required)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return !required;
	if (!json_is_string(v))
		return false;
	*out = strdup(json_string_value(v));
	if (!*out)
		r->oom = true;
	return true;
}

static bool get_num(json_t *obj, const char *key, double *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return true;
	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return true;
}

static bool get_int(json_t *obj, const char *key, long *out, long lo)
{
	json_t *v = json_object_get(obj, key);
	if (!v || json_is_null(v))
		return true;
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > 1000000000)
		return false;
	*out = (long)json_integer_value(v);
	return true;
}

static bool is_trust(const char *s)
{
	return strcmp(s, BENCH_TRUST_OPTIMIZED) == 0 || strcmp(s, BENCH_TRUST_HARNESS) == 0 ||
	       strcmp(s, BENCH_TRUST_UNKNOWN) == 0;
}

/* Checks one sample object and adds it to ev. */
static enum plumb_err add_sample_json(struct rd *r, struct bench_evidence *ev, json_t *s, size_t i)
{
	char field[64];
	snprintf(field, sizeof field, "samples[%zu]", i);
	if (!json_is_object(s))
		return bad(r, field, "is not an object");
	json_t *name = json_object_get(s, "name"), *value = json_object_get(s, "value");
	json_t *kind = json_object_get(s, "kind"), *unit = json_object_get(s, "unit");
	json_t *tags = json_object_get(s, "tags");
	if (!json_is_string(name) || !json_string_length(name))
		return bad(r, field, "has no name");
	if (!json_is_number(value) || !isfinite(json_number_value(value)))
		return bad(r, field, "has a value that is not a finite number");
	if ((kind && !json_is_string(kind)) || (unit && !json_is_string(unit)))
		return bad(r, field, "has a kind or unit that is not a string");
	if (tags && !json_is_null(tags) && !json_is_object(tags))
		return bad(r, field, "has tags that are not an object");
	long run = 0;
	if (!get_int(s, "run", &run, -1))
		return bad(r, field, "has a run that is not a whole number");
	char *tag_text = NULL;
	if (json_is_object(tags) && json_object_size(tags)) {
		tag_text = json_dumps(tags, JSON_COMPACT | JSON_SORT_KEYS);
		if (!tag_text)
			return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	}
	bool ok = bench_evidence_add_sample(ev, json_string_value(name), kind ? json_string_value(kind) : "",
					    unit ? json_string_value(unit) : "", json_number_value(value), run, tag_text);
	free(tag_text);
	return ok ? PLUMB_OK : perr_set(r->e, PLUMB_ENOMEM, "out of memory");
}

static enum plumb_err from_json(struct rd *r, json_t *root, struct bench_evidence *ev)
{
	char field[96];
	if (!json_is_object(root))
		return bad(r, "the top level", "is not an object");
	json_t *schema = json_object_get(root, "schema");
	if (!json_is_string(schema))
		return bad(r, "schema", "is missing");
	if (strcmp(json_string_value(schema), BENCH_EVIDENCE_SCHEMA) != 0)
		return perr_set(r->e, PLUMB_EFORMAT, "%s: schema '%s' is not one this build reads (%s)", r->what,
				json_string_value(schema), BENCH_EVIDENCE_SCHEMA);
	if (!get_str(r, root, "suite", &ev->suite, false))
		return bad(r, "suite", "is not a string");
	if (!get_str(r, root, "suite_path", &ev->suite_path, false))
		return bad(r, "suite_path", "is not a string");
	if (!get_str(r, root, "catalog_path", &ev->catalog_path, false))
		return bad(r, "catalog_path", "is not a string");
	if (!get_str(r, root, "created", &ev->created, false))
		return bad(r, "created", "is not a string");
	json_t *m = json_object_get(root, "machine");
	if (m && !json_is_null(m)) {
		if (!json_is_object(m))
			return bad(r, "machine", "is not an object");
		if (!get_str(r, m, "cpu_model", &ev->cpu_model, false) || !get_str(r, m, "kernel", &ev->kernel, false) ||
		    !get_str(r, m, "governor", &ev->governor, false))
			return bad(r, "machine", "has a field that is not a string");
		if (!get_int(m, "cores", &ev->cores, 0))
			return bad(r, "machine.cores", "is not a whole number");
		json_t *load = json_object_get(m, "load");
		if (load && !json_is_null(load)) {
			if (!json_is_array(load) || json_array_size(load) != 3)
				return bad(r, "machine.load", "is not an array of three numbers");
			for (size_t i = 0; i < 3; i++) {
				json_t *x = json_array_get(load, i);
				if (json_is_number(x))
					ev->load[i] = json_number_value(x);
				else if (!json_is_null(x))
					return bad(r, "machine.load", "is not an array of three numbers");
			}
		}
	}
	json_t *g = json_object_get(root, "git");
	if (g && !json_is_null(g)) {
		if (!json_is_object(g) || !get_str(r, g, "commit", &ev->git_commit, false))
			return bad(r, "git", "is not an object with a commit string");
		json_t *d = json_object_get(g, "dirty");
		if (json_is_boolean(d))
			ev->git_dirty = json_is_true(d);
		else if (d && !json_is_null(d))
			return bad(r, "git.dirty", "is not true, false or null");
	}
	json_t *p = json_object_get(root, "policy");
	if (p && !json_is_null(p)) {
		if (!json_is_object(p))
			return bad(r, "policy", "is not an object");
		if (!get_int(p, "repeats", &ev->repeats, 0) || !get_int(p, "warmup", &ev->warmup, 0))
			return bad(r, "policy", "has repeats or warmup that is not a whole number");
		if (!get_num(p, "duration_s", &ev->duration_s))
			return bad(r, "policy.duration_s", "is not a number");
		if (!get_str(r, p, "source", &ev->policy_source, false) ||
		    !get_str(r, p, "case_filter", &ev->case_filter, false))
			return bad(r, "policy", "has a field that is not a string");
	}
	if (!get_str(r, root, "trust", &ev->trust, false) || (ev->trust && !is_trust(ev->trust)))
		return bad(r, "trust", "is not optimized, harness-only or unknown");
	json_t *cases = json_object_get(root, "cases");
	if (!json_is_array(cases))
		return bad(r, "cases", "is not an array");
	if (json_array_size(cases)) {
		ev->cases = calloc(json_array_size(cases), sizeof *ev->cases);
		if (!ev->cases)
			return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < json_array_size(cases); i++) {
		json_t *c = json_array_get(cases, i);
		struct bench_case_result *cr = &ev->cases[ev->ncases++];
		snprintf(field, sizeof field, "cases[%zu]", i);
		if (!json_is_object(c))
			return bad(r, field, "is not an object");
		if (!get_str(r, c, "name", &cr->name, true))
			return bad(r, field, "has no name string");
		if (!get_str(r, c, "command", &cr->command, false) || !get_str(r, c, "cwd", &cr->cwd, false) ||
		    !get_str(r, c, "binary", &cr->binary, false) || !get_str(r, c, "producer", &cr->producer, false) ||
		    !get_str(r, c, "status", &cr->status, false))
			return bad(r, field, "has a field that is not a string");
		if (!get_str(r, c, "trust", &cr->trust, true) || !is_trust(cr->trust))
			return bad(r, field, "has a trust that is not optimized, harness-only or unknown");
		if (!get_num(c, "timeout_s", &cr->timeout_s))
			return bad(r, field, "has a timeout_s that is not a number");
		json_t *env = json_object_get(c, "env");
		if (env && !json_is_null(env)) {
			if (!json_is_array(env))
				return bad(r, field, "has an env that is not an array");
			if (json_array_size(env)) {
				cr->env = calloc(json_array_size(env), sizeof *cr->env);
				if (!cr->env)
					return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
			}
			for (size_t j = 0; j < json_array_size(env); j++) {
				json_t *s = json_array_get(env, j);
				if (!json_is_string(s))
					return bad(r, field, "has an env entry that is not a string");
				if (!(cr->env[cr->nenv++] = strdup(json_string_value(s))))
					return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
			}
		}
		json_t *runs = json_object_get(c, "runs");
		if (runs && !json_is_null(runs)) {
			if (!json_is_array(runs))
				return bad(r, field, "has runs that are not an array");
			if (json_array_size(runs)) {
				cr->runs = calloc(json_array_size(runs), sizeof *cr->runs);
				if (!cr->runs)
					return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
			}
			for (size_t j = 0; j < json_array_size(runs); j++) {
				json_t *ro = json_array_get(runs, j);
				struct bench_run *run = &cr->runs[cr->nruns++];
				long code = 0, sig = 0;
				if (!json_is_object(ro) || !get_int(ro, "index", &run->index, 0) ||
				    !get_int(ro, "exit", &code, -1) || !get_int(ro, "signal", &sig, 0) ||
				    !get_int(ro, "bad_sample_lines", &run->bad_sample_lines, 0))
					return bad(r, field, "has a run that is not {index, exit, signal, timed_out}");
				run->exit_code = sig ? -1 : (int)code;
				run->signal = (int)sig;
				run->timed_out = json_is_true(json_object_get(ro, "timed_out"));
			}
		}
	}
	json_t *samples = json_object_get(root, "samples");
	if (!json_is_array(samples))
		return bad(r, "samples", "is not an array");
	for (size_t i = 0; i < json_array_size(samples); i++) {
		enum plumb_err rc = add_sample_json(r, ev, json_array_get(samples, i), i);
		if (rc)
			return rc;
	}
	if (r->oom)
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	return PLUMB_OK;
}

/* ---- the streaming reader ----
 * The pull reader (base/json.h) walks the artifact in place (a file is mapped, not copied). Every top-level
 * member but "samples" is built into a small jansson tree and checked by from_json(); the samples are built
 * one object at a time, checked, added and dropped, so reading costs the samples themselves, not a document
 * tree of them (jansson's tree of 600k samples took 690 MB). */

/* The reader's error as "WHAT:LINE: not JSON: REASON (column C, byte N)". */
static enum plumb_err syntax_error(struct rd *r, const struct json_reader *j)
{
	if (j->err.code == PLUMB_ENOMEM)
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	return perr_set(r->e, PLUMB_EFORMAT, "%s:%zu: not JSON: %s (column %zu, byte %zu)", r->what, j->err.line,
			j->err.text, j->err.column, j->err.offset);
}

/* A mapped artifact's pages behind the reader leave the process (the page cache keeps them; an error message
 * that counts lines reads them back), so reading a big artifact holds a few MB of its text, not all of it. */
static void drop_read_pages(struct rd *r, const struct json_reader *j)
{
	const size_t step = (size_t)8 << 20;
	if (!r->mapped)
		return;
	size_t done = (size_t)(j->p - r->mapped);
	if (done - r->dropped < step)
		return;
	done &= ~(step - 1); /* a multiple of the page size */
	madvise((char *)r->mapped + r->dropped, done - r->dropped, MADV_DONTNEED);
	r->dropped = done;
}

/* The samples array, one sample tree at a time. */
static enum plumb_err read_samples(struct rd *r, struct json_reader *j, struct bench_evidence *ev)
{
	if (jr_peek(j) != '[')
		return jr_skip(j) ? bad(r, "samples", "is not an array") : syntax_error(r, j);
	jr_arr_begin(j);
	bool first = true;
	int more;
	for (size_t i = 0; (more = jr_arr_next(j, &first)) == 1; i++) {
		json_t *v = jr_tree(j, 0);
		if (!v)
			return syntax_error(r, j);
		enum plumb_err rc = add_sample_json(r, ev, v, i);
		json_decref(v);
		if (rc)
			return rc;
		drop_read_pages(r, j);
	}
	return more < 0 ? syntax_error(r, j) : PLUMB_OK;
}

/* One top-level member other than samples, into header (a repeated key keeps its last value). */
static enum plumb_err read_member(struct rd *r, struct json_reader *j, const char *k, size_t kl, json_t *header)
{
	if (!utf8_valid(k, kl) || memchr(k, '\0', kl))
		return bad(r, "a top-level key", "is not text");
	char *key = strndup(k, kl); /* k lives in the reader's scratch only until the next key */
	if (!key)
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	json_t *v = jr_tree(j, 0);
	enum plumb_err rc = PLUMB_OK;
	if (!v)
		rc = syntax_error(r, j);
	else if (strcmp(key, "schema") == 0 && json_is_string(v) &&
		 strcmp(json_string_value(v), BENCH_EVIDENCE_SCHEMA) != 0)
		rc = perr_set(r->e, PLUMB_EFORMAT, "%s: schema '%s' is not one this build reads (%s)", r->what,
			      json_string_value(v), BENCH_EVIDENCE_SCHEMA);
	else if (json_object_set_nocheck(header, key, v) != 0)
		rc = perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	json_decref(v);
	free(key);
	return rc;
}

static enum plumb_err read_stream(struct rd *r, const char *text, size_t len, struct bench_evidence *ev)
{
	struct json_reader j;
	jr_init(&j, text, len, r->what, NULL);
	json_t *header = json_object();
	bool saw_samples = false, first = true;
	const char *k;
	size_t kl;
	int more = 0;
	enum plumb_err rc = PLUMB_OK;
	int c = jr_peek(&j);
	if (!header)
		rc = perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	else if (c != '{' && c != -1)
		rc = bad(r, "the top level", "is not an object");
	else if (!jr_obj_begin(&j))
		rc = syntax_error(r, &j);
	while (!rc && (more = jr_obj_next(&j, &first, &k, &kl)) == 1) {
		if (!jr_key_is(k, kl, "samples")) {
			rc = read_member(r, &j, k, kl, header);
		} else if (saw_samples) {
			rc = bad(r, "samples", "appears twice");
		} else {
			saw_samples = true;
			rc = read_samples(r, &j, ev);
		}
	}
	if (!rc && (more < 0 || (!jr_at_end(&j) && !jr_fail(&j, "trailing data after the artifact"))))
		rc = syntax_error(r, &j);
	if (!rc && !json_object_get(header, "schema"))
		rc = bad(r, "schema", "is missing");
	if (!rc && !saw_samples)
		rc = bad(r, "samples", "is not an array");
	/* the samples are in already: check the rest with an empty samples array */
	if (!rc && json_object_set_new(header, "samples", json_array()) != 0)
		rc = perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	if (!rc)
		rc = from_json(r, header, ev);
	json_decref(header);
	jr_release(&j);
	return rc;
}

static enum plumb_err parse(const char *text, size_t len, bool mapped, const char *what, struct bench_evidence *ev,
			    struct perr *e)
{
	bench_evidence_init(ev);
	struct rd r = { what, e, false, mapped ? text : NULL, 0 };
	enum plumb_err rc = read_stream(&r, text, len, ev);
	if (rc)
		bench_evidence_release(ev);
	return rc;
}

enum plumb_err bench_evidence_parse(const char *text, size_t len, const char *what, struct bench_evidence *ev,
				    struct perr *e)
{
	return parse(text, len, false, what, ev, e);
}

enum plumb_err bench_evidence_read(const char *path, struct bench_evidence *ev, struct perr *e)
{
	bench_evidence_init(ev);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return perr_set(e, err == ENOENT ? PLUMB_ENOENT : PLUMB_EIO, "cannot read artifact %s: %s", path,
				strerror(err));
	}
	/* a regular file is mapped: its pages are the page cache's, not a copy */
	char *text = NULL;
	size_t len = 0;
	bool mapped = false;
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		len = (size_t)st.st_size;
		text = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		mapped = text != MAP_FAILED;
		if (mapped)
			madvise(text, len, MADV_SEQUENTIAL);
		else
			text = NULL;
	}
	int err = mapped ? 0 : read_fd_whole(fd, 1 << 16, 0, &text, &len);
	close(fd);
	if (err)
		return perr_set(e, err == ENOMEM ? PLUMB_ENOMEM : PLUMB_EIO, "cannot read artifact %s: %s", path,
				strerror(err));
	enum plumb_err rc = parse(text, len, mapped, path, ev, e);
	if (mapped)
		munmap(text, len);
	else
		free(text);
	return rc;
}
