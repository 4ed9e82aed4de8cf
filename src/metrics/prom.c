/* prom.c — a metrics recording as Prometheus metrics (metrics.h, metrics_doc_prom): the latest sample's totals
 * and the window's worst samples for CPU and memory, with the process that weighed most in each, in the text
 * format a Pushgateway takes, under job plumb_metrics, the recording and the machine. */
#include "metrics/metrics.h"

#include <stdio.h>
#include <string.h>

#include "os/prom.h"

#define MAX_LABELS (4 + METRICS_PUSH_LABELS_MAX)

struct series {
	struct prom_label v[MAX_LABELS];
	size_t n;
};

static void labels(struct series *s, const struct metrics_doc *doc, const char *machine,
		   const struct prom_label *extra, size_t nextra, const char *sample)
{
	s->n = 0;
	s->v[s->n++] = (struct prom_label){ "recording", doc->name };
	s->v[s->n++] = (struct prom_label){ "machine", machine };
	s->v[s->n++] = (struct prom_label){ "sample", sample };
	for (size_t i = 0; i < nextra && s->n < MAX_LABELS; i++)
		s->v[s->n++] = extra[i];
}

/* One family with a latest and (when known) a worst series. */
static void two(struct sbuf *body, const char *family, const char *help, struct series *l, struct series *w,
		double latest, double worst, bool has_worst)
{
	prom_family(body, family, "gauge", help);
	prom_sample(body, family, l->v, l->n, latest);
	if (has_worst)
		prom_sample(body, family, w->v, w->n, worst);
}

/* The process that weighed most in a worst sample. */
static void top_process(struct sbuf *body, const char *family, const char *help, const struct series *w,
			const struct metrics_peak *k, double value)
{
	struct series s = *w;
	char pid[24];
	snprintf(pid, sizeof pid, "%d", k->pid);
	if (s.n + 2 <= MAX_LABELS) {
		s.v[s.n++] = (struct prom_label){ "process", k->name };
		s.v[s.n++] = (struct prom_label){ "pid", pid };
	}
	prom_family(body, family, "gauge", help);
	prom_sample(body, family, s.v, s.n, value);
}

enum plumb_err metrics_doc_prom(const struct metrics_doc *doc, const char *machine, const struct prom_label *extra,
				size_t nextra, struct sbuf *body, struct sbuf *path, struct perr *e)
{
	if (nextra > METRICS_PUSH_LABELS_MAX)
		return perr_set(e, PLUMB_EINVAL, "at most %d extra labels", METRICS_PUSH_LABELS_MAX);
	if (!doc->nsamples)
		return perr_set(e, PLUMB_EEMPTY, "recording \"%s\" has no samples yet", doc->name);
	const struct metrics_sample *last = &doc->samples[doc->nsamples - 1];
	struct metrics_peak cpu, mem;
	metrics_doc_window_peaks(doc, &cpu, &mem);
	struct series l, wc, wm;
	labels(&l, doc, machine, extra, nextra, "latest");
	labels(&wc, doc, machine, extra, nextra, "worst");
	labels(&wm, doc, machine, extra, nextra, "worst");
	two(body, "plumb_metrics_cpu_percent", "CPU of the recorded process tree, % of one core: the latest sample and the "
		  "window's worst.", &l, &wc, last->totals.cpu_pct, cpu.total_cpu_pct, cpu.set);
	two(body, "plumb_metrics_resident_bytes", "Resident set of the recorded process tree, bytes: the latest sample and "
		  "the window's worst.", &l, &wm, (double)last->totals.rss_bytes, (double)mem.total_rss_bytes, mem.set);
	prom_family(body, "plumb_metrics_wakeups_per_second", "gauge",
		    "Voluntary context switches per second of the recorded process tree (latest sample).");
	prom_sample(body, "plumb_metrics_wakeups_per_second", l.v, l.n, last->totals.wakeups_per_s);
	if (last->totals.private_bytes != MPROC_UNKNOWN) {
		prom_family(body, "plumb_metrics_private_bytes", "gauge",
			    "Private memory of the recorded process tree, bytes (latest sample).");
		prom_sample(body, "plumb_metrics_private_bytes", l.v, l.n, (double)last->totals.private_bytes);
	}
	prom_family(body, "plumb_metrics_processes", "gauge", "Processes in the recorded tree (latest sample).");
	prom_sample(body, "plumb_metrics_processes", l.v, l.n, last->totals.processes);
	prom_family(body, "plumb_metrics_threads", "gauge", "Threads in the recorded tree (latest sample).");
	prom_sample(body, "plumb_metrics_threads", l.v, l.n, last->totals.threads);
	if (cpu.set)
		top_process(body, "plumb_metrics_worst_process_cpu_percent",
			    "CPU % of the process that used most in the window's worst CPU sample.", &wc, &cpu, cpu.cpu_pct);
	if (mem.set)
		top_process(body, "plumb_metrics_worst_process_resident_bytes",
			    "Resident set of the largest process in the window's worst memory sample.", &wm, &mem,
			    (double)mem.rss_bytes);
	prom_family(body, "plumb_metrics_sample_timestamp_seconds", "gauge",
		    "When the latest sample was taken (Unix seconds).");
	prom_sample(body, "plumb_metrics_sample_timestamp_seconds", l.v, l.n, (double)last->t_ms / 1000.0);
	struct prom_label key[2 + METRICS_PUSH_LABELS_MAX] = { { "recording", doc->name }, { "machine", machine } };
	for (size_t i = 0; i < nextra; i++)
		key[2 + i] = extra[i];
	prom_grouping_path(path, METRICS_PUSH_JOB, key, 2 + nextra);
	enum plumb_err rc = sbuf_done(body, e);
	return rc != PLUMB_OK ? rc : sbuf_done(path, e);
}

bool metrics_push_label_allowed(const char *name)
{
	static const char *const reserved[] = { "job", "instance", "recording", "machine", "sample", "process", "pid" };
	if (!prom_is_label_name(name))
		return false;
	for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
		if (strcmp(name, reserved[i]) == 0)
			return false;
	return true;
}
