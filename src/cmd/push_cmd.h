/* push_cmd.h — what the commands that push figures to a Prometheus Pushgateway share (`bench run --push`,
 * `bench push`, `metrics push`; docs/bench.md "Prometheus"): the --label options, the checks made before any
 * work, and the push with its message. Each returns an exit code (docs/design.md §3.2) and has printed its one
 * message when it is not 0: a push that fails is exit 6. */
#ifndef PLUMB_CMD_PUSH_CMD_H
#define PLUMB_CMD_PUSH_CMD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/opt.h"
#include "os/prom.h"
#include "base/sbuf.h"

#define CMD_PUSH_LABELS_MAX 16

/* Extra labels given as KEY=VALUE; the names and values are copies the struct owns. */
struct cmd_push_labels {
	struct prom_label v[CMD_PUSH_LABELS_MAX];
	char *text[CMD_PUSH_LABELS_MAX];
	size_t n;
};

/* Splits each KEY=VALUE of list into labels; allowed(name) says whether a name may be used. Exit 2 naming the
 * first bad one. `who` names the command in the message. */
int cmd_push_labels(const struct opt_list *list, bool (*allowed)(const char *name), const char *who,
		    struct cmd_push_labels *out);
void cmd_push_labels_release(struct cmd_push_labels *l);

/* Where the figures go: a Pushgateway (text format, PUT to URL + grouping path) or a remote-write receiver
 * (protobuf + snappy, POST to URL itself; os/prom_rw.h). */
enum cmd_push_format { CMD_PUSH_GATEWAY, CMD_PUSH_REMOTE_WRITE };
/* "gateway" or "remote-write" into *f; exit 2 naming the option otherwise. */
int cmd_push_format(const char *s, const char *who, enum cmd_push_format *f);

/* Before any work: the URL is one plumb pushes to (exit 2), libcurl (and for remote-write libsnappy) loads and
 * the credentials can be read (exit 3 or 5), so a long run is not made for a push that cannot happen. */
int cmd_push_ready(const char *who, const char *url, enum cmd_push_format f);

/* Sends body (the text format) to url — PUT to url + path for a gateway, or as a remote-write request with the
 * label job=JOB added (what a gateway's grouping key adds) — and says so on stderr (what: "e2e.evidence.json"),
 * or prints why not (exit 6 for a refused or unreachable server); kept names what stays on disk (NULL: nothing). */
int cmd_push_send(const char *who, const char *url, enum cmd_push_format f, const char *job, const struct sbuf *path,
		  const struct sbuf *body, const char *what, const char *kept);

#endif
