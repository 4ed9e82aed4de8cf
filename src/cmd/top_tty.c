/* top_tty.c — the terminal of `plumb top` (top.h): set up for single keys and a full screen, read without ever
 * blocking the sampling loop, and always put back as it was — on q, on a signal (top.c restores before it
 * exits), or when writing shows the terminal is gone (then nothing more is written to it). */
#include "cmd/top.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/clock.h"
#include "render/term.h"

#define ESC_WAIT_NS 100000000ull /* an ESC alone for this long is the Esc key, not the start of a sequence */

static void read_size(struct top_tty *t)
{
	struct winsize ws;
	if (ioctl(t->out, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
		t->rows = ws.ws_row;
		t->cols = ws.ws_col;
	} else {
		t->rows = 24;
		t->cols = 80;
	}
}

bool top_tty_open(struct top_tty *t)
{
	memset(t, 0, sizeof *t);
	t->in = t->out = -1;
	if (!isatty(STDOUT_FILENO))
		return false;
	t->out = STDOUT_FILENO;
	t->in = STDIN_FILENO;
	if (!isatty(STDIN_FILENO)) {
		t->in = open("/dev/tty", O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (t->in < 0)
			return false;
		t->own_in = true;
	}
	if (tcgetattr(t->in, &t->saved) != 0) {
		int err = errno;
		top_tty_close(t);
		errno = err;
		return false;
	}
	struct termios raw = t->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | IEXTEN);
	raw.c_iflag &= ~(tcflag_t)(IXON | ICRNL);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	raw.c_cc[VSUSP] = _POSIX_VDISABLE; /* Ctrl-Z would stop plumb with the screen taken */
	if (tcsetattr(t->in, TCSANOW, &raw) != 0) {
		int err = errno;
		top_tty_close(t);
		errno = err;
		return false;
	}
	t->raw = true;
	read_size(t);
	t->entered = top_tty_write(t, TERM_ENTER, strlen(TERM_ENTER));
	return true;
}

void top_tty_close(struct top_tty *t)
{
	if (t->entered && !t->gone)
		top_tty_write(t, TERM_LEAVE, strlen(TERM_LEAVE));
	t->entered = false;
	if (t->raw)
		tcsetattr(t->in, TCSANOW, &t->saved);
	t->raw = false;
	if (t->own_in && t->in >= 0)
		close(t->in);
	t->own_in = false;
	t->in = t->out = -1;
}

bool top_tty_resized(struct top_tty *t)
{
	int rows = t->rows, cols = t->cols;
	read_size(t);
	return rows != t->rows || cols != t->cols;
}

int top_tty_key(struct top_tty *t)
{
	if (t->gone || t->in < 0)
		return TERM_KEY_NONE;
	if (t->npending < sizeof t->pending) {
		ssize_t n = read(t->in, t->pending + t->npending, sizeof t->pending - t->npending);
		if (n > 0) {
			if (t->npending == 0)
				t->pending_ns = mono_ns();
			t->npending += (size_t)n;
		} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
			t->gone = true; /* EIO: the terminal hung up */
			return TERM_KEY_NONE;
		}
	}
	size_t used;
	int key = term_key(t->pending, t->npending, &used);
	if (key == TERM_KEY_NONE && t->npending && mono_ns() - t->pending_ns > ESC_WAIT_NS) {
		key = TERM_KEY_ESC; /* a sequence that never finished: the Esc key it started with */
		used = 1;
	}
	if (used) {
		memmove(t->pending, t->pending + used, t->npending - used);
		t->npending -= used;
		t->pending_ns = mono_ns();
	}
	return key;
}

void top_tty_wait(struct top_tty *t, int timeout_ms)
{
	if (t->gone || t->in < 0)
		return;
	struct pollfd p = { .fd = t->in, .events = POLLIN };
	if (poll(&p, 1, t->npending ? 10 : timeout_ms) > 0 && (p.revents & (POLLHUP | POLLERR)))
		t->gone = true;
}

bool top_tty_write(struct top_tty *t, const char *buf, size_t len)
{
	while (len > 0 && !t->gone) {
		ssize_t n = write(t->out, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			t->gone = true; /* EIO (hung up), EPIPE: nobody sees the screen any more */
			return false;
		}
		buf += n;
		len -= (size_t)n;
	}
	return !t->gone;
}
