/* push_cmd.c — the options, checks and messages of a push (push_cmd.h). Messages name the gateway's URL through
 * the redactor; the credentials never reach one (os/http.h keeps them out of its messages). */
#include "cmd/push_cmd.h"

#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "os/http.h"
#include "os/prom_rw.h"
#include "cmd/cmd.h"
#include "ui/report.h"

int cmd_push_labels(const struct opt_list *list, bool (*allowed)(const char *name), const char *who,
		    struct cmd_push_labels *out)
{
	memset(out, 0, sizeof *out);
	if (list->n > CMD_PUSH_LABELS_MAX)
		return perr_fail(EXIT_USAGE, "%s: at most %d --label options", who, CMD_PUSH_LABELS_MAX);
	for (int i = 0; i < list->n; i++) {
		const char *eq = strchr(list->v[i], '=');
		if (!eq)
			return cmd_fail_shown(EXIT_USAGE, "--label wants KEY=VALUE, not '%s'", list->v[i]);
		char *t = strdup(list->v[i]);
		if (!t)
			return perr_fail(EXIT_FAILED, "out of memory");
		out->text[out->n] = t;
		t[eq - list->v[i]] = '\0';
		out->v[out->n++] = (struct prom_label){ t, t + (eq - list->v[i]) + 1 };
		if (!allowed(t))
			return cmd_fail_shown(EXIT_USAGE,
					      "--label %s: a label name is [a-zA-Z_][a-zA-Z0-9_]*, and not one plumb sets itself "
					      "(suite, case, stat, name, machine, git_commit, trust, ...)", t);
		for (size_t k = 0; k + 1 < out->n; k++)
			if (strcmp(out->v[k].name, t) == 0)
				return cmd_fail_shown(EXIT_USAGE, "--label %s is given twice", t);
	}
	return EXIT_DONE;
}

void cmd_push_labels_release(struct cmd_push_labels *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->text[i]);
	memset(l, 0, sizeof *l);
}

int cmd_push_format(const char *s, const char *who, enum cmd_push_format *f)
{
	if (!s || strcmp(s, "gateway") == 0)
		*f = CMD_PUSH_GATEWAY;
	else if (strcmp(s, "remote-write") == 0)
		*f = CMD_PUSH_REMOTE_WRITE;
	else
		return cmd_fail_shown(EXIT_USAGE, "--push-format is gateway or remote-write, not '%s'", s);
	(void)who;
	return EXIT_DONE;
}

int cmd_push_ready(const char *who, const char *url, enum cmd_push_format f)
{
	struct perr e = PERR_INIT;
	if (http_check_url(url, &e) != PLUMB_OK) {
		char *shown = cmd_shown_text(url);
		int rc = perr_fail(EXIT_USAGE, "%s: %s: %s", who, shown, e.msg);
		free(shown);
		return rc;
	}
	if (http_ready(&e) != PLUMB_OK || (f == CMD_PUSH_REMOTE_WRITE && prom_rw_ready(&e) != PLUMB_OK)) {
		struct perr inner = e;
		perr_set(&e, inner.code, "%s: %s", who, inner.msg);
		return cmd_report_redacted(&e);
	}
	return EXIT_DONE;
}

/* The number of sample lines of a text (the series pushed). */
static size_t series(const struct sbuf *body)
{
	size_t n = 0;
	for (size_t i = 0; i < body->len; i++)
		n += (i == 0 || body->buf[i - 1] == '\n') && body->buf[i] != '#';
	return n;
}

int cmd_push_send(const char *who, const char *url, enum cmd_push_format f, const char *job, const struct sbuf *path,
		  const struct sbuf *body, const char *what, const char *kept)
{
	struct perr e = PERR_INIT;
	const struct prom_label add[] = { { "job", job } };
	enum plumb_err rc = f == CMD_PUSH_REMOTE_WRITE ? prom_rw_push(url, body, add, 1, &e)
						       : prom_push(url, path->buf, body, &e);
	if (rc != PLUMB_OK) {
		struct perr inner = e;
		perr_set(&e, inner.code, "%s: pushing %s: %s%s%s%s", who, what, inner.msg, kept ? "; " : "", kept ? kept : "",
			 kept ? " is kept" : "");
		return cmd_report_redacted(&e);
	}
	char *shown = cmd_shown_text(url);
	perr_say("plumb: %s: pushed %zu series of %s to %s%s%s", who, series(body), what, shown,
		f == CMD_PUSH_REMOTE_WRITE ? "" : path->buf, f == CMD_PUSH_REMOTE_WRITE ? " (remote-write)" : "");
	free(shown);
	return EXIT_DONE;
}
