/* push.c — an artifact into the text exposition format (push.h). Statistics are bench_summarize's, the ones
 * `bench report` prints, so a p50 in Prometheus is the p50 of the report. Families are written whole, one after
 * the other, as the format demands; a series appears once (one per case, statistic and, for samples, name). */
#include "bench/push.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/stats.h"

/* every figure the runner writes itself (runner.c's keep_measures): one missing here would be pushed as if the
 * program had emitted it, a plumb_bench_sample series beside the program's own */
static const char *const RUNNER[] = { "wall_ms", "cpu_ms", "user_ms", "sys_ms", "max_rss_bytes", "unqueued_ms" };
static const char *const RUNNER_HELP[] = {
	"Wall time of one run of a benchmark case, in milliseconds (statistic over the runs in `stat`).",
	"CPU time (user + sys) of one run of a benchmark case, in milliseconds (statistic in `stat`).",
	"User CPU time of one run of a benchmark case, in milliseconds (statistic in `stat`).",
	"System CPU time of one run of a benchmark case, in milliseconds (statistic in `stat`).",
	"Peak resident set of one run of a benchmark case, in bytes (statistic in `stat`).",
	"Wall time of one run less its waits for a CPU, in milliseconds (statistic in `stat`; only when the waits are "
	"known).",
};
#define NRUNNER (sizeof RUNNER / sizeof *RUNNER)

static const char *const RESERVED[] = { "job", "instance", "suite", "case", "stat", "name", "unit", "kind",
					"git_commit", "git_dirty", "machine", "trust", "status" };

bool bench_push_label_allowed(const char *name)
{
	if (!prom_is_label_name(name) || strncmp(name, "tag_", 4) == 0)
		return false;
	for (size_t i = 0; i < sizeof RESERVED / sizeof *RESERVED; i++)
		if (strcmp(name, RESERVED[i]) == 0)
			return false;
	return true;
}

/* The labels every series of the artifact carries, filled once. */
struct context {
	const struct bench_evidence *ev;
	const struct bench_push_opts *o;
	const char *machine, *dirty;
};

#define MAX_LABELS (12 + BENCH_PUSH_LABELS_MAX + 32)
struct labels {
	struct prom_label v[MAX_LABELS];
	size_t n;
};

static void add(struct labels *l, const char *name, const char *value)
{
	if (l->n < MAX_LABELS)
		l->v[l->n++] = (struct prom_label){ name, value };
}

/* suite, case, stat first, then the context: the order a person reads them in. */
static void context_labels(const struct context *cx, struct labels *l, const char *trust)
{
	add(l, "git_commit", cx->ev->git_commit);
	add(l, "git_dirty", cx->dirty);
	add(l, "machine", cx->machine);
	add(l, "trust", trust);
	for (size_t i = 0; i < cx->o->nextra; i++)
		add(l, cx->o->extra[i].name, cx->o->extra[i].value);
}

/* The case a metric belongs to and the rest of its name ("parse.app.ready_ms": "parse", "app.ready_ms"). */
static const struct bench_case_result *split(const struct bench_evidence *ev, const char *metric, const char **rest)
{
	const struct bench_case_result *c = bench_evidence_case_of(ev, metric);
	size_t n = c ? strlen(c->name) : 0;
	*rest = c && metric[n] == '.' ? metric + n + 1 : metric;
	return c;
}

static int runner_index(const char *rest)
{
	for (size_t i = 0; i < NRUNNER; i++)
		if (strcmp(rest, RUNNER[i]) == 0)
			return (int)i;
	return -1;
}

/* The statistics of one metric's values, one sample line each. */
static bool stat_lines(struct sbuf *body, const char *family, struct labels *l, size_t stat_at,
		       const struct bench_evidence *ev, const char *metric)
{
	size_t n;
	double *vals = bench_evidence_values(ev, metric, &n);
	struct bench_summary s;
	if (!vals || !bench_summarize(vals, n, &s)) {
		free(vals);
		return vals == NULL && n == 0; /* nothing is not a failure; a failed summary is out of memory */
	}
	free(vals);
	const struct { const char *stat; double v; } rows[] = {
		{ "p50", s.p50 }, { "p95", s.p95 }, { "mean", s.mean }, { "min", s.min }, { "max", s.max },
		{ "count", (double)s.n },
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
		l->v[stat_at].value = rows[i].stat;
		prom_sample(body, family, l->v, l->n, rows[i].v);
	}
	return true;
}

