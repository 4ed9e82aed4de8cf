/* config.c — suite and catalog INI files through libinih. inih calls one handler per key; the handler
 * checks the key and value, keeps the first error's text, and stops the parse (inih then returns the line). */
#include "bench/config.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ini.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/grow.h"
#include "base/opt.h"
#include "base/readall.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "base/str.h"

/* libinih's Debian build makes its options run-time variables: a heap line buffer that grows to 64 KiB (long
 * `run =` lines), stop at the first error, no multi-line continuation (indentation means nothing). */
static void ini_setup(void)
{
	ini_use_stack = false;
	ini_allow_realloc = true;
	ini_max_line = 1 << 16;
	ini_initial_alloc = 256;
	ini_stop_on_first_error = true;
	ini_allow_multiline = false;
}

/* A suite or catalog file, whole, up to BENCH_CONFIG_MAX bytes, under the input rule (base/readall.h,
 * docs/design.md §3.5): a device (/dev/zero, /dev/urandom) is refused before it is opened, a larger file before
 * it is read, a FIFO that gives nothing within 5 s is not waited on: all exit 5. */
static enum plumb_err read_text(const char *path, const char *what, char **text, struct perr *e)
{
	size_t len;
	return read_input(path, what, BENCH_CONFIG_MAX, text, &len, e);
}

/* dir of path, absolute */
static char *abs_dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	struct sbuf sb = SBUF_INIT;
	if (path[0] != '/') {
		char cwd[PATH_MAX];
		if (!getcwd(cwd, sizeof cwd))
			return NULL;
		sbuf_addstr(&sb, cwd);
		if (slash)
			sbuf_addch(&sb, '/');
	}
	if (slash)
		sbuf_add(&sb, path, (size_t)(slash - path) + (slash == path ? 1 : 0));
	return sbuf_detach(&sb, NULL);
}

static char *resolve(const char *dir, const char *p)
{
	if (p[0] == '/')
		return strdup(p);
	struct sbuf sb = SBUF_INIT;
	sbuf_addstr(&sb, dir);
	if (strcmp(p, ".") != 0) {
		sbuf_addch(&sb, '/');
		sbuf_addstr(&sb, p);
	}
	return sbuf_detach(&sb, NULL);
}

struct parse_ctx {
	const char *path;
	const char *dir;
	char msg[512];
	bool oom;
};

static int fail(struct parse_ctx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parse_ctx *cx, const char *fmt, ...)
{
	if (!cx->msg[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(cx->msg, sizeof cx->msg, fmt, ap);
		va_end(ap);
	}
	return 0;
}

/* Out of memory: remembered (the parse fails with PLUMB_ENOMEM, not a line number) and the parse stops. */
static int oom(struct parse_ctx *cx)
{
	cx->oom = true;
	return fail(cx, "out of memory");
}

/* The name of a "[PREFIX NAME]" section (spaces after the prefix skipped), or NULL when it is another section. */
static const char *section_name(const char *section, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(section, prefix, n) == 0 ? section + n + strspn(section + n, " ") : NULL;
}

static bool set_str(struct parse_ctx *cx, char **slot, const char *section, const char *key, const char *value)
{
	if (*slot) {
		fail(cx, "[%s] sets '%s' twice", section, key);
		return false;
	}
	*slot = strdup(value);
	return *slot || oom(cx);
}

static bool parse_long(const char *v, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		return false;
	*out = x;
	return true;
}

static bool parse_num(const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(x))
		return false;
	*out = x;
	return true;
}


/* A case name with {PARAM} placeholders (expanded later, and checked again then). */
static bool valid_template_name(const char *s)
{
	if (!strchr(s, '{') || strlen(s) > 200)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-' || *s == '{' || *s == '}'))
			return false;
	return true;
}

static bool valid_env_key(const char *s, size_t n)
{
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_'))
			return false;
	return true;
}

/* ---- suites ---- */

struct suite_ctx {
	struct parse_ctx cx;
	struct bench_suite *s;
};

static struct bench_case *find_or_add_case(struct suite_ctx *sc, const char *name)
{
	struct bench_suite *s = sc->s;
	for (size_t i = 0; i < s->ncases; i++)
		if (strcmp(s->cases[i].name, name) == 0)
			return &s->cases[i];
	if (!REALLOC_ARRAY(s->cases, s->ncases + 1))
		return NULL;
	struct bench_case *c = &s->cases[s->ncases];
	memset(c, 0, sizeof *c);
	c->name = strdup(name);
	if (!c->name)
		return NULL;
	s->ncases++;
	return c;
}

