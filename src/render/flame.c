/* flame.c — flame graphs as self-contained interactive SVG.
 *
 * Frames are merged by their (redacted) label text into one trie shared by the `after` and `before` profiles,
 * so a differential graph compares the same paths. A flame graph lays each node's children out in label order
 * (as flamegraph.pl's sorted input does); a flame chart walks samples in time order and merges only adjacent
 * equal prefixes. Boxes narrower than min_width pixels are not drawn, which keeps big profiles small.
 * Output is a pure function of the input: no times, colours from a hash of the label. */
#include "render/flame.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/intern.h"
#include "base/sbuf.h"
#include "base/utf8.h"
#include "profile/label.h"

#define FRAME_H 16
#define FONT_SIZE 12
#define FONT_W 7.08 /* average glyph width of 12px Verdana */
#define XPAD 10
#define YPAD_TOP 44
#define YPAD_BOTTOM 34

/* ---- labels shared by both profiles ---- */

/* Labels are interned without copies (INTERNER_BORROW_INIT): they point into the profiles' label tables, which
 * outlive the interner. */
static uint32_t lab_intern(struct interner *L, const char *s, size_t len)
{
	uint32_t id = intern(L, s, len, NULL);
	return id == INTERN_NOMEM ? UINT32_MAX : id;
}

/* ---- the merged trie ---- */

struct trie {
	uint32_t *parent, *label, *depth;
	uint64_t *tot_a, *tot_b;
	size_t n, cap;
	struct hmap index; /* parent << 32 | label -> node */
	bool direct;       /* built from one profile's tree without the index: no further profile may join */
};

/* Makes room for `need` nodes. */
static bool trie_grow(struct trie *T, size_t need)
{
	size_t nc = grow_cap(need, T->cap);
	if (!REALLOC_ARRAY(T->parent, nc) || !REALLOC_ARRAY(T->label, nc) || !REALLOC_ARRAY(T->depth, nc) ||
	    !REALLOC_ARRAY(T->tot_a, nc) || !REALLOC_ARRAY(T->tot_b, nc))
		return false;
	T->cap = nc;
	return true;
}

static uint32_t trie_child(struct trie *T, uint32_t parent, uint32_t label)
{
	uint64_t key = ((uint64_t)parent << 32) | label;
	uint32_t id;
	if (hmap_get(&T->index, key, &id))
		return id;
	if (T->n == T->cap && !trie_grow(T, T->n + 1))
		return UINT32_MAX;
	id = (uint32_t)T->n++;
	T->parent[id] = parent;
	T->label[id] = label;
	T->depth[id] = T->depth[parent] + 1;
	T->tot_a[id] = T->tot_b[id] = 0;
	if (!hmap_put(&T->index, key, id))
		return UINT32_MAX;
	return id;
}

static void trie_release(struct trie *T)
{
	free(T->parent);
	free(T->label);
	free(T->depth);
	free(T->tot_a);
	free(T->tot_b);
	hmap_release(&T->index);
}

/* Maps every stack node of p to its trie node (parents come before children in both). Returns a malloc'd
 * array indexed by stack id, or NULL when out of memory. */
