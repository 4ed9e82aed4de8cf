/* launch.h — inside bench/ only: how the runner starts one run (docs/design.md §8.1). Runs are forked by a small
 * launcher process that plumb forks before it keeps any sample (so a run's peak RSS is not plumb's growing size);
 * the launcher runs the case's prepare command, then the case, measures the machine around it and reports one
 * struct one_run back over a socket. */
#ifndef PLUMB_BENCH_LAUNCH_H
#define PLUMB_BENCH_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "os/spawn.h"
#include "bench/config.h"
#include "bench/evidence.h"

/* Set by bench_on_signal (SIGINT, SIGTERM): the running case is killed and nothing more runs. */
extern volatile sig_atomic_t bench_interrupted;
void bench_on_signal(int sig);

/* The machine's CPU time so far (the first line of /proc/stat), in clock ticks. */
struct cpu_times {
	bool ok;
	unsigned long long busy, idle, steal, total;
};

struct one_run {
	bool started;
	bool timed_out;
	bool prepare_failed; /* the prepare command exited non-zero: status is its status */
	int status;
	double wall_ms;
	struct rusage ru;
	struct cpu_times before, after; /* the machine around the run */
	bool sched_known;    /* the main process's schedstat was read before it was reaped */
	uint64_t exec_ns, delay_ns; /* its time on a CPU and waiting on a runqueue */
	uint64_t launcher_delay_ns; /* the launcher's own wait on a runqueue while it started and reaped the run */
	double runnable;     /* runnable tasks when it ended (/proc/loadavg), NAN when unknown */
	double yardstick_ms; /* the launcher's CPU time for a fixed loop just before the run (the machine's speed
			      * then, docs/bench.md "The yardstick"); NAN when unknown */
	char err[512];       /* why it could not start */
	char stderr_tail[256];
};

struct launcher {
	struct child c;
	int fd;
};

/* Runs one attempt of case c (its prepare command first, when it has one) with PLUMB_SAMPLES=samples_path and
 * its stderr in stderr_fd. */
void bench_run_once(const struct bench_case *c, const char *samples_path, int stderr_fd, struct one_run *r);

/* The launcher process: started before any sample is kept; one run per bench_launcher_run. */
bool bench_launcher_start(struct launcher *l, const struct bench_suite *s, int stderr_fd);
void bench_launcher_run(struct launcher *l, size_t case_index, const char *samples_path, struct one_run *r);
void bench_launcher_stop(struct launcher *l);

/* Reads every line of a run's samples file into ev (within the caps of runner.h); returns the number of lines
 * that were not samples. */
long bench_collect_samples(struct bench_evidence *ev, const char *case_name, long run, const char *path);

#endif
