/* progress.c — see ui/progress.h. A display draws "\r<line>\033[K" and erases with "\r\033[K"; it draws nothing
 * before its delay and nothing closer together than its interval, and the one display that has drawn is
 * remembered so that progress_clear() can erase it before another message. */
#include "ui/progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/gate.h"
#include "base/shown.h"

#define LABEL_MAX 160
#define LINE_MAX_BYTES 512

/* A display: the report hook a reader below the faces calls (base/progress.h) and what the line needs. */
struct display {
	struct progress report; /* first, so a struct progress * of ours is a struct display * */
	struct progress_opts opts;
	char label[LABEL_MAX];
	uint64_t start_ns;
	uint64_t last_draw_ns;
	bool drawn;   /* the line is on the terminal now */
	bool redraw;  /* the next report draws even within the interval (after a clear or a new label) */
};

/* The display whose line is on the terminal, for progress_clear(). */
static struct display *active;

static struct display *display_of(struct progress *p)
{
	return (struct display *)p;
}

static void report_bytes(struct progress *p, uint64_t done, uint64_t total);
static void report_count(struct progress *p, uint64_t done, uint64_t total, const char *unit);
static void report_record(struct progress *p, double elapsed_s, uint64_t samples, double rate_hz);

bool progress_wanted(int fd)
{
	if (!isatty(fd))
		return false;
	const char *ci = getenv("CI");
	if (ci && *ci)
		return false;
	const char *term = getenv("TERM");
	if (term && strcmp(term, "dumb") == 0)
		return false;
	const char *want = getenv("PLUMB_PROGRESS");
	if (want && gate_value_read(want) == GATE_OFF)
		return false;
	return true;
}

struct progress *progress_new_opts(const char *label, const struct progress_opts *opts)
{
	struct display *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->report.bytes = report_bytes;
	p->report.count = report_count;
	p->report.record = report_record;
	p->opts = *opts;
	progress_label(&p->report, label);
	p->start_ns = p->opts.now_ns ? p->opts.now_ns(p->opts.now_ctx) : mono_ns();
	return &p->report;
}

struct progress *progress_new(const char *label, unsigned flags)
{
	if ((flags & PROGRESS_QUIET) || !progress_wanted(2))
		return NULL;
	struct progress_opts o = PROGRESS_OPTS_INIT;
	return progress_new_opts(label, &o);
}

void progress_label(struct progress *rp, const char *label)
{
	struct display *p = display_of(rp);
	if (!p)
		return;
	label = label ? label : "";
	/* a label names an input ("reading PATH"): escaped by the one escaper, so the line stays one line */
	shown_escape(p->label, sizeof p->label, label, strlen(label), sizeof p->label);
	p->redraw = true;
}

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* a terminal that cannot take the line: nothing to do about it */
		s += w;
		n -= (size_t)w;
	}
}

static uint64_t now_of(const struct display *p)
{
	return p->opts.now_ns ? p->opts.now_ns(p->opts.now_ctx) : mono_ns();
}

/* True when a report at this moment should redraw. */
static bool due(struct display *p)
{
	uint64_t now = now_of(p);
	if (now - p->start_ns < p->opts.delay_ns)
		return false;
	if (p->drawn && !p->redraw && now - p->last_draw_ns < p->opts.interval_ns)
		return false;
	p->last_draw_ns = now;
	return true;
}

static unsigned columns_of(const struct display *p)
{
	if (p->opts.columns)
		return p->opts.columns;
	struct winsize ws;
	if (ioctl(p->opts.fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
		return ws.ws_col;
	return 80;
}

/* Draws "label: body", cut so that it never wraps (a wrapped line cannot be redrawn with \r). */
static void draw(struct display *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void draw(struct display *p, const char *fmt, ...)
{
	char line[LINE_MAX_BYTES];
	size_t n = 1;
	line[0] = '\r';
	int k = snprintf(line + n, sizeof line - n, "%s%s", p->label, p->label[0] ? ": " : "");
	n += k > 0 ? (size_t)k : 0;
	if (n < sizeof line) {
		va_list ap;
		va_start(ap, fmt);
		k = vsnprintf(line + n, sizeof line - n, fmt, ap);
		va_end(ap);
		n += k > 0 ? (size_t)k : 0;
	}
	if (n >= sizeof line)
		n = sizeof line - 1;
	size_t room = columns_of(p); /* the \r plus columns - 1 characters */
	if (n > room) {
		n = room;
		while (n > 1 && ((unsigned char)line[n] & 0xC0) == 0x80)
			n--; /* never cut inside a UTF-8 character */
	}
	if (active && active != p)
		progress_clear();
	char out[LINE_MAX_BYTES + 8];
	memcpy(out, line, n);
	memcpy(out + n, "\033[K", 3);
	write_all(p->opts.fd, out, n + 3);
	p->drawn = true;
	p->redraw = false;
	active = p;
}

char *progress_human_bytes(char *buf, unsigned len, uint64_t bytes)
{
	static const char *const units[] = { "kB", "MB", "GB", "TB", "PB" };
	if (bytes < 1000) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	double v = (double)bytes / 1000.0;
	size_t u = 0;
	while (v >= 999.95 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1000.0;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

/* 4321 -> "4,321" */
static void thousands(char *buf, size_t len, uint64_t v)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
	size_t o = 0;
	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
}

static void report_bytes(struct progress *rp, uint64_t done, uint64_t total)
{
	struct display *p = display_of(rp);
	if (!p || !due(p))
		return;
	char d[32], t[32];
	progress_human_bytes(d, sizeof d, done);
	if (!total) {
		draw(p, "%s", d);
		return;
	}
	if (done > total)
		done = total;
	/* "100.8 of 224.0 MB" when both have the unit, else each with its own */
	progress_human_bytes(t, sizeof t, total);
	const char *du = strchr(d, ' '), *tu = strchr(t, ' ');
	unsigned pct = (unsigned)((double)done * 100.0 / (double)total);
	if (du && tu && strcmp(du, tu) == 0)
		draw(p, "%u%% (%.*s of %s)", pct, (int)(du - d), d, t);
	else
		draw(p, "%u%% (%s of %s)", pct, d, t);
}

static void report_count(struct progress *rp, uint64_t done, uint64_t total, const char *unit)
{
	struct display *p = display_of(rp);
	if (!p || !due(p))
		return;
	char d[32], t[32];
	thousands(d, sizeof d, done);
	if (total) {
		thousands(t, sizeof t, total);
		draw(p, "%s/%s%s%s", d, t, unit && *unit ? " " : "", unit ? unit : "");
	} else {
		draw(p, "%s%s%s", d, unit && *unit ? " " : "", unit ? unit : "");
	}
}

static void report_record(struct progress *rp, double elapsed_s, uint64_t samples, double rate_hz)
{
	struct display *p = display_of(rp);
	if (!p || !due(p))
		return;
	char s[32];
	thousands(s, sizeof s, samples);
	if (elapsed_s < 0)
		elapsed_s = 0;
	draw(p, "%.1fs, %s sample%s, %.0f/s effective", elapsed_s, s, samples == 1 ? "" : "s",
	     rate_hz > 0 ? rate_hz : 0.0);
}

void progress_clear(void)
{
	struct display *p = active;
	if (!p || !p->drawn)
		return;
	write_all(p->opts.fd, "\r\033[K", 4);
	p->drawn = false;
	p->redraw = true;
}

void progress_end(struct progress *rp)
{
	struct display *p = display_of(rp);
	if (!p)
		return;
	if (active == p) {
		progress_clear();
		active = NULL;
	}
	free(p);
}
