/* perf_script.c — reads `perf script` text into the profile model with stackcollapse-perf's semantics (as
 * inferno 0.12 implements them): the process name is the root frame, symbol offsets are stripped, argument
 * lists are tidied away, a sample weighs its period when the event line carries one, only the first event type
 * is kept, and the --pid/--tid/--kernel/--jit/--addrs options name frames the way those tools do.
 *
 * Built for speed (hundreds of MB/s): one pass over the buffer with memchr, no allocation per line. A stack
 * line's text after the address ("func+0x12 (module)") is looked up in a cache keyed by those bytes (which stay
 * in the caller's buffer), so each distinct line is parsed and interned once; the event header "comm pid/tid" is
 * cached the same way. */
#include "format/format.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/sbuf.h"
#include "base/u32vec.h"
#include "format/textcache.h"

#define WARN_MAX 400

/* The event filter handed from the first half of a split read to the second. */
struct ev_share {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool known;
	const char *event; /* NULL: the first half had no event line */
	size_t len;
};

static void share_publish(struct ev_share *sh, const char *ev, size_t len)
{
	pthread_mutex_lock(&sh->mu);
	if (!sh->known) {
		sh->known = true;
		sh->event = ev;
		sh->len = len;
		pthread_cond_broadcast(&sh->cv);
	}
	pthread_mutex_unlock(&sh->mu);
}

/* Copies of cache keys, packed in blocks that never move. */
struct key_block {
	struct key_block *next;
	size_t used;
	char data[65536];
};

struct header {
	uint32_t root_frame;
	uint32_t thread;
	uint32_t idx;      /* index in ps.hdrs / ps.last */
};

/* The last stack seen for one header (thread): consecutive samples of a thread share most outer frames, so
 * the walk down the prefix tree resumes where the new stack leaves the old one. */
struct last_stack {
	uint32_t *frames, *nodes; /* outermost first; nodes[i] is the tree node after frames[0..i] */
	size_t n, cap;
};

struct ps {
	struct profile *p;
	const struct fmt_read_opts *o;
	struct perr *e;
	bool oom;
	/* caches */
	struct tcache lines;     /* stack-line text -> index into groups */
	struct tcache headers;   /* "comm pid/tid" -> index into hdrs */
	struct u32vec groups;    /* [n, frame...] records */
	struct header *hdrs;
	struct last_stack *last;
	size_t nhdrs, cap_hdrs;
	/* the event being read */
	bool in_event, skip;
	bool java;               /* the process name starts with "java" (tidy Java signatures) */
	struct header cur;
	uint64_t period;
	uint64_t time_ns;
	struct u32vec stack;     /* frames innermost first (each line's group pushed reversed) */
	/* the event filter: the first event type seen */
	const char *event;
	size_t event_len;
	bool have_event;
	uint64_t filtered;       /* events of other types skipped */
	bool warned_event, warned_stack;
	char msg_event[WARN_MAX], msg_stack[WARN_MAX];
	struct ev_share *share;  /* two-part reads: the first part publishes the event filter, the second waits */
	bool publisher;
	const char *part, *part_end; /* the text a worker thread reads */
	uint64_t first_time;
	bool have_time;
	struct sbuf scratch, scratch2;
	struct key_block *keys;
};

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
	snprintf(msg, WARN_MAX, "%s: %.*s%s", what, n > 300 ? 300 : n, line, n > 300 ? "..." : "");
}

static inline bool is_ws(char c)
{
	return c == ' ' || (unsigned char)(c - '\t') <= '\r' - '\t'; /* \t \n \v \f \r */
}

static inline bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* ---- frame names ---- */

/* vmlinux, with or without a version suffix, at the end of the module path */
static bool is_vmlinux(const char *m, size_t n)
{
	const char *vm = NULL;
	for (const char *q = m; (q = memmem(q, (size_t)(m + n - q), "vmlinux", 7)); q++)
		vm = q;
	if (!vm)
		return false;
	for (const char *q = vm; q < m + n; q++)
		if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '-' ||
		      *q == '.' || *q == '_'))
			return false;
	return true;
}

