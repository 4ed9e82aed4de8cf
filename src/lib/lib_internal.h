/* lib_internal.h — functions shared between libplumb's own files (the files of src/lib); not part of include/plumb.h.
 * Everything here has hidden visibility in libplumb.so. */
#ifndef PLUMB_LIB_INTERNAL_H
#define PLUMB_LIB_INTERNAL_H

/* The metrics recorder (docs/design.md §7), started by plumb_init(name). When PLUMB_DEBUG is on, starts one thread
 * that records the calling process and its descendants into $PLUMB_HOME/metrics/NAME.json every 5 s
 * (PLUMB_METRICS_EVERY seconds when set, PLUMB_METRICS_KEEP samples instead of 120). NAME is sanitized into a file
 * name; NULL or empty uses the program's name. Returns 0 (PLUMB_OK) when recording (or already recording),
 * PLUMB_EGATE when the switch is off — then nothing at all was done — or another enum plumb_err when the recorder
 * could not start (nothing left running). Thread-safe. */
int lib_metrics_start(const char *name);
/* Stops the recorder: wakes and joins its thread, which writes the artifact a last time with state "ended".
 * A no-op when not recording, and in a forked child of the recording process. lib_metrics_start registers it
 * with atexit() too, so a program that just returns from main still leaves an "ended" recording. */
void lib_metrics_stop(void);

#include <stdbool.h>

/* True when the process started with PLUMB_DEBUG on (read once, when the library was loaded; plumb.c). */
bool lib_switch_on(void);

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* For libplumb-preload.so (sampler.c, alloc.c; preload_common.c): the memory plumb shares with the process, the
 * memfd whose number the environment variable env holds, mapped read-write whole; NULL when env is unset or not a
 * descriptor number, the memfd is smaller than min_size bytes, or valid(mapping, its size) says its header is
 * wrong (then it is unmapped again). Calls the mmap and munmap system calls directly (alloc.c interposes them). */
void *lib_map_env_fd(const char *env, size_t min_size, bool (*valid)(const void *m, uint64_t size));
/* The calling thread's stack [*lo, *hi) as pthread_getattr_np gives it; both left as they were when it cannot. */
void lib_thread_stack(uintptr_t *lo, uintptr_t *hi);
/* Copies up to `want` bytes of stack from sp into dst; returns how many. Inside the thread's known stack
 * [lo, hi) (hi 0: unknown) the copy is a memcpy bounded by the stack's top; elsewhere (an alternate signal stack,
 * a coroutine) process_vm_readv of process pid (the caller's own) reads what is mapped and returns a short count
 * instead of faulting. Async-signal-safe. */
uint32_t lib_copy_stack(uint8_t *dst, uint64_t sp, uint32_t want, uintptr_t lo, uintptr_t hi, pid_t pid);

#endif
