/* bench_push.c — `plumb bench push ARTIFACT... --to URL` and the push at the end of `bench run --push URL`: an
 * artifact's figures to a Prometheus Pushgateway (bench/push.h renders them, os/http.h sends them). The
 * artifact on disk is never touched: a push that fails says so and exits 6, and the file is still there. */
#include "cmd/cmd.h"

#include <stdlib.h>

#include "base/opt.h"
#include "bench/push.h"
#include "cmd/bench_cmd.h"
#include "cmd/push_cmd.h"
#include "ui/report.h"

int bench_cmd_push_evidence(const struct bench_evidence *ev, const char *url, const char *format,
			    const struct opt_list *labels, const char *machine, const char *who, const char *shown)
{
	enum cmd_push_format f;
	if (cmd_push_format(format, who, &f) != EXIT_DONE)
		return EXIT_USAGE;
	struct cmd_push_labels l;
	int rc = cmd_push_labels(labels, bench_push_label_allowed, who, &l);
	if (rc != EXIT_DONE) {
		cmd_push_labels_release(&l);
		return rc;
	}
	struct bench_push_opts o = { machine, l.v, l.n };
	struct sbuf body = SBUF_INIT, path = SBUF_INIT;
	struct perr e = PERR_INIT;
	if (bench_push_render(ev, &o, &body, &path, &e) != PLUMB_OK)
		rc = cmd_report_redacted(&e);
	else
		rc = cmd_push_send(who, url, f, BENCH_PUSH_JOB, &path, &body, shown, shown);
	sbuf_release(&body);
	sbuf_release(&path);
	cmd_push_labels_release(&l);
	return rc;
}

int bench_cmd_push_ready(const char *who, const char *url, const char *format)
{
	enum cmd_push_format f;
	int rc = cmd_push_format(format, who, &f);
	return rc != EXIT_DONE ? rc : cmd_push_ready(who, url, f);
}

int bench_cmd_push(int argc, char **argv)
{
	const char *to = NULL, *machine = NULL, *format = NULL;
	enum cmd_push_format f;
	struct opt_list labels = { 0 };
	const struct opt opts[] = {
		OPT_STRING("to", 0, &to, "URL",
			   "the Pushgateway's base URL (http:// or https://; credentials from PLUMB_PUSH_* variables, "
			   "never the URL)"),
		OPT_LIST("label", 0, &labels, "KEY=VALUE",
			 "one more label on every series, and in the grouping key (e.g. branch=main; repeatable)"),
		OPT_STRING("machine", 0, &machine, "NAME", "the machine label (default: the artifact's host name)"),
		OPT_STRING("push-format", 0, &format, "HOW",
			   "gateway (a Pushgateway, the default) or remote-write (URL is a remote-write receiver: "
			   ".../api/v1/write)"),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb bench push ARTIFACT... --to URL [--label KEY=VALUE ...] [--machine NAME] "
				     "[--push-format gateway|remote-write]",
			       "Pushes each artifact's figures (p50, p95, mean, min, max and count of every metric) to a "
			       "Prometheus Pushgateway in its text format, under job plumb_bench, the suite and the machine.",
			       argc, argv, &res, &rc)) {
		opt_list_release(&labels);
		return rc;
	}
	if (res.npos < 1 || !to)
		rc = perr_fail(EXIT_USAGE, "bench push: give one or more ARTIFACTs and --to URL");
	else if ((rc = cmd_push_format(format, "bench push", &f)) == EXIT_DONE)
		rc = cmd_push_ready("bench push", to, f);
	/* every artifact is tried (a bad --label stops at the first); the exit code is the first failure's */
	int code = EXIT_DONE;
	for (int i = 0; rc == EXIT_DONE && i < res.npos; i++) {
		struct bench_evidence ev;
		int one = bench_cmd_load_artifact(res.pos[i], true, &ev, NULL);
		if (one == EXIT_DONE) {
			char *shown = cmd_shown_text(res.pos[i]);
			one = bench_cmd_push_evidence(&ev, to, format, &labels, machine, "bench push", shown);
			free(shown);
			bench_evidence_release(&ev);
		}
		if (one != EXIT_DONE && code == EXIT_DONE)
			code = one;
		if (one == EXIT_USAGE)
			break;
	}
	if (rc == EXIT_DONE)
		rc = code;
	opt_list_release(&labels);
	opt_result_release(&res);
	return rc;
}
