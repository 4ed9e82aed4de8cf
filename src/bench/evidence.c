/* evidence.c — the plumb.evidence.v1 artifact in memory, written with jansson through the atomic writer and
 * read back with every field's type checked (a malformed artifact names the field that is wrong). */
#include "bench/evidence.h"

#include <errno.h>
#include <jansson.h>
#include <yajl/yajl_parse.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/hashmap.h"
#include "base/sbuf.h"

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
	if (ev->nsamples == ev->samples_cap) {
		size_t cap = ev->samples_cap ? ev->samples_cap * 2 : 64;
		struct bench_sample *ns = realloc(ev->samples, cap * sizeof *ns);
		if (!ns)
			return false;
		ev->samples = ns;
		ev->samples_cap = cap;
	}
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
	struct hmap map;     /* hash of the name (probed on a collision) -> metric number */
	const char **names;  /* metric number -> name (points into the samples) */
	size_t n;
	size_t *start;       /* the samples of metric m are order[start[m] .. start[m + 1]) */
	size_t *order;
};

static void index_free(struct bench_metric_index *ix)
{
	if (!ix)
		return;
	hmap_release(&ix->map);
	free(ix->names);
	free(ix->start);
	free(ix->order);
	free(ix);
}

/* Metric number of name, or (size_t)-1; *key receives the slot key where it is or would go. */
static size_t index_find(const struct bench_metric_index *ix, const char *name, uint64_t *key)
{
	uint64_t k = hash_bytes(name, strlen(name));
	uint32_t v;
	while (hmap_get(&ix->map, k, &v)) {
		if (strcmp(ix->names[v], name) == 0) {
			*key = k;
			return v;
		}
		k = hash_u64(k + 1); /* a 64-bit collision: probe on */
	}
	*key = k;
	return (size_t)-1;
}

/* The index, built when missing (the cache is not part of the artifact's value, hence the cast). */
static const struct bench_metric_index *get_index(const struct bench_evidence *cev)
{
	struct bench_evidence *ev = (struct bench_evidence *)cev;
	if (ev->index)
		return ev->index;
	struct bench_metric_index *ix = calloc(1, sizeof *ix);
	size_t *metric_of = malloc((ev->nsamples + 1) * sizeof *metric_of);
	if (!ix || !metric_of || !(ix->names = malloc((ev->nsamples + 1) * sizeof *ix->names)))
		goto oom;
	for (size_t i = 0; i < ev->nsamples; i++) {
		uint64_t key;
		size_t m = index_find(ix, ev->samples[i].name, &key);
		if (m == (size_t)-1) {
			m = ix->n++;
			ix->names[m] = ev->samples[i].name;
			if (!hmap_put(&ix->map, key, (uint32_t)m))
				goto oom;
		}
		metric_of[i] = m;
	}
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
	memcpy(out, ix->names, ix->n * sizeof *out);
	*n = ix->n;
	return out;
}

