/* annotate.c — the terminal, JSON and HTML views of an annotation (render/annotate.h). Shares in the views are of
 * the function's own samples (self of its self, inclusive of its inclusive), as perf annotate shows them; the JSON
 * carries the counts. */
#include "render/annotate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/redact.h"

#include "profile/label.h"
#include "render/term.h"

/* Paths and messages that name them go through the redactor (docs/design.md §3.6); labels come redacted. */
static char *shown_path(const char *s)
{
	return s ? redact_path_dup(s) : NULL;
}

static char *shown_msg(const char *s)
{
	return s ? redact_dup_message(s) : NULL;
}

/* ---- terminal ---------------------------------------------------------------------------------------------- */

/* s with tabs expanded (to 4 columns) into buf. */
static const char *untab(const char *s, char *buf, size_t n)
{
	size_t o = 0, col = 0;
	for (; s && *s && o + 5 < n; s++) {
		if (*s == '\t') {
			do
				buf[o++] = ' ';
			while (++col % 4 && o + 1 < n);
		} else {
			buf[o++] = *s;
			col++;
		}
	}
	buf[o] = '\0';
	return buf;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* The RENDER_ANNOT_HOT largest of n values (ties: the first): the smallest of them, so v >= it is hot. */
static uint64_t hot_floor(const uint64_t *v, size_t n)
{
	uint64_t top[RENDER_ANNOT_HOT] = { 0 };
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < RENDER_ANNOT_HOT; k++)
			if (v[i] > top[k]) {
				memmove(top + k + 1, top + k, (RENDER_ANNOT_HOT - 1 - k) * sizeof *top);
				top[k] = v[i];
				break;
			}
	uint64_t floor = UINT64_MAX;
	for (size_t k = 0; k < RENDER_ANNOT_HOT; k++)
		if (top[k] && top[k] < floor)
			floor = top[k];
	return floor;
}

static void fit_line(struct sbuf *out, const char *s, size_t width)
{
	term_fit(out, s, width, false);
	sbuf_addch(out, '\n');
}

static void share_cell(struct sbuf *out, uint64_t v, uint64_t whole)
{
	if (v)
		sbuf_addf(out, "%6.1f ", pct(v, whole));
	else
		sbuf_addstr(out, "       ");
}

static void text_lines(struct sbuf *out, const struct annot_func *f, size_t width)
{
	char buf[1024];
	size_t text_w = width > 26 ? width - 26 : 10;
	uint64_t selfs[4096];
	size_t n = f->nrows < 4096 ? f->nrows : 4096;
	for (size_t i = 0; i < n; i++)
		selfs[i] = f->rows[i].self;
	uint64_t floor = hot_floor(selfs, n);
	sbuf_addstr(out, "    self%  incl%   line\n");
	for (size_t i = 0; i < f->nrows; i++) {
		const struct annot_row *r = &f->rows[i];
		sbuf_addstr(out, r->self && r->self >= floor ? ">> " : "   ");
		share_cell(out, r->self, f->self);
		share_cell(out, r->incl, f->incl);
		sbuf_addf(out, "%5u | ", r->line);
		fit_line(out, r->text ? untab(r->text, buf, sizeof buf) : "", text_w);
		for (size_t k = 0; k < f->ninl; k++) {
			const struct annot_inlined *x = &f->inl[k];
			if (x->at_line != r->line)
				continue;
			sbuf_addstr(out, "                       | inlined ");
			struct sbuf t = SBUF_INIT;
			char *file = shown_path(x->file);
			sbuf_addf(&t, "%s (%s): %.1f%% of self", x->func, file && file[0] ? label_short_path(file) : "?",
				  pct(x->self, f->self));
			free(file);
			fit_line(out, t.buf, text_w > 8 ? text_w - 8 : 1);
			sbuf_release(&t);
			for (size_t j = 0; j < x->nlines; j++) {
				sbuf_addstr(out, "   ");
				share_cell(out, x->lines[j].self, f->self);
				sbuf_addf(out, "       %5u |   ", x->lines[j].line);
				const char *tx = x->texts && x->texts[j] ? x->texts[j] : "";
				fit_line(out, untab(tx, buf, sizeof buf), text_w > 2 ? text_w - 2 : 1);
			}
		}
	}
}