/* A word of a list value: skips the separators in seps, returns the word's start (NULL at the end) and its
 * length; *p moves past it. */
static const char *next_word(const char **p, const char *seps, size_t *len)
{
	*p += strspn(*p, seps);
	if (!**p)
		return NULL;
	const char *w = *p;
	*len = strcspn(w, seps);
	*p += *len;
	return w;
}

/* Stores value, resolved against dir, in *slot (once); an empty value is an error. */
static int set_path(struct parse_ctx *cx, char **slot, const char *section, const char *key, const char *dir,
		    const char *value)
{
	if (*slot)
		return fail(cx, "[%s] sets '%s' twice", section, key);
	if (!*value)
		return fail(cx, "[%s] %s is empty", section, key);
	*slot = resolve(dir, value);
	if (!*slot)
		return oom(cx);
	return 1;
}

/* One key of [suite]. */
static int suite_key(struct parse_ctx *cx, struct bench_suite *s, const char *key, const char *value)
{
	if (strcmp(key, "name") == 0)
		return set_str(cx, &s->name, "suite", key, value);
	if (strcmp(key, "repeats") == 0) {
		if (s->repeats)
			return fail(cx, "[suite] sets 'repeats' twice");
		if (!parse_long(value, 1, 1000000, &s->repeats))
			return fail(cx, "[suite] repeats must be a whole number from 1 to 1000000, not '%s'", value);
		return 1;
	}
	if (strcmp(key, "duration") == 0) {
		if (s->duration_s > 0)
			return fail(cx, "[suite] sets 'duration' twice");
		if (!opt_parse_seconds(value, &s->duration_s) || s->duration_s <= 0)
			return fail(cx, "[suite] duration must be a positive time like 60s or 10m, not '%s'", value);
		return 1;
	}
	if (strcmp(key, "warmup") == 0) {
		if (s->warmup >= 0)
			return fail(cx, "[suite] sets 'warmup' twice");
		if (!parse_long(value, 0, 1000000, &s->warmup))
			return fail(cx, "[suite] warmup must be a whole number >= 0, not '%s'", value);
		return 1;
	}
	if (strcmp(key, "catalog") == 0)
		return set_path(cx, &s->catalog, "suite", key, cx->dir, value);
	if (strcmp(key, "order") == 0) {
		if (s->order != BENCH_ORDER_UNSET)
			return fail(cx, "[suite] sets 'order' twice");
		if (!bench_order_parse(value, &s->order))
			return fail(cx, "[suite] order is shuffle or round-robin, not '%s'", value);
		return 1;
	}
	if (strcmp(key, "seed") == 0) {
		if (s->seed >= 0)
			return fail(cx, "[suite] sets 'seed' twice");
		if (!parse_long(value, 0, 999999999L, &s->seed))
			return fail(cx, "[suite] seed must be a whole number from 0 to 999999999, not '%s'", value);
		return 1;
	}
	if (strcmp(key, "retries") == 0) {
		if (s->retries >= 0)
			return fail(cx, "[suite] sets 'retries' twice");
		if (!parse_long(value, 0, 10, &s->retries))
			return fail(cx, "[suite] retries must be a whole number from 0 to 10, not '%s'", value);
		return 1;
	}
	if (strcmp(key, "prepare") == 0) {
		if (!*value)
			return fail(cx, "[suite] prepare is empty");
		return set_str(cx, &s->prepare, "suite", key, value);
	}
	return fail(cx,
		    "unknown key '%s' in [suite] (known: name, repeats, duration, warmup, catalog, order, seed, retries, "
		    "prepare)",
		    key);
}

bool bench_order_parse(const char *name, enum bench_order *order)
{
	if (strcmp(name, "shuffle") == 0)
		*order = BENCH_ORDER_SHUFFLE;
	else if (strcmp(name, "round-robin") == 0)
		*order = BENCH_ORDER_ROUND_ROBIN;
	else
		return false;
	return true;
}

const char *bench_order_name(enum bench_order order)
{
	return order == BENCH_ORDER_ROUND_ROBIN ? "round-robin" : "shuffle";
}

