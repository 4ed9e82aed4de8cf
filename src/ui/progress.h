/* ui/progress.h — the one updating progress line on a terminal (docs/design.md §3.7): drawn on stderr only when
 * stderr is a terminal (never in a pipe, a file or a CI log), only for work that has lasted ~2 s, at most ~10
 * redraws a second, and erased cleanly at the end or before any other message.
 *
 * Who calls what. A face (cmd/) decides whether there is a display: progress_new() returns NULL when there must
 * be none (not a terminal, `CI` set, TERM=dumb, PLUMB_PROGRESS=0, or the command was given --json and passes
 * PROGRESS_QUIET), and the face owns the display and ends it with progress_end(). Library code below the faces
 * never creates one: a reader or writer takes a `struct progress *` (NULL meaning none) and only reports how far
 * it is, with progress_bytes(), progress_count() or progress_record() (base/progress.h, the one part below the
 * faces).
 * Every call accepts NULL and then does nothing, so a reader needs no guard. A report is cheap (a clock read and
 * a compare) when no redraw is due: calling it once per block read is fine. One thread draws a display. */
#ifndef PLUMB_UI_PROGRESS_H
#define PLUMB_UI_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/progress.h"

/* progress_new() flags. */
#define PROGRESS_QUIET 1u /* never draw (the command writes --json, or was asked to be quiet) */

/* How a display draws; PROGRESS_OPTS_INIT is stderr with the defaults. */
struct progress_opts {
	int fd;               /* where to draw */
	uint64_t delay_ns;    /* nothing is drawn before this much time since progress_new (short work stays silent) */
	uint64_t interval_ns; /* at least this long between two redraws */
	unsigned columns;     /* the line is cut to columns - 1; 0 = ask the terminal (80 when it cannot say) */
	uint64_t (*now_ns)(void *ctx); /* the clock; NULL = mono_ns() */
	void *now_ctx;
};
#define PROGRESS_DELAY_NS 2000000000ULL  /* ~2 s */
#define PROGRESS_INTERVAL_NS 100000000ULL /* <= 10 redraws a second */
#define PROGRESS_OPTS_INIT { 2, PROGRESS_DELAY_NS, PROGRESS_INTERVAL_NS, 0, NULL, NULL }

/* True when a progress line may be drawn on fd: it is a terminal, the environment has no CI variable, TERM is not
 * "dumb", and PLUMB_PROGRESS is not off (0/false/no/off). */
bool progress_wanted(int fd);

/* A display on stderr labelled `label` (e.g. "reading big.json", "recording"), or NULL when there must be none
 * (flags has PROGRESS_QUIET, or !progress_wanted(2)) or memory ran out. The caller owns it: progress_end(). */
struct progress *progress_new(const char *label, unsigned flags);

/* A display with explicit options, drawn whether or not opts->fd is a terminal: the caller has decided (tests,
 * or a face that checked progress_wanted itself). NULL only when memory runs out. */
struct progress *progress_new_opts(const char *label, const struct progress_opts *opts);

/* Changes the label for the next redraw (e.g. "reading x" then "writing y"); the text is copied. */
void progress_label(struct progress *p, const char *label);

/* progress_bytes(), progress_count() and progress_record() (base/progress.h) report to a display of this kind:
 * "reading big.json: 45% (100.8 of 224.0 MB)" or "reading -: 100.8 MB"; "bench run fib: 3/10 runs";
 * "recording: 12.3s, 4,321 samples, 351/s effective". */

/* Erases the line of the display being drawn, if any, so another message can be printed on stderr; the next
 * report redraws it. ui/report.h's message functions call it, so a warning never lands in the middle of the line. */
void progress_clear(void);

/* Erases the line and frees the display; NULL is fine. Nothing of it is left on the terminal. */
void progress_end(struct progress *p);

/* Formats a byte count for people, `1023 B`, `1.5 kB`, `224.0 MB`, `3.2 GB` (powers of 1000, one decimal above
 * bytes), into buf; returns buf. */
char *progress_human_bytes(char *buf, unsigned len, uint64_t bytes);

#endif