static void text_insns(struct sbuf *out, const struct annot_func *f, size_t width)
{
	uint64_t selfs[8192];
	size_t n = f->ninsns < 8192 ? f->ninsns : 8192;
	for (size_t i = 0; i < n; i++)
		selfs[i] = f->insns[i].self;
	uint64_t floor = hot_floor(selfs, n);
	size_t text_w = width > 36 ? width - 36 : 10;
	sbuf_addstr(out, "    self%  incl%  address   line\n");
	for (size_t i = 0; i < f->ninsns; i++) {
		const struct annot_insn *in = &f->insns[i];
		sbuf_addstr(out, in->self && in->self >= floor ? ">> " : "   ");
		share_cell(out, in->self, f->self);
		share_cell(out, in->incl, f->incl);
		char addr[32];
		if (f->nameless || !f->asm_name)
			snprintf(addr, sizeof addr, "+0x%llx", (unsigned long long)(in->addr - f->asm_start));
		else
			snprintf(addr, sizeof addr, "%llx", (unsigned long long)in->addr);
		sbuf_addf(out, "%-9s ", addr);
		if (in->line)
			sbuf_addf(out, "%5u", in->line);
		else
			sbuf_addstr(out, "     ");
		sbuf_addstr(out, in->is_target ? " *" : "  ");
		struct sbuf t = SBUF_INIT;
		sbuf_addstr(&t, in->text);
		if (in->jump && in->target)
			sbuf_addf(&t, "  -> +0x%llx", (unsigned long long)(in->target - f->asm_start));
		if (in->call && in->incl)
			sbuf_addf(&t, "  ; %s", in->callee ? in->callee : "?");
		fit_line(out, t.buf, text_w);
		sbuf_release(&t);
	}
}

void render_annot_text(struct sbuf *out, const struct annot_result *r, size_t width)
{
	if (width < 60)
		width = 60;
	for (size_t i = 0; i < r->n; i++) {
		const struct annot_func *f = &r->funcs[i];
		struct sbuf t = SBUF_INIT;
		if (i)
			sbuf_addch(out, '\n');
		fit_line(out, f->label, width);
		sbuf_addf(&t, "  self %llu (%.1f%%), inclusive %llu (%.1f%%) of %llu %s", (unsigned long long)f->self,
			  pct(f->self, r->total), (unsigned long long)f->incl, pct(f->incl, r->total),
			  (unsigned long long)r->total, r->unit);
		fit_line(out, t.buf, width);
		sbuf_reset(&t);
		char *src = shown_path(f->source), *why = shown_msg(f->source_missing);
		if (src)
			sbuf_addf(&t, "source: %s", src);
		else
			sbuf_addf(&t, "source: missing (%s)", why ? why : "?");
		free(src);
		free(why);
		fit_line(out, t.buf, width);
		sbuf_release(&t);
		if (f->nrows)
			text_lines(out, f, width);
		else if (!f->ninsns)
			sbuf_addstr(out, "  (no line information)\n");
		if (f->no_addr && f->naddrs == 0)
			sbuf_addstr(out, "  (the profile carries no instruction addresses: lines only)\n");
		if (f->ninsns) {
			struct sbuf h = SBUF_INIT;
			sbuf_addf(&h, "instructions of %s (a * marks a jump target; ; names a call's callee):",
				  f->asm_name ? f->asm_name : f->label);
			fit_line(out, h.buf, width);
			sbuf_release(&h);
			text_insns(out, f, width);
		} else if (f->asm_missing) {
			struct sbuf h = SBUF_INIT;
			char *am = shown_msg(f->asm_missing);
			sbuf_addf(&h, "instructions: none (%s)", am ? am : "?");
			free(am);
			fit_line(out, h.buf, width);
			sbuf_release(&h);
		}
	}
	if (!r->n)
		sbuf_addstr(out, "(no function matched)\n");
}

/* ---- JSON (plumb.annotate.v1) --------------------------------------------------------------------------------- */

static void jstr(struct sbuf *out, const char *s)
{
	if (s)
		sbuf_add_json_text(out, s, strlen(s));
	else
		sbuf_addstr(out, "null");
}

static void jpath(struct sbuf *out, const char *s)
{
	char *r = s && s[0] ? shown_path(s) : NULL;
	jstr(out, s && s[0] ? (r ? r : "?") : NULL);
	free(r);
}

static void jmsg(struct sbuf *out, const char *s)
{
	char *r = shown_msg(s);
	jstr(out, s ? (r ? r : "?") : NULL);
	free(r);
}

static void json_inlined(struct sbuf *out, const struct annot_func *f, uint32_t line)
{
	bool first = true;
	sbuf_addstr(out, ",\"inlined\":[");
	for (size_t k = 0; k < f->ninl; k++) {
		const struct annot_inlined *x = &f->inl[k];
		if (x->at_line != line)
			continue;
		sbuf_addstr(out, first ? "{\"function\":" : ",{\"function\":");
		first = false;
		jstr(out, x->func);
		sbuf_addstr(out, ",\"file\":");
		jpath(out, x->file);
		sbuf_addf(out, ",\"samples\":%llu,\"lines\":[", (unsigned long long)x->self);
		for (size_t j = 0; j < x->nlines; j++) {
			sbuf_addf(out, "%s{\"line\":%u,\"samples\":%llu,\"text\":", j ? "," : "", x->lines[j].line,
				  (unsigned long long)x->lines[j].self);
			jstr(out, x->texts ? x->texts[j] : NULL);
			sbuf_addch(out, '}');
		}
		sbuf_addstr(out, "]}");
	}
	sbuf_addch(out, ']');
}

