/* evidence.c — the plumb.evidence.v1 artifact in memory, written with jansson through the atomic writer and
 * read back with every field's type checked (a malformed artifact names the field that is wrong). */
#include "bench/evidence.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"

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

const char **bench_evidence_metrics(const struct bench_evidence *ev, size_t *n)
{
	*n = 0;
	const char **out = malloc((ev->nsamples + 1) * sizeof *out);
	if (!out)
		return NULL;
	for (size_t i = 0; i < ev->nsamples; i++) {
		bool seen = false;
		for (size_t j = 0; j < *n && !seen; j++)
			seen = strcmp(out[j], ev->samples[i].name) == 0;
		if (!seen)
			out[(*n)++] = ev->samples[i].name;
	}
	return out;
}

double *bench_evidence_values(const struct bench_evidence *ev, const char *metric, size_t *n)
{
	*n = 0;
	size_t count = 0;
	for (size_t i = 0; i < ev->nsamples; i++)
		count += strcmp(ev->samples[i].name, metric) == 0;
	if (!count)
		return NULL;
	double *v = malloc(count * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < ev->nsamples; i++)
		if (strcmp(ev->samples[i].name, metric) == 0)
			v[(*n)++] = ev->samples[i].value;
	return v;
}

const struct bench_sample *bench_evidence_first(const struct bench_evidence *ev, const char *metric)
{
	for (size_t i = 0; i < ev->nsamples; i++)
		if (strcmp(ev->samples[i].name, metric) == 0)
			return &ev->samples[i];
	return NULL;
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
	json_t *samples = json_array();
	for (size_t i = 0; i < ev->nsamples; i++) {
		const struct bench_sample *s = &ev->samples[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:o, s:I}", "name", s->name, "kind", s->kind, "unit", s->unit,
				      "value", num_or_null(s->value), "run", (json_int_t)s->run);
		if (s->tags) {
			json_t *t = json_loads(s->tags, 0, NULL);
			if (t)
				json_object_set_new(o, "tags", t);
		}
		ok &= !json_array_append_new(samples, o);
	}
	ok &= !json_object_set_new(root, "samples", samples);
	if (!ok) {
		json_decref(root);
		return NULL;
	}
	return root;
}

enum plumb_err bench_evidence_write(const struct bench_evidence *ev, const char *path, struct perr *e)
{
	json_t *root = to_json(ev);
	if (!root)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(15));
	json_decref(root);
	if (!text)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	size_t len = strlen(text);
	text[len] = '\0';
	struct atomic_file af;
	enum plumb_err rc = atomic_open(&af, path, e);
	if (rc == PLUMB_OK) {
		if (fwrite(text, 1, len, af.fp) != len || fputc('\n', af.fp) == EOF) {
			atomic_abort(&af);
			rc = perr_set(e, PLUMB_EOUTPUT, "cannot write %s: %s", path, strerror(errno));
		} else {
			rc = atomic_commit(&af, e);
		}
	}
	free(text);
	return rc;
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
		json_t *s = json_array_get(samples, i);
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
						    unit ? json_string_value(unit) : "", json_number_value(value), run,
						    tag_text);
		free(tag_text);
		if (!ok)
			return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	}
	if (r->oom)
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	return PLUMB_OK;
}

enum plumb_err bench_evidence_parse(const char *text, size_t len, const char *what, struct bench_evidence *ev,
				    struct perr *e)
{
	bench_evidence_init(ev);
	json_error_t jerr;
	json_t *root = json_loadb(text, len, 0, &jerr);
	if (!root)
		return perr_set(e, PLUMB_EFORMAT, "%s:%d: not JSON: %s", what, jerr.line, jerr.text);
	struct rd r = { what, e, false };
	enum plumb_err rc = from_json(&r, root, ev);
	json_decref(root);
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
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 1 << 16;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return perr_set(e, PLUMB_ENOMEM, "out of memory");
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	int rerr = ferror(f);
	fclose(f);
	if (rerr) {
		free(buf);
		return perr_set(e, PLUMB_EIO, "cannot read artifact %s", path);
	}
	enum plumb_err rc = bench_evidence_parse(buf, len, path, ev, e);
	free(buf);
	return rc;
}
