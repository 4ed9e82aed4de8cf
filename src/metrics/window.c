/* window.c — what a reader makes of a recording's window: its worst samples (for CPU and for memory) and each
 * process across it. Pure functions of a parsed document. */
#include "metrics/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sample's peak `sample` with the figures of its top process (when it had one). */
static void peak_of(struct metrics_peak *out, const struct metrics_peak *sample, const struct metrics_proc *top)
{
	*out = *sample;
	if (!top)
		return;
	out->pid = top->pid;
	snprintf(out->name, sizeof out->name, "%s", top->name);
	out->cpu_pct = top->cpu_pct;
	out->rss_bytes = top->rss_bytes;
}

void metrics_doc_window_peaks(const struct metrics_doc *doc, struct metrics_peak *cpu, struct metrics_peak *mem)
{
	memset(cpu, 0, sizeof *cpu);
	memset(mem, 0, sizeof *mem);
	for (size_t i = 0; i < doc->nsamples; i++) {
		const struct metrics_sample *s = &doc->samples[i];
		bool better_cpu = !cpu->set || s->totals.cpu_pct > cpu->total_cpu_pct;
		bool better_mem = !mem->set || s->totals.rss_bytes > mem->total_rss_bytes;
		if (!better_cpu && !better_mem)
			continue;
		struct metrics_peak k = { .set = true, .t_ms = s->t_ms, .total_cpu_pct = s->totals.cpu_pct,
					  .total_rss_bytes = s->totals.rss_bytes };
		const struct metrics_proc *top_cpu = NULL, *top_mem = NULL;
		for (size_t j = 0; j < s->nprocs; j++) {
			const struct metrics_proc *p = &s->procs[j];
			if (!top_cpu || p->cpu_pct > top_cpu->cpu_pct)
				top_cpu = p;
			if (!top_mem || p->rss_bytes > top_mem->rss_bytes)
				top_mem = p;
		}
		if (better_cpu)
			peak_of(cpu, &k, top_cpu);
		if (better_mem)
			peak_of(mem, &k, top_mem);
	}
}

/* By peak CPU, then peak resident set, then pid. */
static int cmp_window(const void *a, const void *b)
{
	const struct metrics_proc_window *x = a, *y = b;
	if (x->cpu_max != y->cpu_max)
		return x->cpu_max > y->cpu_max ? -1 : 1;
	if (x->peak_rss != y->peak_rss)
		return x->peak_rss > y->peak_rss ? -1 : 1;
	return x->pid - y->pid;
}

/* Adds one sample's figures of a process to its row. */
static void row_add(struct metrics_proc_window *r, const struct metrics_proc *p, int64_t t_ms)
{
	snprintf(r->name, sizeof r->name, "%s", p->name);
	r->ppid = p->ppid;
	r->main = p->main;
	r->cpu_sum += p->cpu_pct;
	if (p->cpu_pct > r->cpu_max)
		r->cpu_max = p->cpu_pct;
	r->wake_sum += p->wakeups_per_s;
	r->rss = p->rss_bytes;
	if (p->peak_rss_bytes > r->peak_rss)
		r->peak_rss = p->peak_rss_bytes;
	if (p->rss_bytes > r->peak_rss)
		r->peak_rss = p->rss_bytes;
	r->private_bytes = p->private_bytes;
	r->threads = p->threads;
	r->samples++;
	r->last_ms = t_ms;
}

enum plumb_err metrics_doc_processes(const struct metrics_doc *doc, struct metrics_proc_window **rows, size_t *n,
				     struct perr *e)
{
	size_t cap = 0, nrows = 0;
	for (size_t i = 0; i < doc->nsamples; i++)
		cap += doc->samples[i].nprocs;
	struct metrics_proc_window *out = calloc(cap ? cap : 1, sizeof *out);
	*rows = NULL;
	*n = 0;
	if (!out)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	for (size_t i = 0; i < doc->nsamples; i++) {
		const struct metrics_sample *s = &doc->samples[i];
		for (size_t j = 0; j < s->nprocs; j++) {
			struct metrics_proc_window *r = NULL;
			for (size_t k = 0; k < nrows && !r; k++)
				if (out[k].pid == s->procs[j].pid)
					r = &out[k];
			if (!r) {
				r = &out[nrows++];
				r->pid = s->procs[j].pid;
			}
			row_add(r, &s->procs[j], s->t_ms);
		}
	}
	qsort(out, nrows, sizeof *out, cmp_window);
	*rows = out;
	*n = nrows;
	return PLUMB_OK;
}
