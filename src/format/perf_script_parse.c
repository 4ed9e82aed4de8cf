/* perf_script_parse.c — reads `perf script` text line by line into the profile model: event lines ("comm
 * pid/tid time: period event: ...") and their stack lines ("addr sym+off (module)"). Only the first event type is
 * kept; a sample weighs its period when the event line carries one (and counts as one sample); the process name
 * is the root frame, as stackcollapse-perf writes it, and the comm, pid and tid the thread.
 *
 * Built for speed (hundreds of MB/s): one pass over the buffer with memchr, no allocation per line. A stack
 * line's text after the address ("func+0x12 (module)") is looked up in a cache keyed by those bytes, so each
 * distinct line is parsed and interned once (format/perf_script_frames.c); the event header "comm pid/tid" is
 * cached the same way. */
#include "format/perf_script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/shown.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/str.h"
#include "format/stream.h"
#include "profile/label.h"

static const char *key_copy(struct ps *s, const char *k, size_t n)
{
	if (n > sizeof s->keys->data)
		return NULL;
	if (!s->keys || sizeof s->keys->data - s->keys->used < n) {
		struct key_block *b = malloc(sizeof *b);
		if (!b)
			return NULL;
		b->next = s->keys;
		b->used = 0;
		s->keys = b;
	}
	char *dst = s->keys->data + s->keys->used;
	memcpy(dst, k, n);
	s->keys->used += n;
	return dst;
}

/* Keeps the first message of a kind; they are reported at the end, in file order (see ps_report). */
static void warn_once(struct ps *s, bool *flag, const char *what, const char *line, const char *le)
{
	if (*flag)
		return;
	*flag = true;
	int n = (int)(le - line);
	char *msg = flag == &s->warned_event ? s->msg_event : s->msg_stack;
	char shown[WARN_MAX - 40];
	shown_escape(shown, sizeof shown, line, (size_t)n, 300);
	snprintf(msg, WARN_MAX, "%s: %s%s", what, shown, n > 300 ? "..." : "");
}

/* The cache's hash of a stack line's text: words in, one multiply each, the last word overlapping the one
 * before it (no byte loop, no call); one final mix with seed. Only a cache key: equality is always checked. */
static inline uint64_t line_hash(const char *p, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ (n * 0x9e3779b97f4a7c15ULL), w;
	if (n >= 8) {
		for (size_t i = 0; i + 8 < n; i += 8) {
			memcpy(&w, p + i, 8);
			h = (h ^ w) * 0xff51afd7ed558ccdULL;
			h ^= h >> 32;
		}
		memcpy(&w, p + n - 8, 8);
	} else {
		w = 0;
		for (size_t i = 0; i < n; i++)
			w = w << 8 | (unsigned char)p[i];
	}
	return hash_u64(h ^ w);
}

/* The shapes of perf script's words (tools/perf/builtin-script.c prints them so). */
static bool hex_token(const char *t, const char *e)
{
	if (e - t > 2 && t[0] == '0' && t[1] == 'x')
		t += 2;
	if (t == e)
		return false;
	for (; t < e; t++)
		if (!is_hex(*t))
			return false;
	return true;
}

static bool digits(const char *t, const char *e)
{
	if (t == e)
		return false;
	for (; t < e; t++)
		if (*t < '0' || *t > '9')
			return false;
	return true;
}

/* "pid", "tid" or "pid/tid" */
static bool pid_token(const char *t, const char *e)
{
	const char *slash = memchr(t, '/', (size_t)(e - t));
	return slash ? digits(t, slash) && digits(slash + 1, e) : digits(t, e);
}

/* "[003]": the cpu field */
static bool cpu_token(const char *t, const char *e)
{
	return e - t >= 3 && t[0] == '[' && e[-1] == ']' && digits(t + 1, e - 1);
}

/* "11616.336684:": the time field (seconds with a fraction, then a colon) */
static bool time_token(const char *t, const char *e)
{
	if (e - t < 4 || e[-1] != ':')
		return false;
	const char *dot = memchr(t, '.', (size_t)(e - t));
	return dot && digits(t, dot) && digits(dot + 1, e - 1);
}