static void json_insn(struct sbuf *out, const struct annot_func *f, uint64_t addr, uint32_t line, uint64_t self,
		      uint64_t incl, const char *text, const char *callee, uint64_t target, bool is_target)
{
	sbuf_addf(out, "{\"address\":%llu,\"offset\":", (unsigned long long)addr);
	uint64_t start = f->ninsns ? f->asm_start : f->start;
	if (start && addr >= start)
		sbuf_addf(out, "%llu", (unsigned long long)(addr - start));
	else
		sbuf_addstr(out, "null");
	sbuf_addstr(out, ",\"line\":");
	if (line)
		sbuf_addf(out, "%u", line);
	else
		sbuf_addstr(out, "null");
	sbuf_addf(out, ",\"samples\":%llu,\"inclusive\":%llu,\"text\":", (unsigned long long)self, (unsigned long long)incl);
	jstr(out, text);
	sbuf_addstr(out, ",\"call\":");
	jstr(out, callee);
	sbuf_addstr(out, ",\"target\":");
	if (target)
		sbuf_addf(out, "%llu", (unsigned long long)target);
	else
		sbuf_addstr(out, "null");
	sbuf_addf(out, ",\"branch_target\":%s}", is_target ? "true" : "false");
}

static void json_func(struct sbuf *out, const struct annot_func *f)
{
	sbuf_addstr(out, "{\"function\":");
	jstr(out, f->name);
	sbuf_addstr(out, ",\"label\":");
	jstr(out, f->label);
	sbuf_addstr(out, ",\"file\":");
	jpath(out, f->file);
	sbuf_addstr(out, ",\"module\":");
	jpath(out, f->module);
	sbuf_addf(out, ",\"samples\":%llu,\"inclusive\":%llu,\"no_address\":%llu,\"source\":", (unsigned long long)f->self,
		  (unsigned long long)f->incl, (unsigned long long)f->no_addr);
	jpath(out, f->source);
	sbuf_addstr(out, ",\"source_missing\":");
	jmsg(out, f->source_missing);
	sbuf_addstr(out, ",\"lines\":[");
	for (size_t i = 0; i < f->nrows; i++) {
		const struct annot_row *r = &f->rows[i];
		sbuf_addf(out, "%s{\"line\":%u,\"samples\":%llu,\"inclusive\":%llu,\"text\":", i ? "," : "", r->line,
			  (unsigned long long)r->self, (unsigned long long)r->incl);
		jstr(out, r->text);
		json_inlined(out, f, r->line);
		sbuf_addch(out, '}');
	}
	sbuf_addstr(out, "],\"instructions\":[");
	if (f->ninsns) {
		for (size_t i = 0; i < f->ninsns; i++) {
			const struct annot_insn *in = &f->insns[i];
			if (i)
				sbuf_addch(out, ',');
			json_insn(out, f, in->addr, in->line, in->self, in->incl, in->text, in->callee, in->target,
				  in->is_target);
		}
	} else {
		for (size_t i = 0; i < f->naddrs; i++) {
			const struct annot_addr *a = &f->addrs[i];
			if (i)
				sbuf_addch(out, ',');
			json_insn(out, f, a->addr, 0, a->self, a->incl, NULL, a->callee, 0, false);
		}
	}
	sbuf_addstr(out, "],\"disassembly\":");
	jstr(out, f->ninsns ? (f->asm_name ? f->asm_name : f->label) : NULL);
	sbuf_addstr(out, ",\"asm_missing\":");
	jmsg(out, f->asm_missing);
	sbuf_addch(out, '}');
}

void render_annot_json(struct sbuf *out, const struct annot_result *r)
{
	sbuf_addstr(out, "{\"schema\":\"plumb.annotate.v1\",\"unit\":");
	jstr(out, r->unit);
	sbuf_addf(out, ",\"total\":%llu,\"functions\":[", (unsigned long long)r->total);
	for (size_t i = 0; i < r->n; i++) {
		if (i)
			sbuf_addch(out, ',');
		json_func(out, &r->funcs[i]);
	}
	sbuf_addstr(out, "]}\n");
}

/* ---- HTML ------------------------------------------------------------------------------------------------------ */

static void html(struct sbuf *out, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': sbuf_addstr(out, "&amp;"); break;
		case '<': sbuf_addstr(out, "&lt;"); break;
		case '>': sbuf_addstr(out, "&gt;"); break;
		case '"': sbuf_addstr(out, "&quot;"); break;
		case '\t': sbuf_addstr(out, "    "); break;
		default:
			if (c < 0x20 || c == 0x7f)
				sbuf_addch(out, '?');
			else
				sbuf_addch(out, (char)c);
		}
	}
}

