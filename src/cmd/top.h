/* top.h — inside cmd/: the pieces of `plumb top` (docs/design.md §13). top.c is the command (options, sampling,
 * keys); top_tty.c owns the terminal (raw mode, size, keys in, screens out, and putting it back); top_model.c
 * turns the live state into what one redraw shows. top.c calls the other two; they call nothing of it.
 *
 * Ownership: struct top_tty is opened and closed by top.c; struct top_tables owns its summaries, rows and
 * names (top_tables_release). */
#ifndef PLUMB_CMD_TOP_H
#define PLUMB_CMD_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <termios.h>

#include "analyze/analyze.h"
#include "analyze/live.h"
#include "base/err.h"
#include "render/top_view.h"

/* ---- the terminal (top_tty.c) ---- */

struct top_tty {
	int in, out;           /* keys come from in, screens go to out */
	bool own_in;           /* in was opened here (/dev/tty) */
	bool raw;              /* in's settings were changed (saved holds the old ones) */
	struct termios saved;
	bool entered;          /* the alternate screen is on */
	int rows, cols;
	char pending[64];      /* bytes of a key not complete yet */
	size_t npending;
	uint64_t pending_ns;   /* when they came */
	bool gone;             /* the terminal went away (hangup, EIO): nothing more is drawn */
};

/* Takes the terminal stdout is (keys from stdin when it is a terminal too, else /dev/tty): no echo, no line
 * buffering, Ctrl-C still a signal, Ctrl-Z off; enters the alternate screen. False (nothing changed) when
 * stdout is not a terminal or it cannot be set up; errno says why. */
bool top_tty_open(struct top_tty *t);
/* Puts the terminal back as it was (the normal screen, the cursor, the settings). Safe to call twice. */
void top_tty_close(struct top_tty *t);
/* Reads the size again; true when it changed (the view must be laid out anew). */
bool top_tty_resized(struct top_tty *t);
/* The next key typed, or TERM_KEY_NONE when there is none yet; never blocks. Sets t->gone when the
 * terminal went away. */
int top_tty_key(struct top_tty *t);
/* Waits up to timeout_ms for a key to be typed (the pause after sampling ended). */
void top_tty_wait(struct top_tty *t, int timeout_ms);
/* Writes a whole screen; false (and t->gone) when the terminal went away. */
bool top_tty_write(struct top_tty *t, const char *buf, size_t len);

/* ---- what a redraw shows (top_model.c) ---- */

enum top_sort { TOP_SORT_SHARE = 0, TOP_SORT_NAME, TOP_SORT_COUNT };

/* How the tables are made. */
struct top_view_opts {
	enum hot_table_kind table; /* leaf, inclusive, grouped-leaf, grouped-inclusive */
	enum hot_group group_by;   /* for the grouped tables */
	const char *filter;        /* keep frames matching this (plumb hot --include), NULL: all */
	const char *proc_filter;   /* the process view: keep processes whose name matches this, NULL: all */
	enum top_sort sort;
	unsigned label_flags;
	bool processes;            /* the process view (top --all, nothing drilled into) */
	bool processes_only;       /* with it, no function tables (the screen shows none: nothing is symbolized) */
	uint32_t pid;              /* the process drilled into, 0: every process */
	uint64_t interval_ns;      /* what one sample weighs in CPU time */
	uint64_t window_ns;        /* how long the last window was */
	uint64_t session_ns;       /* how long the session has been */
};

struct top_tables {
	struct hot_summary *sum[2];     /* [0] the last window, [1] the session */
	struct top_row *rows[2];
	size_t nrows[2];
	struct top_proc_row *procs;
	size_t nprocs;
	char **names;                   /* the processes' names, redacted (nprocs of them) */
};

/* Builds the tables of l for vo into tt (released first). PLUMB_EINVAL for a filter that is not a regular
 * expression (the message says so), PLUMB_ENOMEM. On failure tt is left empty. */
enum plumb_err top_tables_build(struct top_tables *tt, struct live *l, const struct top_view_opts *vo,
				struct perr *e);
void top_tables_release(struct top_tables *tt);
/* "leaf", "inclusive", "leaf by file", ...: the table vo shows. */
const char *top_table_title(const struct top_view_opts *vo, char *buf, size_t n);

#endif
