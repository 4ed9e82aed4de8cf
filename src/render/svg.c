/* svg.c — the SVG document of a flame graph (render/svg.h): flamegraph.pl's layout and interactions (hover,
 * click to zoom, Ctrl-F to search with the matched share), every string escaped so the document is always
 * well-formed XML, and every text in black or white, whichever reads on its box's fill (render/colour.c). */
#include "render/svg.h"

#include <math.h>
#include <string.h>

#include "base/str.h"
#include "base/utf8.h"

#define FRAME_H 16
#define FONT_W 7.08 /* average glyph width of 12px Verdana */
#define XPAD 10
#define YPAD_TOP 44
#define YPAD_BOTTOM 34

/* Appends s as XML character data: markup characters escaped, control bytes and invalid UTF-8 replaced
 * with '?', so the document is always well-formed. */
static void xml_text(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		unsigned c = *p;
		if (c < 0x80) {
			switch (c) {
			case '&': fputs("&amp;", out); break;
			case '<': fputs("&lt;", out); break;
			case '>': fputs("&gt;", out); break;
			case '"': fputs("&quot;", out); break;
			case '\'': fputs("&apos;", out); break;
			default: fputc(c < 0x20 ? '?' : (int)c, out);
			}
			p++;
			continue;
		}
		size_t len = utf8_seq_len(p, (size_t)(end - p));
		/* U+FFFE and U+FFFF are not XML characters */
		if (len == 3 && p[0] == 0xef && p[1] == 0xbf && (p[2] == 0xbe || p[2] == 0xbf))
			len = 0;
		if (len) {
			fwrite(p, 1, len, out);
			p += len;
		} else {
			fputc('?', out);
			p++;
		}
	}
}

/* Bytes of the first `chars` characters of s (UTF-8 aware). */
static size_t utf8_prefix(const char *s, size_t n, size_t chars)
{
	size_t i = 0;
	while (i < n && chars) {
		i++;
		while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		chars--;
	}
	return i;
}

