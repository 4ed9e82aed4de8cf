/* folded.c — the folded-stacks format: one line per distinct stack, "outermost;...;innermost COUNT".
 * The writer puts the hottest stack first and breaks ties by the stack text, so output is deterministic. */
#include "format/format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/shown.h"
#include "base/grow.h"
#include "base/redact.h"
#include "base/hashmap.h"
#include "base/sbuf.h"
#include "base/str.h"
#include "base/u32vec.h"
#include "format/folded_line.h"
#include "format/stream.h"
#include "format/textcache.h"
#include "profile/label.h"

/* A folded reader: what one line leaves for the next (the stack it reached, frame by frame, for prefix sharing)
 * and what the whole read counts. Lines are read in blocks from a stream; prefix sharing starts over at each
 * block (a block's text is gone once the next is read). */
struct folded_reader {
	struct profile *p;
	const struct fmt_read_opts *o;
	struct perr *e;
	struct tcache labels;   /* label text -> frame id (keys interned in the profile) */
	struct tcache roots;    /* "name (tid)" root text -> thread id */
	uint32_t *nodes;        /* previous line: node after frame k */
	uint32_t *fids;         /* the line's frame ids, for one profile_stack_path */
	size_t *ends;           /* previous line: offset (from its start) where frame k ends */
	size_t depth, cap, prev_len;
	const char *prev;       /* previous line's stack text, in the current block */
	uint32_t prev_thread, all_thread;
	size_t prev_root;       /* length of the previous line's root frame and its ';' (0: none) */
	uint64_t lineno, bad, first_bad_line, data;
	char unit[40];          /* from a "# plumb: samples=N unit=U" line: what the counts are ("" samples) */
	uint64_t unit_samples;  /*   and how many samples they stand for */
	bool header;
	char first_bad[100];
};

/* The thread of a line whose first frame is a `--threads` root "name (tid)" (profile/label.h); *root_len is
 * that frame's length with its ';' (0 and the thread "all" when there is none). */
static uint32_t line_thread(struct folded_reader *r, const char *s, size_t slen, size_t *root_len)
{
	const char *semi = memchr(s, ';', slen);
	size_t fl = semi ? (size_t)(semi - s) : slen, name_len;
	uint32_t tid, id;
	*root_len = 0;
	if (semi && label_thread_root(s, fl, &name_len, &tid)) {
		*root_len = fl + 1;
		if (r->prev_root == fl + 1 && r->prev && memcmp(r->prev, s, fl + 1) == 0)
			return r->prev_thread;
		uint64_t h = hash_bytes(s, fl);
		if (tc_get(&r->roots, h, s, (uint32_t)fl, &id))
			return id;
		char *name = strndup(s, name_len);
		str_id key = profile_intern(r->p, s, fl);
		id = name && key != PROFILE_NOMEM ? profile_thread(r->p, 0, tid, name) : PROFILE_NOMEM;
		free(name);
		if (id != PROFILE_NOMEM && !tc_put(&r->roots, h, profile_str(r->p, key), (uint32_t)fl, id))
			id = PROFILE_NOMEM;
		return id;
	}
	if (r->all_thread == PROFILE_NOMEM)
		r->all_thread = profile_thread(r->p, 0, 0, "all");
	return r->all_thread;
}

/* One "stack COUNT" line: the frames it shares with the previous line (up to a frame boundary) are not parsed
 * again; the walk resumes from the previous line's node there. Returns false on error (set in r->e). */