static uint32_t *map_profile(struct trie *T, struct interner *L, const struct profile *p, struct label_table **lt_out,
			     unsigned flags, bool allow_direct)
{
	struct label_table *lt = label_table_build(p, flags);
	if (!lt)
		return NULL;
	*lt_out = lt;
	size_t nf = profile_nframes(p), ns = profile_nstacks(p);
	uint32_t *flab = malloc((nf ? nf : 1) * sizeof *flab);
	uint32_t *map = malloc((ns ? ns : 1) * sizeof *map);
	if (!flab || !map)
		goto fail;
	for (size_t f = 0; f < nf; f++)
		if ((flab[f] = lab_intern(L, lt->labels[f], lt->lens[f])) == UINT32_MAX)
			goto fail;
	map[0] = 0;
	if (T->n == 1 && intern_count(L) == nf && allow_direct) {
		/* the first profile and every frame has its own label: its prefix tree is the trie, no merging */
		if (T->cap < ns && !trie_grow(T, ns))
			goto fail;
		for (size_t s = 1; s < ns; s++) {
			uint32_t par = profile_stack_parent(p, (uint32_t)s);
			uint32_t fr = profile_stack_frame(p, (uint32_t)s);
			if (par >= s || fr >= nf)
				goto fail;
			map[s] = (uint32_t)s;
			T->parent[s] = par;
			T->label[s] = flab[fr];
			T->depth[s] = T->depth[par] + 1;
			T->tot_a[s] = T->tot_b[s] = 0;
		}
		T->n = ns;
		T->direct = true;
		free(flab);
		return map;
	}
	for (size_t s = 1; s < ns; s++) {
		uint32_t par = profile_stack_parent(p, (uint32_t)s);
		uint32_t fr = profile_stack_frame(p, (uint32_t)s);
		if (par >= s || fr >= nf || (map[s] = trie_child(T, map[par], flab[fr])) == UINT32_MAX)
			goto fail;
	}
	free(flab);
	return map;
fail:
	free(flab);
	free(map);
	return NULL;
}

/* ---- boxes ---- */

struct box {
	uint64_t x, w, wb;
	uint32_t depth, label;
};

struct boxes {
	struct box *v;
	size_t n, cap;
	uint32_t max_depth;
};

static bool box_add(struct boxes *B, uint64_t x, uint64_t w, uint64_t wb, uint32_t depth, uint32_t label)
{
	if (!ALLOC_GROW(B->v, B->n + 1, B->cap))
		return false;
	B->v[B->n++] = (struct box){ x, w, wb, depth, label };
	if (depth > B->max_depth)
		B->max_depth = depth;
	return true;
}

/* Label ids in byte order of their text (ctx: the interner). */
static int cmp_label_ids(const void *a, const void *b, void *ctx)
{
	const struct interner *L = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t lx = intern_len(L, x), ly = intern_len(L, y);
	int c = memcmp(intern_str(L, x), intern_str(L, y), lx < ly ? lx : ly);
	if (c)
		return c;
	return lx < ly ? -1 : lx > ly;
}

struct children_order {
	const uint32_t *rank;  /* label id -> rank in byte order */
	const uint32_t *label; /* trie node -> label id */
};

/* Trie nodes by their label's rank (ctx: a struct children_order). */
static int cmp_children(const void *a, const void *b, void *ctx)
{
	const struct children_order *o = ctx;
	uint32_t x = o->rank[o->label[*(const uint32_t *)a]], y = o->rank[o->label[*(const uint32_t *)b]];
	return x < y ? -1 : x > y;
}

/* Flame graph layout: children in label order, depth-first; narrow subtrees pruned. */
static bool layout_graph(struct trie *T, struct interner *L, double min_units, struct boxes *B)
{
	size_t N = T->n;
	bool ok = false;
	uint32_t *rank = malloc((intern_count(L) ? intern_count(L) : 1) * sizeof *rank);
	uint32_t *order = malloc((intern_count(L) ? intern_count(L) : 1) * sizeof *order);
	uint32_t *first = calloc(N + 1, sizeof *first);
	uint32_t *kids = malloc((N ? N : 1) * sizeof *kids);
	uint32_t *fill = NULL;
	struct {
		uint32_t node;
		uint64_t x;
	} *stack = NULL;
	if (!rank || !order || !first || !kids)
		goto out;
	for (size_t i = 0; i < intern_count(L); i++)
		order[i] = (uint32_t)i;
	qsort_r(order, intern_count(L), sizeof *order, cmp_label_ids, L);
	for (size_t i = 0; i < intern_count(L); i++)
		rank[order[i]] = (uint32_t)i;
	for (size_t n = 1; n < N; n++)
		first[T->parent[n] + 1]++;
	for (size_t n = 0; n < N; n++)
		first[n + 1] += first[n];
	if (!(fill = malloc((N ? N : 1) * sizeof *fill)))
		goto out;
	memcpy(fill, first, N * sizeof *fill);
	for (size_t n = 1; n < N; n++)
		kids[fill[T->parent[n]]++] = (uint32_t)n;
	struct children_order co = { rank, T->label };
	for (size_t n = 0; n < N; n++)
		if (first[n + 1] - first[n] > 1)
			qsort_r(kids + first[n], first[n + 1] - first[n], sizeof *kids, cmp_children, &co);
	if (!(stack = malloc((N ? N : 1) * sizeof *stack)))
		goto out;
	size_t sp = 0;
	stack[sp].node = 0;
	stack[sp++].x = 0;
	while (sp) {
		uint32_t n = stack[--sp].node;
		uint64_t x = stack[sp].x;
		if (!box_add(B, x, T->tot_a[n], T->tot_b[n], T->depth[n], n ? T->label[n] : UINT32_MAX))
			goto out;
		/* push children right to left so they come out left to right */
		uint64_t end = x;
		for (uint32_t k = first[n]; k < first[n + 1]; k++)
			end += T->tot_a[kids[k]];
		for (uint32_t k = first[n + 1]; k > first[n]; k--) {
			uint32_t c = kids[k - 1];
			end -= T->tot_a[c];
			if (T->tot_a[c] == 0 || (double)T->tot_a[c] < min_units)
				continue;
			stack[sp].node = c;
			stack[sp++].x = end;
		}
	}
	ok = true;
out:
	free(rank);
	free(order);
	free(first);
	free(kids);
	free(fill);
	free(stack);
	return ok;
}