static size_t utf8_chars(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

static const char js[] =
	"var svg, frames, details, matchedtxt, unzoombtn, W, icicle, searching = null;\n"
	"var XPAD = " "10" ", FONTW = 7.08, EPS = 0.02;\n"
	"function init(evt) {\n"
	"  svg = document.documentElement; frames = document.getElementById('frames');\n"
	"  details = document.getElementById('details').firstChild; matchedtxt = document.getElementById('matched').firstChild;\n"
	"  unzoombtn = document.getElementById('unzoom'); W = +svg.getAttribute('width');\n"
	"  icicle = frames.getAttribute('data-icicle') === '1';\n"
	"  var gs = frames.getElementsByTagName('g');\n"
	"  for (var i = 0; i < gs.length; i++) { var r = gs[i].getElementsByTagName('rect')[0];\n"
	"    r.ox = +r.getAttribute('x'); r.ow = +r.getAttribute('width'); r.ofill = r.getAttribute('fill'); }\n"
	"  frames.addEventListener('mouseover', function (e) { var g = find_g(e.target); if (g) details.nodeValue = g.getElementsByTagName('title')[0].textContent; });\n"
	"  frames.addEventListener('mouseout', function (e) { details.nodeValue = ' '; });\n"
	"  frames.addEventListener('click', function (e) { var g = find_g(e.target); if (!g) return;\n"
	"    var a = g.getAttribute('data-annotate'); if (a && e.shiftKey) { window.open(a); return; } zoom(g); });\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.keyCode === 70)) { e.preventDefault(); search_prompt(); }\n"
	"    else if (e.key === 'Escape') { unzoom(); reset_search(); } });\n"
	"}\n"
	"function find_g(n) { while (n && n !== frames) { if (n.tagName === 'g') return n; n = n.parentNode; } return null; }\n"
	"function label_of(g) { var t = g.getElementsByTagName('title')[0].textContent; var i = t.lastIndexOf(' ('); return i < 0 ? t : t.substring(0, i); }\n"
	"function fit(g) { var r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('text')[0];\n"
	"  var w = +r.getAttribute('width'), n = Math.floor((w - 6) / FONTW), s = label_of(g);\n"
	"  t.setAttribute('x', (+r.getAttribute('x') + 3).toFixed(2));\n"
	"  t.textContent = n < 3 ? '' : (s.length <= n ? s : s.substring(0, n - 2) + '..'); }\n"
	"function place(g, x, w) { var r = g.getElementsByTagName('rect')[0]; r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2)); fit(g); }\n"
	"function zoom(g) {\n"
	"  var r = g.getElementsByTagName('rect')[0], x0 = r.ox, w0 = r.ow, y0 = +r.getAttribute('y');\n"
	"  var scale = (W - 2 * XPAD) / w0, gs = frames.getElementsByTagName('g');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var gi = gs[i], ri = gi.getElementsByTagName('rect')[0], y = +ri.getAttribute('y');\n"
	"    gi.classList.remove('hide'); gi.classList.remove('parent');\n"
	"    var above = icicle ? y < y0 : y > y0;\n"
	"    if (ri.ox + ri.ow <= x0 + EPS || ri.ox >= x0 + w0 - EPS) { gi.classList.add('hide'); continue; }\n"
	"    if (above) {\n"
	"      if (ri.ox <= x0 + EPS && ri.ox + ri.ow >= x0 + w0 - EPS) { gi.classList.add('parent'); place(gi, XPAD, W - 2 * XPAD); }\n"
	"      else gi.classList.add('hide');\n"
	"    } else place(gi, XPAD + (ri.ox - x0) * scale, ri.ow * scale);\n"
	"  }\n"
	"  unzoombtn.classList.remove('hide');\n"
	"}\n"
	"function unzoom() { var gs = frames.getElementsByTagName('g');\n"
	"  for (var i = 0; i < gs.length; i++) { var r = gs[i].getElementsByTagName('rect')[0];\n"
	"    gs[i].classList.remove('hide'); gs[i].classList.remove('parent'); place(gs[i], r.ox, r.ow); }\n"
	"  unzoombtn.classList.add('hide'); }\n"
	"function search_prompt() { var t = prompt('Search for (regular expression):', searching || ''); if (t) search(t); else reset_search(); }\n"
	"function search(term) {\n"
	"  var re; try { re = new RegExp(term); } catch (err) { matchedtxt.nodeValue = 'bad regular expression'; return; }\n"
	"  searching = term; var gs = frames.getElementsByTagName('g'), spans = [];\n"
	"  for (var i = 0; i < gs.length; i++) { var r = gs[i].getElementsByTagName('rect')[0];\n"
	"    var t = gs[i].getElementsByTagName('text')[0];\n"
	"    if (re.test(label_of(gs[i]))) { r.setAttribute('fill', 'rgb(230,0,230)'); t.setAttribute('style', 'fill: rgb(0,0,0)'); spans.push([r.ox, r.ox + r.ow]); }\n"
	"    else { r.setAttribute('fill', r.ofill); t.setAttribute('style', ''); } }\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  var sum = 0, end = -1;\n"
	"  for (var j = 0; j < spans.length; j++) { var a = Math.max(spans[j][0], end), b = spans[j][1]; if (b > a) sum += b - a; if (b > end) end = b; }\n"
	"  matchedtxt.nodeValue = 'Matched: ' + (100 * sum / (W - 2 * XPAD)).toFixed(1) + '%';\n"
	"  document.getElementById('search').classList.add('show');\n"
	"}\n"
	"function reset_search() { searching = null; var gs = frames.getElementsByTagName('g');\n"
	"  for (var i = 0; i < gs.length; i++) { var r = gs[i].getElementsByTagName('rect')[0]; r.setAttribute('fill', r.ofill);\n"
	"    gs[i].getElementsByTagName('text')[0].setAttribute('style', ''); }\n"
	"  matchedtxt.nodeValue = ' '; document.getElementById('search').classList.remove('show'); }\n";

static const char css[] =
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	"#title { font-size: 17px; text-anchor: middle; }\n"
	"#subtitle { text-anchor: middle; fill: rgb(110,110,110); }\n"
	"#search, #unzoom { cursor: pointer; }\n"
	"#search.show { opacity: 1; fill: rgb(200,0,200); }\n"
	"#matched { text-anchor: end; }\n"
	".hide { display: none; }\n"
	".parent { opacity: 0.5; }\n"
	"#frames > g:hover > rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; }\n"
	"#frames text { pointer-events: none; }\n";

static double pct(uint64_t part, uint64_t total)
{
	return total ? 100.0 * (double)part / (double)total : 0.0;
}

/* The document's head: the header, style, script, background, titles and the status lines. */
static void write_head(FILE *out, const struct svg_doc *d, unsigned W, unsigned H)
{
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		     "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
		     "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" onload=\"init(evt)\" "
		     "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		W, H, W, H);
	fputs("<!-- Flame graph drawn by plumb. Hover a frame for its samples and share, click to zoom, "
	      "Ctrl-F or Search to highlight frames (the matched share is shown bottom right), Escape resets. -->\n",
	      out);
	fprintf(out, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		     "<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"%s\" offset=\"95%%\"/>"
		     "</linearGradient></defs>\n",
		d->o->before ? "#e0e0ff" : "#eeeeb0");
	fprintf(out, "<style type=\"text/css\">\n%s</style>\n", css);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", js);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#background)\"/>\n", W, H);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"24\">", W / 2.0);
	xml_text(out, d->title, strlen(d->title));
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"40\">", W / 2.0);
	xml_text(out, d->subtitle, strlen(d->subtitle));
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD, H - 10);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\" onclick=\"unzoom()\">Reset Zoom</text>\n",
		XPAD);
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"24\" onclick=\"search_prompt()\">Search</text>\n",
		W - XPAD - 60);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n", W - XPAD, H - 10);
}

