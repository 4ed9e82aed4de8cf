/* wall_stopread.c — the alternative mechanism for --mode wall that plumb did not take, kept to measure it:
 * periodic stop-and-read. Every interval the profiler interrupts the thread (PTRACE_INTERRUPT), reads its
 * registers and 16 KiB of its stack (process_vm_readv) and lets it go; that catches a thread running or not.
 * Prints how many stops it made and the mean time the target stood still per stop.
 * Usage: wall_stopread INTERVAL_S COMMAND [ARGS...]   (single-threaded targets; a measurement, not a tool) */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	double interval = atof(argv[1]);
	int go[2];
	if (pipe(go))
		return 1;
	pid_t c = fork();
	if (c == 0) {
		char b;
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	close(go[0]);
	if (ptrace(PTRACE_SEIZE, c, 0, 0) != 0) {
		perror("ptrace");
		return 1;
	}
	if (write(go[1], "g", 1) != 1)
		return 1;
	static char buf[16384];
	double stopped = 0;
	long stops = 0;
	int st;
	for (;;) {
		struct timespec ts = { 0, (long)(interval * 1e9) };
		nanosleep(&ts, NULL);
		double a = now();
		if (ptrace(PTRACE_INTERRUPT, c, 0, 0) != 0 || waitpid(c, &st, 0) != c || WIFEXITED(st) || WIFSIGNALED(st))
			break;
		int sig = (st >> 16) == PTRACE_EVENT_STOP || WSTOPSIG(st) == SIGTRAP ? 0 : WSTOPSIG(st);
		if (sig == 0) {
			struct user_regs_struct r;
			ptrace(PTRACE_GETREGS, c, 0, &r);
			struct iovec l = { buf, sizeof buf }, rm = { (void *)r.rsp, sizeof buf };
			process_vm_readv(c, &l, 1, &rm, 1, 0);
		}
		ptrace(PTRACE_CONT, c, 0, sig);
		stopped += now() - a;
		stops++;
	}
	printf("stops %ld mean_stop_us %.1f\n", stops, stops ? stopped / stops * 1e6 : 0.0);
	return 0;
}