/* A line of the srcline field, printed under its stack line: "  file.c:38", "  [kernel.kallsyms][ffff...]",
 * "  ??:0" — indented by spaces, its first word no address. */
static bool srcline_line(const char *line, const char *le)
{
	if (le - line < 3 || line[0] != ' ' || line[1] != ' ')
		return false;
	const char *q = line;
	while (q < le && is_ws(*q))
		q++;
	const char *w = q;
	while (w < le && !is_ws(*w))
		w++;
	return !hex_token(q, w) && (memchr(q, ':', (size_t)(w - q)) || *q == '[');
}

static void stack_line(struct ps *s, const char *line, const char *le)
{
	if (s->skip)
		return;
	const char *q = line;
	while (is_ws(*q)) /* stops before le: callers pass a line whose last byte is not white space */
		q++;
	const char *sp = memchr(q, ' ', (size_t)(le - q));
	if (!sp) {
		/* an address alone: perf script ran without the sym field (counted, refused when no line has one) */
		if (hex_token(q, le))
			s->nosym_lines++;
		else
			warn_once(s, &s->warned_stack, "Weird stack line", line, le);
		return;
	}
	const char *pc = q, *pc_end = sp;
	while (pc_end > pc && is_ws(pc_end[-1]))
		pc_end--;
	const char *rest = sp + 1;
	const char *lsp = memrchr(rest, ' ', (size_t)(le - rest));
	if (!lsp && rest[0] == '(' && le[-1] == ')')
		lsp = sp; /* "addr (module)": no sym field */
	if (!lsp || le - (lsp + 1) < 2 || lsp[1] != '(' || le[-1] != ')') {
		/* no "(module)": perf script -F without dso ("addr sym+off"); the module is then empty */
		if (!hex_token(pc, pc_end)) {
			warn_once(s, &s->warned_stack, "Weird stack line", line, le);
			return;
		}
		lsp = le;
	}
	/* the cache key: the function text with its "+0x<hex>" offset cut off, and the "(module)" */
	const char *raw = rest, *raw_end = lsp < rest ? rest : lsp;
	while (raw < raw_end && is_ws(*raw))
		raw++;
	while (raw_end > raw && is_ws(raw_end[-1]))
		raw_end--;
	bool blank = raw == raw_end;
	if (blank)
		s->nosym_lines++; /* "addr (module)": no sym field */
	else
		s->sym_lines++;
	if (blank) {
		raw = " ";
		raw_end = raw + 1;
	}
	/* a trailing "+0x<hex>" (the hex run may be empty) is the offset */
	const char *o = raw_end;
	while (o > raw && is_hex(o[-1]))
		o--;
	if (o - raw >= 3 && o[-3] == '+' && o[-2] == '0' && o[-1] == 'x')
		raw_end = o - 3;
	uint32_t key_len = (uint32_t)(raw_end - raw) | (s->java ? 0x80000000u : 0);
	uint32_t mod_len = (uint32_t)(le - lsp);
	bool cacheable = !blank && (!s->o->addrs || !memmem(raw, (size_t)(raw_end - raw), "[unknown]", 9));
	/* the module's length and last bytes are enough for the hash; equality checks the whole key */
	uint64_t tail = 0;
	if (mod_len >= 8)
		memcpy(&tail, le - 8, 8);
	else
		for (const char *m = lsp; m < le; m++)
			tail = tail << 8 | (unsigned char)*m;
	uint64_t h = line_hash(raw, (size_t)(raw_end - raw), tail + ((uint64_t)mod_len << 32) + key_len);
	uint32_t rec;
	if (!cacheable || !tc_get2(&s->lines, h, raw, key_len, lsp, mod_len, &rec)) {
		rec = ps_line_frames(s, pc, (size_t)(pc_end - pc), raw, (size_t)(raw_end - raw),
				     mod_len ? lsp + 2 : lsp, mod_len ? (size_t)(le - lsp - 3) : 0);
		if (s->oom)
			return;
		/* the key is copied next to the other keys: compares then touch a few hot cache lines instead of
		 * wherever in the input the line first appeared */
		const char *kr = cacheable ? key_copy(s, raw, (size_t)(raw_end - raw)) : NULL;
		const char *km = kr ? key_copy(s, lsp, mod_len) : NULL;
		if (cacheable && (!km || !tc_put2(&s->lines, h, kr, key_len, km, mod_len, rec))) {
			s->oom = true;
			return;
		}
	}
	uint32_t n = s->groups.v[rec];
	if (s->stack.n + n > FMT_MAX_FRAMES) {
		if (!s->capped)
			perr_set(s->e, PLUMB_EFORMAT, "a stack has more than %zu frames, the cap on one stack "
				 "(docs/design.md §6.6)", (size_t)FMT_MAX_FRAMES);
		s->capped = true;
		return;
	}
	for (uint32_t i = n; i > 0; i--)
		if (!u32vec_push(&s->stack, s->groups.v[rec + i])) {
			s->oom = true;
			return;
		}
}