/* The largest change of share among the boxes: the differential scale's end. */
static double max_change(const struct svg_doc *d)
{
	double maxd = 0;
	for (size_t i = 0; i < d->boxes->n; i++) {
		const struct box *b = &d->boxes->v[i];
		double c = fabs(pct(b->w, d->total) - pct(b->wb, d->total_b));
		if (c > maxd)
			maxd = c;
	}
	return maxd;
}

/* One frame: its group, title, rectangle and text. */
static void write_box(FILE *out, const struct svg_doc *d, const struct box *b, double maxd, unsigned H)
{
	const struct interner *L = &d->labels->L;
	bool root = b->label == FTREE_NO_LABEL;
	const char *s = root ? "all" : intern_str(L, b->label);
	size_t sl = root ? 3 : intern_len(L, b->label);
	unsigned W = d->o->width ? d->o->width : 1200;
	double ppu = (double)(W - 2 * XPAD) / (double)d->total;
	double x = XPAD + (double)b->x * ppu, w = (double)b->w * ppu;
	unsigned y = d->o->inverted ? YPAD_TOP + b->depth * FRAME_H : H - YPAD_BOTTOM - (b->depth + 1) * FRAME_H;
	char nbuf[40], bbuf[40];
	str_commas(nbuf, sizeof nbuf, b->w);
	const char *link = !root && d->o->annotate_link ? d->o->annotate_link(d->o->annotate_ctx, s, sl) : NULL;
	if (link) {
		fputs("<g data-annotate=\"", out);
		xml_text(out, link, strlen(link));
		fputs("\"><title>", out);
	} else {
		fputs("<g><title>", out);
	}
	xml_text(out, s, sl);
	fprintf(out, " (%s %s, %.2f%%", nbuf, d->unit, pct(b->w, d->total));
	int rgb[3];
	if (d->o->before) {
		double c = pct(b->w, d->total) - pct(b->wb, d->total_b);
		str_commas(bbuf, sizeof bbuf, b->wb);
		fprintf(out, "; before %s, %.2f%%; %+.2f points", bbuf, pct(b->wb, d->total_b), c);
		flame_diff_rgb(maxd > 0 ? c / maxd : 0, rgb);
	} else {
		flame_frame_rgb(d->o->colors ? d->o->colors : "hot", s, sl, root ? FRAME_USER : d->labels->kind[b->label],
				rgb);
	}
	fprintf(out, "%s)</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" "
		     "rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%u\"%s>",
		link ? "; shift-click: its annotation" : "", x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2], x + 3, y + FRAME_H - 5,
		flame_text_white(rgb) ? " fill=\"rgb(255,255,255)\"" : "");
	long fit = (long)((w - 6) / FONT_W);
	if (fit >= 3) {
		size_t nc = utf8_chars(s, sl);
		if (nc <= (size_t)fit) {
			xml_text(out, s, sl);
		} else {
			xml_text(out, s, utf8_prefix(s, sl, (size_t)fit - 2));
			fputs("..", out);
		}
	}
	fputs("</text></g>\n", out);
}

void svg_write(FILE *out, const struct svg_doc *d)
{
	unsigned W = d->o->width ? d->o->width : 1200;
	uint32_t levels = d->boxes->n ? d->boxes->max_depth + 1 : 3;
	unsigned H = YPAD_TOP + YPAD_BOTTOM + levels * FRAME_H;
	write_head(out, d, W, H);
	if (!d->total) {
		fprintf(out, "<text x=\"%.1f\" y=\"%u\" style=\"text-anchor: middle\">No samples: the profile is empty"
			     "</text>\n<g id=\"frames\" data-icicle=\"%d\"></g>\n</svg>\n",
			W / 2.0, YPAD_TOP + FRAME_H + 12, d->o->inverted ? 1 : 0);
		return;
	}
	double maxd = d->o->before ? max_change(d) : 0;
	fprintf(out, "<g id=\"frames\" data-icicle=\"%d\" data-total=\"%llu\">\n", d->o->inverted ? 1 : 0,
		(unsigned long long)d->total);
	for (size_t i = 0; i < d->boxes->n; i++)
		write_box(out, d, &d->boxes->v[i], maxd, H);
	fputs("</g>\n</svg>\n", out);
}