/* The families of the runner's own figures. */
static bool runner_families(struct sbuf *body, const struct context *cx, const char **metrics, size_t nm)
{
	char family[64];
	for (size_t k = 0; k < NRUNNER; k++) {
		bool begun = false;
		snprintf(family, sizeof family, "plumb_bench_%s", RUNNER[k]);
		for (size_t i = 0; i < nm; i++) {
			const char *rest;
			const struct bench_case_result *c = split(cx->ev, metrics[i], &rest);
			if (runner_index(rest) != (int)k)
				continue;
			if (!begun)
				prom_family(body, family, "gauge", RUNNER_HELP[k]);
			begun = true;
			struct labels l = { .n = 0 };
			add(&l, "suite", cx->ev->suite);
			add(&l, "case", c ? c->name : "");
			add(&l, "stat", NULL);
			context_labels(cx, &l, c ? c->trust : cx->ev->trust);
			if (!stat_lines(body, family, &l, 2, cx->ev, metrics[i]))
				return false;
		}
	}
	return true;
}

/* A tag's value as label text: a string as it is, anything else as its compact JSON. malloc'd. */
static char *tag_text(json_t *v)
{
	return json_is_string(v) ? strdup(json_string_value(v)) : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* The tags every sample of the metric carries with one value: those become labels (tag_KEY); a tag that differs
 * from run to run would make a series per run, so it is left out. Returns the object (the caller decrefs). */
static json_t *common_tags(const struct bench_evidence *ev, const char *metric)
{
	json_t *common = NULL;
	for (size_t i = 0; i < ev->nsamples; i++) {
		const struct bench_sample *s = &ev->samples[i];
		if (strcmp(s->name, metric) != 0)
			continue;
		json_t *t = s->tags ? json_loads(s->tags, 0, NULL) : NULL;
		if (!json_is_object(t)) {
			json_decref(t);
			json_decref(common);
			return NULL; /* a sample without tags: no tag is common */
		}
		if (!common) {
			common = t;
			continue;
		}
		const char *key;
		json_t *v, *tmp;
		json_object_foreach_safe(common, tmp, key, v)
			if (!json_equal(v, json_object_get(t, key)))
				json_object_del(common, key);
		json_decref(t);
	}
	return common;
}

/* The program's own samples: one family, a series per metric and statistic. */
static bool sample_family(struct sbuf *body, const struct context *cx, const char **metrics, size_t nm)
{
	bool begun = false, ok = true;
	for (size_t i = 0; i < nm && ok; i++) {
		const char *rest;
		const struct bench_case_result *c = split(cx->ev, metrics[i], &rest);
		if (runner_index(rest) >= 0)
			continue;
		const struct bench_sample *first = bench_evidence_first(cx->ev, metrics[i]);
		if (!begun)
			prom_family(body, "plumb_bench_sample", "gauge",
				    "A sample the program under test emitted (plumb_sample), by `name` and `unit` (statistic over "
				    "its values in `stat`).");
		begun = true;
		struct labels l = { .n = 0 };
		add(&l, "suite", cx->ev->suite);
		add(&l, "case", c ? c->name : "");
		add(&l, "stat", NULL);
		add(&l, "name", rest);
		add(&l, "unit", first ? first->unit : NULL);
		add(&l, "kind", first ? first->kind : NULL);
		context_labels(cx, &l, c ? c->trust : cx->ev->trust);
		json_t *tags = common_tags(cx->ev, metrics[i]);
		struct sbuf names = SBUF_INIT; /* "tag_KEY\0" each, the names the labels point into */
		char *values[32];
		size_t nv = 0, offs[32];
		const char *key;
		json_t *v;
		json_object_foreach(tags, key, v) {
			if (nv == 32)
				break;
			offs[nv] = names.len;
			sbuf_addstr(&names, "tag_");
			prom_label_name(&names, key);
			sbuf_addch(&names, '\0');
			if (!(values[nv] = tag_text(v)))
				ok = false;
			nv++;
		}
		ok &= !names.oom;
		for (size_t k = 0; k < nv && ok; k++)
			add(&l, names.buf + offs[k], values[k]);
		if (ok)
			ok = stat_lines(body, "plumb_bench_sample", &l, 2, cx->ev, metrics[i]);
		for (size_t k = 0; k < nv; k++)
			free(values[k]);
		sbuf_release(&names);
		json_decref(tags);
	}
	return ok;
}

/* A run that did not end well (a non-zero exit, a signal, a timeout), per case. */
static void failed_family(struct sbuf *body, const struct context *cx)
{
	prom_family(body, "plumb_bench_failed_runs", "gauge",
		    "Measured runs of a benchmark case that failed (non-zero exit, a signal, or its timeout).");
	for (size_t i = 0; i < cx->ev->ncases; i++) {
		const struct bench_case_result *c = &cx->ev->cases[i];
		size_t failed = 0;
		for (size_t r = 0; r < c->nruns; r++)
			failed += c->runs[r].exit_code != 0 || c->runs[r].signal || c->runs[r].timed_out;
		struct labels l = { .n = 0 };
		add(&l, "suite", cx->ev->suite);
		add(&l, "case", c->name);
		context_labels(cx, &l, c->trust);
		prom_sample(body, "plumb_bench_failed_runs", l.v, l.n, (double)failed);
	}
}

/* When the artifact was made: what orders runs in a query ("the last 30 runs"). */
static void timestamp_family(struct sbuf *body, const struct context *cx)
{
	struct tm tm = { 0 };
	const char *end = cx->ev->created ? strptime(cx->ev->created, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	if (!end || *end)
		return;
	prom_family(body, "plumb_bench_run_timestamp_seconds", "gauge",
		    "When the benchmark run was made (Unix seconds, from the artifact), one series per run.");
	struct labels l = { .n = 0 };
	add(&l, "suite", cx->ev->suite);
	context_labels(cx, &l, cx->ev->trust);
	prom_sample(body, "plumb_bench_run_timestamp_seconds", l.v, l.n, (double)timegm(&tm));
}

enum plumb_err bench_push_render(const struct bench_evidence *ev, const struct bench_push_opts *o, struct sbuf *body,
				 struct sbuf *path, struct perr *e)
{
	if (o->nextra > BENCH_PUSH_LABELS_MAX)
		return perr_set(e, PLUMB_EINVAL, "at most %d extra labels", BENCH_PUSH_LABELS_MAX);
	for (size_t i = 0; i < o->nextra; i++)
		if (!bench_push_label_allowed(o->extra[i].name))
			return perr_set(e, PLUMB_EINVAL, "'%s' cannot be a label of its own (a label name is [a-zA-Z_][a-zA-Z0-9_]* "
							 "and not one plumb sets: suite, case, stat, machine, git_commit, ...)",
					o->extra[i].name);
	struct context cx = { ev, o, o->machine ? o->machine : ev->hostname ? ev->hostname : "unknown",
			      ev->git_dirty < 0 ? NULL : ev->git_dirty ? "true" : "false" };
	size_t nm;
	const char **metrics = bench_evidence_metrics(ev, &nm);
	if (!metrics && ev->nsamples)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	bool ok = runner_families(body, &cx, metrics, nm) && sample_family(body, &cx, metrics, nm);
	free(metrics);
	if (!ok)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	failed_family(body, &cx);
	timestamp_family(body, &cx);
	struct prom_label key[2 + BENCH_PUSH_LABELS_MAX] = { { "suite", ev->suite ? ev->suite : "" },
							     { "machine", cx.machine } };
	for (size_t i = 0; i < o->nextra; i++)
		key[2 + i] = o->extra[i];
	prom_grouping_path(path, BENCH_PUSH_JOB, key, 2 + o->nextra);
	enum plumb_err rc = sbuf_done(body, e);
	return rc != PLUMB_OK ? rc : sbuf_done(path, e);
}
