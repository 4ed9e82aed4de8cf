/* lines.h — reading a file of lines within caps (docs/design.md §3.5): memory stays within one line of at most
 * `max_line` bytes however the file is shaped (one endless line, /dev/zero), and no more than `max_bytes` are
 * read. For the line files programs write for plumb: stage lines (PLUMB_STAGES), bench samples (PLUMB_SAMPLES).
 * Library code: nothing is printed. */
#ifndef PLUMB_BASE_LINES_H
#define PLUMB_BASE_LINES_H

#include <stdbool.h>
#include <stddef.h>

struct lines_stats {
	size_t lines;     /* lines passed to the callback */
	size_t too_long;  /* lines longer than max_line, skipped */
	bool truncated;   /* reading stopped at max_bytes with more to read */
};

/* Calls fn(ctx, line, len) for each line of fd from its current offset to its end (len without the '\n'; a
 * last line without its newline counts too; the line is not NUL-terminated). A line of more than max_line bytes
 * is skipped and counted; reading stops once max_bytes were read. fn returns false to stop early. Returns 0, or
 * an errno: ENOMEM for the line buffer (max_line bytes, malloc'd and freed here), or read's own. *st is filled
 * either way. */
int lines_read_fd(int fd, size_t max_line, size_t max_bytes, bool (*fn)(void *ctx, const char *line, size_t len),
		  void *ctx, struct lines_stats *st);

#endif
