/* perf_script_frames.c — the frames of one `perf script` stack line, named with stackcollapse-perf's semantics
 * (as inferno 0.12 implements them): symbol offsets and argument lists tidied away, legacy Rust names spelled
 * out, Java signatures trimmed, "a->b" inline chains split, and the --kernel/--jit/--addrs options' suffixes.
 * Runs once per distinct stack line (format/perf_script_parse.c caches the result), so clarity beats speed. */
#include "format/perf_script.h"

#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "profile/label.h"

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
	return (n && m[0] == '[') || mem_ends_with(m, n, ".ko") || is_vmlinux(m, n);
}

static bool is_jit_module(const char *m, size_t n)
{
	if (n >= 14 && memcmp(m, "/tmp/perf-", 10) == 0 && mem_ends_with(m, n, ".map"))
		return true;
	return mem_ends_with(m, n, ".so") && memmem(m, n, "/jitted-", 8) != NULL;
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

uint32_t ps_line_frames(struct ps *s, const char *pc, size_t pc_len, const char *raw, size_t raw_len,
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
		if (count > 0) {
			if (!contains(f->buf, f->len, "_[i]"))
				sbuf_add(f, "_[i]", 4);
		} else if (s->o->kernel && kernel) {
			sbuf_add(f, "_[k]", 4);
		} else if (s->o->jit && jit && !contains(f->buf, f->len, "_[j]")) {
			sbuf_add(f, "_[j]", 4);
		}
		/* the frame is the label stackcollapse-perf writes, read into its fields (profile/label.h) */
		uint32_t id = f->oom ? PROFILE_NOMEM : label_frame(s->p, f->buf, f->len);
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
