/* top_view.c — lays out plumb top's model (top_view.h). The screen: the header (reverse video), the mode line,
 * then either the two tables side by side — the last window on the left, the session on the right, each with
 * both shares when it is wide enough (44 columns and up) and the table's own share alone when not — or the
 * process view, and the status line last. Every text goes through term_fit, so no line passes the width. */
#include "render/top_view.h"

#include <stdint.h>
#include <stdio.h>

#define SEP " | "
#define SEP_W 3
#define WIDE_SIDE 44 /* columns from which a side shows both shares */
#define NUM_W 6

static void add_num(struct sbuf *out, double v)
{
	char num[32];
	snprintf(num, sizeof num, "%.1f", v);
	term_fit_right(out, num, NUM_W);
}

/* One side's cell of width w: a row of t (row i), or the column names (i == SIZE_MAX), or blank. */
static void add_cell(struct sbuf *out, const struct top_model *m, const struct top_table *t, size_t i, size_t w)
{
	bool wide = w >= WIDE_SIDE;
	size_t nums = wide ? 2 * NUM_W + 3 : NUM_W + 2;
	size_t start = out->len;
	if (i == SIZE_MAX) {
		term_fit_right(out, m->primary, NUM_W);
		if (wide) {
			sbuf_addch(out, ' ');
			term_fit_right(out, m->secondary, NUM_W);
		}
		sbuf_addstr(out, "  ");
		term_fit(out, m->what, w > nums ? w - nums : 0, true);
	} else if (i < t->n) {
		add_num(out, t->rows[i].primary);
		if (wide) {
			sbuf_addch(out, ' ');
			add_num(out, t->rows[i].secondary);
		}
		sbuf_addstr(out, "  ");
		term_fit(out, t->rows[i].name, w > nums ? w - nums : 0, true);
	}
	/* pad (or cut, for a side narrower than its numbers) to exactly w */
	size_t used = out->len - start;
	if (used > w)
		sbuf_setlen(out, start + w);
	for (; used < w; used++)
		sbuf_addch(out, ' ');
}

static void draw_tables(struct term_frame *f, const struct top_model *m, int body, int cols)
{
	size_t left = cols > SEP_W ? (size_t)(cols - SEP_W) / 2 : (size_t)cols;
	size_t right = cols > SEP_W ? (size_t)cols - SEP_W - left : 0;
	struct sbuf line = SBUF_INIT;
	for (int r = 0; r < body; r++) {
		sbuf_reset(&line);
		unsigned attr = r < 2 ? TERM_BOLD : TERM_PLAIN;
		if (r == 0) {
			term_fit(&line, m->tables[0].title, left, true);
			sbuf_addstr(&line, SEP);
			term_fit(&line, m->tables[1].title, right, true);
		} else {
			size_t i = r == 1 ? SIZE_MAX : (size_t)(r - 2);
			if (i != SIZE_MAX && i >= m->tables[0].n && i >= m->tables[1].n)
				break;
			add_cell(&line, m, &m->tables[0], i, left);
			sbuf_addstr(&line, SEP);
			add_cell(&line, m, &m->tables[1], i, right);
		}
		term_frame_line(f, attr, line.buf);
	}
	sbuf_release(&line);
}

static void add_proc(struct sbuf *out, const struct top_proc_row *p, size_t name_w)
{
	char num[32];
	snprintf(num, sizeof num, "%u", p->pid);
	term_fit_right(out, num, 8);
	sbuf_addstr(out, "  ");
	snprintf(num, sizeof num, "%.1f", p->window);
	term_fit_right(out, num, 9);
	sbuf_addstr(out, "  ");
	snprintf(num, sizeof num, "%.1f", p->session);
	term_fit_right(out, num, 9);
	sbuf_addstr(out, "  ");
	term_fit(out, p->name, name_w, false);
}

static void add_proc_header(struct sbuf *out)
{
	sbuf_addstr(out, "     PID  CPU% last  CPU% sess  process");
}

static void draw_procs(struct term_frame *f, const struct top_model *m, int body, int cols)
{
	struct sbuf line = SBUF_INIT;
	if (body > 0) {
		add_proc_header(&line);
		term_frame_line(f, TERM_BOLD, line.buf);
	}
	size_t shown = body > 1 ? (size_t)(body - 1) : 0;
	size_t first = m->selected >= shown && shown ? m->selected - shown + 1 : 0;
	size_t name_w = cols > 32 ? (size_t)cols - 32 : 1;
	for (size_t i = first; i < m->nprocs && i < first + shown; i++) {
		sbuf_reset(&line);
		add_proc(&line, &m->procs[i], name_w);
		term_frame_line(f, i == m->selected ? TERM_REVERSE : TERM_PLAIN, line.buf);
	}
	sbuf_release(&line);
}

void top_view_draw(struct term_frame *f, const struct top_model *m, int rows, int cols)
{
	term_frame_begin(f, rows, cols);
	term_frame_line(f, TERM_REVERSE, m->header);
	if (rows > 2)
		term_frame_line(f, TERM_PLAIN, m->mode_line);
	int body = rows - 3;
	if (body > 0) {
		if (m->processes)
			draw_procs(f, m, body, f->cols);
		else
			draw_tables(f, m, body, f->cols);
	}
	while (f->row < rows - 1)
		term_frame_line(f, TERM_PLAIN, "");
	if (rows > 1)
		term_frame_line(f, TERM_PLAIN, m->status);
	term_frame_end(f, m->status_cursor >= 0 && rows > 1 ? rows - 1 : -1, m->status_cursor);
}

static void plain_table(struct sbuf *out, const struct top_model *m, const struct top_table *t, size_t top)
{
	term_fit(out, t->title, SIZE_MAX, false);
	sbuf_addstr(out, ":\n");
	term_fit_right(out, m->primary, NUM_W);
	sbuf_addch(out, ' ');
	term_fit_right(out, m->secondary, NUM_W);
	sbuf_addstr(out, "  ");
	term_fit(out, m->what, SIZE_MAX, false);
	sbuf_addch(out, '\n');
	for (size_t i = 0; i < t->n && i < top; i++) {
		add_num(out, t->rows[i].primary);
		sbuf_addch(out, ' ');
		add_num(out, t->rows[i].secondary);
		sbuf_addstr(out, "  ");
		term_fit(out, t->rows[i].name, SIZE_MAX, false);
		sbuf_addch(out, '\n');
	}
}

void top_view_plain(struct sbuf *out, const struct top_model *m, size_t top)
{
	term_fit(out, m->header, SIZE_MAX, false);
	sbuf_addch(out, '\n');
	term_fit(out, m->mode_line, SIZE_MAX, false);
	sbuf_addch(out, '\n');
	if (m->processes) {
		sbuf_addstr(out, "processes:\n");
		add_proc_header(out);
		sbuf_addch(out, '\n');
		for (size_t i = 0; i < m->nprocs && i < top; i++) {
			add_proc(out, &m->procs[i], SIZE_MAX);
			sbuf_addch(out, '\n');
		}
	}
	for (int k = 0; k < 2; k++)
		plain_table(out, m, &m->tables[k], top);
	sbuf_addch(out, '\n');
}
