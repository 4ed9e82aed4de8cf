/* push.h — an evidence artifact as Prometheus metrics (docs/bench.md "Prometheus"): the text a Pushgateway takes
 * and the grouping key it goes under (job plumb_bench, the suite, the machine and any extra labels). One family
 * per runner figure (plumb_bench_wall_ms, _cpu_ms, _user_ms, _sys_ms, _max_rss_bytes, _unqueued_ms), the
 * program's own samples under plumb_bench_sample{name=...}, each with a `stat` label (p50, p95, mean, min, max,
 * count) and the artifact's context as labels; plumb_bench_failed_runs and plumb_bench_run_timestamp_seconds per run. */
#ifndef PLUMB_BENCH_PUSH_H
#define PLUMB_BENCH_PUSH_H

#include <stddef.h>

#include "base/err.h"
#include "os/prom.h"
#include "base/sbuf.h"
#include "bench/evidence.h"

#define BENCH_PUSH_JOB "plumb_bench"
#define BENCH_PUSH_LABELS_MAX 16

struct bench_push_opts {
	const char *machine;            /* the machine label; NULL: the artifact's hostname, else "unknown" */
	const struct prom_label *extra; /* more labels (a branch, a CI pipeline), also in the grouping key */
	size_t nextra;                  /* at most BENCH_PUSH_LABELS_MAX */
};

/* Appends the exposition text of ev to body and its grouping path (/metrics/job/...) to path. Every label value
 * is redacted there (os/prom.h). PLUMB_ENOMEM; PLUMB_EINVAL when an extra label's name is not a legal label
 * name or is one of the labels plumb sets. */
enum plumb_err bench_push_render(const struct bench_evidence *ev, const struct bench_push_opts *o, struct sbuf *body,
				 struct sbuf *path, struct perr *e);

/* Whether name may be an extra label (legal, and not one plumb sets itself). */
bool bench_push_label_allowed(const char *name);

#endif