static const char *word_end(const char *q, const char *le)
{
	while (q < le && !is_ws(*q))
		q++;
	return q;
}

static const char *skip_blanks(const char *q, const char *le)
{
	while (q < le && is_ws(*q))
		q++;
	return q;
}

/* Reads an event line the way perf script prints its header (tools/perf/builtin-script.c, in this order, each
 * field there only when -F asks for it): [VM:pid] [VCPU:n] comm pid/tid|pid|tid [cpu] time: period event: and
 * then the rest (a one-frame stack, a tracepoint's text). Whether the lines have a comm and a pid is taken from
 * the first event line (L, unknown until then) and every later line must agree: a comm can hold spaces and
 * digits, so only the layout tells "1234 5678" apart. False when the line is not an event line of that layout. */
static bool event_fields(struct ps_layout *L, const char *line, const char *le, struct ps_fields *f)
{
	memset(f, 0, sizeof *f);
	const char *q = skip_blanks(line, le);
	while ((le - q > 3 && memcmp(q, "VM:", 3) == 0) || (le - q > 5 && memcmp(q, "VCPU:", 5) == 0))
		q = skip_blanks(word_end(q, le), le);
	if (q == le)
		return false;
	const char *w = q, *we = word_end(q, le);
	bool first = !L->known;
	if (first) {
		L->comm = !pid_token(w, we) && !cpu_token(w, we) && !time_token(w, we);
		L->pid = !L->comm && pid_token(w, we);
	}
	const char *hdr_end = q;
	if (L->comm) {
		/* the comm runs to the pid; without a pid, to the first word shaped as a later field */
		const char *comm_end = we;
		const char *pid = NULL, *pid_end = NULL;
		for (const char *n = skip_blanks(we, le); n < le; n = skip_blanks(comm_end, le)) {
			const char *ne = word_end(n, le);
			if (pid_token(n, ne) && (L->pid || first)) {
				pid = n;
				pid_end = ne;
				break;
			}
			if (cpu_token(n, ne) || time_token(n, ne) || digits(n, ne) || ne[-1] == ':')
				break;
			comm_end = ne;
		}
		if (first)
			L->pid = pid != NULL;
		if (L->pid && !pid)
			return false;
		f->comm = q;
		f->comm_len = (size_t)(comm_end - q);
		w = pid ? pid : comm_end;
		we = pid ? pid_end : comm_end;
		hdr_end = we;
	} else if (L->pid) {
		if (!pid_token(w, we))
			return false;
		hdr_end = we;
	}
	if (L->pid) {
		const char *slash = memchr(w, '/', (size_t)(we - w));
		f->tid = slash ? slash + 1 : w;
		f->tid_len = (size_t)(we - f->tid);
		f->pid = slash ? w : NULL;
		f->pid_len = slash ? (size_t)(slash - w) : 0;
		q = skip_blanks(we, le);
	} else if (L->comm) {
		q = skip_blanks(we, le);
	}
	L->known = true;
	f->hdr_len = (size_t)(hdr_end - line);
	/* the fields after the thread, each optional, in perf's order */
	we = word_end(q, le);
	if (cpu_token(q, we))
		we = word_end(q = skip_blanks(we, le), le);
	if (time_token(q, we)) {
		f->time = q;
		f->time_len = (size_t)(we - q - 1);
		we = word_end(q = skip_blanks(we, le), le);
	}
	if (digits(q, we)) {
		f->period = q;
		f->period_len = (size_t)(we - q);
		we = word_end(q = skip_blanks(we, le), le);
	}
	if (we > q && we[-1] == ':') {
		/* the event's name to its first colon: "cycles:u:" is cycles, as stackcollapse-perf reads it */
		const char *colon = memchr(q, ':', (size_t)(we - q));
		f->ev = q;
		f->ev_len = (size_t)(colon - q);
		q = skip_blanks(we, le);
		f->rest = q < le ? q : NULL;
	}
	return true;
}

