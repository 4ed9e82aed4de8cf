/* config.h — the two files a person edits for plumb bench (docs/design.md §8.1, §8.4), both INI read with libinih:
 * a suite (what to run, how often) and a catalog (plumb.catalog.v1: what each metric means, who owns it).
 * Loading either checks every key; a mistake is one message "FILE:LINE: what is wrong" (PLUMB_EFORMAT). */
#ifndef PLUMB_BENCH_CONFIG_H
#define PLUMB_BENCH_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

struct bench_case {
	char *name;        /* [case NAME]: letters, digits, '_' and '-' (no '.': metric names are CASE.METRIC) */
	char *run;         /* the command, run with /bin/sh -c */
	char **env;        /* "KEY=VALUE" strings added to the environment */
	size_t nenv;
	char *cwd;         /* absolute (resolved against the suite's directory); the suite's directory by default */
	double timeout_s;  /* 0: none */
	char *binary;      /* the program under test when it is not the command's first word; NULL otherwise */
	char *prepare;     /* a command run before every repeat, unmeasured (/bin/sh -c), or NULL */
	char *core;        /* the core metric the suite names for the case ("cpu_ms", "wall_ms"), or NULL: decided from
			    * the runs' CPU/wall ratio */
	char **params;     /* while the file is read: its `params = NAME=V1,V2` lines (none once it is loaded: the
			    * case was expanded into one case per combination) */
	size_t nparams;
};

/* How the runner orders the repeats of the cases (docs/bench.md "The model"). */
enum bench_order { BENCH_ORDER_UNSET = 0, BENCH_ORDER_SHUFFLE, BENCH_ORDER_ROUND_ROBIN };

struct bench_suite {
	char *path;        /* as given */
	char *dir;         /* absolute directory of the suite file */
	char *name;        /* [suite] name; the file name without .ini by default */
	long repeats;      /* 0 when unset */
	double duration_s; /* 0 when unset */
	long warmup;       /* -1 when unset */
	char *catalog;     /* absolute path, or NULL */
	enum bench_order order; /* BENCH_ORDER_UNSET when the suite does not say */
	long seed;         /* the shuffle's seed, -1 when unset */
	long retries;      /* re-runs of a contended repeat, -1 when unset */
	char *prepare;     /* the prepare command of every case that sets none, or NULL */
	struct bench_case *cases;
	size_t ncases;
};

/* Loads and checks a suite file. On failure s is released and e says where. The suite owns everything. */
enum plumb_err bench_suite_load(const char *path, struct bench_suite *s, struct perr *e);
/* The same from text in memory; `path` names it in messages and anchors relative paths. */
enum plumb_err bench_suite_parse(const char *text, const char *path, struct bench_suite *s, struct perr *e);
void bench_suite_release(struct bench_suite *s);

/* Whether s is a case name: letters, digits, '_' and '-', at most 100 bytes (no '.': metric names are CASE.METRIC). */
bool bench_case_name_valid(const char *s);
/* Frees what one case owns (not the case itself). */
void bench_case_free(struct bench_case *c);
/* Expands the cases with `params` lines into one case per combination (suite_params.c; bench_suite_parse calls
 * it): PLUMB_EFORMAT naming the case for a {NAME} without a parameter, a bad expanded name or a repeated name. */
enum plumb_err bench_suite_expand_params(struct bench_suite *s, struct perr *e);

/* "shuffle" or "round-robin" into *order; false for anything else. */
bool bench_order_parse(const char *name, enum bench_order *order);
const char *bench_order_name(enum bench_order order);

enum bench_better { BENCH_LOWER_IS_BETTER = 0, BENCH_HIGHER_IS_BETTER = 1 };

struct bench_metric_def {
	char *name;        /* an exact metric name, or a shell pattern ("*.wall_ms") */
	char *kind, *unit; /* NULL when unset */
	enum bench_better better;
	bool core;         /* tier = core (default drilldown) */
	char **required;   /* the required sets it belongs to */
	size_t nrequired;
	double slo_p50, slo_p95, slo_max; /* NAN when unset */
	char *phase, *owner, *hint;       /* NULL when unset */
	long min_samples;  /* 0: the catalog's default */
};

#define BENCH_CATALOG_SCHEMA "plumb.catalog.v1"
/* The cap on a suite or catalog file (docs/design.md §3.5): far above any hand-written INI file. */
#define BENCH_CONFIG_MAX (16u << 20)
#define BENCH_DEFAULT_MIN_SAMPLES 5

struct bench_catalog {
	char *path;
	long min_samples;  /* [catalog] min_samples, BENCH_DEFAULT_MIN_SAMPLES by default */
	struct bench_metric_def *metrics;
	size_t n;
};

enum plumb_err bench_catalog_load(const char *path, struct bench_catalog *c, struct perr *e);
enum plumb_err bench_catalog_parse(const char *text, const char *path, struct bench_catalog *c, struct perr *e);
void bench_catalog_release(struct bench_catalog *c);

/* The entry for a metric: an exact name first, else the first pattern that matches; NULL when none. */
const struct bench_metric_def *bench_catalog_find(const struct bench_catalog *c, const char *metric);
/* Whether a metric counts as core: its catalog tier, or, without an entry, true for CASE.wall_ms only. */
bool bench_metric_is_core(const struct bench_catalog *c, const char *metric);
/* The sample floor below which a metric's evidence is too weak (entry, else catalog default). */
long bench_metric_min_samples(const struct bench_catalog *c, const char *metric);

#endif