/* A row's background: white to red by its share of the function's self samples. */
static void heat(struct sbuf *out, uint64_t v, uint64_t whole)
{
	double s = whole ? (double)v / (double)whole : 0;
	int g = 255 - (int)(s * 200 + 0.5);
	sbuf_addf(out, " style=\"background:rgb(255,%d,%d)\"", g, g);
}

static void html_func(struct sbuf *out, const struct annot_func *f, size_t idx)
{
	sbuf_addf(out, "<h2 id=\"f%zu\">", idx);
	html(out, f->label);
	sbuf_addf(out, "</h2>\n<p>%llu self, %llu inclusive. Source: ", (unsigned long long)f->self,
		  (unsigned long long)f->incl);
	char *shown = f->source ? shown_path(f->source) : shown_msg(f->source_missing);
	html(out, shown ? shown : "?");
	free(shown);
	sbuf_addstr(out, "</p>\n<table><tr><th>self %</th><th>incl %</th><th>line</th><th>source</th></tr>\n");
	for (size_t i = 0; i < f->nrows; i++) {
		const struct annot_row *r = &f->rows[i];
		sbuf_addstr(out, "<tr");
		heat(out, r->self, f->self);
		sbuf_addf(out, "><td>%.1f</td><td>%.1f</td><td>%u</td><td><pre>", pct(r->self, f->self),
			  pct(r->incl, f->incl), r->line);
		html(out, r->text);
		sbuf_addstr(out, "</pre></td></tr>\n");
		for (size_t k = 0; k < f->ninl; k++) {
			const struct annot_inlined *x = &f->inl[k];
			if (x->at_line != r->line)
				continue;
			sbuf_addstr(out, "<tr class=\"inl\"><td></td><td></td><td></td><td>inlined ");
			html(out, x->func);
			sbuf_addstr(out, "</td></tr>\n");
			for (size_t j = 0; j < x->nlines; j++) {
				sbuf_addstr(out, "<tr class=\"inl\"");
				heat(out, x->lines[j].self, f->self);
				sbuf_addf(out, "><td>%.1f</td><td></td><td>%u</td><td><pre>  ", pct(x->lines[j].self, f->self),
					  x->lines[j].line);
				html(out, x->texts ? x->texts[j] : NULL);
				sbuf_addstr(out, "</pre></td></tr>\n");
			}
		}
	}
	sbuf_addstr(out, "</table>\n");
	if (!f->ninsns)
		return;
	sbuf_addstr(out, "<h3>instructions</h3>\n<table><tr><th>self %</th><th>incl %</th><th>address</th><th>line</th>"
			 "<th>instruction</th></tr>\n");
	for (size_t i = 0; i < f->ninsns; i++) {
		const struct annot_insn *in = &f->insns[i];
		sbuf_addf(out, "<tr id=\"f%zu-%llx\"", idx, (unsigned long long)in->addr);
		heat(out, in->self, f->self);
		sbuf_addf(out, "><td>%.1f</td><td>%.1f</td><td>+0x%llx</td><td>", pct(in->self, f->self),
			  pct(in->incl, f->incl), (unsigned long long)(in->addr - f->asm_start));
		if (in->line)
			sbuf_addf(out, "%u", in->line);
		sbuf_addstr(out, in->is_target ? "</td><td><pre>* " : "</td><td><pre>  ");
		html(out, in->text);
		if (in->jump && in->target)
			sbuf_addf(out, "  <a href=\"#f%zu-%llx\">-&gt; +0x%llx</a>", idx, (unsigned long long)in->target,
				  (unsigned long long)(in->target - f->asm_start));
		if (in->call && in->callee) {
			sbuf_addstr(out, "  ; ");
			html(out, in->callee);
		}
		sbuf_addstr(out, "</pre></td></tr>\n");
	}
	sbuf_addstr(out, "</table>\n");
}

void render_annot_html(struct sbuf *out, const struct annot_result *r, const char *title)
{
	sbuf_addstr(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>");
	html(out, title);
	sbuf_addstr(out, "</title><style>body{font-family:sans-serif}table{border-collapse:collapse}td{padding:0 6px;"
			 "font-family:monospace;text-align:right}td:last-child{text-align:left}pre{margin:0}"
			 "tr.inl td:last-child{padding-left:3em}</style></head><body>\n<h1>");
	html(out, title);
	sbuf_addstr(out, "</h1>\n");
	for (size_t i = 0; i < r->n; i++)
		html_func(out, &r->funcs[i], i);
	sbuf_addstr(out, "</body></html>\n");
}
