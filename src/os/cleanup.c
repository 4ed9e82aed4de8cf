/* cleanup.c — the table of live temporary files and the handler that removes them before a signal ends plumb.
 * Invariant: a slot's path is only read by the handler while the slot is LIVE, and a slot only becomes LIVE
 * after its path and owner are written, so the handler never reads half a path. */
#include "os/cleanup.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLEANUP_SLOTS 16

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_LIVE, SLOT_CLEANING };

static struct cleanup_slot {
	atomic_int state;
	pid_t owner;          /* the process that made the file: a forked child never removes its parent's */
	char path[PATH_MAX];
} slots[CLEANUP_SLOTS];

/* Per signal: where cleanup_catch() wants the signal noted instead of ending the process. */
static _Atomic(volatile sig_atomic_t *) catchers[_NSIG];

int cleanup_add(const char *path)
{
	size_t n = strlen(path);
	if (n >= PATH_MAX)
		return -1;
	for (int i = 0; i < CLEANUP_SLOTS; i++) {
		int expect = SLOT_FREE;
		if (!atomic_compare_exchange_strong(&slots[i].state, &expect, SLOT_FILLING))
			continue;
		memcpy(slots[i].path, path, n + 1);
		slots[i].owner = getpid();
		atomic_store_explicit(&slots[i].state, SLOT_LIVE, memory_order_release);
		return i;
	}
	return -1;
}

void cleanup_forget(int slot)
{
	if (slot < 0 || slot >= CLEANUP_SLOTS)
		return;
	int expect = SLOT_LIVE;
	atomic_compare_exchange_strong(&slots[slot].state, &expect, SLOT_FREE);
}

/* Claims each live slot of this process (so two threads' handlers never both remove one) and unlinks it. */
static void remove_live(bool release)
{
	pid_t self = getpid();
	for (int i = 0; i < CLEANUP_SLOTS; i++) {
		struct cleanup_slot *s = &slots[i];
		if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_LIVE || s->owner != self)
			continue;
		int expect = SLOT_LIVE;
		if (!atomic_compare_exchange_strong(&s->state, &expect, SLOT_CLEANING))
			continue;
		unlink(s->path);
		if (release)
			atomic_store(&s->state, SLOT_FREE);
	}
}

void cleanup_remove_all(void)
{
	int saved = errno;
	remove_live(false);
	errno = saved;
}

static void at_exit(void)
{
	remove_live(true);
}

static void on_signal(int sig, siginfo_t *si, void *ucontext)
{
	(void)ucontext;
	int saved = errno;
	volatile sig_atomic_t *flag = sig > 0 && sig < _NSIG ? atomic_load(&catchers[sig]) : NULL;
	if (flag) {
		*flag = sig | (si && si->si_code == SI_KERNEL ? CLEANUP_SIG_GROUP : 0);
		errno = saved;
		return;
	}
	remove_live(false);
	/* die of the signal itself: the parent sees the true cause, and a crash still leaves its core */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigset_t unblock;
	sigemptyset(&unblock);
	sigaddset(&unblock, sig);
	sigprocmask(SIG_UNBLOCK, &unblock, NULL);
	raise(sig);
	errno = saved;
}

static const int ending_signals[] = { SIGHUP,  SIGINT,  SIGQUIT, SIGTERM,   SIGPIPE, SIGALRM,
				      SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF };
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP };

/* Installs on_signal for `sig` when nobody else handles it; returns whether it did. */
static bool take_signal(int sig, int flags)
{
	struct sigaction old;
	if (sigaction(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
		return false;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = flags | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) == 0;
}

void cleanup_install(void)
{
	static bool done;
	if (done)
		return;
	done = true;
	for (size_t i = 0; i < sizeof ending_signals / sizeof ending_signals[0]; i++)
		take_signal(ending_signals[i], 0);
	/* a stack overflow leaves no stack for the handler: give it its own, unless one is set already */
	static char alt_stack[64 * 1024];
	stack_t cur;
	bool have_alt = sigaltstack(NULL, &cur) == 0 && !(cur.ss_flags & SS_DISABLE);
	if (!have_alt) {
		stack_t ss = { .ss_sp = alt_stack, .ss_size = sizeof alt_stack, .ss_flags = 0 };
		have_alt = sigaltstack(&ss, NULL) == 0;
	}
	for (size_t i = 0; i < sizeof crash_signals / sizeof crash_signals[0]; i++)
		take_signal(crash_signals[i], have_alt ? SA_ONSTACK : 0);
	atexit(at_exit);
}

void cleanup_catch(int sig, volatile sig_atomic_t *flag)
{
	if (sig <= 0 || sig >= _NSIG)
		return;
	atomic_store(&catchers[sig], flag);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}