static uint32_t parse_u32(const char *s, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v > UINT32_MAX)
			return UINT32_MAX;
	}
	return (uint32_t)v;
}

/* The thread and root frame of an event header, cached by the header's text. */
static bool event_header(struct ps *s, const char *line, const struct ps_fields *f)
{
	size_t hdr_len = f->hdr_len, comm_len = f->comm_len, pid_len = f->pid_len, tid_len = f->tid_len;
	const char *comm = f->comm ? f->comm : "", *pid = f->pid, *tid = f->tid ? f->tid : "";
	uint64_t h = hash_bytes(line, hdr_len);
	uint32_t idx;
	if (tc_get(&s->headers, h, line, (uint32_t)hdr_len, &idx)) {
		s->cur = s->hdrs[idx];
		s->java = comm_len >= 4 && memcmp(comm, "java", 4) == 0;
		return true;
	}
	struct sbuf *b = &s->scratch;
	sbuf_reset(b);
	for (size_t i = 0; i < comm_len; i++)
		sbuf_addch(b, comm[i] == ' ' ? '_' : comm[i]);
	if (s->o->tid || s->o->pid) {
		sbuf_addch(b, '-');
		if (pid)
			sbuf_add(b, pid, pid_len);
		else
			sbuf_addch(b, '?');
		if (s->o->tid) {
			sbuf_addch(b, '/');
			sbuf_add(b, tid, tid_len);
		}
	}
	if (b->oom)
		return false;
	struct header hd;
	/* lines without a comm (perf script -F without it) have no process frame to root their stacks */
	hd.root_frame = s->layout.comm ? label_frame(s->p, b->buf, b->len) : PROFILE_NOMEM;
	sbuf_reset(b);
	sbuf_add(b, comm, comm_len);
	if (b->oom)
		return false;
	uint32_t tid_v = parse_u32(tid, tid_len);
	hd.thread = profile_thread(s->p, pid ? parse_u32(pid, pid_len) : 0, tid_v, b->buf);
	/* perf script names the thread (comm); its process name is not on the line */
	if ((s->layout.comm && hd.root_frame == PROFILE_NOMEM) || hd.thread == PROFILE_NOMEM)
		return false;
	if (s->nhdrs == s->cap_hdrs) {
		size_t nc = grow_cap(s->nhdrs + 1, s->cap_hdrs);
		if (!REALLOC_ARRAY(s->hdrs, nc) || !REALLOC_ARRAY(s->last, nc))
			return false;
		memset(s->last + s->cap_hdrs, 0, (nc - s->cap_hdrs) * sizeof *s->last);
		s->cap_hdrs = nc;
	}
	hd.idx = (uint32_t)s->nhdrs;
	s->hdrs[s->nhdrs] = hd;
	const char *key = key_copy(s, line, hdr_len);
	if (!key || !tc_put(&s->headers, h, key, (uint32_t)hdr_len, (uint32_t)s->nhdrs))
		return false;
	s->nhdrs++;
	s->cur = hd;
	s->java = comm_len >= 4 && memcmp(comm, "java", 4) == 0;
	return true;
}

/* "1234.567890" seconds -> nanoseconds; false when the token is not a time */
static bool parse_time(const char *t, size_t n, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	size_t i = 0, digits = 0;
	while (i < n && t[i] >= '0' && t[i] <= '9')
		sec = sec * 10 + (uint64_t)(t[i++] - '0');
	if (i == 0 || i == n || t[i] != '.')
		return false;
	for (i++; i < n && t[i] >= '0' && t[i] <= '9'; i++)
		if (digits < 9) {
			frac = frac * 10 + (uint64_t)(t[i] - '0');
			digits++;
		}
	if (i != n)
		return false;
	while (digits++ < 9)
		frac *= 10;
	*ns = sec * 1000000000ULL + frac;
	return true;
}

