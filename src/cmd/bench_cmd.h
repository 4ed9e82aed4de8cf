/* bench_cmd.h — the pieces of `plumb bench` (src/cmd/bench*.c) share these; nothing outside src/cmd uses them.
 * Each returns an exit code (docs/design.md §3.2) and has printed its one message when it is not 0. */
#ifndef PLUMB_CMD_BENCH_CMD_H
#define PLUMB_CMD_BENCH_CMD_H

#include <stdbool.h>

#include "bench/config.h"
#include "bench/evidence.h"
#include "bench/report.h"

#define BENCH_CMD_NO_HOME "cannot find the plumb home (set PLUMB_HOME or HOME)"

/* Loads the catalog for an artifact (bench_catalog_for); says so when the artifact's own is gone. *have says
 * whether one was loaded (the caller releases it). */
int bench_cmd_load_catalog(const char *opt_path, const struct bench_evidence *ev, struct bench_catalog *cat,
			   bool *have);
/* An artifact given as a path, or (may_be_baseline) as a saved baseline's name: 3 missing, 5 malformed.
 * *resolved, when not NULL, gets the path read (malloc'd). */
int bench_cmd_load_artifact(const char *arg, bool may_be_baseline, struct bench_evidence *ev, char **resolved);
/* The report of a loaded artifact on stdout, named `shown`. */
int bench_cmd_report_artifact(const struct bench_evidence *ev, const char *shown, const struct bench_catalog *cat,
			      enum bench_style style);
/* bench_cmd_load_artifact, then its catalog, then its report. */
int bench_cmd_report_file(const char *arg, bool may_be_baseline, const char *catalog, const char *shown,
			  enum bench_style style);

/* The sub-commands that live in their own files. */
int bench_cmd_baseline(int argc, char **argv); /* bench_store.c */
struct cmd_sub;
extern const struct cmd_sub bench_cmd_baseline_subs[];
int bench_cmd_coverage(int argc, char **argv); /* bench_check.c */
int bench_cmd_owners(int argc, char **argv);
int bench_cmd_doctor(int argc, char **argv);
int bench_cmd_push(int argc, char **argv); /* bench_push.c */
/* The figures of ev to the gateway at url (bench_push.c; format "gateway", NULL, or "remote-write"): labels are
 * --label KEY=VALUE texts, machine NULL for the
 * artifact's host name, who names the command and shown the artifact in messages. Exit 6 when the push fails. */
struct opt_list;
/* --push-format checked, then cmd_push_ready (push_cmd.h): exit 2, 3 or 5 before any run. */
int bench_cmd_push_ready(const char *who, const char *url, const char *format);
int bench_cmd_push_evidence(const struct bench_evidence *ev, const char *url, const char *format,
			    const struct opt_list *labels, const char *machine, const char *who, const char *shown);

#endif