double *bench_evidence_values(const struct bench_evidence *ev, const char *metric, size_t *n)
{
	*n = 0;
	const struct bench_metric_index *ix = get_index(ev);
	uint64_t key;
	size_t m = ix ? index_find(ix, metric, &key) : (size_t)-1;
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
	uint64_t key;
	size_t m = ix ? index_find(ix, metric, &key) : (size_t)-1;
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
 * yajl tokenizes the artifact. Every top-level member but "samples" is built into a small jansson tree and
 * checked by from_json(); the samples are built one object at a time, checked, added and dropped, so reading
 * costs the samples themselves, not a document tree of them (jansson's tree of 600k samples took 690 MB). */

#define STREAM_MAX_DEPTH 64

struct stream {
	struct rd r;
	struct bench_evidence *ev;
	json_t *header;          /* the top-level members other than samples */
	char *key;               /* the current top-level key */
	int depth;               /* open containers in the input (the root object is 1) */
	bool in_samples, saw_samples, root_done;
	size_t sample_index;
	json_t *stack[STREAM_MAX_DEPTH]; /* containers being built below the current sink */
	char *pending[STREAM_MAX_DEPTH]; /* the key awaiting a value in each object on the stack */
	int sp;
	enum plumb_err err;      /* set once; the parse stops */
};

static int stream_fail(struct stream *st, enum plumb_err rc)
{
	if (!st->err)
		st->err = rc;
	return 0;
}

/* A complete value at the sink: a sample, or a top-level member. Consumes v. */
static int stream_complete(struct stream *st, json_t *v)
{
	if (st->in_samples) {
		enum plumb_err rc = add_sample_json(&st->r, st->ev, v, st->sample_index++);
		json_decref(v);
		return rc ? stream_fail(st, rc) : 1;
	}
	if (st->key && strcmp(st->key, "samples") == 0) {
		json_decref(v);
		return stream_fail(st, bad(&st->r, "samples", "is not an array"));
	}
	if (st->key && strcmp(st->key, "schema") == 0 && json_is_string(v) &&
	    strcmp(json_string_value(v), BENCH_EVIDENCE_SCHEMA) != 0) {
		enum plumb_err rc = perr_set(st->r.e, PLUMB_EFORMAT, "%s: schema '%s' is not one this build reads (%s)",
					     st->r.what, json_string_value(v), BENCH_EVIDENCE_SCHEMA);
		json_decref(v);
		return stream_fail(st, rc);
	}
	if (!st->key || json_object_set_new(st->header, st->key, v) != 0)
		return stream_fail(st, perr_set(st->r.e, PLUMB_ENOMEM, "out of memory"));
	return 1;
}

/* A scalar, or a container that has just started (push is true). */
static int stream_value(struct stream *st, json_t *v, bool push)
{
	if (!v)
		return stream_fail(st, perr_set(st->r.e, PLUMB_EFORMAT, "%s: a number out of range", st->r.what));
	if (st->depth == 0) { /* the document itself */
		json_decref(v);
		return stream_fail(st, bad(&st->r, "the top level", "is not an object"));
	}
	if (st->sp > 0) {
		json_t *top = st->stack[st->sp - 1];
		int bad_add;
		if (json_is_object(top)) {
			bad_add = !st->pending[st->sp - 1] || json_object_set_new(top, st->pending[st->sp - 1], v) != 0;
			free(st->pending[st->sp - 1]);
			st->pending[st->sp - 1] = NULL;
		} else {
			bad_add = json_array_append_new(top, v) != 0;
		}
		if (bad_add)
			return stream_fail(st, perr_set(st->r.e, PLUMB_ENOMEM, "out of memory"));
		if (push) {
			if (st->sp == STREAM_MAX_DEPTH)
				return stream_fail(st, perr_set(st->r.e, PLUMB_EFORMAT, "%s: nested too deeply", st->r.what));
			st->stack[st->sp++] = v;
			st->depth++;
		}
		return 1;
	}
	if (push) { /* a container at the sink: build it, deliver it when it closes */
		st->stack[st->sp++] = v;
		st->depth++;
		return 1;
	}
	return stream_complete(st, v);
}

static int stream_end(struct stream *st)
{
	if (st->sp == 0) { /* the root object, or the samples array */
		st->depth--;
		if (st->in_samples)
			st->in_samples = false;
		else
			st->root_done = true;
		return 1;
	}
	json_t *v = st->stack[--st->sp];
	free(st->pending[st->sp]);
	st->pending[st->sp] = NULL;
	st->depth--;
	if (st->sp == 0)
		return stream_complete(st, v);
	return 1;
}

static int cb_null(void *ctx)
{
	return stream_value(ctx, json_null(), false);
}

static int cb_boolean(void *ctx, int b)
{
	return stream_value(ctx, json_boolean(b), false);
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	char buf[64];
	if (len >= sizeof buf)
		return stream_value(ctx, NULL, false);
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	errno = 0;
	if (!strpbrk(buf, ".eE")) {
		long long x = strtoll(buf, &end, 10);
		if (!errno && *end == '\0')
			return stream_value(ctx, json_integer(x), false);
		errno = 0;
	}
	double d = strtod(buf, &end);
	if (*end != '\0' || !isfinite(d))
		return stream_value(ctx, NULL, false);
	return stream_value(ctx, json_real(d), false);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return stream_value(ctx, json_stringn((const char *)s, len), false);
}

static int cb_start_map(void *ctx)
{
	struct stream *st = ctx;
	if (st->depth == 0 && !st->root_done) {
		st->depth = 1;
		return 1;
	}
	return stream_value(st, json_object(), true);
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct stream *st = ctx;
	char *k = strndup((const char *)s, len);
	if (!k)
		return stream_fail(st, perr_set(st->r.e, PLUMB_ENOMEM, "out of memory"));
	if (st->sp == 0 && !st->in_samples) {
		free(st->key);
		st->key = k;
	} else if (st->sp > 0) {
		free(st->pending[st->sp - 1]);
		st->pending[st->sp - 1] = k;
	} else {
		free(k); /* cannot happen: keys inside the samples array belong to a sample on the stack */
	}
	return 1;
}

static int cb_end_map(void *ctx)
{
	return stream_end(ctx);
}

static int cb_start_array(void *ctx)
{
	struct stream *st = ctx;
	if (st->depth == 1 && st->sp == 0 && !st->in_samples && st->key && strcmp(st->key, "samples") == 0) {
		if (st->saw_samples)
			return stream_fail(st, bad(&st->r, "samples", "appears twice"));
		st->in_samples = st->saw_samples = true;
		st->depth++;
		return 1;
	}
	return stream_value(st, json_array(), true);
}

static int cb_end_array(void *ctx)
{
	return stream_end(ctx);
}

static const yajl_callbacks stream_callbacks = {
	cb_null, cb_boolean, NULL, NULL, cb_number, cb_string, cb_start_map, cb_map_key, cb_end_map, cb_start_array,
	cb_end_array,
};

struct stream_parser {
	struct stream st;
	yajl_handle h;
	size_t line;        /* 1-based line of the chunk start, for messages */
};

static void stream_init(struct stream_parser *sp, const char *what, struct bench_evidence *ev, struct perr *e)
{
	memset(sp, 0, sizeof *sp);
	bench_evidence_init(ev);
	sp->st.r = (struct rd){ what, e, false };
	sp->st.ev = ev;
	sp->st.header = json_object();
	sp->h = yajl_alloc(&stream_callbacks, NULL, &sp->st);
	sp->line = 1;
}

/* The yajl error as "WHAT:LINE: not JSON: ...", with the line of the offending byte. */
static enum plumb_err stream_syntax_error(struct stream_parser *sp, const unsigned char *buf, size_t len)
{
	size_t at = yajl_get_bytes_consumed(sp->h), line = sp->line;
	for (size_t i = 0; i < at && i < len; i++)
		line += buf[i] == '\n';
	unsigned char *msg = yajl_get_error(sp->h, 0, buf, len);
	char text[160];
	snprintf(text, sizeof text, "%s", msg ? (const char *)msg : "syntax error");
	text[strcspn(text, "\n")] = '\0';
	if (msg)
		yajl_free_error(sp->h, msg);
	return perr_set(sp->st.r.e, PLUMB_EFORMAT, "%s:%zu: not JSON: %s", sp->st.r.what, line, text);
}

static enum plumb_err stream_feed(struct stream_parser *sp, const unsigned char *buf, size_t len)
{
	if (!sp->h || !sp->st.header)
		return perr_set(sp->st.r.e, PLUMB_ENOMEM, "out of memory");
	yajl_status ys = yajl_parse(sp->h, buf, len);
	if (sp->st.err)
		return sp->st.err;
	if (ys != yajl_status_ok)
		return stream_syntax_error(sp, buf, len);
	for (size_t i = 0; i < len; i++)
		sp->line += buf[i] == '\n';
	return PLUMB_OK;
}

static enum plumb_err stream_finish(struct stream_parser *sp)
{
	struct stream *st = &sp->st;
	yajl_status ys = yajl_complete_parse(sp->h);
	if (st->err)
		return st->err;
	if (ys != yajl_status_ok)
		return stream_syntax_error(sp, (const unsigned char *)"", 0);
	if (!st->root_done)
		return bad(&st->r, "the top level", "is not an object");
	if (!json_object_get(st->header, "schema"))
		return bad(&st->r, "schema", "is missing");
	if (!st->saw_samples)
		return bad(&st->r, "samples", "is not an array");
	/* the samples are in already: check the rest with an empty samples array */
	if (json_object_set_new(st->header, "samples", json_array()) != 0)
		return perr_set(st->r.e, PLUMB_ENOMEM, "out of memory");
	return from_json(&st->r, st->header, st->ev);
}

static void stream_release(struct stream_parser *sp)
{
	if (sp->h)
		yajl_free(sp->h);
	for (int i = 0; i < sp->st.sp; i++) {
		free(sp->st.pending[i]);
	}
	if (sp->st.sp > 0)
		json_decref(sp->st.stack[0]); /* the bottom container owns the rest */
	json_decref(sp->st.header);
	free(sp->st.key);
}

enum plumb_err bench_evidence_parse(const char *text, size_t len, const char *what, struct bench_evidence *ev,
				    struct perr *e)
{
	struct stream_parser sp;
	stream_init(&sp, what, ev, e);
	enum plumb_err rc = stream_feed(&sp, (const unsigned char *)text, len);
	if (rc == PLUMB_OK)
		rc = stream_finish(&sp);
	stream_release(&sp);
	if (rc)
		bench_evidence_release(ev);
	return rc;
}

enum plumb_err bench_evidence_read(const char *path, struct bench_evidence *ev, struct perr *e)
{
	bench_evidence_init(ev);
	FILE *f = fopen(path, "r");
	if (!f) {
		int err = errno;
		return perr_set(e, err == ENOENT ? PLUMB_ENOENT : PLUMB_EIO, "cannot read artifact %s: %s", path,
				strerror(err));
	}
	struct stream_parser sp;
	stream_init(&sp, path, ev, e);
	unsigned char buf[1 << 16];
	size_t n;
	enum plumb_err rc = PLUMB_OK;
	while (rc == PLUMB_OK && (n = fread(buf, 1, sizeof buf, f)) > 0)
		rc = stream_feed(&sp, buf, n);
	if (rc == PLUMB_OK && ferror(f))
		rc = perr_set(e, PLUMB_EIO, "cannot read artifact %s: %s", path, strerror(errno));
	fclose(f);
	if (rc == PLUMB_OK)
		rc = stream_finish(&sp);
	stream_release(&sp);
	if (rc)
		bench_evidence_release(ev);
	return rc;
}
