/* plumb.h — the public API of libplumb (DESIGN §7): emit benchmark samples and stage ranges, and announce a
 * process as a profiling target, from any program. Link with `pkg-config --libs plumb` (-lplumb).
 *
 * Off by default: unless the process started with PLUMB_DEBUG set to a true value (anything but empty, 0,
 * false, no, off), every call returns PLUMB_STATUS_OFF after a few nanoseconds and does nothing at all — no
 * thread, no file, no timer. The switch is read once, when the library is loaded.
 *
 * Ownership: strings passed in are only read during the call (the library keeps copies where it needs them).
 * A stage handle from plumb_stage_begin() belongs to the caller until plumb_stage_end() consumes it.
 * Every function is thread-safe. */
#ifndef PLUMB_H
#define PLUMB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PLUMB_API __attribute__((visibility("default")))

/* The one error enum of the library. */
enum plumb_status {
	PLUMB_STATUS_OK = 0,
	PLUMB_STATUS_OFF,      /* the debug switch is off, or the variable naming the output is unset: nothing done */
	PLUMB_STATUS_INVALID,  /* a NULL or malformed argument (e.g. a target name that is not a plain word) */
	PLUMB_STATUS_NOMEM,    /* out of memory */
	PLUMB_STATUS_IO,       /* a file could not be written (errno tells why) */
	PLUMB_STATUS_BUSY,     /* another live process has announced the same target name */
};

/* The release number of this library, as `plumb --version` and `pkg-config --modversion plumb` give it. Never
 * NULL; the string is static. Answers with the switch off too: it reads nothing and does nothing. */
PLUMB_API const char *plumb_version(void);

/* A short fixed text for a status ("ok", "switched off", ...). Never NULL; the string is static. */
PLUMB_API const char *plumb_status_str(enum plumb_status status);

/* Appends one JSON line {"name": ..., "kind": ..., "unit": ..., "value": ..., "tags": {...}} to the file named
 * by PLUMB_SAMPLES (created 0600 when missing; one O_APPEND write per line, so lines from several processes
 * never interleave). `kind` is what the value is (e.g. "latency", "throughput"), `unit` its unit ("ms",
 * "bytes"). PLUMB_STATUS_OFF when the switch is off or PLUMB_SAMPLES is unset. */
PLUMB_API enum plumb_status plumb_sample(const char *name, const char *kind, const char *unit, double value);

/* The same with tags: `tags` holds `ntags` key/value pairs, tags[2*i] the key and tags[2*i+1] the value. */
PLUMB_API enum plumb_status plumb_sample_tags(const char *name, const char *kind, const char *unit, double value,
					      const char *const *tags, size_t ntags);

/* A stage in progress (opaque). */
struct plumb_stage;

/* Starts a named stage at the current CLOCK_MONOTONIC time. Returns a handle for plumb_stage_end(), or NULL
 * when the switch is off, PLUMB_STAGES is unset, or memory is short (plumb_stage_end(NULL) is a no-op). */
PLUMB_API struct plumb_stage *plumb_stage_begin(const char *name);

/* Ends the stage: appends {"name": ..., "start_ns": ..., "end_ns": ..., "pid": ...} (CLOCK_MONOTONIC
 * nanoseconds) as one line to PLUMB_STAGES, and frees the handle (it is consumed even on failure).
 * `plumb record --stages FILE` turns those lines into a plumb.stages.v1 file. */
PLUMB_API enum plumb_status plumb_stage_end(struct plumb_stage *stage);

/* Announces this process as the profiling target NAME (letters, digits, '.', '_', '-'; at most 64 bytes):
 * writes $PLUMB_HOME/targets/NAME.lock (PLUMB_HOME defaults to ${XDG_STATE_HOME:-~/.local/state}/plumb)
 * holding this process's pid, so `plumb record --target NAME` finds it. The lock is removed at exit; a lock
 * left by a dead process is stale and replaced. PLUMB_STATUS_BUSY when a live process holds NAME. */
PLUMB_API enum plumb_status plumb_announce(const char *name);

/* plumb_announce(name), and starts the metrics recorder of this process and its children
 * ($PLUMB_HOME/metrics/NAME.json, DESIGN §5): the one call a program makes at start-up. */
PLUMB_API enum plumb_status plumb_init(const char *name);

/* Stops the metrics recorder and removes the lock now (otherwise done at exit). Safe to call at any time. */
PLUMB_API void plumb_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif
