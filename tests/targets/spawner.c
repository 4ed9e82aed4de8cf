/* spawner.c — many short-lived processes, for naming in `record --all` (docs/design.md §13): prints "ready",
 * then starts children one after another until its standard input ends (or N were started); each burns MS
 * milliseconds of CPU and execs CHILD (a path whose base name becomes its name, e.g. a link to this program named
 * "burnchild"), which burns MS more and exits. Prints each child's pid on a line as it ends, then "done".
 * Usage: spawner N MS CHILD   (as CHILD: spawner --burn MS) */
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, noipa))

static volatile uint64_t sink;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE void spawn_burn(double ms)
{
	double end = cpu_now() + ms / 1e3;
	uint64_t x = 1;
	while (cpu_now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink += x;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--burn") == 0) {
		spawn_burn(atof(argv[2]));
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: spawner N MS CHILD\n");
		return 2;
	}
	int n = atoi(argv[1]);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		struct pollfd in = { 0, POLLIN, 0 };
		if (poll(&in, 1, 0) > 0) /* standard input readable: its end (or a line) says stop */
			break;
		pid_t pid = fork();
		if (pid == 0) {
			spawn_burn(atof(argv[2]));
			execl(argv[3], argv[3], "--burn", argv[2], (char *)NULL);
			_exit(127);
		}
		if (pid < 0)
			return 1;
		int status;
		waitpid(pid, &status, 0);
		printf("%d\n", (int)pid);
		fflush(stdout);
	}
	printf("done\n");
	return 0;
}