static bool folded_line(struct folded_reader *r, const char *s, const char *stack_end, uint64_t count)
{
	struct profile *p = r->p;
	size_t slen = (size_t)(stack_end - s), root_len;
	uint32_t thread = line_thread(r, s, slen, &root_len);
	if (thread == PROFILE_NOMEM)
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory"), false;
	/* shared prefix with the previous line, cut back to a frame boundary */
	size_t common = 0, lim = slen < r->prev_len ? slen : r->prev_len;
	if (!r->prev || root_len != r->prev_root)
		lim = 0;
	while (common + 8 <= lim) {
		uint64_t a, b;
		memcpy(&a, s + common, 8);
		memcpy(&b, r->prev + common, 8);
		if (a != b)
			break;
		common += 8;
	}
	while (common < lim && s[common] == r->prev[common])
		common++;
	size_t k = 0; /* frames reused */
	while (k < r->depth && r->ends[k] <= common &&
	       (r->ends[k] == slen || s[r->ends[k]] == ';' || r->ends[k] < common))
		k++;
	while (k > 0 && !(r->ends[k - 1] == slen || s[r->ends[k - 1]] == ';'))
		k--;
	uint32_t node = k ? r->nodes[k - 1] : PROFILE_ROOT;
	size_t off = k ? r->ends[k - 1] + 1 : root_len;
	r->depth = k;
	/* the frames not shared: their ids (each distinct label parsed once), then their nodes in one path */
	while (off <= slen && slen > root_len) {
		const char *f = s + off;
		const char *semi = memchr(f, ';', slen - off);
		size_t fl = semi ? (size_t)(semi - f) : slen - off;
		uint64_t h = hash_bytes(f, fl);
		uint32_t fid;
		if (!tc_get(&r->labels, h, f, (uint32_t)fl, &fid)) {
			str_id key = profile_intern(p, f, fl);
			if (key == PROFILE_NOMEM || (fid = label_frame(p, f, fl)) == PROFILE_NOMEM ||
			    !tc_put(&r->labels, h, profile_str(p, key), (uint32_t)fl, fid))
				return perr_set(r->e, PLUMB_ENOMEM, "out of memory"), false;
		}
		if (r->depth == r->cap) {
			if (r->depth >= FMT_MAX_FRAMES)
				return perr_set(r->e, PLUMB_EFORMAT, "line %llu has more than %zu frames, the cap on one "
					       "stack (docs/design.md §6.6)", (unsigned long long)r->lineno,
					       (size_t)FMT_MAX_FRAMES), false;
			size_t nc = grow_cap(r->depth + 1, r->cap);
			if (!REALLOC_ARRAY(r->nodes, nc) || !REALLOC_ARRAY(r->ends, nc) || !REALLOC_ARRAY(r->fids, nc))
				return perr_set(r->e, PLUMB_ENOMEM, "out of memory"), false;
			r->cap = nc;
		}
		r->fids[r->depth] = fid;
		r->ends[r->depth++] = off + fl;
		off += fl + 1;
	}
	if (r->depth > k) {
		node = profile_stack_path(p, node, r->fids + k, r->depth - k, r->nodes + k);
		if (node == PROFILE_NOMEM)
			return perr_set(r->e, PLUMB_ENOMEM, "out of memory"), false;
	}
	r->prev = s;
	r->prev_len = slen;
	r->prev_root = root_len;
	r->prev_thread = thread;
	if (!profile_add_sample(p, node, thread, 0, count)) {
		if (profile_overflowed(p))
			return perr_set(r->e, PLUMB_EFORMAT, "line %llu: the counts add up past %llu, more than a profile "
				       "can count", (unsigned long long)r->lineno,
				       (unsigned long long)PROFILE_MAX_WEIGHT), false;
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory"), false;
	}
	return true;
}

