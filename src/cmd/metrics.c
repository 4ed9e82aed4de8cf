/* metrics.c — `plumb metrics` reads a recording (`metrics record`, metrics_record.c, makes one) and `metrics push`
 * sends one on (docs/design.md §7). The reader never talks to the recorded process: the artifact is all there is, so it must be
 * whole (temp + rename) and validated before anything is printed. */
#include "cmd/cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "os/atomic.h"
#include "os/cleanup.h"
#include "base/clock.h"
#include "base/err.h"
#include "base/opt.h"
#include "os/procfs.h"
#include "base/redact.h"
#include "os/spawn.h"
#include "os/store.h"
#include "base/sbuf.h"
#include "cmd/push_cmd.h"
#include "metrics/metrics.h"
#include "sample/backend.h"
#include "sample/session.h"
#include "symbol/files.h"
#include "symbol/symbol.h"
#include "format/format.h"
#include "render/output.h"
#include "ui/report.h"

#define NO_RECORDING_HINT "was the program started with PLUMB_DEBUG=1?"

/* ---------------------------------------------------------------- reading */

static void human_bytes(char *buf, size_t cap, uint64_t v)
{
	if (v == MPROC_UNKNOWN) {
		snprintf(buf, cap, "-");
		return;
	}
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	if (v < 1024) {
		snprintf(buf, cap, "%llu B", (unsigned long long)v);
		return;
	}
	double x = (double)v / 1024;
	int u = 0;
	while (x >= 1024 && u < 3) {
		x /= 1024;
		u++;
	}
	snprintf(buf, cap, "%.1f %s", x, units[u]);
}

static void clock_time(char *buf, size_t cap, int64_t t_ms)
{
	time_t t = (time_t)(t_ms / 1000);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(buf, cap, "%H:%M:%S", &tm))
		snprintf(buf, cap, "?");
}

static void full_time(char *buf, size_t cap, int64_t t_ms)
{
	time_t t = (time_t)(t_ms / 1000);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%d %H:%M:%S %Z", &tm))
		snprintf(buf, cap, "?");
}

#define NCOLS 11

static void print_table(char (*cells)[NCOLS][48], size_t nrows)
{
	static const bool right[NCOLS] = { true, true, false, false, true, true, true, true, true, true, true };
	size_t width[NCOLS] = { 0 };
	for (size_t r = 0; r < nrows; r++)
		for (int c = 0; c < NCOLS; c++) {
			size_t w = strlen(cells[r][c]);
			if (w > width[c])
				width[c] = w;
		}
	for (size_t r = 0; r < nrows; r++) {
		fputs(" ", stdout);
		for (int c = 0; c < NCOLS; c++) {
			int w = (int)width[c];
			if (c == NCOLS - 1)
				printf("  %*s\n", right[c] ? w : 0, cells[r][c]);
			else if (right[c])
				printf("  %*s", w, cells[r][c]);
			else
				printf("  %-*s", w, cells[r][c]);
		}
	}
}

static void print_peak(const char *label, const struct metrics_peak *k, bool memory)
{
	char when[32], total[32], top[32];
	clock_time(when, sizeof when, k->t_ms);
	if (memory) {
		human_bytes(total, sizeof total, k->total_rss_bytes);
		human_bytes(top, sizeof top, k->rss_bytes);
		printf("  %-12s %s resident at %s — most: %s (pid %d) %s\n", label, total, when, k->name, k->pid, top);
	} else {
		printf("  %-12s %.1f%% CPU at %s — most: %s (pid %d) %.1f%%\n", label, k->total_cpu_pct, when, k->name,
		       k->pid, k->cpu_pct);
	}
}

/* The recording's name, file, root and state: ended, still recording, or silent for too long. */
static void print_state(const struct metrics_doc *doc, const char *path)
{
	char *path_shown = cmd_shown_text(path);
	printf("recording \"%s\": %s\n", doc->name, path_shown);
	free(path_shown);
	char state[160];
	double age_s = (double)(metrics_now_ms() - doc->updated_ms) / 1000.0;
	if (doc->ended)
		snprintf(state, sizeof state, "recording ended");
	else if (age_s > 3 * doc->every_s + 1)
		snprintf(state, sizeof state,
			 "no sample for %.0f s: the recorder stopped without a last write, or the program is stuck",
			 age_s);
	else
		snprintf(state, sizeof state, "still recording");
	printf("  root: pid %d %s%s%s%s — %s\n", doc->root_pid, doc->root_name, doc->root_command ? " (" : "",
	       doc->root_command ? doc->root_command : "", doc->root_command ? ")" : "", state);
}

