/* top_view.h — the layout of `plumb top` (docs/design.md §13): what one redraw shows, as a plain model the command
 * fills (two tables side by side, the last window's and the session's, or the process view), laid out on a
 * screen of any size — from 80x24 up — or printed as plain text for a pipe. Nothing here samples or reads a
 * terminal; the layout is a function of the model and the size, so it is tested without one.
 *
 * Ownership: the model and its strings are the caller's; the view only reads them. */
#ifndef PLUMB_RENDER_TOP_VIEW_H
#define PLUMB_RENDER_TOP_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/sbuf.h"
#include "render/term.h"

/* One row of a table: a function (or a file, module, library) and its shares in percent of the table's total. */
struct top_row {
	const char *name;
	double primary;   /* the share the table is about: own (leaf) or total (inclusive) */
	double secondary; /* the other one */
};

struct top_table {
	const char *title;          /* "last 1.0s", "session 12.3s" */
	const struct top_row *rows; /* in the order to show */
	size_t n;
};

/* One process of the process view (top --all): CPU in percent of one CPU. */
struct top_proc_row {
	uint32_t pid;
	const char *name;
	double window, session;
};

struct top_model {
	const char *header;        /* the first line: what is sampled, the rate, samples, lost, CPU */
	const char *mode_line;     /* the second: table, grouping, sort, filter, paused */
	const char *primary, *secondary; /* column names of the two shares ("own%", "total%") */
	const char *what;          /* what a row is: "function", "file", "module", "library" */
	bool processes;            /* the process view instead of the tables */
	struct top_table tables[2]; /* [0] the last window, [1] the session */
	const struct top_proc_row *procs;
	size_t nprocs;
	size_t selected;           /* the process the cursor is on */
	const char *status;        /* the last line: a message, a prompt being typed, or the keys */
	int status_cursor;         /* >= 0: the cursor is shown in the status line at this column */
};

/* Lays m out on a rows x cols screen into f (begun and ended here). */
void top_view_draw(struct term_frame *f, const struct top_model *m, int rows, int cols);

/* Plain text for a pipe or a log: the header lines, then the process view (when m->processes) and the two
 * tables, at most `top` rows each, one after the other; ends with a blank line. */
void top_view_plain(struct sbuf *out, const struct top_model *m, size_t top);

#endif
