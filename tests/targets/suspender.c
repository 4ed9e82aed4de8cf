/* suspender.c — a process whose one thread waits its whole life in sigsuspend (in wait_here), for --mode wall
 * from outside: the wait never switches while sampled, so only a sampler that counts waiting time shows it.
 * Usage: suspender [SECONDS] (default 30; SIGALRM then ends it). Prints "ready" once it waits. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noipa)) static int wait_here(void)
{
	sigset_t none;
	sigemptyset(&none);
	for (;;)
		sigsuspend(&none);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned seconds = argc > 1 ? (unsigned)atoi(argv[1]) : 30;
	alarm(seconds ? seconds : 30);
	puts("ready");
	fflush(stdout);
	return wait_here();
}