/* Line [s, le) for a message: blanks and CR trimmed at both ends, control bytes escaped, cut at 60 (base/shown.h). */
static void shown_line(char *out, size_t cap, const char *s, const char *le)
{
	while (s < le && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	while (le > s && (le[-1] == ' ' || le[-1] == '\t' || le[-1] == '\r'))
		le--;
	shown_escape(out, cap, s, (size_t)(le - s), 60);
}

/* "# plumb: samples=N unit=U", the line plumb's writer puts first when the counts are not samples (flamegraph.pl
 * and speedscope skip it: it does not end in a count): the unit ("ns" is nanoseconds) and how many samples the
 * counts stand for. Words it does not know are skipped. */
static void plumb_header(struct folded_reader *r, const char *s, const char *le)
{
	while (s < le && (*s == ' ' || *s == '\t'))
		s++;
	if (le - s < 8 || memcmp(s, "# plumb:", 8) != 0)
		return;
	r->header = true;
	for (const char *w = s + 8; w < le;) {
		while (w < le && (*w == ' ' || *w == '\t' || *w == '\r'))
			w++;
		const char *we = w;
		while (we < le && *we != ' ' && *we != '\t' && *we != '\r')
			we++;
		size_t n = (size_t)(we - w);
		if (n > 5 && memcmp(w, "unit=", 5) == 0 && n - 5 < sizeof r->unit) {
			bool ok = true;
			for (const char *c = w + 5; c < we; c++)
				ok &= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_' || *c == '-';
			if (ok && n - 5 == 2 && memcmp(w + 5, "ns", 2) == 0)
				snprintf(r->unit, sizeof r->unit, "nanoseconds");
			else if (ok)
				snprintf(r->unit, sizeof r->unit, "%.*s", (int)(n - 5), w + 5);
		} else if (n > 8 && memcmp(w, "samples=", 8) == 0) {
			uint64_t v = 0;
			bool ok = n - 8 <= 18;
			for (const char *c = w + 8; c < we && ok; c++) {
				ok = *c >= '0' && *c <= '9';
				v = v * 10 + (uint64_t)(*c - '0');
			}
			if (ok)
				r->unit_samples = v;
		}
		w = we;
	}
}

/* The lines of one block. */
static bool folded_block(struct folded_reader *r, const char *buf, size_t len)
{
	const char *end = buf + len, *line = buf;
	r->prev = NULL; /* the previous block's text is gone */
	r->depth = 0;
	const char *s, *le;
	while (fmt_folded_next_line(&line, end, &s, &le)) {
		r->lineno++;
		struct fmt_folded_line fl;
		enum fmt_folded_kind kind = fmt_folded_split(s, le, &fl);
		if (kind == FOLDED_NONE) {
			if (!r->header && !r->data)
				plumb_header(r, s, le);
			continue;
		}
		if (kind == FOLDED_OVERFLOW || kind == FOLDED_BAD) {
			/* the line as a message shows it: trimmed, escaped, cut (only here: a good line is never shown) */
			char shown[100];
			shown_line(shown, sizeof shown, s, le);
			if (kind == FOLDED_OVERFLOW) {
				perr_set(r->e, PLUMB_EFORMAT, "line %llu: a count past %llu, more than a profile can count: %s",
					 (unsigned long long)r->lineno, (unsigned long long)UINT64_MAX, shown);
				return false;
			}
			if (!r->o->lenient) {
				perr_set(r->e, PLUMB_EFORMAT, "line %llu is not folded stacks (\"stack COUNT\"): %s",
					 (unsigned long long)r->lineno, shown);
				return false;
			}
			if (!r->bad++) {
				r->first_bad_line = r->lineno;
				snprintf(r->first_bad, sizeof r->first_bad, "%s", shown);
			}
			continue;
		}
		r->data++;
		if (!folded_line(r, fl.stack, fl.stack + fl.stack_len, fl.count))
			return false;
	}
	return true;
}

/* Reads folded stacks from a stream. Each distinct label is parsed into its fields (profile/label.h) and interned
 * once (textcache); a first frame "name (tid)" is the thread (written by --threads), not a frame. Folded text
 * has no times: a timeline asked for holds the lines in file order, marked untimed. In lenient mode a line that is not "stack COUNT" is skipped and reported
 * once at the end. */
enum plumb_err fmt_folded_read_stream(struct fmt_stream *st, const struct fmt_read_opts *opts, struct profile *p,
				      struct perr *e)
{
	struct folded_reader r = { .p = p, .o = opts, .e = e, .all_thread = PROFILE_NOMEM };
	profile_mark_untimed(p); /* lines in file order at most: folded text has no times */
	st->text = true;
	enum plumb_err rc = PLUMB_OK;
	const char *block;
	size_t len;
	int got;
	while ((got = fmt_stream_lines(st, &block, &len, e)) == 1)
		if (!folded_block(&r, block, len)) {
			got = -1;
			break;
		}
	if (got < 0)
		rc = e->code ? e->code : PLUMB_EFORMAT;
	else if (r.bad && profile_total_weight(p) == 0 && profile_nstacks(p) == 1)
		rc = perr_set(e, PLUMB_EFORMAT, "no line is folded stacks (\"stack COUNT\"); line %llu reads: %s",
			      (unsigned long long)r.first_bad_line, r.first_bad);
	else if (!r.data && !r.bad)
		/* comments and blank lines only: no samples, an input that cannot be used (docs/design.md §3.2) */
		rc = perr_set(e, PLUMB_EFORMAT, "no stacks in it: %llu line%s of comments and blank lines only",
			      (unsigned long long)r.lineno, r.lineno == 1 ? "" : "s");
	else if (r.bad && opts->warn) {
		char msg[300];
		snprintf(msg, sizeof msg, "skipped %llu line%s that %s not folded stacks (\"stack COUNT\"); the first, "
			 "line %llu: %s", (unsigned long long)r.bad, r.bad == 1 ? "" : "s", r.bad == 1 ? "is" : "are",
			 (unsigned long long)r.first_bad_line, r.first_bad);
		opts->warn(opts->warn_ctx, msg);
	}
	if (!rc && profile_nthreads(p) == 0 && profile_thread(p, 0, 0, "all") == PROFILE_NOMEM)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	if (!rc && r.unit[0] && strcmp(r.unit, "samples") != 0) {
		/* the counts keep their unit; the samples they stand for are shared out by weight */
		struct profile_meta *m = profile_meta(p);
		m->weight_unit = profile_intern_cstr(p, r.unit);
		/* without a number of samples there is none to tell (0: unknown), not one per unit of weight */
		if (r.unit_samples <= profile_total_weight(p)) {
			profile_spread_samples(p, r.unit_samples);
			if (r.unit_samples && strcmp(r.unit, "nanoseconds") == 0)
				m->interval_ns = (profile_total_weight(p) + r.unit_samples / 2) / r.unit_samples;
		}
	}
	tc_release(&r.labels);
	tc_release(&r.roots);
	free(r.nodes);
	free(r.ends);
	free(r.fids);
	profile_meta(p)->backend = profile_intern_cstr(p, "folded");
	return rc;
}

enum plumb_err fmt_folded_read(const char *buf, size_t len, struct profile *p, struct perr *e)
{
	static const struct fmt_read_opts strict;
	return fmt_folded_read_opts(buf, len, &strict, p, e);
}

enum plumb_err fmt_folded_read_opts(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				    struct perr *e)
{
	return fmt_stream_read_buf(buf, len, "folded text", fmt_folded_read_stream, opts, p, e);
}

/* ---- the writer ----
 *
 * Lines are identified without building their text: every label is cut at ';' into pieces (interned), and
 * stacks are re-rooted on a tree of pieces, so two stacks print the same text exactly when they reach the same
 * node of that tree (frames that share a label merge there). The text order that breaks ties between equally
 * hot lines comes from the same tree: below one node, the texts through a child c are either the child's own
 * line ("...;c") or start with "...;c;", and each of those two sets is contiguous in byte order. Sorting the
 * children's (piece, end) and (piece, ";") entries once and walking the tree gives every line its rank. Text
 * is only produced on the way out, straight into the output buffer. */

struct folded_writer {
	const struct profile *p;
	/* pieces: label text between ';' */
	struct tcache piece_ids;          /* text -> piece id */
	const char **piece_text;
	uint32_t *piece_len;
	size_t npieces, cap_pieces;
	uint32_t *frame_first, *frame_npieces; /* per frame: its pieces in piece_list */
	struct u32vec piece_list, scratch;
	char **owned;                     /* thread-root texts the writer made */
	size_t nowned;
	/* the tree of pieces: node 0 is the root */
	uint32_t *node_parent, *node_piece;
	size_t nnodes, cap_nodes;
	struct hmap node_index;           /* (parent << 32 | piece) -> node */
	/* per stack: its node under the current thread's root (valid when memo_gen matches) */
	uint32_t *memo_node, *memo_gen;
	bool oom;
};

static uint32_t piece_intern(struct folded_writer *w, const char *text, size_t len)
{
	uint64_t h = hash_bytes(text, len);
	uint32_t id;
	if (tc_get(&w->piece_ids, h, text, (uint32_t)len, &id))
		return id;
	if (w->npieces == w->cap_pieces) {
		size_t nc = grow_cap(w->npieces + 1, w->cap_pieces);
		if (!REALLOC_ARRAY(w->piece_text, nc) || !REALLOC_ARRAY(w->piece_len, nc))
			return UINT32_MAX;
		w->cap_pieces = nc;
	}
	id = (uint32_t)w->npieces;
	if (!tc_put(&w->piece_ids, h, text, (uint32_t)len, id))
		return UINT32_MAX;
	w->piece_text[id] = text;
	w->piece_len[id] = (uint32_t)len;
	w->npieces++;
	return id;
}

/* Appends the pieces of one label to piece_list. */
static bool split_label(struct folded_writer *w, const char *text, size_t len)
{
	for (;;) {
		const char *semi = memchr(text, ';', len);
		size_t n = semi ? (size_t)(semi - text) : len;
		uint32_t id = piece_intern(w, text, n);
		if (id == UINT32_MAX || !u32vec_push(&w->piece_list, id))
			return false;
		if (!semi)
			return true;
		text += n + 1;
		len -= n + 1;
	}
}

static uint32_t node_child(struct folded_writer *w, uint32_t parent, uint32_t piece)
{
	uint64_t key = (uint64_t)parent << 32 | piece;
	uint32_t id;
	if (hmap_get(&w->node_index, key, &id))
		return id;
	if (w->nnodes == w->cap_nodes) {
		size_t nc = grow_cap(w->nnodes + 1, w->cap_nodes);
		if (!REALLOC_ARRAY(w->node_parent, nc) || !REALLOC_ARRAY(w->node_piece, nc))
			return UINT32_MAX;
		w->cap_nodes = nc;
	}
	id = (uint32_t)w->nnodes;
	if (!hmap_put(&w->node_index, key, id))
		return UINT32_MAX;
	w->node_parent[id] = parent;
	w->node_piece[id] = piece;
	w->nnodes++;
	return id;
}

/* The node a stack's text reaches under root; memoized per stack for the current generation. */
static uint32_t stack_node(struct folded_writer *w, uint32_t stack, uint32_t root, uint32_t gen)
{
	w->scratch.n = 0;
	uint32_t s = stack;
	while (s != PROFILE_ROOT && w->memo_gen[s] != gen) {
		if (!u32vec_push(&w->scratch, s))
			return UINT32_MAX;
		s = profile_stack_parent(w->p, s);
	}
	uint32_t node = s == PROFILE_ROOT ? root : w->memo_node[s];
	while (w->scratch.n) {
		s = w->scratch.v[--w->scratch.n];
		uint32_t f = profile_stack_frame(w->p, s);
		for (uint32_t k = 0; k < w->frame_npieces[f] && node != UINT32_MAX; k++)
			node = node_child(w, node, w->piece_list.v[w->frame_first[f] + k]);
		if (node == UINT32_MAX)
			return UINT32_MAX;
		w->memo_gen[s] = gen;
		w->memo_node[s] = node;
	}
	return node;
}

struct folded_line {
	uint32_t node;
	uint32_t rank;
	uint64_t weight;
};

/* An entry below a node: its child's own line (end) or the lines through the child (cont). */
struct child_entry {
	uint32_t node;
	bool cont;
};

static int cmp_entry(const void *a, const void *b, void *ctx)
{
	const struct folded_writer *w = ctx;
	const struct child_entry *x = a, *y = b;
	uint32_t px = w->node_piece[x->node], py = w->node_piece[y->node];
	size_t lx = w->piece_len[px], ly = w->piece_len[py], n = lx < ly ? lx : ly;
	int c = memcmp(w->piece_text[px], w->piece_text[py], n);
	if (c)
		return c;
	/* after the piece: end of text sorts first, then ';' against the other's next byte */
	int nx = lx > n ? (unsigned char)w->piece_text[px][n] : x->cont ? ';' : -1;
	int ny = ly > n ? (unsigned char)w->piece_text[py][n] : y->cont ? ';' : -1;
	return nx != ny ? (nx < ny ? -1 : 1) : 0;
}

static int cmp_line(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Gives every line its rank in byte order of the texts (see the comment above struct folded_writer). */
static bool rank_lines(struct folded_writer *w, struct folded_line *lines, size_t nlines)
{
	size_t n = w->nnodes;
	uint32_t *line_of = malloc(n * sizeof *line_of), *first = calloc(n + 1, sizeof *first);
	uint32_t *fill = malloc(n * sizeof *fill);
	uint8_t *has_kids = calloc(n, 1);
	struct child_entry *ent = NULL; /* as many as counted below (at most 2n; about n in a wide profile) */
	struct u32vec todo = U32VEC_INIT;
	bool ok = line_of && first && fill && has_kids;
	if (ok) {
		for (size_t i = 0; i < n; i++)
			line_of[i] = UINT32_MAX;
		for (size_t i = 0; i < nlines; i++)
			line_of[lines[i].node] = (uint32_t)i;
		for (size_t i = 1; i < n; i++)
			has_kids[w->node_parent[i]] = 1;
		/* entries grouped by parent: count, then place */
		for (size_t i = 1; i < n; i++)
			first[w->node_parent[i] + 1] += (line_of[i] != UINT32_MAX) + has_kids[i];
		for (size_t i = 0; i < n; i++)
			first[i + 1] += first[i];
		ok = (ent = malloc((first[n] ? first[n] : 1) * sizeof *ent)) != NULL;
	}
	if (ok) {
		memcpy(fill, first, n * sizeof *fill);
		for (size_t i = 1; i < n; i++) {
			uint32_t par = w->node_parent[i];
			if (line_of[i] != UINT32_MAX)
				ent[fill[par]++] = (struct child_entry){ (uint32_t)i, false };
			if (has_kids[i])
				ent[fill[par]++] = (struct child_entry){ (uint32_t)i, true };
		}
		for (size_t i = 0; i < n; i++)
			if (first[i + 1] - first[i] > 1)
				qsort_r(ent + first[i], first[i + 1] - first[i], sizeof *ent, cmp_entry, w);
		/* depth-first: todo holds entry positions still to visit, the next one on top */
		uint32_t rank = 0;
		for (uint32_t k = first[1]; k-- > first[0];)
			ok = ok && u32vec_push(&todo, k);
		while (ok && todo.n) {
			const struct child_entry *e = &ent[todo.v[--todo.n]];
			if (!e->cont) {
				lines[line_of[e->node]].rank = rank++;
				continue;
			}
			for (uint32_t k = first[e->node + 1]; k-- > first[e->node];)
				ok = ok && u32vec_push(&todo, k);
		}
	}
	u32vec_release(&todo);
	free(ent);
	free(has_kids);
	free(fill);
	free(first);
	free(line_of);
	return ok;
}

/* Output through one block buffer: stdio's per-call locking showed up when writing millions of lines. */
struct block_out {
	FILE *out;
	size_t used;
	uint64_t written;
	struct progress *progress;
	char buf[1 << 16];
};

static void out_flush(struct block_out *b, const char *s, size_t n)
{
	fwrite(b->buf, 1, b->used, b->out);
	b->written += b->used + n;
	progress_bytes(b->progress, b->written, 0);
	b->used = 0;
	if (n > sizeof b->buf) {
		fwrite(s, 1, n, b->out);
		return;
	}
	memcpy(b->buf, s, n);
	b->used = n;
}

static inline void out_bytes(struct block_out *b, const char *s, size_t n)
{
	if (b->used + n > sizeof b->buf) {
		out_flush(b, s, n);
		return;
	}
	memcpy(b->buf + b->used, s, n);
	b->used += n;
}

static void write_line(struct folded_writer *w, struct block_out *b, const struct folded_line *l)
{
	w->scratch.n = 0;
	for (uint32_t node = l->node; node; node = w->node_parent[node])
		if (!u32vec_push(&w->scratch, w->node_piece[node])) {
			w->oom = true;
			return;
		}
	for (size_t i = w->scratch.n; i-- > 0;) {
		uint32_t piece = w->scratch.v[i];
		out_bytes(b, w->piece_text[piece], w->piece_len[piece]);
		out_bytes(b, i ? ";" : " ", 1);
	}
	char num[24];
	size_t nd = 0;
	uint64_t v = l->weight;
	num[sizeof num - 1 - nd++] = '\n';
	do
		num[sizeof num - 1 - nd++] = (char)('0' + v % 10);
	while ((v /= 10) && nd < sizeof num);
	out_bytes(b, num + sizeof num - nd, nd);
}

static void writer_release(struct folded_writer *w)
{
	tc_release(&w->piece_ids);
	free(w->piece_text);
	free(w->piece_len);
	free(w->frame_first);
	free(w->frame_npieces);
	u32vec_release(&w->piece_list);
	u32vec_release(&w->scratch);
	for (size_t i = 0; i < w->nowned; i++)
		free(w->owned[i]);
	free(w->owned);
	free(w->node_parent);
	free(w->node_piece);
	hmap_release(&w->node_index);
	free(w->memo_node);
	free(w->memo_gen);
}

/* The root node of a thread's lines: "name (tid)" cut into pieces. */
static uint32_t thread_root(struct folded_writer *w, uint32_t thread)
{
	const struct profile_thread *t = profile_thread_get(w->p, thread);
	char *name = redact_dup(profile_str(w->p, t->name));
	char *text = NULL;
	if (!name || asprintf(&text, "%s (%u)", name[0] ? name : "thread", t->tid) < 0)
		text = NULL;
	free(name);
	if (!text)
		return UINT32_MAX;
	w->owned[w->nowned++] = text;
	size_t at = w->piece_list.n;
	if (!split_label(w, text, strlen(text)))
		return UINT32_MAX;
	uint32_t node = 0;
	for (size_t k = at; k < w->piece_list.n && node != UINT32_MAX; k++)
		node = node_child(w, node, w->piece_list.v[k]);
	return node;
}

static int cmp_count_thread(const void *a, const void *b)
{
	const struct profile_count *x = a, *y = b;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

enum plumb_err fmt_folded_write(const struct profile *p, FILE *out, const struct fmt_write_opts *opts,
				struct perr *e)
{
	size_t ncounts, nframes = profile_nframes(p), nstacks = profile_nstacks(p), nthreads = profile_nthreads(p);
	const struct profile_count *counts = profile_counts(p, &ncounts);
	struct label_table *labels = label_table_build(p, opts->label_flags);
	struct folded_writer w = { .p = p };
	struct folded_line *lines = malloc((ncounts ? ncounts : 1) * sizeof *lines);
	struct profile_count *by_thread = NULL;
	struct hmap line_index = HMAP_INIT;
	struct block_out *b = malloc(sizeof *b);
	size_t nlines = 0;
	enum plumb_err rc = PLUMB_OK;
	w.frame_first = malloc((nframes ? nframes : 1) * sizeof *w.frame_first);
	w.frame_npieces = malloc((nframes ? nframes : 1) * sizeof *w.frame_npieces);
	w.owned = calloc(nthreads ? nthreads : 1, sizeof *w.owned);
	w.cap_nodes = 1024;
	w.node_parent = malloc(w.cap_nodes * sizeof *w.node_parent);
	w.node_piece = malloc(w.cap_nodes * sizeof *w.node_piece);
	bool ok = labels && lines && b && w.frame_first && w.frame_npieces && w.owned && w.node_parent &&
		  w.node_piece;
	if (ok) {
		w.nnodes = 1;
		w.node_parent[0] = 0;
		w.node_piece[0] = UINT32_MAX;
	}
	for (size_t f = 0; ok && f < nframes; f++) {
		w.frame_first[f] = (uint32_t)w.piece_list.n;
		ok = split_label(&w, labels->labels[f], labels->lens[f]);
		w.frame_npieces[f] = (uint32_t)(w.piece_list.n - w.frame_first[f]);
	}
	/* with a root per thread, a stack's node depends on the thread: take the counts thread by thread, each
	 * thread a new generation of the per-stack memo */
	if (ok && opts->threads && ncounts) {
		ok = (by_thread = malloc(ncounts * sizeof *by_thread)) != NULL;
		if (ok) {
			memcpy(by_thread, counts, ncounts * sizeof *by_thread);
			qsort(by_thread, ncounts, sizeof *by_thread, cmp_count_thread);
			counts = by_thread;
		}
	}
	/* when every frame is one piece of its own and there is no root per thread, the tree of pieces is the
	 * profile's own tree of stacks: take it as it is */
	bool same_tree = ok && !opts->threads && w.npieces == nframes && w.piece_list.n == nframes;
	if (same_tree && nstacks > w.cap_nodes) {
		ok = REALLOC_ARRAY(w.node_parent, nstacks) && REALLOC_ARRAY(w.node_piece, nstacks);
		if (ok)
			w.cap_nodes = nstacks;
	}
	/* the per-stack memo only where stacks map to other nodes: 8 bytes a stack the common case does without */
	if (ok && !same_tree) {
		w.memo_node = malloc(nstacks * sizeof *w.memo_node);
		w.memo_gen = calloc(nstacks, sizeof *w.memo_gen);
		ok = w.memo_node && w.memo_gen;
	}
	if (same_tree && ok) {
		for (size_t st = 1; st < nstacks; st++) {
			w.node_parent[st] = profile_stack_parent(p, (uint32_t)st);
			w.node_piece[st] = w.piece_list.v[w.frame_first[profile_stack_frame(p, (uint32_t)st)]];
		}
		w.nnodes = nstacks;
	}
	uint32_t gen = 0, root = 0, root_thread = UINT32_MAX;
	for (size_t i = 0; ok && i < ncounts; i++) {
		if (counts[i].stack == PROFILE_ROOT || counts[i].weight == 0)
			continue;
		if (gen == 0 || (opts->threads && counts[i].thread != root_thread)) {
			gen++;
			root_thread = counts[i].thread;
			root = opts->threads ? thread_root(&w, root_thread) : 0;
			if (root == UINT32_MAX) {
				ok = false;
				break;
			}
		}
		uint32_t node = same_tree ? counts[i].stack : stack_node(&w, counts[i].stack, root, gen), at;
		if (node == UINT32_MAX) {
			ok = false;
		} else if (hmap_get(&line_index, node, &at)) {
			lines[at].weight += counts[i].weight;
		} else {
			lines[nlines] = (struct folded_line){ node, 0, counts[i].weight };
			ok = hmap_put(&line_index, node, (uint32_t)nlines++);
		}
	}
	ok = ok && rank_lines(&w, lines, nlines);
	if (!ok) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
		goto done;
	}
	qsort(lines, nlines, sizeof *lines, cmp_line);
	/* counts that are not samples say what they are in a first comment line, which readers of folded text skip
	 * (it ends in no count) and plumb's reader honours */
	const char *unit = profile_str(p, profile_meta_const(p)->weight_unit);
	if (unit[0] && strcmp(unit, "samples") != 0) {
		fprintf(out, "# plumb: samples=%llu unit=", (unsigned long long)profile_total_samples(p));
		if (strcmp(unit, "nanoseconds") == 0)
			fputs("ns", out);
		else
			for (const char *c = unit; *c && c - unit < 32; c++)
				fputc((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '-' ? *c : '_', out);
		fputc('\n', out);
	}
	b->out = out;
	b->used = 0;
	b->written = 0;
	b->progress = opts->progress;
	for (size_t i = 0; i < nlines && !w.oom; i++)
		write_line(&w, b, &lines[i]);
	fwrite(b->buf, 1, b->used, out);
	if (w.oom)
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
	else if (ferror(out))
		rc = perr_set(e, PLUMB_EOUTPUT, "write failed");
done:
	writer_release(&w);
	hmap_release(&line_index);
	free(by_thread);
	free(b);
	free(lines);
	label_table_free(labels);
	return rc;
}
