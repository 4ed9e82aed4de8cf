/* cleanup.h — temporary files are removed on every signal plumb can catch (docs/design.md §3.4). A fixed table of live
 * temp paths that a signal handler can read without locks or allocation; the handler removes this process's
 * entries, then ends the process with the signal's default action (so exit status and core dumps stay true).
 * The table lives in static storage: nothing here allocates, and nothing is owned by the caller. */
#ifndef PLUMB_OS_CLEANUP_H
#define PLUMB_OS_CLEANUP_H

#include <signal.h>

/* Records `path` (copied) as a live temporary file of this process. Returns a slot number for
 * cleanup_forget(), or -1 when the table is full or the path too long (the file is then not removed on a
 * signal; writing still works). Async-signal-safe and thread-safe; usable in libplumb (no handler is installed
 * there, so the table is only bookkeeping). */
int cleanup_add(const char *path);

/* The file of `slot` was renamed into place or removed: forget it. A slot of -1 is ignored. */
void cleanup_forget(int slot);

/* Removes every live temporary file this process registered (a forked child removes none of its parent's).
 * Async-signal-safe: for handlers that end the process themselves. */
void cleanup_remove_all(void);

/* Installs, once, at the start of the command-line tool: the handler for SIGHUP, SIGINT, SIGQUIT, SIGTERM,
 * SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF and (on an alternate stack, so a
 * stack overflow is caught too) the crash signals SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP; and
 * an exit handler for temp files a path forgot. A signal that is ignored, or already handled by someone else
 * (a sanitizer, a preloaded profiler), is left alone. Never called by libplumb: it must not take its host
 * process's signals. */
void cleanup_install(void);

/* Makes `sig` (one of the signals above) set *flag and return, instead of ending the process: how a command
 * chains its own handling (record stops sampling on SIGINT and SIGTERM, then writes). *flag becomes the signal's
 * number, plus CLEANUP_SIG_GROUP when the kernel sent it to a whole process group (si_code SI_KERNEL: a
 * terminal's Ctrl-C, Ctrl-\ or hangup), so the command knows that the children in its group got it too and
 * which signal to pass on to those that did not (CLEANUP_SIG_NUMBER). NULL restores the default: remove the
 * temp files and end. The handler is installed without SA_RESTART, so a blocking call returns EINTR and the
 * command sees the flag. */
void cleanup_catch(int sig, volatile sig_atomic_t *flag);
#define CLEANUP_SIG_GROUP 0x100
#define CLEANUP_SIG_NUMBER(flag) ((flag) & 0xff)

#endif
