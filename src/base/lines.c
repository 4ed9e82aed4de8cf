/* lines.c — see lines.h. One fixed read buffer and one line buffer of the cap: a line past the cap is skipped
 * up to its newline without being kept. */
#include "base/lines.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lines_read_fd(int fd, size_t max_line, size_t max_bytes, bool (*fn)(void *ctx, const char *line, size_t len),
		  void *ctx, struct lines_stats *st)
{
	memset(st, 0, sizeof *st);
	char *line = malloc(max_line ? max_line : 1);
	if (!line)
		return ENOMEM;
	char buf[1 << 16];
	size_t n = 0, total = 0;
	bool over = false, go_on = true;
	int err = 0;
	while (go_on) {
		size_t want = sizeof buf;
		if (total >= max_bytes) {
			char probe;
			ssize_t more = read(fd, &probe, 1);
			st->truncated = more > 0;
			break;
		}
		if (want > max_bytes - total)
			want = max_bytes - total;
		ssize_t got = read(fd, buf, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = errno;
			break;
		}
		if (got == 0)
			break;
		total += (size_t)got;
		for (ssize_t i = 0; i < got && go_on; i++) {
			if (buf[i] != '\n') {
				if (n < max_line)
					line[n++] = buf[i];
				else
					over = true;
				continue;
			}
			if (over) {
				st->too_long++;
			} else {
				st->lines++;
				go_on = fn(ctx, line, n);
			}
			n = 0;
			over = false;
		}
	}
	if (go_on && !err && !st->truncated && (n || over)) { /* a last line without its newline (not a cut one) */
		if (over) {
			st->too_long++;
		} else {
			st->lines++;
			fn(ctx, line, n);
		}
	}
	free(line);
	return err;
}
