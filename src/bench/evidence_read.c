/* evidence_read.c — reading a plumb.evidence.v1 artifact back: the pull reader (base/json.h) walks the text in
 * place, every member but the samples is built into a small jansson tree and checked field by field, and the
 * samples are checked and added one at a time. A malformed artifact is PLUMB_EFORMAT naming the field. */
#include "bench/evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json_tree.h"
#include "base/readall.h"
#include "base/redact.h"
#include "base/shown.h"
#include "base/utf8.h"

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

/* A redacted copy of a tags value (see bench_tags_redacted); NULL when out of memory. */
static json_t *redacted_copy(json_t *v)
{
	if (json_is_string(v)) {
		char *red = redact_dup(json_string_value(v));
		json_t *s = red ? json_string(red) : NULL;
		free(red);
		return s;
	}
	if (json_is_object(v)) {
		json_t *o = json_object();
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x) {
			char *rk = o ? redact_dup(k) : NULL;
			json_t *rx = !rk ? NULL : redact_is_secret_key(k, strlen(k)) ? json_string(REDACTED) : redacted_copy(x);
			if (!rx || json_object_set_new(o, rk, rx) != 0) {
				free(rk);
				json_decref(o);
				return NULL;
			}
			free(rk);
		}
		return o;
	}
	if (json_is_array(v)) {
		json_t *a = json_array();
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			json_t *rx = a ? redacted_copy(x) : NULL;
			if (!rx || json_array_append_new(a, rx) != 0) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	return json_incref(v);
}

