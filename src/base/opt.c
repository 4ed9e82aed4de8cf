/* opt.c — table-driven parsing. Numbers are checked whole ("12x" is an error), not with atoi. */
#include "base/opt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"

static const struct opt *find_long(const struct opt *opts, const char *name, size_t n)
{
	for (const struct opt *o = opts; o->type != OPT_END; o++)
		if (strlen(o->long_name) == n && strncmp(o->long_name, name, n) == 0)
			return o;
	return NULL;
}

static const struct opt *find_short(const struct opt *opts, char c)
{
	for (const struct opt *o = opts; o->type != OPT_END; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

static bool store(const struct opt *o, const char *val, struct perr *e)
{
	char *end;
	switch (o->type) {
	case OPT_FLAG:
		*(bool *)o->target = true;
		break;
	case OPT_STRING:
		*(const char **)o->target = val;
		break;
	case OPT_INT: {
		errno = 0;
		long v = strtol(val, &end, 10);
		if (errno || end == val || *end) {
			perr_set(e, PLUMB_EINVAL, "--%s needs a whole number, not '%s'", o->long_name, val);
			return false;
		}
		*(long *)o->target = v;
		break;
	}
	case OPT_DOUBLE: {
		errno = 0;
		double v = strtod(val, &end);
		if (errno || end == val || *end || !isfinite(v)) {
			perr_set(e, PLUMB_EINVAL, "--%s needs a number, not '%s'", o->long_name, val);
			return false;
		}
		*(double *)o->target = v;
		break;
	}
	case OPT_LIST: {
		struct opt_list *l = o->target;
		if (!REALLOC_ARRAY(l->v, (size_t)l->n + 1)) {
			perr_set(e, PLUMB_ENOMEM, "out of memory");
			return false;
		}
		l->v[l->n++] = val;
		break;
	}
	case OPT_END:
		break;
	}
	if (o->seen)
		*o->seen = true;
	return true;
}

static enum opt_status parse(const struct opt *opts, int argc, char **argv, struct opt_result *res, struct perr *e,
			     bool stop_at_positional)
{
	res->pos = calloc((size_t)argc + 1, sizeof *res->pos);
	res->npos = 0;
	res->dashdash = -1;
	if (!res->pos) {
		perr_set(e, PLUMB_ENOMEM, "out of memory");
		return OPT_ERROR;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0) {
			res->dashdash = res->npos;
			for (i++; i < argc; i++)
				res->pos[res->npos++] = argv[i];
			break;
		}
		if (a[0] != '-' || a[1] == '\0') { /* positional ("-" is stdin/stdout) */
			if (stop_at_positional) {
				for (; i < argc; i++)
					res->pos[res->npos++] = argv[i];
				break;
			}
			res->pos[res->npos++] = a;
			continue;
		}
		const struct opt *o;
		const char *val = NULL;
		if (a[1] == '-') {
			const char *name = a + 2;
			const char *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			if (n == 4 && strncmp(name, "help", 4) == 0)
				return OPT_HELP;
			o = find_long(opts, name, n);
			if (!o) {
				perr_set(e, PLUMB_EINVAL, "unknown option '%.*s' (see --help)", (int)(n + 2), a);
				return OPT_ERROR;
			}
			if (eq) {
				if (o->type == OPT_FLAG) {
					perr_set(e, PLUMB_EINVAL, "--%s takes no value", o->long_name);
					return OPT_ERROR;
				}
				val = eq + 1;
			}
		} else {
			if (a[1] == 'h' && a[2] == '\0')
				return OPT_HELP;
			o = find_short(opts, a[1]);
			if (!o) {
				perr_set(e, PLUMB_EINVAL, "unknown option '-%c' (see --help)", a[1]);
				return OPT_ERROR;
			}
			if (a[2]) {
				if (o->type == OPT_FLAG) {
					perr_set(e, PLUMB_EINVAL, "-%c takes no value", a[1]);
					return OPT_ERROR;
				}
				val = a + 2;
			}
		}
		if (o->type != OPT_FLAG && !val) {
			if (i + 1 >= argc) {
				perr_set(e, PLUMB_EINVAL, "--%s needs a value (%s)", o->long_name,
					 o->argname ? o->argname : "VALUE");
				return OPT_ERROR;
			}
			val = argv[++i];
		}
		if (!store(o, val, e))
			return OPT_ERROR;
	}
	return OPT_OK;
}

enum opt_status opt_parse(const struct opt *opts, int argc, char **argv, struct opt_result *res, struct perr *e)
{
	return parse(opts, argc, argv, res, e, false);
}

enum opt_status opt_parse_prefix(const struct opt *opts, int argc, char **argv, struct opt_result *res,
				 struct perr *e)
{
	return parse(opts, argc, argv, res, e, true);
}

void opt_usage(FILE *out, const char *usage, const char *description, const struct opt *opts)
{
	fprintf(out, "usage: %s\n", usage);
	if (description)
		fprintf(out, "\n%s\n", description);
	fputs("\noptions:\n", out);
	for (const struct opt *o = opts; o->type != OPT_END; o++) {
		char head[96];
		int n = snprintf(head, sizeof head, "%s%c%s--%s%s%s", o->short_name ? "-" : "",
				 o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ", o->long_name,
				 o->type == OPT_FLAG ? "" : " ", o->type == OPT_FLAG ? "" : (o->argname ? o->argname : "VALUE"));
		if (!o->short_name)
			memmove(head, head + 1, (size_t)n); /* drop the placeholder blank: "   --name" */
		fprintf(out, "  %-30s %s\n", head, o->help ? o->help : "");
	}
	fprintf(out, "  %-30s %s\n", "-h, --help", "show this help");
}

void opt_result_release(struct opt_result *res)
{
	free(res->pos);
	res->pos = NULL;
	res->npos = 0;
}

void opt_list_release(struct opt_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

bool opt_parse_seconds(const char *s, double *seconds)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return false;
	double mul = 1;
	if (*end == '\0' || strcmp(end, "s") == 0)
		mul = 1;
	else if (strcmp(end, "ms") == 0)
		mul = 0.001;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		mul = 60;
	else if (strcmp(end, "h") == 0)
		mul = 3600;
	else
		return false;
	*seconds = v * mul;
	return true;
}
