/* suite_params.c — a suite case's parameter lists (`params = n=1,2,4`, hyperfine's --parameter-list): the case
 * becomes one case per combination of the values, with every {n} in its name, command, prepare command,
 * environment, directory and binary replaced (docs/bench.md "Parameters"). */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/sbuf.h"
#include "bench/config.h"

bool bench_case_name_valid(const char *s)
{
	if (!*s || strlen(s) > 100)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      *s == '-'))
			return false;
	return true;
}

/* Frees what a case owns (the templates, once expanded): config.h. */
void bench_case_free(struct bench_case *c)
{
	free(c->name);
	free(c->run);
	for (size_t j = 0; j < c->nenv; j++)
		free(c->env[j]);
	free(c->env);
	free(c->cwd);
	free(c->binary);
	free(c->prepare);
	free(c->core);
	for (size_t j = 0; j < c->nparams; j++)
		free(c->params[j]);
	free(c->params);
}

/* text with every {NAME} of the parameters replaced by its value (malloc'd; NULL for NULL text or no memory). */
static char *subst(const char *text, char *const *names, char *const *values, size_t n, bool *oomp)
{
	if (!text)
		return NULL;
	struct sbuf sb = SBUF_INIT;
	for (const char *p = text; *p;) {
		bool done = false;
		if (*p == '{')
			for (size_t i = 0; i < n && !done; i++) {
				size_t k = strlen(names[i]);
				if (strncmp(p + 1, names[i], k) == 0 && p[1 + k] == '}') {
					sbuf_addstr(&sb, values[i]);
					p += k + 2;
					done = true;
				}
			}
		if (!done)
			sbuf_addch(&sb, *p++);
	}
	char *out = sbuf_detach(&sb, NULL);
	if (!out)
		*oomp = true;
	return out;
}

/* One case of a parameter combination: every text of t with the values put in; the name gets "-VALUE" for a
 * parameter it does not name. */
static bool expand_one(const struct bench_case *t, char *const *names, char *const *values, size_t n,
		       struct bench_case *c)
{
	bool oomv = false;
	memset(c, 0, sizeof *c);
	struct sbuf name = SBUF_INIT;
	char *base = subst(t->name, names, values, n, &oomv);
	sbuf_addstr(&name, base ? base : "");
	free(base);
	for (size_t i = 0; i < n; i++) {
		struct sbuf ph = SBUF_INIT;
		sbuf_addf(&ph, "{%s}", names[i]);
		if (!ph.oom && !strstr(t->name, ph.buf))
			sbuf_addf(&name, "-%s", values[i]);
		sbuf_release(&ph);
	}
	c->name = sbuf_detach(&name, NULL);
	c->run = subst(t->run, names, values, n, &oomv);
	c->cwd = subst(t->cwd, names, values, n, &oomv);
	c->binary = subst(t->binary, names, values, n, &oomv);
	c->prepare = subst(t->prepare, names, values, n, &oomv);
	c->core = t->core ? strdup(t->core) : NULL;
	c->timeout_s = t->timeout_s;
	if (t->nenv && !(c->env = calloc(t->nenv, sizeof *c->env)))
		oomv = true;
	for (size_t i = 0; c->env && i < t->nenv; i++)
		if ((c->env[c->nenv] = subst(t->env[i], names, values, n, &oomv)) != NULL)
			c->nenv++;
	return c->name && !oomv && (!t->core || c->core);
}

/* The values of a `params` line: pointers to malloc'd words in *vals (n of them). */
static bool param_values(const char *line, char **name, char ***vals, size_t *n)
{
	const char *eq = strchr(line, '=');
	const char *p = eq + 1, *w;
	size_t len;
	*n = 0;
	*vals = NULL;
	if (!(*name = strndup(line, (size_t)(eq - line))))
		return false;
	while (*(p += strspn(p, ", \t"))) {
		w = p;
		len = strcspn(w, ", \t");
		p += len;
		if (!REALLOC_ARRAY(*vals, *n + 1) || !((*vals)[*n] = strndup(w, len)))
			return false;
		(*n)++;
	}
	return true;
}

/* Expands each case that has parameter lists into one case per combination of their values (in the order the
 * lists were given, the last one varying fastest), and checks every name: a {NAME} left without a parameter,
 * an expanded name that is not a case name, two cases of one name. */
enum plumb_err bench_suite_expand_params(struct bench_suite *s, struct perr *e)
{
	struct bench_case *out = NULL;
	size_t nout = 0;
	enum plumb_err rc = PLUMB_OK;
	for (size_t i = 0; i < s->ncases && !rc; i++) {
		struct bench_case *t = &s->cases[i];
		if (t->nparams == 0) {
			if (!bench_case_name_valid(t->name))
				rc = perr_set(e, PLUMB_EFORMAT, "%s: [case %s] names a parameter but has no params = line",
					      s->path, t->name);
			else if (!REALLOC_ARRAY(out, nout + 1))
				rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
			else {
				out[nout++] = *t;
				memset(t, 0, sizeof *t);
			}
			continue;
		}
		size_t np = t->nparams, combos = 1;
		char **names = calloc(np, sizeof *names), ***vals = calloc(np, sizeof *vals);
		size_t *nv = calloc(np, sizeof *nv), *at = calloc(np, sizeof *at);
		bool ok = names && vals && nv && at;
		for (size_t k = 0; ok && k < np; k++) {
			ok = param_values(t->params[k], &names[k], &vals[k], &nv[k]);
			combos *= nv[k];
		}
		if (ok && combos > 10000)
			rc = perr_set(e, PLUMB_EFORMAT, "%s: [case %s] params make %zu cases (at most 10000)", s->path,
				      t->name, combos);
		for (size_t m = 0; ok && !rc && m < combos; m++) {
			char **v = calloc(np, sizeof *v);
			ok = v != NULL;
			for (size_t k = 0; ok && k < np; k++)
				v[k] = vals[k][at[k]];
			ok = ok && REALLOC_ARRAY(out, nout + 1);
			if (ok) {
				ok = expand_one(t, names, v, np, &out[nout]);
				nout++;
			}
			free(v);
			for (size_t k = np; k-- > 0;) { /* the last list varies fastest */
				if (++at[k] < nv[k])
					break;
				at[k] = 0;
			}
			if (ok && !bench_case_name_valid(out[nout - 1].name))
				rc = perr_set(e, PLUMB_EFORMAT,
					      "%s: [case %s] expands to case name '%s', which is not letters, digits, '_' and "
					      "'-'",
					      s->path, t->name, out[nout - 1].name);
		}
		if (!ok && !rc)
			rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		for (size_t k = 0; k < np; k++) {
			if (names)
				free(names[k]);
			for (size_t j = 0; vals && j < nv[k]; j++)
				free(vals[k][j]);
			if (vals)
				free(vals[k]);
		}
		free(names);
		free(vals);
		free(nv);
		free(at);
	}
	for (size_t i = 0; !rc && i < nout; i++)
		for (size_t j = 0; j < i && !rc; j++)
			if (strcmp(out[i].name, out[j].name) == 0)
				rc = perr_set(e, PLUMB_EFORMAT, "%s: two cases are named '%s' (after the params are expanded)",
					      s->path, out[i].name);
	/* the templates go; the expanded cases take their place (released with the suite either way) */
	for (size_t i = 0; i < s->ncases; i++)
		bench_case_free(&s->cases[i]);
	free(s->cases);
	s->cases = out;
	s->ncases = nout;
	return rc;
}