bool bench_tags_redacted(json_t *tags, char **text)
{
	*text = NULL;
	if (!json_is_object(tags) || !json_object_size(tags))
		return true;
	json_t *red = redacted_copy(tags);
	if (red)
		*text = json_dumps(red, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(red);
	return *text != NULL;
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
	/* an artifact plumb did not write (or an older one) is redacted as it is read: report, compare and baseline
	 * show never print a sample's secret (docs/design.md §3.6) */
	char *tag_text = NULL, *red_name = redact_dup(json_string_value(name));
	if (red_name) { /* a control byte in a metric name is kept escaped: every report prints names (§3.3) */
		size_t n = strlen(red_name), cap = n * SHOWN_ESC_MAX + 64;
		char *shown = malloc(cap);
		if (shown)
			shown_escape(shown, cap, red_name, n, n);
		free(red_name);
		red_name = shown;
	}
	if (!red_name || !bench_tags_redacted(tags, &tag_text)) {
		free(red_name);
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	}
	bool ok = bench_evidence_add_sample(ev, red_name, kind ? json_string_value(kind) : "",
					    unit ? json_string_value(unit) : "", json_number_value(value), run, tag_text);
	free(red_name);
	free(tag_text);
	return ok ? PLUMB_OK : perr_set(r->e, PLUMB_ENOMEM, "out of memory");
}

/* The machine object (absent or null: nothing known). */
static enum plumb_err read_machine(struct rd *r, json_t *m, struct bench_evidence *ev)
{
	if (!m || json_is_null(m))
		return PLUMB_OK;
	if (!json_is_object(m))
		return bad(r, "machine", "is not an object");
	if (!get_str(r, m, "cpu_model", &ev->cpu_model, false) || !get_str(r, m, "kernel", &ev->kernel, false) ||
	    !get_str(r, m, "governor", &ev->governor, false) || !get_str(r, m, "hostname", &ev->hostname, false))
		return bad(r, "machine", "has a field that is not a string");
	if (!get_int(m, "cores", &ev->cores, 0))
		return bad(r, "machine.cores", "is not a whole number");
	json_t *load = json_object_get(m, "load");
	if (!load || json_is_null(load))
		return PLUMB_OK;
	if (!json_is_array(load) || json_array_size(load) != 3)
		return bad(r, "machine.load", "is not an array of three numbers");
	for (size_t i = 0; i < 3; i++) {
		json_t *x = json_array_get(load, i);
		if (json_is_number(x))
			ev->load[i] = json_number_value(x);
		else if (!json_is_null(x))
			return bad(r, "machine.load", "is not an array of three numbers");
	}
	return PLUMB_OK;
}

/* The git and policy objects (each absent or null: unknown). */
static enum plumb_err read_git_policy(struct rd *r, json_t *g, json_t *p, struct bench_evidence *ev)
{
	if (g && !json_is_null(g)) {
		if (!json_is_object(g) || !get_str(r, g, "commit", &ev->git_commit, false))
			return bad(r, "git", "is not an object with a commit string");
		json_t *d = json_object_get(g, "dirty");
		if (json_is_boolean(d))
			ev->git_dirty = json_is_true(d);
		else if (d && !json_is_null(d))
			return bad(r, "git.dirty", "is not true, false or null");
	}
	if (!p || json_is_null(p))
		return PLUMB_OK;
	if (!json_is_object(p))
		return bad(r, "policy", "is not an object");
	if (!get_int(p, "repeats", &ev->repeats, 0) || !get_int(p, "warmup", &ev->warmup, 0))
		return bad(r, "policy", "has repeats or warmup that is not a whole number");
	if (!get_num(p, "duration_s", &ev->duration_s))
		return bad(r, "policy.duration_s", "is not a number");
	if (!get_str(r, p, "source", &ev->policy_source, false) || !get_str(r, p, "case_filter", &ev->case_filter, false) ||
	    !get_str(r, p, "order", &ev->order, false))
		return bad(r, "policy", "has a field that is not a string");
	if (!get_int(p, "seed", &ev->seed, 0) || !get_int(p, "retries", &ev->retries, 0))
		return bad(r, "policy", "has a seed or retries that is not a whole number");
	return PLUMB_OK;
}

/* A case's env array (absent or null: none). */
static enum plumb_err read_env(struct rd *r, json_t *env, struct bench_case_result *cr, const char *field)
{
	if (!env || json_is_null(env))
		return PLUMB_OK;
	if (!json_is_array(env))
		return bad(r, field, "has an env that is not an array");
	if (json_array_size(env) && !(cr->env = calloc(json_array_size(env), sizeof *cr->env)))
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	for (size_t j = 0; j < json_array_size(env); j++) {
		json_t *s = json_array_get(env, j);
		if (!json_is_string(s))
			return bad(r, field, "has an env entry that is not a string");
		if (!(cr->env[cr->nenv++] = strdup(json_string_value(s))))
			return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	}
	return PLUMB_OK;
}

/* A case's runs array (absent or null: none). */
static enum plumb_err read_runs(struct rd *r, json_t *runs, struct bench_case_result *cr, const char *field)
{
	if (!runs || json_is_null(runs))
		return PLUMB_OK;
	if (!json_is_array(runs))
		return bad(r, field, "has runs that are not an array");
	if (json_array_size(runs) && !(cr->runs = calloc(json_array_size(runs), sizeof *cr->runs)))
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	for (size_t j = 0; j < json_array_size(runs); j++) {
		json_t *ro = json_array_get(runs, j);
		struct bench_run *run = &cr->runs[cr->nruns++];
		long code = 0, sig = 0;
		if (!json_is_object(ro) || !get_int(ro, "index", &run->index, 0) || !get_int(ro, "exit", &code, -1) ||
		    !get_int(ro, "signal", &sig, 0) || !get_int(ro, "bad_sample_lines", &run->bad_sample_lines, 0))
			return bad(r, field, "has a run that is not {index, exit, signal, timed_out}");
		run->exit_code = sig ? -1 : (int)code;
		run->signal = (int)sig;
		run->timed_out = json_is_true(json_object_get(ro, "timed_out"));
		run->attempts = 1;
		run->other_cpu_pct = run->steal_pct = run->idle_pct = run->wait_pct = run->wait_ms = run->load = NAN;
		run->yardstick_ms = NAN;
		if (!get_int(ro, "attempts", &run->attempts, 1))
			return bad(r, field, "has a run whose attempts is not a whole number >= 1");
		json_t *ct = json_object_get(ro, "contention");
		if (!ct || json_is_null(ct))
			continue;
		json_t *cd = json_object_get(ct, "contended");
		if (!json_is_object(ct) || !json_is_boolean(cd) || !get_num(ct, "other_cpu_pct", &run->other_cpu_pct) ||
		    !get_num(ct, "steal_pct", &run->steal_pct) || !get_num(ct, "idle_pct", &run->idle_pct) ||
		    !get_num(ct, "wait_pct", &run->wait_pct) || !get_num(ct, "wait_ms", &run->wait_ms) ||
		    !get_num(ct, "load", &run->load))
			return bad(r, field, "has a run whose contention is not {other_cpu_pct, steal_pct, idle_pct, "
					     "wait_pct, load, contended}");
		if (!get_num(ct, "yardstick_ms", &run->yardstick_ms) ||
		    !(isnan(run->yardstick_ms) || (isfinite(run->yardstick_ms) && run->yardstick_ms > 0)))
			return bad(r, field, "has a run whose contention.yardstick_ms is not a positive number of ms");
		run->has_contention = true;
		run->contended = json_is_true(cd);
	}
	return PLUMB_OK;
}

/* One element of the cases array into cr. */
static enum plumb_err read_case(struct rd *r, json_t *c, size_t i, struct bench_case_result *cr)
{
	char field[96];
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
	cr->cpu_wall_ratio = NAN;
	if (!get_str(r, c, "prepare", &cr->prepare, false) || !get_str(r, c, "core_metric", &cr->core_metric, false) ||
	    !get_str(r, c, "core_source", &cr->core_source, false) || !get_num(c, "cpu_wall_ratio", &cr->cpu_wall_ratio) ||
	    !get_int(c, "reruns", &cr->reruns, 0))
		return bad(r, field, "has a prepare, core_metric, core_source, cpu_wall_ratio or reruns of the wrong type");
	if (cr->core_metric && (!*cr->core_metric || strchr(cr->core_metric, '.')))
		return bad(r, field, "has a core_metric that is not a metric of the case (cpu_ms, unqueued_ms, wall_ms)");
	enum plumb_err rc = read_env(r, json_object_get(c, "env"), cr, field);
	return rc ? rc : read_runs(r, json_object_get(c, "runs"), cr, field);
}

/* Checks the artifact's tree (with the samples, or an empty samples array when they were streamed in) into ev. */
static enum plumb_err from_json(struct rd *r, json_t *root, struct bench_evidence *ev)
{
	if (!json_is_object(root))
		return bad(r, "the top level", "is not an object");
	json_t *schema = json_object_get(root, "schema");
	if (!json_is_string(schema))
		return bad(r, "schema", "is missing");
	if (strcmp(json_string_value(schema), BENCH_EVIDENCE_SCHEMA) != 0)
		return perr_set(r->e, PLUMB_EFORMAT, "%s: schema '%s' is not one this build reads (%s)", r->what,
				json_string_value(schema), BENCH_EVIDENCE_SCHEMA);
	static const char *const top[] = { "suite", "suite_path", "catalog_path", "created" };
	char **slots[] = { &ev->suite, &ev->suite_path, &ev->catalog_path, &ev->created };
	for (size_t i = 0; i < 4; i++)
		if (!get_str(r, root, top[i], slots[i], false))
			return bad(r, top[i], "is not a string");
	enum plumb_err rc = read_machine(r, json_object_get(root, "machine"), ev);
	if (!rc)
		rc = read_git_policy(r, json_object_get(root, "git"), json_object_get(root, "policy"), ev);
	if (rc)
		return rc;
	if (!get_str(r, root, "trust", &ev->trust, false) || (ev->trust && !is_trust(ev->trust)))
		return bad(r, "trust", "is not optimized, harness-only or unknown");
	json_t *cases = json_object_get(root, "cases");
	if (!json_is_array(cases))
		return bad(r, "cases", "is not an array");
	if (json_array_size(cases) && !(ev->cases = calloc(json_array_size(cases), sizeof *ev->cases)))
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < json_array_size(cases); i++)
		if ((rc = read_case(r, json_array_get(cases, i), i, &ev->cases[ev->ncases++])) != PLUMB_OK)
			return rc;
	json_t *samples = json_object_get(root, "samples");
	if (!json_is_array(samples))
		return bad(r, "samples", "is not an array");
	for (size_t i = 0; i < json_array_size(samples); i++)
		if ((rc = add_sample_json(r, ev, json_array_get(samples, i), i)) != PLUMB_OK)
			return rc;
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
	/* the input rule (base/readall.h, docs/design.md §3.5): a device is refused unopened, a larger file unread,
	 * a stream stops at its cap or after 5 s without data */
	int fd;
	struct stat st;
	enum plumb_err orc = read_input_open(path, "artifact", BENCH_EVIDENCE_MAX, &fd, &st, e);
	if (orc)
		return orc;
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
	if (!mapped && (orc = read_input_fd(fd, path, "artifact", S_ISREG(st.st_mode) ? BENCH_EVIDENCE_MAX
										       : BENCH_EVIDENCE_STREAM_MAX,
					     &text, &len, e)) != PLUMB_OK) {
		close(fd);
		return orc;
	}
	close(fd);
	enum plumb_err rc = parse(text, len, mapped, path, ev, e);
	if (mapped)
		munmap(text, len);
	else
		free(text);
	return rc;
}
