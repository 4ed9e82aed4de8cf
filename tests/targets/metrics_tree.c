/* metrics_tree — a process tree with a known shape for `plumb metrics record` tests. The parent starts
 * mt-alloc (allocates 200 MiB, touches every page, holds it, frees it, lives on) and mt-burn (burns one CPU), waits
 * for both, then starts mt-sleep and stops it with SIGTERM. Every event is one line on stdout:
 * "EVENT NAME PID UNIX_MS" (begin, touched, freed, end; mt-burn adds a "cpu" line), so a test can check each
 * sample against the truth.
 * Usage: metrics_tree [SCALE] — SCALE multiplies every duration (default 1: about 3 s in all). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double scale = 1.0;

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void event(const char *what, const char *name)
{
	char line[128];
	int n = snprintf(line, sizeof line, "%s %s %d %lld\n", what, name, (int)getpid(), now_ms());
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		_exit(3);
}

static void pause_for(double seconds)
{
	double end = mono() + seconds * scale;
	while (mono() < end) {
		double left = end - mono();
		struct timespec ts = { (time_t)left, (long)((left - (time_t)left) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

static volatile unsigned long long sink;

static void alloc_child(void)
{
	size_t size = 200u << 20;
	char *p = malloc(size);
	if (!p)
		_exit(4);
	for (size_t i = 0; i < size; i += 4096)
		p[i] = (char)i;
	memset(p, 1, size);
	sink += (unsigned char)p[size / 2];
	event("touched", "mt-alloc");
	pause_for(1.0);
	free(p); /* a 200 MiB block is its own mapping: free gives it back */
	event("freed", "mt-alloc");
	pause_for(0.8);
}

/* Burns one CPU; its last line says how much CPU it really got ("cpu mt-burn PID UNIX_MS CPU_MS WALL_MS"), the
 * truth a test compares the recording with on a busy machine. */
static void burn_child(void)
{
	double start = mono(), end = start + 2.0 * scale;
	unsigned long long x = 1;
	while (mono() < end)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += x;
	struct timespec cpu;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	char line[128];
	int n = snprintf(line, sizeof line, "cpu mt-burn %d %lld %lld %lld\n", (int)getpid(), now_ms(),
			 (long long)cpu.tv_sec * 1000 + cpu.tv_nsec / 1000000, (long long)((mono() - start) * 1000));
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		_exit(3);
}

static void sleep_child(void)
{
	for (;;)
		pause();
}

static pid_t start(const char *name, void (*body)(void))
{
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		prctl(PR_SET_NAME, name);
		event("begin", name);
		body();
		event("end", name);
		_exit(0);
	}
	return pid;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		scale = atof(argv[1]);
	if (!(scale > 0))
		scale = 1.0;
	event("begin", "parent");
	pid_t a = start("mt-alloc", alloc_child);
	pid_t b = start("mt-burn", burn_child);
	int status, bad = 0;
	for (int i = 0; i < 2; i++) {
		pid_t w = wait(&status);
		if ((w != a && w != b) || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			bad = 1;
	}
	pid_t s = start("mt-sleep", sleep_child);
	pause_for(0.8);
	kill(s, SIGTERM);
	waitpid(s, &status, 0);
	char line[64];
	int n = snprintf(line, sizeof line, "end mt-sleep %d %lld\n", (int)s, now_ms());
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		bad = 1;
	pause_for(0.2);
	event("end", "parent");
	return bad;
}