/* The window, the latest sample's totals, and the worst samples (of the window, and earlier ones). */
static void print_window(const struct metrics_doc *doc)
{
	char t0[64], t1[64], b1[32], b2[32];
	const struct metrics_sample *first = &doc->samples[0], *last = &doc->samples[doc->nsamples - 1];
	full_time(t0, sizeof t0, first->t_ms);
	clock_time(t1, sizeof t1, last->t_ms);
	printf("  every %gs: %zu sample%s in the window (keep %llu, %llu taken), %s to %s (%.1f s)\n", doc->every_s,
	       doc->nsamples, doc->nsamples == 1 ? "" : "s", (unsigned long long)doc->keep, (unsigned long long)doc->samples_taken, t0, t1,
	       (double)(last->t_ms - first->t_ms) / 1000.0);
	human_bytes(b1, sizeof b1, last->totals.rss_bytes);
	human_bytes(b2, sizeof b2, last->totals.private_bytes);
	printf("\nlatest sample (%s, %u process%s):\n", t1, last->totals.processes,
	       last->totals.processes == 1 ? "" : "es");
	printf("  CPU %.1f%%   wake-ups %.1f/s   resident %s   private %s   threads %u\n", last->totals.cpu_pct,
	       last->totals.wakeups_per_s, b1, b2, last->totals.threads);
	struct metrics_peak cpu, mem;
	metrics_doc_window_peaks(doc, &cpu, &mem);
	printf("\nworst sample in the window:\n");
	print_peak("peak CPU", &cpu, false);
	print_peak("peak memory", &mem, true);
	if (doc->rec_cpu.set && doc->rec_cpu.t_ms < first->t_ms && doc->rec_cpu.total_cpu_pct > cpu.total_cpu_pct)
		print_peak("earlier CPU", &doc->rec_cpu, false);
	if (doc->rec_mem.set && doc->rec_mem.t_ms < first->t_ms && doc->rec_mem.total_rss_bytes > mem.total_rss_bytes)
		print_peak("earlier mem", &doc->rec_mem, true);
}

/* The top processes of the window, one row each. */
static int print_processes(const struct metrics_doc *doc, long top)
{
	struct metrics_proc_window *rows;
	size_t nrows;
	struct perr e = PERR_INIT;
	if (metrics_doc_processes(doc, &rows, &nrows, &e))
		return cmd_report_redacted(&e);
	size_t shown = nrows < (size_t)top ? nrows : (size_t)top;
	printf("\ntop %zu of %zu process%s in the window (by peak CPU, then peak resident set):\n", shown, nrows,
	       nrows == 1 ? "" : "es");
	char (*cells)[NCOLS][48] = calloc(shown + 1, sizeof *cells);
	if (!cells) {
		free(rows);
		return perr_fail(EXIT_FAILED, "out of memory");
	}
	static const char *const head[NCOLS] = { "PID", "PPID", "NAME", "ROLE", "CPU%", "MAX CPU%", "WAKE/S",
						 "RSS", "PEAK RSS", "PRIVATE", "LAST SEEN" };
	for (int c = 0; c < NCOLS; c++)
		snprintf(cells[0][c], 48, "%s", head[c]);
	for (size_t i = 0; i < shown; i++) {
		const struct metrics_proc_window *r = &rows[i];
		char (*row)[48] = cells[i + 1];
		snprintf(row[0], 48, "%d", r->pid);
		snprintf(row[1], 48, "%d", r->ppid);
		snprintf(row[2], 48, "%.40s", r->name);
		snprintf(row[3], 48, "%s", r->main ? "main" : "child");
		snprintf(row[4], 48, "%.1f", r->cpu_sum / (double)r->samples);
		snprintf(row[5], 48, "%.1f", r->cpu_max);
		snprintf(row[6], 48, "%.1f", r->wake_sum / (double)r->samples);
		human_bytes(row[7], 48, r->rss);
		human_bytes(row[8], 48, r->peak_rss);
		human_bytes(row[9], 48, r->private_bytes);
		clock_time(row[10], 48, r->last_ms);
	}
	print_table(cells, shown + 1);
	free(cells);
	free(rows);
	return EXIT_DONE;
}