struct seq {
	uint32_t node;  /* trie node */
	uint64_t time;
	uint64_t weight;
	size_t pos;
};

static int cmp_seq_time(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Flame chart: samples in order; a box spans adjacent samples that share its whole prefix. */
static bool layout_chart(struct trie *T, struct seq *seq, size_t nseq, double min_units, struct boxes *B)
{
	size_t cap = 64, open_n = 0;
	struct {
		uint32_t node;
		uint64_t x, w;
	} *open = malloc(cap * sizeof *open);
	uint32_t *path = malloc(cap * sizeof *path);
	uint64_t x = 0, total = 0;
	bool ok = false;
	if (!open || !path)
		goto out;
	for (size_t i = 0; i < nseq; i++) {
		uint32_t d = T->depth[seq[i].node];
		if (d > cap) {
			size_t nc = grow_cap(d, cap);
			if (!REALLOC_ARRAY(open, nc) || !REALLOC_ARRAY(path, nc))
				goto out;
			cap = nc;
		}
		uint32_t k = d;
		for (uint32_t n = seq[i].node; n; n = T->parent[n])
			path[--k] = n;
		size_t common = 0;
		while (common < open_n && common < d && open[common].node == path[common])
			common++;
		while (open_n > common) {
			open_n--;
			if ((double)open[open_n].w >= min_units &&
			    !box_add(B, open[open_n].x, open[open_n].w, 0, T->depth[open[open_n].node],
				     T->label[open[open_n].node]))
				goto out;
		}
		for (; open_n < d; open_n++) {
			open[open_n].node = path[open_n];
			open[open_n].x = x;
			open[open_n].w = 0;
		}
		for (size_t j = 0; j < open_n; j++)
			open[j].w += seq[i].weight;
		x += seq[i].weight;
		total += seq[i].weight;
	}
	while (open_n > 0) {
		open_n--;
		if ((double)open[open_n].w >= min_units &&
		    !box_add(B, open[open_n].x, open[open_n].w, 0, T->depth[open[open_n].node], T->label[open[open_n].node]))
			goto out;
	}
	ok = box_add(B, 0, total, 0, 0, UINT32_MAX);
out:
	free(open);
	free(path);
	return ok;
}

/* ---- colours ---- */

static const char *const palettes[] = { "hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "red",
					"green", "blue", "aqua", "yellow", "purple", "orange", NULL };

bool flame_palette_valid(const char *name, const char **list)
{
	if (list)
		*list = "hot, mem, io, wakeup, chain, java, js, perl, red, green, blue, aqua, yellow, purple, orange";
	for (size_t i = 0; palettes[i]; i++)
		if (strcmp(palettes[i], name) == 0)
			return true;
	return false;
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

static void colour(const char *pal, const char *s, size_t n, int rgb[3])
{
	uint64_t h = hash_bytes(s, n);
	double v1 = (double)(h & 0xffff) / 65536.0, v2 = (double)((h >> 16) & 0xffff) / 65536.0,
	       v3 = (double)((h >> 32) & 0xffff) / 65536.0;
	const char *p = pal;
	if (strcmp(pal, "perl") == 0)
		p = ends_with(s, n, "_[k]") ? "orange" : (memmem(s, n, "::", 2) || memmem(s, n, ".pm", 3)) ? "green" : "red";
	else if (strcmp(pal, "java") == 0 || strcmp(pal, "js") == 0) {
		if (ends_with(s, n, "_[k]"))
			p = "orange";
		else if (ends_with(s, n, "_[j]") || ends_with(s, n, "_[i]") || memchr(s, '/', n) ||
			 (strcmp(pal, "js") == 0 && memchr(s, ':', n)))
			p = "green";
		else if (memmem(s, n, "::", 2))
			p = "yellow";
		else
			p = "red";
	}
	int r, g, b;
	if (strcmp(p, "mem") == 0) {
		r = 0; g = 190 + (int)(50 * v2); b = (int)(210 * v1);
	} else if (strcmp(p, "io") == 0) {
		r = 80 + (int)(60 * v1); g = r; b = 190 + (int)(55 * v2);
	} else if (strcmp(p, "wakeup") == 0 || strcmp(p, "aqua") == 0) {
		r = 50 + (int)(60 * v1); g = 165 + (int)(55 * v1); b = 165 + (int)(55 * v1);
	} else if (strcmp(p, "chain") == 0 || strcmp(p, "blue") == 0) {
		r = 80 + (int)(60 * v1); g = 80 + (int)(60 * v1); b = 205 + (int)(50 * v1);
	} else if (strcmp(p, "red") == 0) {
		r = 200 + (int)(55 * v1); g = 50 + (int)(80 * v1); b = g;
	} else if (strcmp(p, "green") == 0) {
		r = 50 + (int)(60 * v1); g = 200 + (int)(55 * v1); b = r;
	} else if (strcmp(p, "yellow") == 0) {
		r = 175 + (int)(55 * v1); g = r; b = 50 + (int)(20 * v1);
	} else if (strcmp(p, "purple") == 0) {
		r = 190 + (int)(65 * v1); g = 80 + (int)(60 * v1); b = r;
	} else if (strcmp(p, "orange") == 0) {
		r = 190 + (int)(65 * v1); g = 90 + (int)(65 * v1); b = 0;
	} else { /* hot */
		r = 205 + (int)(50 * v3); g = (int)(230 * v1); b = (int)(55 * v2);
	}
	rgb[0] = r;
	rgb[1] = g;
	rgb[2] = b;
}

/* ---- SVG text ---- */

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

static void commas(char *buf, size_t size, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
	size_t j = 0;
	for (int i = 0; i < n && j + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = tmp[i];
	}
	buf[j] = '\0';
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
	"  frames.addEventListener('click', function (e) { var g = find_g(e.target); if (g) zoom(g); });\n"
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
	"    if (re.test(label_of(gs[i]))) { r.setAttribute('fill', 'rgb(230,0,230)'); spans.push([r.ox, r.ox + r.ow]); }\n"
	"    else r.setAttribute('fill', r.ofill); }\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  var sum = 0, end = -1;\n"
	"  for (var j = 0; j < spans.length; j++) { var a = Math.max(spans[j][0], end), b = spans[j][1]; if (b > a) sum += b - a; if (b > end) end = b; }\n"
	"  matchedtxt.nodeValue = 'Matched: ' + (100 * sum / (W - 2 * XPAD)).toFixed(1) + '%';\n"
	"  document.getElementById('search').classList.add('show');\n"
	"}\n"
	"function reset_search() { searching = null; var gs = frames.getElementsByTagName('g');\n"
	"  for (var i = 0; i < gs.length; i++) { var r = gs[i].getElementsByTagName('rect')[0]; r.setAttribute('fill', r.ofill); }\n"
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

static void write_svg(FILE *out, const struct flame_opts *o, const struct interner *L, const struct boxes *B,
		      uint64_t total, uint64_t total_b, const char *unit, const char *title, const char *subtitle)
{
	unsigned W = o->width ? o->width : 1200;
	uint32_t levels = B->n ? B->max_depth + 1 : 3;
	unsigned H = YPAD_TOP + YPAD_BOTTOM + levels * FRAME_H;
	double ppu = total ? (double)(W - 2 * XPAD) / (double)total : 0;
	const char *pal = o->colors ? o->colors : "hot";
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
		o->before ? "#e0e0ff" : "#eeeeb0");
	fprintf(out, "<style type=\"text/css\">\n%s</style>\n", css);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n", js);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"url(#background)\"/>\n", W, H);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"24\">", W / 2.0);
	xml_text(out, title, strlen(title));
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"40\">", W / 2.0);
	xml_text(out, subtitle, strlen(subtitle));
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD, H - 10);
	fprintf(out, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\" onclick=\"unzoom()\">Reset Zoom</text>\n",
		XPAD);
	fprintf(out, "<text id=\"search\" x=\"%u\" y=\"24\" onclick=\"search_prompt()\">Search</text>\n",
		W - XPAD - 60);
	fprintf(out, "<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n", W - XPAD, H - 10);
	if (!total) {
		fprintf(out, "<text x=\"%.1f\" y=\"%u\" style=\"text-anchor: middle\">No samples: the profile is empty"
			     "</text>\n<g id=\"frames\" data-icicle=\"%d\"></g>\n</svg>\n",
			W / 2.0, YPAD_TOP + FRAME_H + 12, o->reverse ? 1 : 0);
		return;
	}
	/* differential colour scale: the largest change of share among drawn boxes */
	double maxd = 0;
	if (o->before)
		for (size_t i = 0; i < B->n; i++) {
			double d = fabs(pct(B->v[i].w, total) - pct(B->v[i].wb, total_b));
			if (d > maxd)
				maxd = d;
		}
	fprintf(out, "<g id=\"frames\" data-icicle=\"%d\" data-total=\"%llu\">\n", o->reverse ? 1 : 0,
		(unsigned long long)total);
	char nbuf[40], bbuf[40];
	for (size_t i = 0; i < B->n; i++) {
		const struct box *b = &B->v[i];
		const char *s = b->label == UINT32_MAX ? "all" : intern_str(L, b->label);
		size_t sl = b->label == UINT32_MAX ? 3 : intern_len(L, b->label);
		double x = XPAD + (double)b->x * ppu, w = (double)b->w * ppu;
		unsigned y = o->reverse ? YPAD_TOP + b->depth * FRAME_H
					: H - YPAD_BOTTOM - (b->depth + 1) * FRAME_H;
		commas(nbuf, sizeof nbuf, b->w);
		fputs("<g><title>", out);
		xml_text(out, s, sl);
		fprintf(out, " (%s %s, %.2f%%", nbuf, unit, pct(b->w, total));
		int rgb[3];
		if (o->before) {
			double d = pct(b->w, total) - pct(b->wb, total_b);
			commas(bbuf, sizeof bbuf, b->wb);
			fprintf(out, "; before %s, %.2f%%; %+.2f points", bbuf, pct(b->wb, total_b), d);
			double ratio = maxd > 0 ? fabs(d) / maxd : 0;
			int fade = (int)(220 * (1 - ratio));
			if (d > 0) {
				rgb[0] = 255; rgb[1] = fade; rgb[2] = fade;
			} else if (d < 0) {
				rgb[0] = fade; rgb[1] = fade; rgb[2] = 255;
			} else {
				rgb[0] = rgb[1] = rgb[2] = 220;
			}
		} else {
			colour(pal, s, sl, rgb);
		}
		fprintf(out, ")</title><rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" "
			     "rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%u\">",
			x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2], x + 3, y + FRAME_H - 5);
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
	fputs("</g>\n</svg>\n", out);
}

enum plumb_err flame_write_svg(const struct profile *after, FILE *out, const struct flame_opts *o, struct perr *e)
{
	struct interner L = INTERNER_BORROW_INIT;
	struct trie T = { 0 };
	struct boxes B = { 0 };
	struct label_table *lt_a = NULL, *lt_b = NULL;
	uint32_t *map_a = NULL, *map_b = NULL;
	struct seq *seq = NULL;
	enum plumb_err rc = PLUMB_OK;
	unsigned W = o->width ? o->width : 1200;
	double minw = o->min_width < 0 ? 0.1 : o->min_width;

	if (!trie_grow(&T, 4096))
		goto oom;
	T.n = 1;
	T.parent[0] = 0;
	T.label[0] = UINT32_MAX;
	T.depth[0] = 0;
	T.tot_a[0] = T.tot_b[0] = 0;
	if (!(map_a = map_profile(&T, &L, after, &lt_a, o->label_flags, !o->before)))
		goto oom;
	if (o->before && !(map_b = map_profile(&T, &L, o->before, &lt_b, o->label_flags, false)))
		goto oom;
	size_t nc;
	const struct profile_count *c = profile_counts(after, &nc);
	uint64_t total = 0, total_b = 0;
	for (size_t i = 0; i < nc; i++) {
		T.tot_a[map_a[c[i].stack]] += c[i].weight;
		total += c[i].weight;
	}
	if (o->before) {
		c = profile_counts(o->before, &nc);
		for (size_t i = 0; i < nc; i++) {
			T.tot_b[map_b[c[i].stack]] += c[i].weight;
			total_b += c[i].weight;
		}
	}
	double min_units = total ? minw * (double)total / (double)(W - 2 * XPAD) : 0;
	if (o->flamechart) {
		size_t nt;
		const struct profile_sample *tl = profile_timeline(after, &nt);
		c = profile_counts(after, &nc);
		size_t n = nt ? nt : nc, k = 0;
		seq = malloc((n ? n : 1) * sizeof *seq);
		if (!seq)
			goto oom;
		for (size_t i = 0; i < n; i++) {
			uint32_t st = nt ? tl[i].stack : c[i].stack;
			uint64_t w = nt ? tl[i].weight : c[i].weight;
			if (st == PROFILE_ROOT || !w)
				continue;
			seq[k] = (struct seq){ map_a[st], nt ? tl[i].time_ns : i, w, k };
			k++;
		}
		if (nt) /* time order; equal times keep their input order */
			qsort(seq, k, sizeof *seq, cmp_seq_time);
		if (!layout_chart(&T, seq, k, min_units, &B))
			goto oom;
	} else {
		for (size_t n = T.n - 1; n > 0; n--) {
			T.tot_a[T.parent[n]] += T.tot_a[n];
			T.tot_b[T.parent[n]] += T.tot_b[n];
		}
		if (!layout_graph(&T, &L, min_units, &B))
			goto oom;
	}
	const char *title = o->title;
	if (!title)
		title = o->before ? "Differential Flame Graph"
		       : o->flamechart ? "Flame Chart" : o->reverse ? "Icicle Graph" : "Flame Graph";
	char subtitle[256];
	const struct profile_meta *m = profile_meta_const(after);
	const char *unit = profile_str(after, m->weight_unit);
	if (!unit[0])
		unit = "samples";
	char tbuf[40];
	commas(tbuf, sizeof tbuf, total);
	if (o->before)
		snprintf(subtitle, sizeof subtitle, "%s %s; red grew, blue shrank (share of all %s, before vs after)",
			 tbuf, unit, unit);
	else
		snprintf(subtitle, sizeof subtitle, "%s %s%s", tbuf, unit,
			 o->flamechart ? (profile_has_timeline(after) ? ", in time order" : ", in input order") : "");
	write_svg(out, o, &L, &B, total, total_b, unit, title, subtitle);
	if (ferror(out))
		rc = perr_set(e, PLUMB_EOUTPUT, "writing the flame graph failed");
	goto done;
oom:
	rc = perr_set(e, PLUMB_ENOMEM, "out of memory drawing the flame graph");
done:
	free(seq);
	free(map_a);
	free(map_b);
	label_table_free(lt_a);
	label_table_free(lt_b);
	interner_release(&L);
	trie_release(&T);
	free(B.v);
	return rc;
}