static void event_line(struct ps *s, const char *line, const char *le)
{
	s->in_event = true;
	struct ps_fields f;
	/* the layout is the first line's that gave a sample: a weird line before it decides nothing */
	if (!s->layout_confirmed)
		s->layout.known = false;
	if (!event_fields(&s->layout, line, le, &f)) {
		warn_once(s, &s->warned_event, "Weird event line", line, le);
		s->in_event = false;
		return;
	}
	s->period = 1;
	/* a period weighs in its event's unit: without the event's name (-F without event) it has none, and the
	 * events count as samples */
	if (f.period && f.ev) {
		uint64_t v = 0;
		bool ok = true;
		for (size_t i = 0; i < f.period_len && ok; i++) {
			if (v > UINT64_MAX / 10 - 10)
				ok = false;
			else
				v = v * 10 + (uint64_t)(f.period[i] - '0');
		}
		if (ok) {
			s->period = v;
			s->have_period = true;
		}
	}
	if (f.ev) {
		if (s->have_event) {
			if (f.ev_len != s->event_len || memcmp(f.ev, s->event, f.ev_len) != 0) {
				s->skip = true;
				s->filtered++;
				return;
			}
		} else {
			/* the first event type seen is the one kept; its name outlives this block of text */
			const char *copy = key_copy(s, f.ev, f.ev_len);
			if (!copy) {
				s->oom = true;
				return;
			}
			s->have_event = true;
			s->event = copy;
			s->event_len = f.ev_len;
		}
	}
	uint64_t ns;
	if (s->o->keep_timeline && f.time && parse_time(f.time, f.time_len, &ns)) {
		s->time_ns = ns;
		if (!s->have_time) {
			s->have_time = true;
			s->first_time = ns;
		}
	}
	s->events++;
	if (!event_header(s, line, &f)) {
		s->oom = true;
		return;
	}
	if (f.rest) {
		stack_line(s, f.rest, le);
		s->in_event = false;
	}
}

/* An event of a file whose lines have no header fields (perf script -F ip,sym): its first stack line starts it. */
static void headerless_event(struct ps *s, const char *line)
{
	struct ps_fields f;
	memset(&f, 0, sizeof f);
	s->in_event = true;
	s->period = 1;
	s->events++;
	if (!event_header(s, line, &f))
		s->oom = true;
}

static void after_event(struct ps *s)
{
	if (s->stack.n && !s->skip) {
		struct last_stack *L = &s->last[s->cur.idx];
		size_t root = s->cur.root_frame != PROFILE_NOMEM, n = s->stack.n + root;
		if (n > L->cap) {
			size_t nc = grow_cap(n, L->cap);
			if (!REALLOC_ARRAY(L->frames, nc) || !REALLOC_ARRAY(L->nodes, nc) || !REALLOC_ARRAY(L->prev, nc)) {
				s->oom = true;
				return;
			}
			L->cap = nc;
		}
		/* outermost first: the process frame, then the collected frames reversed; the part shared with the
		 * thread's previous stack is reused, the rest goes down the prefix tree as one path */
		for (size_t i = 0; i < n; i++)
			L->frames[i] = i || !root ? s->stack.v[s->stack.n - i - 1 + root] : s->cur.root_frame;
		size_t k = 0;
		while (k < n && k < L->n && L->nodes[k] != PROFILE_NOMEM && L->frames[k] == L->prev[k])
			k++;
		uint32_t node = k ? L->nodes[k - 1] : PROFILE_ROOT;
		if (k < n)
			node = profile_stack_path(s->p, node, L->frames + k, n - k, L->nodes + k);
		if (node == PROFILE_NOMEM) {
			s->oom = true;
			L->n = 0;
			return;
		}
		memcpy(L->prev, L->frames, n * sizeof *L->prev);
		L->n = n;
		/* the event's period is its weight (stackcollapse-perf's semantics) over one sample */
		if (!profile_add_weighted(s->p, node, s->cur.thread, s->time_ns, s->period, 1)) {
			s->oom = true;
			return;
		}
		s->samples++;
		s->with_period += s->have_period;
		s->layout_confirmed = true;
	}
	s->in_event = false;
	s->skip = false;
	s->stack.n = 0;
	s->period = 1;
	s->have_period = false;
}