static bool is_kernel_module(const char *m, size_t n)
{
	if (n == 9 && memcmp(m, "[unknown]", 9) == 0)
		return false;
	return (n && m[0] == '[') || (n >= 3 && memcmp(m + n - 3, ".ko", 3) == 0) || is_vmlinux(m, n);
}

static bool is_jit_module(const char *m, size_t n)
{
	if (n >= 14 && memcmp(m, "/tmp/perf-", 10) == 0 && memcmp(m + n - 4, ".map", 4) == 0)
		return true;
	return n >= 3 && memcmp(m + n - 3, ".so", 3) == 0 && memmem(m, n, "/jitted-", 8) != NULL;
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* Legacy Rust symbols that perf left half-mangled ("..", "$LT$", a trailing "::h<16 hex>") are spelled out.
 * Returns false (and leaves out untouched) when the name has no Rust hash. */
static bool fix_rust_name(const char *s, size_t n, struct sbuf *out)
{
	if (n < 17 || s[n - 17] != 'h')
		return false;
	for (size_t i = n - 16; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	size_t end = n - 17;
	if (end >= 2 && s[end - 1] == ':' && s[end - 2] == ':')
		end -= 2;
	size_t i = 0;
	if (end >= 2 && s[0] == '_' && s[1] == '$')
		i = 1;
	static const struct {
		const char *from, *to;
	} esc[] = {
		{ "$SP$", "@" },   { "$BP$", "*" },   { "$RF$", "&" },   { "$LT$", "<" },   { "$GT$", ">" },
		{ "$LP$", "(" },   { "$RP$", ")" },   { "$C$", "," },    { "$u7e$", "~" },  { "$u20$", " " },
		{ "$u27$", "'" },  { "$u3d$", "=" },  { "$u5b$", "[" },  { "$u5d$", "]" },  { "$u7b$", "{" },
		{ "$u7d$", "}" },  { "$u3b$", ";" },  { "$u2b$", "+" },  { "$u21$", "!" },  { "$u22$", "\"" },
	};
	sbuf_reset(out);
	while (i < end) {
		if (s[i] == '.') {
			if (i + 1 < end && s[i + 1] == '.') {
				sbuf_add(out, "::", 2);
				i += 2;
			} else {
				sbuf_addch(out, '.');
				i++;
			}
		} else if (s[i] == '$') {
			size_t k;
			for (k = 0; k < sizeof esc / sizeof esc[0]; k++) {
				size_t fl = strlen(esc[k].from);
				if (end - i >= fl && memcmp(s + i, esc[k].from, fl) == 0) {
					sbuf_addstr(out, esc[k].to);
					i += fl;
					break;
				}
			}
			if (k == sizeof esc / sizeof esc[0]) {
				sbuf_add(out, s + i, end - i);
				break;
			}
		} else {
			size_t j = i;
			while (j < end && s[j] != '$' && s[j] != '.')
				j++;
			sbuf_add(out, s + i, j - i);
			i = j;
		}
	}
	return true;
}

/* Drops an argument list: the first top-level "(" that is not a Go method "pkg.(*T)" nor a C++
 * "(anonymous namespace)". Semicolons become colons (they separate frames in folded output). */
static size_t tidy_generic(char *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (f[i] == ';')
			f[i] = ':';
	long depth = 0;
	size_t last_dot = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		switch (f[i]) {
		case '<':
		case '{':
		case '[':
			depth++;
			break;
		case '>':
		case '}':
		case ']':
		case ')':
			depth--;
			break;
		case '(':
			if (depth == 0) {
				bool go = last_dot == i;
				bool anon = n - i >= 21 && memcmp(f + i, "(anonymous namespace)", 21) == 0;
				if (!go && !anon)
					return i;
			}
			depth++;
			break;
		case '.':
			last_dot = i + 1;
			break;
		default:
			break;
		}
	}
	return n;
}

/* Builds the frames of one stack line (several when "a->b" marks inlining) and appends a group record
 * [count, frame...] to s->groups; returns the record's index. */
static uint32_t parse_frames(struct ps *s, const char *pc, size_t pc_len, const char *raw, size_t raw_len,
			     const char *mod, size_t mod_len)
{
	uint32_t rec = (uint32_t)s->groups.n;
	if (!u32vec_push(&s->groups, 0)) {
		s->oom = true;
		return rec;
	}
	if (raw_len && raw[0] == '(')
		return rec; /* a process name, not a frame */
	if (fix_rust_name(raw, raw_len, &s->scratch2)) {
		raw = s->scratch2.buf;
		raw_len = s->scratch2.len;
	}
	bool kernel = is_kernel_module(mod, mod_len), jit = is_jit_module(mod, mod_len);
	str_id module = profile_intern(s->p, mod, mod_len);
	if (module == PROFILE_NOMEM) {
		s->oom = true;
		return rec;
	}
	uint32_t count = 0;
	const char *part = raw, *end = raw + raw_len;
	for (;;) {
		const char *arrow = memmem(part, (size_t)(end - part), "->", 2);
		const char *pe = arrow ? arrow : end;
		struct sbuf *f = &s->scratch;
		sbuf_reset(f);
		if (pe - part == 9 && memcmp(part, "[unknown]", 9) == 0 &&
		    !(mod_len == 9 && memcmp(mod, "[unknown]", 9) == 0 && !s->o->addrs)) {
			const char *name = "unknown";
			size_t nl = 7;
			if (!(mod_len == 9 && memcmp(mod, "[unknown]", 9) == 0)) {
				const char *slash = memrchr(mod, '/', mod_len);
				name = slash ? slash + 1 : mod;
				nl = (size_t)(mod + mod_len - name);
			}
			sbuf_addch(f, '[');
			sbuf_add(f, name, nl);
			if (s->o->addrs) {
				sbuf_add(f, " <", 2);
				sbuf_add(f, pc, pc_len);
				sbuf_addch(f, '>');
			}
			sbuf_addch(f, ']');
		} else {
			sbuf_add(f, part, (size_t)(pe - part));
		}
		if (f->oom) {
			s->oom = true;
			return rec;
		}
		size_t n = tidy_generic(f->buf, f->len);
		sbuf_setlen(f, n);
		if (s->java && n && f->buf[0] == 'L' && memchr(f->buf, '/', n)) {
			memmove(f->buf, f->buf + 1, n);
			f->len = --n;
		}
		uint8_t kind = kernel ? FRAME_KERNEL : jit ? FRAME_JIT : FRAME_USER;
		if (count > 0) {
			if (!contains(f->buf, f->len, "_[i]"))
				sbuf_add(f, "_[i]", 4);
		} else if (s->o->kernel && kernel) {
			sbuf_add(f, "_[k]", 4);
		} else if (s->o->jit && jit && !contains(f->buf, f->len, "_[j]")) {
			sbuf_add(f, "_[j]", 4);
		}
		struct frame fr = { 0 };
		fr.is_label = 1;
		fr.kind = kind;
		fr.inlined = count > 0;
		fr.module = module;
		fr.func = profile_intern(s->p, f->buf, f->len);
		uint32_t id = fr.func == PROFILE_NOMEM ? PROFILE_NOMEM : profile_frame(s->p, &fr);
		if (id == PROFILE_NOMEM || !u32vec_push(&s->groups, id)) {
			s->oom = true;
			return rec;
		}
		count++;
		if (!arrow)
			break;
		part = arrow + 2;
	}
	s->groups.v[rec] = count;
	return rec;
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

static void stack_line(struct ps *s, const char *line, const char *le)
{
	if (s->skip)
		return;
	const char *q = line;
	while (is_ws(*q)) /* stops before le: callers pass a line whose last byte is not white space */
		q++;
	const char *sp = memchr(q, ' ', (size_t)(le - q));
	if (!sp) {
		warn_once(s, &s->warned_stack, "Weird stack line", line, le);
		return;
	}
	const char *pc = q, *pc_end = sp;
	while (pc_end > pc && is_ws(pc_end[-1]))
		pc_end--;
	const char *rest = sp + 1;
	const char *lsp = memrchr(rest, ' ', (size_t)(le - rest));
	if (!lsp || le - (lsp + 1) < 2 || lsp[1] != '(' || le[-1] != ')') {
		warn_once(s, &s->warned_stack, "Weird stack line", line, le);
		return;
	}
	/* the cache key: the function text with its "+0x<hex>" offset cut off, and the "(module)" */
	const char *raw = rest, *raw_end = lsp;
	while (raw < raw_end && is_ws(*raw))
		raw++;
	while (raw_end > raw && is_ws(raw_end[-1]))
		raw_end--;
	bool blank = raw == raw_end;
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
		rec = parse_frames(s, pc, (size_t)(pc_end - pc), raw, (size_t)(raw_end - raw), lsp + 2,
				   (size_t)(le - lsp - 3));
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
	for (uint32_t i = n; i > 0; i--)
		if (!u32vec_push(&s->stack, s->groups.v[rec + i])) {
			s->oom = true;
			return;
		}
}

/* Finds "comm pid[/tid] " at the start of an event line: the first all-digit word (slash allowed) after the
 * first word. Returns the offset just past the space after it, or 0 when the line has none. */
static size_t event_parts(const char *line, const char *le, const char **comm, size_t *comm_len, const char **pid,
			  size_t *pid_len, const char **tid, size_t *tid_len)
{
	size_t n = (size_t)(le - line), word_start = 0;
	bool all_digits = false, last_space = false;
	size_t slash = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		char c = line[i];
		if (c == ' ') {
			if (all_digits && !last_space) {
				if (slash != (size_t)-1) {
					*pid = line + word_start;
					*pid_len = slash - word_start;
					*tid = line + slash + 1;
					*tid_len = i - slash - 1;
				} else {
					*pid = NULL;
					*pid_len = 0;
					*tid = line + word_start;
					*tid_len = i - word_start;
				}
				const char *cs = line, *ce = line + word_start - 1;
				while (cs < ce && is_ws(*cs))
					cs++;
				while (ce > cs && is_ws(ce[-1]))
					ce--;
				*comm = cs;
				*comm_len = (size_t)(ce - cs);
				return i + 1;
			}
			word_start = i + 1;
			all_digits = true;
		} else if (c == '/') {
			if (all_digits)
				slash = i;
		} else if (c < '0' || c > '9') {
			all_digits = false;
			slash = (size_t)-1;
		}
		last_space = c == ' ';
	}
	return 0;
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
static bool event_header(struct ps *s, const char *line, size_t hdr_len, const char *comm, size_t comm_len,
			 const char *pid, size_t pid_len, const char *tid, size_t tid_len)
{
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
	struct frame fr = { 0 };
	fr.is_label = 1;
	fr.func = profile_intern(s->p, b->buf, b->len);
	if (fr.func == PROFILE_NOMEM)
		return false;
	struct header hd;
	hd.root_frame = profile_frame(s->p, &fr);
	sbuf_reset(b);
	sbuf_add(b, comm, comm_len);
	if (b->oom)
		return false;
	uint32_t tid_v = parse_u32(tid, tid_len);
	hd.thread = profile_thread(s->p, pid ? parse_u32(pid, pid_len) : 0, tid_v, b->buf);
	if (hd.root_frame == PROFILE_NOMEM || hd.thread == PROFILE_NOMEM)
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
	if (!tc_put(&s->headers, h, line, (uint32_t)hdr_len, (uint32_t)s->nhdrs))
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
	const char *comm, *pid, *tid;
	size_t comm_len, pid_len, tid_len;
	size_t end = event_parts(line, le, &comm, &comm_len, &pid, &pid_len, &tid, &tid_len);
	if (!end) {
		warn_once(s, &s->warned_event, "Weird event line", line, le);
		s->in_event = false;
		return;
	}
	const char *rest = line + end;
	const char *c1 = memchr(rest, ':', (size_t)(le - rest));
	const char *single = NULL;
	s->period = 1;
	if (c1) {
		const char *p2 = c1 + 1;
		const char *c2 = memchr(p2, ':', (size_t)(le - p2));
		const char *p2e = c2 ? c2 : le;
		const char *lsp = memrchr(p2, ' ', (size_t)(p2e - p2));
		const char *ev = lsp ? lsp + 1 : p2;
		size_t ev_len = (size_t)(p2e - ev);
		if (lsp) {
			const char *prev = memrchr(p2, ' ', (size_t)(lsp - p2));
			const char *ps = prev ? prev + 1 : p2;
			uint64_t v = 0;
			bool ok = ps < lsp;
			for (const char *q = ps; q < lsp && ok; q++) {
				if (*q < '0' || *q > '9' || v > UINT64_MAX / 10 - 10)
					ok = false;
				else
					v = v * 10 + (uint64_t)(*q - '0');
			}
			if (ok)
				s->period = v;
		}
		if (!s->have_event && s->share && !s->publisher) {
			/* the second half of a split read: the filter is the first half's first event */
			pthread_mutex_lock(&s->share->mu);
			while (!s->share->known)
				pthread_cond_wait(&s->share->cv, &s->share->mu);
			if (s->share->event) {
				s->have_event = true;
				s->event = s->share->event;
				s->event_len = s->share->len;
			}
			pthread_mutex_unlock(&s->share->mu);
			s->share = NULL;
		}
		if (s->have_event) {
			if (ev_len != s->event_len || memcmp(ev, s->event, ev_len) != 0) {
				s->skip = true;
				s->filtered++;
				return;
			}
		} else {
			s->have_event = true;
			s->event = ev;
			s->event_len = ev_len;
			if (s->share && s->publisher)
				share_publish(s->share, ev, ev_len);
		}
		if (s->o->keep_timeline) {
			const char *t = c1;
			while (t > rest && !is_ws(t[-1]))
				t--;
			uint64_t ns;
			if (parse_time(t, (size_t)(c1 - t), &ns)) {
				s->time_ns = ns;
				if (!s->have_time) {
					s->have_time = true;
					s->first_time = ns;
				}
			}
		}
		if (c2) {
			const char *p3 = c2 + 1;
			const char *q = p3;
			while (q < le && *q != ':' && *q != ' ')
				q++;
			q = q < le ? q + 1 : p3;
			while (q < le && is_ws(*q))
				q++;
			if (q < le)
				single = q;
		}
	}
	if (!event_header(s, line, end - 1, comm, comm_len, pid, pid_len, tid, tid_len)) {
		s->oom = true;
		return;
	}
	if (single) {
		stack_line(s, single, le);
		s->in_event = false;
	}
}

static void after_event(struct ps *s)
{
	if (s->stack.n && !s->skip) {
		struct last_stack *L = &s->last[s->cur.idx];
		size_t n = s->stack.n + 1;
		if (n > L->cap) {
			size_t nc = grow_cap(n, L->cap);
			if (!REALLOC_ARRAY(L->frames, nc) || !REALLOC_ARRAY(L->nodes, nc)) {
				s->oom = true;
				return;
			}
			L->cap = nc;
		}
		/* outermost first: the process frame, then the collected frames reversed */
		size_t k = 0; /* frames shared with this thread's previous stack */
		uint32_t node = PROFILE_ROOT;
		for (size_t i = 0; i < n; i++) {
			uint32_t f = i ? s->stack.v[s->stack.n - i] : s->cur.root_frame;
			if (k == i && i < L->n && L->frames[i] == f) {
				node = L->nodes[i];
				k++;
				continue;
			}
			node = profile_stack(s->p, node, f);
			if (node == PROFILE_NOMEM) {
				s->oom = true;
				return;
			}
			L->frames[i] = f;
			L->nodes[i] = node;
		}
		L->n = n;
		if (!profile_add_sample(s->p, node, s->cur.thread, s->time_ns, s->period)) {
			s->oom = true;
			return;
		}
	}
	s->in_event = false;
	s->skip = false;
	s->stack.n = 0;
	s->period = 1;
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
				const char *c, *pd, *td;
				size_t cl, pl, tl;
				size_t off = event_parts(line, t, &c, &cl, &pd, &pl, &td, &tl);
				if (!off || !memchr(line + off, ':', (size_t)(t - line - (ptrdiff_t)off)))
					return false;
				ev = line;
				/* a one-frame stack on the event line itself: "... cycles:u:  ffff sym (module)" */
				if (t[-1] == ')' && memchr(line + off, '(', (size_t)(t - line - (ptrdiff_t)off)))
					return true;
			} else {
				/* the line after an event must be a stack line: "addr sym (module)" */
				const char *q = line;
				while (q < t && is_ws(*q))
					q++;
				const char *sp = memchr(q, ' ', (size_t)(t - q));
				if (!sp || q == sp)
					return false;
				for (const char *h = q; h < sp; h++)
					if (!is_hex(*h) && *h != 'x')
						return false;
				return t[-1] == ')' && memchr(sp, '(', (size_t)(t - sp)) != NULL;
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

static void ps_init(struct ps *s, struct profile *p, const struct fmt_read_opts *opts, struct perr *e)
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

static void ps_run(struct ps *s, const char *buf, const char *end)
{
	for (const char *line = buf; line < end && !s->oom;) {
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
		else if (s->in_event)
			stack_line(s, line, le);
		else {
			event_line(s, line, le);
			if (s->stack.n)
				after_event(s);
		}
		line = next;
	}
	if (!s->oom && s->stack.n)
		after_event(s);
	if (s->share && s->publisher)
		share_publish(s->share, NULL, 0); /* no event line at all in this part */
}

static void ps_release(struct ps *s)
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
	}
	free(s->last);
	free(s->hdrs);
	u32vec_release(&s->stack);
	sbuf_release(&s->scratch);
	sbuf_release(&s->scratch2);
}

static void *ps_thread(void *arg)
{
	struct ps *s = arg;
	ps_run(s, s->part, s->part_end);
	return NULL;
}

/* Adds everything src holds to dst (frames, stacks, threads, samples). src comes from the later part of the
 * same text, so appending keeps first-seen order and time order. Strings hold no NUL (checked by the caller). */
static bool merge_into(struct profile *dst, const struct profile *src)
{
	size_t nf = profile_nframes(src), ns = profile_nstacks(src), nt = profile_nthreads(src);
	uint32_t *fmap = malloc((nf ? nf : 1) * sizeof *fmap), *smap = malloc(ns * sizeof *smap);
	uint32_t *tmap = malloc((nt ? nt : 1) * sizeof *tmap);
	bool ok = fmap && smap && tmap;
	for (size_t f = 0; ok && f < nf; f++) {
		struct frame fr = *profile_frame_get(src, (uint32_t)f);
		fr.func = profile_intern_cstr(dst, profile_str(src, fr.func));
		fr.file = profile_intern_cstr(dst, profile_str(src, fr.file));
		fr.module = profile_intern_cstr(dst, profile_str(src, fr.module));
		ok = fr.func != PROFILE_NOMEM && fr.file != PROFILE_NOMEM && fr.module != PROFILE_NOMEM &&
		     (fmap[f] = profile_frame(dst, &fr)) != PROFILE_NOMEM;
	}
	if (ok)
		smap[0] = PROFILE_ROOT;
	for (size_t i = 1; ok && i < ns; i++)
		ok = (smap[i] = profile_stack(dst, smap[profile_stack_parent(src, (uint32_t)i)],
					      fmap[profile_stack_frame(src, (uint32_t)i)])) != PROFILE_NOMEM;
	for (size_t t = 0; ok && t < nt; t++) {
		const struct profile_thread *th = profile_thread_get(src, (uint32_t)t);
		ok = (tmap[t] = profile_thread(dst, th->pid, th->tid, profile_str(src, th->name))) != PROFILE_NOMEM;
	}
	size_t n;
	if (ok && profile_has_timeline(src)) {
		const struct profile_sample *tl = profile_timeline(src, &n);
		for (size_t i = 0; ok && i < n; i++)
			ok = profile_add_sample(dst, smap[tl[i].stack], tmap[tl[i].thread], tl[i].time_ns, tl[i].weight);
	} else if (ok) {
		const struct profile_count *c = profile_counts(src, &n);
		for (size_t i = 0; ok && i < n; i++)
			ok = profile_add_sample(dst, smap[c[i].stack], tmap[c[i].thread], 0, c[i].weight);
	}
	free(fmap);
	free(smap);
	free(tmap);
	return ok;
}

/* Where a big text splits in two for two threads: just after a blank line near the middle (every parser
 * state resets there). 0 when the text is small, holds NUL bytes, or has no such point. */
static size_t split_point(const char *buf, size_t len)
{
	if (len < ((size_t)16 << 20) || memchr(buf, '\0', len))
		return 0;
	const char *mid = buf + len / 2;
	const char *bl = memmem(mid, (size_t)(buf + len - mid), "\n\n", 2);
	return bl ? (size_t)(bl + 2 - buf) : 0;
}

enum plumb_err fmt_perf_script_read(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
				    struct perr *e)
{
	struct ps s, s2;
	struct profile *p2 = NULL;
	struct ev_share share = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, NULL, 0 };
	ps_init(&s, p, opts, e);
	ps_init(&s2, NULL, opts, e);
	size_t split = split_point(buf, len);
	pthread_t worker;
	bool threaded = false;
	if (split && (p2 = profile_new())) {
		profile_keep_timeline(p2, profile_has_timeline(p));
		s2.p = p2;
		s2.share = &share;
		s2.part = buf + split;
		s2.part_end = buf + len;
		s.share = &share;
		s.publisher = true;
		threaded = pthread_create(&worker, NULL, ps_thread, &s2) == 0;
		if (!threaded) {
			s.share = NULL;
			profile_free(p2);
			p2 = NULL;
		}
	}
	ps_run(&s, buf, buf + (threaded ? split : len));
	if (threaded) {
		pthread_join(worker, NULL);
		if (!s.oom && !s2.oom && !merge_into(p, p2))
			s.oom = true;
		s.oom |= s2.oom;
		s.filtered += s2.filtered;
		if (!s.have_time && s2.have_time) {
			s.have_time = true;
			s.first_time = s2.first_time;
		}
		if (!s.have_event && s2.have_event) {
			s.have_event = true;
			s.event = s2.event;
			s.event_len = s2.event_len;
		}
		if (!s.warned_event && s2.warned_event) {
			s.warned_event = true;
			memcpy(s.msg_event, s2.msg_event, WARN_MAX);
		}
		if (!s.warned_stack && s2.warned_stack) {
			s.warned_stack = true;
			memcpy(s.msg_stack, s2.msg_stack, WARN_MAX);
		}
	}
	enum plumb_err rc = PLUMB_OK;
	if (s.oom) {
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory reading perf script text");
	} else {
		if (opts->warn && s.warned_event)
			opts->warn(opts->warn_ctx, s.msg_event);
		if (opts->warn && s.warned_stack)
			opts->warn(opts->warn_ctx, s.msg_stack);
		struct profile_meta *m = profile_meta(p);
		m->backend = profile_intern_cstr(p, "perf-script");
		if (s.have_time)
			m->clock_origin_ns = s.first_time;
		if (s.have_event && s.event_len) {
			char ev[128];
			snprintf(ev, sizeof ev, "%.*s", (int)(s.event_len > 100 ? 100 : s.event_len), s.event);
			m->mode = profile_intern_cstr(p, ev);
			if (s.filtered && opts->warn) {
				char msg[256];
				snprintf(msg, sizeof msg,
					 "kept only events of the first type seen (%s); skipped %llu events of other types",
					 ev, (unsigned long long)s.filtered);
				opts->warn(opts->warn_ctx, msg);
			}
		}
	}
	ps_release(&s);
	ps_release(&s2);
	profile_free(p2);
	return rc;
}