/* `env = KEY=VALUE ...`: one or more words; the key may repeat. */
static int case_env(struct parse_ctx *cx, struct bench_case *c, const char *section, const char *value)
{
	const char *p = value, *w;
	size_t n;
	while ((w = next_word(&p, " \t", &n)) != NULL) {
		const char *eq = memchr(w, '=', n);
		if (!eq || !valid_env_key(w, (size_t)(eq - w)))
			return fail(cx, "[%s] env wants KEY=VALUE words, not '%.*s'", section, (int)n, w);
		if (!REALLOC_ARRAY(c->env, c->nenv + 1) || !(c->env[c->nenv] = strndup(w, n)))
			return oom(cx);
		c->nenv++;
	}
	return 1;
}

/* A parameter value: what may stand in a case name, and '.' (the expanded name is checked on its own). */
static bool valid_param_value(const char *s, size_t n)
{
	if (n == 0 || n > 100)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* `params = NAME=V1,V2,...`: a parameter list (hyperfine's --parameter-list); the key may repeat for another
 * parameter, and the case expands into one case per combination once the file is read (expand_params). */
static int case_params(struct parse_ctx *cx, struct bench_case *c, const char *section, const char *value)
{
	const char *eq = strchr(value, '=');
	if (!eq || !valid_env_key(value, (size_t)(eq - value)))
		return fail(cx, "[%s] params wants NAME=V1,V2,... , not '%s'", section, value);
	for (size_t i = 0; i < c->nparams; i++)
		if (strncmp(c->params[i], value, (size_t)(eq - value) + 1) == 0)
			return fail(cx, "[%s] sets parameter '%.*s' twice", section, (int)(eq - value), value);
	const char *p = eq + 1, *w;
	size_t n, count = 0;
	while ((w = next_word(&p, ", \t", &n)) != NULL) {
		if (!valid_param_value(w, n))
			return fail(cx, "[%s] parameter value '%.*s' is not letters, digits, '_', '-' or '.'", section,
				    (int)n, w);
		count++;
	}
	if (count == 0)
		return fail(cx, "[%s] params '%.*s' has no values", section, (int)(eq - value), value);
	if (!REALLOC_ARRAY(c->params, c->nparams + 1) || !(c->params[c->nparams] = strdup(value)))
		return oom(cx);
	c->nparams++;
	return 1;
}

/* One key of a [case NAME] section. */
static int case_key(struct parse_ctx *cx, struct bench_case *c, const char *section, const char *key,
		    const char *value)
{
	if (strcmp(key, "run") == 0) {
		if (!*value)
			return fail(cx, "[%s] run is empty", section);
		return set_str(cx, &c->run, section, key, value);
	}
	if (strcmp(key, "env") == 0)
		return case_env(cx, c, section, value);
	if (strcmp(key, "cwd") == 0)
		return set_path(cx, &c->cwd, section, key, cx->dir, value);
	if (strcmp(key, "timeout") == 0) {
		if (c->timeout_s > 0)
			return fail(cx, "[%s] sets 'timeout' twice", section);
		if (!opt_parse_seconds(value, &c->timeout_s) || c->timeout_s <= 0)
			return fail(cx, "[%s] timeout must be a positive time like 30s, not '%s'", section, value);
		return 1;
	}
	if (strcmp(key, "binary") == 0) {
		if (!*value) /* said before "twice", as it always was */
			return fail(cx, "[%s] binary is empty", section);
		return set_path(cx, &c->binary, section, key, c->cwd ? c->cwd : cx->dir, value);
	}
	if (strcmp(key, "prepare") == 0) {
		if (!*value)
			return fail(cx, "[%s] prepare is empty", section);
		return set_str(cx, &c->prepare, section, key, value);
	}
	if (strcmp(key, "core") == 0) {
		if (strcmp(value, "cpu_ms") != 0 && strcmp(value, "wall_ms") != 0 && strcmp(value, "unqueued_ms") != 0 &&
		    strcmp(value, "auto") != 0)
			return fail(cx, "[%s] core is cpu_ms, wall_ms, unqueued_ms or auto, not '%s'", section, value);
		return set_str(cx, &c->core, section, key, value);
	}
	if (strcmp(key, "params") == 0)
		return case_params(cx, c, section, value);
	return fail(cx, "unknown key '%s' in [%s] (known: run, env, cwd, timeout, binary, prepare, core, params)", key,
		    section);
}

static int suite_handler(void *user, const char *section, const char *key, const char *value)
{
	struct suite_ctx *sc = user;
	struct parse_ctx *cx = &sc->cx;
	if (strcmp(section, "suite") == 0)
		return suite_key(cx, sc->s, key, value);
	const char *name = section_name(section, "case ");
	if (name) {
		if (!bench_case_name_valid(name) && !valid_template_name(name))
			return fail(cx, "[%s]: a case name is letters, digits, '_' and '-' (metric names are CASE.METRIC)",
				    section);
		struct bench_case *c = find_or_add_case(sc, name);
		if (!c)
			return oom(cx);
		return case_key(cx, c, section, key, value);
	}
	if (!*section)
		return fail(cx, "'%s' is outside any section (start with [suite] or [case NAME])", key);
	return fail(cx, "unknown section [%s] (a suite has [suite] and [case NAME] sections)", section);
}

void bench_suite_release(struct bench_suite *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncases; i++)
		bench_case_free(&s->cases[i]);
	free(s->cases);
	free(s->prepare);
	free(s->path);
	free(s->dir);
	free(s->name);
	free(s->catalog);
	memset(s, 0, sizeof *s);
	s->warmup = -1;
	s->seed = s->retries = -1;
}

static enum plumb_err finish_error(struct parse_ctx *cx, int rc, struct perr *e)
{
	if (cx->oom)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (rc > 0)
		return perr_set(e, PLUMB_EFORMAT, "%s:%d: %s", cx->path, rc, cx->msg[0] ? cx->msg : "not a KEY = VALUE line or [section]");
	return perr_set(e, PLUMB_ENOMEM, "%s: cannot parse (out of memory)", cx->path);
}

enum plumb_err bench_suite_parse(const char *text, const char *path, struct bench_suite *s, struct perr *e)
{
	memset(s, 0, sizeof *s);
	s->warmup = -1;
	s->seed = s->retries = -1;
	s->path = strdup(path);
	s->dir = abs_dir_of(path);
	if (!s->path || !s->dir) {
		bench_suite_release(s);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	struct suite_ctx sc = { .cx = { .path = path, .dir = s->dir }, .s = s };
	ini_setup();
	int rc = ini_parse_string(text, suite_handler, &sc);
	if (rc != 0 || sc.cx.msg[0]) {
		enum plumb_err code = finish_error(&sc.cx, rc, e);
		bench_suite_release(s);
		return code;
	}
	if (s->repeats && s->duration_s > 0) {
		bench_suite_release(s);
		return perr_set(e, PLUMB_EFORMAT, "%s: [suite] sets both repeats and duration (choose one)", path);
	}
	if (s->ncases == 0) {
		bench_suite_release(s);
		return perr_set(e, PLUMB_EFORMAT, "%s: no [case NAME] section with a run = command", path);
	}
	for (size_t i = 0; i < s->ncases; i++) {
		struct bench_case *c = &s->cases[i];
		if (!c->run) {
			enum plumb_err code = perr_set(e, PLUMB_EFORMAT, "%s: [case %s] has no run = command", path, c->name);
			bench_suite_release(s);
			return code;
		}
		if (!c->cwd && !(c->cwd = strdup(s->dir))) {
			bench_suite_release(s);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
		if (!c->prepare && s->prepare && !(c->prepare = strdup(s->prepare))) {
			bench_suite_release(s);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
	}
	enum plumb_err xrc = bench_suite_expand_params(s, e);
	if (xrc) {
		bench_suite_release(s);
		return xrc;
	}
	if (!s->name) {
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		size_t n = strlen(base);
		if (n > 4 && str_ends_with(base, ".ini"))
			n -= 4;
		s->name = strndup(base, n);
		if (!s->name) {
			bench_suite_release(s);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
	}
	return PLUMB_OK;
}

enum plumb_err bench_suite_load(const char *path, struct bench_suite *s, struct perr *e)
{
	memset(s, 0, sizeof *s);
	s->warmup = -1;
	s->seed = s->retries = -1;
	char *text;
	enum plumb_err rc = read_text(path, "suite", &text, e);
	if (rc)
		return rc;
	rc = bench_suite_parse(text, path, s, e);
	free(text);
	return rc;
}

/* ---- catalogs ---- */

struct catalog_ctx {
	struct parse_ctx cx;
	struct bench_catalog *c;
	bool saw_min_samples;
};

static struct bench_metric_def *find_or_add_metric(struct bench_catalog *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->metrics[i].name, name) == 0)
			return &c->metrics[i];
	if (!REALLOC_ARRAY(c->metrics, c->n + 1))
		return NULL;
	struct bench_metric_def *m = &c->metrics[c->n];
	memset(m, 0, sizeof *m);
	m->slo_p50 = m->slo_p95 = m->slo_max = NAN;
	m->better = BENCH_LOWER_IS_BETTER;
	m->name = strdup(name);
	if (!m->name)
		return NULL;
	c->n++;
	return m;
}

static int set_slo(struct parse_ctx *cx, double *slot, const char *section, const char *key, const char *value)
{
	if (!isnan(*slot))
		return fail(cx, "[%s] sets '%s' twice", section, key);
	if (!parse_num(value, slot))
		return fail(cx, "[%s] %s must be a number, not '%s'", section, key, value);
	return 1;
}

/* One key of [catalog]. */
static int catalog_key(struct catalog_ctx *cc, const char *key, const char *value)
{
	struct parse_ctx *cx = &cc->cx;
	if (strcmp(key, "schema") == 0) {
		if (strcmp(value, BENCH_CATALOG_SCHEMA) != 0)
			return fail(cx, "schema '%s' is not one this build reads (%s)", value, BENCH_CATALOG_SCHEMA);
		return 1;
	}
	if (strcmp(key, "min_samples") == 0) {
		if (cc->saw_min_samples)
			return fail(cx, "[catalog] sets 'min_samples' twice");
		cc->saw_min_samples = true;
		if (!parse_long(value, 1, 1000000, &cc->c->min_samples))
			return fail(cx, "[catalog] min_samples must be a whole number >= 1, not '%s'", value);
		return 1;
	}
	return fail(cx, "unknown key '%s' in [catalog] (known: schema, min_samples)", key);
}

/* set_str of the redacted value. A metric's phase, owner (a source path or seam) and hint are printed by report, compare
 * and owners: redacted when the catalog is read, so every output of them shows the redacted text
 * (docs/design.md §3.6). */
static int set_redacted(struct parse_ctx *cx, char **slot, const char *section, const char *key, const char *value)
{
	char *red = redact_dup(value);
	if (!red)
		return oom(cx);
	bool ok = set_str(cx, slot, section, key, red);
	free(red);
	return ok;
}

/* `required = SET, SET ...`: the required sets a metric belongs to. */
static int metric_required(struct parse_ctx *cx, struct bench_metric_def *m, const char *value)
{
	const char *p = value, *w;
	size_t n;
	while ((w = next_word(&p, " \t,", &n)) != NULL) {
		if (!REALLOC_ARRAY(m->required, m->nrequired + 1) || !(m->required[m->nrequired] = strndup(w, n)))
			return oom(cx);
		m->nrequired++;
	}
	return 1;
}

/* One key of a [metric NAME] section. */
static int metric_key(struct parse_ctx *cx, struct bench_metric_def *m, const char *section, const char *key,
		      const char *value)
{
	if (strcmp(key, "kind") == 0)
		return set_str(cx, &m->kind, section, key, value);
	if (strcmp(key, "unit") == 0)
		return set_str(cx, &m->unit, section, key, value);
	if (strcmp(key, "phase") == 0)
		return set_redacted(cx, &m->phase, section, key, value);
	if (strcmp(key, "owner") == 0)
		return set_redacted(cx, &m->owner, section, key, value);
	if (strcmp(key, "hint") == 0)
		return set_redacted(cx, &m->hint, section, key, value);
	if (strcmp(key, "better") == 0) {
		if (strcmp(value, "lower") == 0)
			m->better = BENCH_LOWER_IS_BETTER;
		else if (strcmp(value, "higher") == 0)
			m->better = BENCH_HIGHER_IS_BETTER;
		else
			return fail(cx, "[%s] better is lower or higher, not '%s'", section, value);
		return 1;
	}
	if (strcmp(key, "tier") == 0) {
		if (strcmp(value, "core") != 0 && strcmp(value, "drilldown") != 0)
			return fail(cx, "[%s] tier is core or drilldown, not '%s'", section, value);
		m->core = strcmp(value, "core") == 0;
		return 1;
	}
	if (strcmp(key, "required") == 0)
		return metric_required(cx, m, value);
	if (strcmp(key, "slo_p50") == 0)
		return set_slo(cx, &m->slo_p50, section, key, value);
	if (strcmp(key, "slo_p95") == 0)
		return set_slo(cx, &m->slo_p95, section, key, value);
	if (strcmp(key, "slo_max") == 0)
		return set_slo(cx, &m->slo_max, section, key, value);
	if (strcmp(key, "min_samples") == 0) {
		if (!parse_long(value, 1, 1000000, &m->min_samples))
			return fail(cx, "[%s] min_samples must be a whole number >= 1, not '%s'", section, value);
		return 1;
	}
	return fail(cx,
		    "unknown key '%s' in [%s] (known: kind, unit, better, tier, required, slo_p50, slo_p95, slo_max, "
		    "phase, owner, hint, min_samples)",
		    key, section);
}

static int catalog_handler(void *user, const char *section, const char *key, const char *value)
{
	struct catalog_ctx *cc = user;
	struct parse_ctx *cx = &cc->cx;
	if (strcmp(section, "catalog") == 0)
		return catalog_key(cc, key, value);
	const char *name = section_name(section, "metric ");
	if (name) {
		if (!*name || strchr(name, ' '))
			return fail(cx, "[%s]: a metric name is one word like cold-start.wall_ms", section);
		struct bench_metric_def *m = find_or_add_metric(cc->c, name);
		if (!m)
			return oom(cx);
		return metric_key(cx, m, section, key, value);
	}
	if (!*section)
		return fail(cx, "'%s' is outside any section (start with [metric NAME])", key);
	return fail(cx, "unknown section [%s] (a catalog has [catalog] and [metric NAME] sections)", section);
}

void bench_catalog_release(struct bench_catalog *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		struct bench_metric_def *m = &c->metrics[i];
		free(m->name);
		free(m->kind);
		free(m->unit);
		free(m->phase);
		free(m->owner);
		free(m->hint);
		for (size_t j = 0; j < m->nrequired; j++)
			free(m->required[j]);
		free(m->required);
	}
	free(c->metrics);
	free(c->path);
	memset(c, 0, sizeof *c);
}

enum plumb_err bench_catalog_parse(const char *text, const char *path, struct bench_catalog *c, struct perr *e)
{
	memset(c, 0, sizeof *c);
	c->min_samples = BENCH_DEFAULT_MIN_SAMPLES;
	c->path = strdup(path);
	if (!c->path)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	struct catalog_ctx cc = { .cx = { .path = path, .dir = "." }, .c = c };
	ini_setup();
	int rc = ini_parse_string(text, catalog_handler, &cc);
	if (rc != 0 || cc.cx.msg[0]) {
		enum plumb_err code = finish_error(&cc.cx, rc, e);
		bench_catalog_release(c);
		return code;
	}
	return PLUMB_OK;
}

enum plumb_err bench_catalog_load(const char *path, struct bench_catalog *c, struct perr *e)
{
	memset(c, 0, sizeof *c);
	char *text;
	enum plumb_err rc = read_text(path, "catalog", &text, e);
	if (rc)
		return rc;
	rc = bench_catalog_parse(text, path, c, e);
	free(text);
	return rc;
}

const struct bench_metric_def *bench_catalog_find(const struct bench_catalog *c, const char *metric)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->metrics[i].name, metric) == 0)
			return &c->metrics[i];
	for (size_t i = 0; i < c->n; i++)
		if (strpbrk(c->metrics[i].name, "*?[") && fnmatch(c->metrics[i].name, metric, 0) == 0)
			return &c->metrics[i];
	return NULL;
}

bool bench_metric_is_core(const struct bench_catalog *c, const char *metric)
{
	const struct bench_metric_def *m = bench_catalog_find(c, metric);
	if (m)
		return m->core;
	const char *dot = strchr(metric, '.');
	return dot && strcmp(dot + 1, "wall_ms") == 0;
}

long bench_metric_min_samples(const struct bench_catalog *c, const char *metric)
{
	const struct bench_metric_def *m = bench_catalog_find(c, metric);
	if (m && m->min_samples > 0)
		return m->min_samples;
	return c && c->min_samples > 0 ? c->min_samples : BENCH_DEFAULT_MIN_SAMPLES;
}