bool fmt_perf_script_sniff(const char *buf, size_t len)
{
	const char *end = buf + len, *line = buf;
	const char *ev = NULL;
	int looked = 0;
	while (line < end && looked < 64) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end;
		const char *t = le;
		while (t > line && is_ws(t[-1]))
			t--;
		if (line < t && *line != '#') {
			looked++;
			if (!ev) {
				struct ps_layout L = { 0 };
				struct ps_fields f;
				/* a file of stack lines only (-F ip,sym): a tab, an address, a name */
				if (*line == '\t' && looked == 1) {
					const char *w = skip_blanks(line, t), *we = word_end(w, t);
					if (hex_token(w, we) && we < t)
						return true;
				}
				if (!event_fields(&L, line, t, &f) || (!f.ev && !f.pid && !f.time && !f.tid))
					return false;
				ev = line;
				/* a one-frame stack on the event line itself: "... cycles:u:  ffff sym (module)" */
				if (f.rest && t[-1] == ')' && memchr(f.rest, '(', (size_t)(t - f.rest)))
					return true;
			} else {
				/* the line after an event must be a stack line: "addr sym (module)", or a tab, an
				 * address and a name when perf script -F left the module out */
				const char *q = line;
				while (q < t && is_ws(*q))
					q++;
				const char *sp = memchr(q, ' ', (size_t)(t - q));
				if (!sp || q == sp)
					return false;
				for (const char *h = q; h < sp; h++)
					if (!is_hex(*h) && *h != 'x')
						return false;
				return (t[-1] == ')' && memchr(sp, '(', (size_t)(t - sp)) != NULL) || *line == '\t';
			}
		} else if (line < t) {
			/* comment */
		} else if (ev) {
			ev = NULL; /* an event without stack lines; look at the next one */
		}
		line = nl ? nl + 1 : end;
	}
	return false;
}

void ps_init(struct ps *s, struct profile *p, const struct fmt_read_opts *opts, struct perr *e)
{
	memset(s, 0, sizeof *s);
	s->p = p;
	s->o = opts;
	s->e = e;
	s->period = 1;
	s->scratch = (struct sbuf)SBUF_INIT;
	s->scratch2 = (struct sbuf)SBUF_INIT;
	/* allocated up front: an empty name is then "" and never a NULL pointer */
	if (!sbuf_grow(&s->scratch, 256) || !sbuf_grow(&s->scratch2, 256))
		s->oom = true;
}

void ps_run(struct ps *s, const char *buf, const char *end)
{
	for (const char *line = buf; line < end && !s->oom && !s->capped;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *next = nl ? nl + 1 : end;
		if (*line == '#') {
			line = next;
			continue;
		}
		const char *le = nl ? nl : end;
		while (le > line && is_ws(le[-1]))
			le--;
		if (le == line)
			after_event(s);
		else if (s->in_event) {
			if (!srcline_line(line, le))
				stack_line(s, line, le);
		} else if (*line == '\t' && (s->layout.headerless || !s->layout.known) &&
			   hex_token(skip_blanks(line, le), word_end(skip_blanks(line, le), le))) {
			s->layout.known = s->layout.headerless = true;
			headerless_event(s, line);
			if (!s->oom)
				stack_line(s, line, le);
		} else {
			event_line(s, line, le);
			if (s->stack.n)
				after_event(s);
		}
		line = next;
	}
}

void ps_end(struct ps *s)
{
	if (!s->oom && s->stack.n)
		after_event(s);
}

void ps_release(struct ps *s)
{
	for (struct key_block *b = s->keys, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	tc_release(&s->lines);
	tc_release(&s->headers);
	u32vec_release(&s->groups);
	for (size_t i = 0; i < s->nhdrs; i++) {
		free(s->last[i].frames);
		free(s->last[i].nodes);
		free(s->last[i].prev);
	}
	free(s->last);
	free(s->hdrs);
	u32vec_release(&s->stack);
	sbuf_release(&s->scratch);
	sbuf_release(&s->scratch2);
}