static int print_report(const struct metrics_doc *doc, const char *path, long top)
{
	print_state(doc, path);
	if (doc->nsamples == 0) {
		printf("  no samples yet (every %gs)\n", doc->every_s);
		return EXIT_DONE;
	}
	print_window(doc);
	return print_processes(doc, top);
}

static void skipped(void *ctx, const struct perr *why)
{
	(void)ctx;
	char *shown = cmd_shown_text(why->msg);
	perr_warn("metrics: skipping %s", shown);
	free(shown);
}

/* The newest recording of the store into *n; says which it is and what else is there (on stderr when stdout
 * carries the document). */
static int newest_recording(struct metrics_newest *n, bool quiet_stdout)
{
	struct perr e = PERR_INIT;
	if (metrics_store_newest(n, skipped, NULL, &e))
		return cmd_report_redacted(&e);
	if (!n->found) {
		int code = n->nbad ? cmd_report_redacted(&n->first_bad)
				   : cmd_fail_shown(EXIT_MISSING, "metrics: no recording found in %s — " NO_RECORDING_HINT, n->dir);
		metrics_newest_release(n);
		return code;
	}
	if (n->nothers || n->nbad) {
		FILE *out = quiet_stdout ? stderr : stdout;
		char *dir_shown = cmd_shown_text(n->dir);
		fprintf(out, "newest of %zu recordings in %s: %s; others:", n->nfiles, dir_shown, n->doc.name);
		for (size_t i = 0; i < n->nothers; i++)
			fprintf(out, "%s %s", i ? "," : "", n->others[i]);
		if (n->nbad)
			fprintf(out, "%s %zu unreadable", n->nothers ? "," : "", n->nbad);
		fprintf(out, " (pick one with --name)\n%s", quiet_stdout ? "" : "\n");
		free(dir_shown);
	}
	return EXIT_DONE;
}

/* The recording --name or --path names, into n as metrics_store_newest would fill it. */
static int named_recording(const char *name, const char *path_arg, struct metrics_newest *n)
{
	struct perr e = PERR_INIT;
	memset(n, 0, sizeof *n);
	if (!name)
		snprintf(n->path, sizeof n->path, "%s", path_arg);
	else if (store_path(&STORE_METRICS, name, n->path, sizeof n->path, &e))
		return cmd_report_redacted(&e);
	enum plumb_err rc = name ? metrics_doc_read_stored(name, &n->doc, &n->raw, &n->raw_len, &e)
				 : metrics_doc_read_file(n->path, &n->doc, &n->raw, &n->raw_len, &e);
	if (rc == PLUMB_OK) {
		n->found = true;
		return EXIT_DONE;
	}
	if (e.code != PLUMB_ENOENT)
		return cmd_report_redacted(&e);
	return cmd_fail_shown(EXIT_MISSING, "metrics: no recording found at %s — " NO_RECORDING_HINT, n->path);
}

static int cmd_metrics_read(int argc, char **argv)
{
	const char *name = NULL, *path_arg = NULL;
	bool json = false;
	long top = 10;
	const struct opt opts[] = {
		OPT_STRING("name", 'n', &name, "NAME", "read $PLUMB_HOME/metrics/NAME.json"),
		OPT_STRING("path", 0, &path_arg, "FILE", "read this recording file"),
		OPT_BOOL("json", 0, &json, "print the raw plumb.metrics.v1 document"),
		OPT_LONG("top", 0, &top, "N", "processes listed (default 10)"),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts,
			       "plumb metrics [--name NAME | --path FILE] [--json] [--top N]\n"
			       "       plumb metrics record [--every S] [--keep N] [--name NAME] (--pid PID | -- COMMAND...)",
			       "Reads a per-process resource recording: the latest totals, the worst sample in the window\n"
			       "and the top processes. With neither --name nor --path the newest recording in\n"
			       "$PLUMB_HOME/metrics is read. `plumb metrics record --help` shows how to record one.",
			       argc, argv, &res, &rc))
		return rc;
	if (res.npos > 0) {
		rc = cmd_fail_shown(EXIT_USAGE, "metrics: unexpected argument '%s' (did you mean `plumb metrics record`?)",
				res.pos[0]);
		opt_result_release(&res);
		return rc;
	}
	opt_result_release(&res);
	if (name && path_arg)
		return perr_fail(EXIT_USAGE, "metrics: give --name or --path, not both");
	if (top < 1)
		return perr_fail(EXIT_USAGE, "metrics: --top must be at least 1");
	struct metrics_newest n;
	rc = name || path_arg ? named_recording(name, path_arg, &n) : newest_recording(&n, json);
	if (rc != EXIT_DONE)
		return rc;
	if (json)
		fwrite(n.raw, 1, n.raw_len, stdout);
	else
		rc = print_report(&n.doc, n.path, top);
	metrics_newest_release(&n);
	return rc;
}

