/* backend.c — the backend registry (in the order automatic selection tries them) and helpers every backend
 * shares: the monotonic clock, describing how a process ended, and explaining a refused attach. */
#include "sample/backend.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const struct backend *const backends[] = {
	&backend_python,
	&backend_perf_event,
	&backend_inprocess,
	&backend_ptrace,
	&backend_pyspy,
};

const struct backend *const *backend_list(size_t *n)
{
	*n = sizeof backends / sizeof backends[0];
	return backends;
}

const struct backend *backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++)
		if (strcmp(backends[i]->name, name) == 0)
			return backends[i];
	return NULL;
}

void describe_wait_status(int status, char *buf, size_t n)
{
	if (WIFEXITED(status))
		snprintf(buf, n, "exited with %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, n, "killed by SIG%s%s", sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
			 WCOREDUMP(status) ? " (core dumped)" : "");
	else
		snprintf(buf, n, "ended (status 0x%x)", status);
}

static int read_int_file(const char *path, int *v)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

int perf_event_paranoid(void)
{
	int v;
	return read_int_file("/proc/sys/kernel/perf_event_paranoid", &v) == 0 ? v : -1;
}

void describe_attach_refusal(pid_t pid, const char *what, int err, char *buf, size_t n)
{
	char path[64], line[256];
	int tracer = 0;
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (f) {
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "TracerPid: %d", &tracer) == 1)
				break;
		fclose(f);
	}
	if (tracer > 0) {
		char comm[64] = "?";
		snprintf(path, sizeof path, "/proc/%d/comm", tracer);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof comm, f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		snprintf(buf, n,
			 "%s on pid %d refused: it is already traced by pid %d (%s), and Linux admits only one tracer "
			 "per process; detach that tracer or try again when it is done",
			 what, (int)pid, tracer, comm);
		return;
	}
	int paranoid = perf_event_paranoid();
	char p[64] = "";
	if (paranoid != -1)
		snprintf(p, sizeof p, " (kernel.perf_event_paranoid = %d)", paranoid);
	snprintf(buf, n,
		 "%s on pid %d refused: %s%s; run as the target's user with CAP_PERFMON (perf_event) or "
		 "CAP_SYS_PTRACE (ptrace), or lower kernel.perf_event_paranoid",
		 what, (int)pid, strerror(err), p);
}