/* ---------------------------------------------------------------- pushing */

/* The recording's latest totals and worst samples to a Prometheus Pushgateway (push_cmd.h, metrics/prom.c). */
static int push_loaded(const struct metrics_doc *doc, const char *path, const char *to, const struct opt_list *labels,
		       const char *machine)
{
	char host[256] = "unknown";
	if (!machine && gethostname(host, sizeof host) == 0)
		host[sizeof host - 1] = '\0';
	struct cmd_push_labels l;
	int rc = cmd_push_labels(labels, metrics_push_label_allowed, "metrics push", &l);
	struct sbuf body = SBUF_INIT, grouping = SBUF_INIT;
	struct perr e = PERR_INIT;
	if (rc == EXIT_DONE && metrics_doc_prom(doc, machine ? machine : host, l.v, l.n, &body, &grouping, &e))
		rc = cmd_report_redacted(&e);
	else if (rc == EXIT_DONE) {
		char *shown = cmd_shown_text(path);
		rc = cmd_push_send("metrics push", to, CMD_PUSH_GATEWAY, METRICS_PUSH_JOB, &grouping, &body, shown, NULL);
		free(shown);
	}
	sbuf_release(&body);
	sbuf_release(&grouping);
	cmd_push_labels_release(&l);
	return rc;
}

static int cmd_metrics_push(int argc, char **argv)
{
	const char *name = NULL, *path_arg = NULL, *to = NULL, *machine = NULL;
	struct opt_list labels = { 0 };
	const struct opt opts[] = {
		OPT_STRING("name", 'n', &name, "NAME", "push $PLUMB_HOME/metrics/NAME.json (default: the newest)"),
		OPT_STRING("path", 0, &path_arg, "FILE", "push this recording file"),
		OPT_STRING("to", 0, &to, "URL", "the Pushgateway's base URL (credentials from PLUMB_PUSH_* variables)"),
		OPT_LIST("label", 0, &labels, "KEY=VALUE", "one more label, also in the grouping key (repeatable)"),
		OPT_STRING("machine", 0, &machine, "NAME", "the machine label (default: this host's name)"),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb metrics push [--name NAME | --path FILE] --to URL [--label KEY=VALUE ...]",
			       "Pushes a recording's latest totals and the window's worst CPU and memory samples to a "
			       "Prometheus Pushgateway, under job plumb_metrics, the recording and the machine.",
			       argc, argv, &res, &rc)) {
		opt_list_release(&labels);
		return rc;
	}
	if (res.npos > 0 || !to || (name && path_arg))
		rc = perr_fail(EXIT_USAGE, "metrics push: give --to URL (and at most one of --name, --path)");
	else
		rc = cmd_push_ready("metrics push", to, CMD_PUSH_GATEWAY);
	opt_result_release(&res);
	struct metrics_newest n;
	if (rc == EXIT_DONE)
		rc = name || path_arg ? named_recording(name, path_arg, &n) : newest_recording(&n, true);
	if (rc == EXIT_DONE) {
		rc = push_loaded(&n.doc, n.path, to, &labels, machine);
		metrics_newest_release(&n);
	}
	opt_list_release(&labels);
	return rc;
}

const struct cmd_sub cmd_metrics_subs[] = {
	{ "record", cmd_metrics_record, "record a process tree's CPU, wake-ups and memory" },
	{ "push", cmd_metrics_push, "push a recording's latest and worst figures to a Prometheus Pushgateway" },
	{ NULL, NULL, NULL },
};

int cmd_metrics(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "record") == 0)
		return cmd_metrics_record(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "push") == 0)
		return cmd_metrics_push(argc - 1, argv + 1);
	return cmd_metrics_read(argc, argv);
}
