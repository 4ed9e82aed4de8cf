/* redact.c — a single left-to-right scan; at each position it tries the secret shapes in turn and copies
 * the character when none matches. No regex engine: this runs on every distinct label a writer emits. */
#include "base/redact.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *home_override;

void redact_set_home(const char *home)
{
	free(home_override);
	home_override = home ? strdup(home) : NULL;
}

static const char *home_dir(void)
{
	if (home_override)
		return home_override;
	const char *h = getenv("HOME");
	return (h && h[0] == '/' && h[1]) ? h : NULL;
}

static bool is_word(unsigned char c)
{
	return isalnum(c) || c == '_';
}

/* Characters that may appear in a token or key value. */
static bool is_token_char(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '+' || c == '/' || c == '=';
}

/* Characters that end a URL or a key=value value. */
static bool ends_value(unsigned char c)
{
	return c == '\0' || isspace(c) || c == '&' || c == ';' || c == ',' || c == ')' || c == '(' || c == '"' ||
	       c == '\'' || c == '<' || c == '>' || c == '[' || c == ']' || c == '{' || c == '}' || c == '|' ||
	       c == '`';
}

/* Characters that end a URL (a query string goes on through '&' and ';'). */
static bool ends_url(unsigned char c)
{
	return c == '\0' || isspace(c) || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' || c == ')' ||
	       c == ']' || c == '}' || c == '|';
}

static size_t span(const char *s, size_t i, size_t len, int (*pred)(int))
{
	size_t j = i;
	while (j < len && pred((unsigned char)s[j]))
		j++;
	return j - i;
}

static int is_upper_digit(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int is_alnum_c(int c)
{
	return isalnum(c);
}

static int is_b64url(int c)
{
	return isalnum(c) || c == '-' || c == '_';
}

static int is_key_body(int c)
{
	return isalnum(c) || c == '-' || c == '_';
}

static bool starts(const char *s, size_t i, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	return len - i >= n && memcmp(s + i, lit, n) == 0;
}

static bool starts_ci(const char *s, size_t i, size_t len, const char *lit)
{
	size_t n = strlen(lit);
	return len - i >= n && strncasecmp(s + i, lit, n) == 0;
}

/* A private key block: from -----BEGIN ...PRIVATE KEY----- to its END line (or the end of the text). */
static size_t match_private_key(const char *s, size_t i, size_t len)
{
	if (!starts(s, i, len, "-----BEGIN "))
		return 0;
	const char *end_hdr = memmem(s + i + 11, len - i - 11, "-----", 5);
	if (!end_hdr)
		return 0;
	const char *kw = memmem(s + i, (size_t)(end_hdr - (s + i)), "PRIVATE KEY", 11);
	if (!kw)
		return 0;
	const char *end = memmem(end_hdr + 5, len - (size_t)(end_hdr + 5 - s), "-----END ", 9);
	if (!end)
		return len - i;
	const char *close = memmem(end + 9, len - (size_t)(end + 9 - s), "-----", 5);
	return close ? (size_t)(close + 5 - (s + i)) : len - i;
}

static size_t match_jwt(const char *s, size_t i, size_t len);

/* A key that starts with `prefix` and goes on with at least `min` characters of `body`: its length, or 0. */
static size_t prefixed(const char *s, size_t i, size_t len, const char *prefix, int (*body)(int), size_t min)
{
	size_t n = strlen(prefix);
	if (!starts(s, i, len, prefix))
		return 0;
	size_t b = span(s, i + n, len, body);
	return b >= min ? n + b : 0;
}

/* Vendor key shapes. Returns the length of the key at s+i, or 0. A prefix no ordinary word starts with (ghp_,
 * github_pat_, xoxb-, AKIA, glpat-, sk_live_) is enough: a short token, or one cut to fit a 15-byte process or
 * thread name, is still caught. Prefixes that are also words (ASIA, AIDA) or common text (sk-) need the full
 * length. */
static size_t match_vendor_key(const char *s, size_t i, size_t len)
{
	if (i > 0 && is_word((unsigned char)s[i - 1]))
		return 0;
	static const char *const aws[] = { "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA" };
	size_t m;
	if ((m = prefixed(s, i, len, "AKIA", is_upper_digit, 1)))
		return m;
	for (size_t k = 0; k < sizeof aws / sizeof aws[0]; k++)
		if ((m = prefixed(s, i, len, aws[k], is_upper_digit, 16)))
			return m;
	if ((m = prefixed(s, i, len, "github_pat_", is_key_body, 1)))
		return m;
	if (len - i > 4 && s[i] == 'g' && s[i + 1] == 'h' && strchr("pousr", s[i + 2]) && s[i + 3] == '_' &&
	    span(s, i + 4, len, is_alnum_c) >= 1)
		return 4 + span(s, i + 4, len, is_alnum_c);
	if (len - i > 5 && starts(s, i, len, "xox") && strchr("abposr", s[i + 3]) && s[i + 4] == '-' &&
	    span(s, i + 5, len, is_key_body) >= 1)
		return 5 + span(s, i + 5, len, is_key_body);
	if ((m = prefixed(s, i, len, "sk-", is_key_body, 20)))
		return m;
	if ((m = prefixed(s, i, len, "sk_live_", is_alnum_c, 1)) || (m = prefixed(s, i, len, "rk_live_", is_alnum_c, 1)) ||
	    (m = prefixed(s, i, len, "sk_test_", is_alnum_c, 1)))
		return m;
	if ((m = prefixed(s, i, len, "AIza", is_key_body, 8)) || (m = prefixed(s, i, len, "glpat-", is_key_body, 1)))
		return m;
	return match_jwt(s, i, len);
}

/* A JWT: base64url header "eyJ..." '.' payload '.' signature. Its length, or 0. */
static size_t match_jwt(const char *s, size_t i, size_t len)
{
	if (i > 0 && is_word((unsigned char)s[i - 1]))
		return 0;
	if (starts(s, i, len, "eyJ")) {
		size_t a = span(s, i, len, is_b64url);
		if (a >= 10 && i + a < len && s[i + a] == '.') {
			size_t b = span(s, i + a + 1, len, is_b64url);
			if (b >= 4 && i + a + 1 + b < len && s[i + a + 1 + b] == '.') {
				size_t c = span(s, i + a + 2 + b, len, is_b64url);
				return a + b + c + 2;
			}
		}
	}
	return 0;
}

/* "Bearer xxx" / "Basic xxx": keeps the scheme word, returns the length of word + blank + token. */
static size_t match_auth_scheme(const char *s, size_t i, size_t len, size_t *keep)
{
	if (i > 0 && is_word((unsigned char)s[i - 1]))
		return 0;
	size_t w = 0;
	if (starts_ci(s, i, len, "bearer "))
		w = 7;
	else if (starts_ci(s, i, len, "basic "))
		w = 6;
	else if (starts_ci(s, i, len, "token "))
		w = 6;
	if (!w)
		return 0;
	size_t t = 0;
	while (i + w + t < len && is_token_char((unsigned char)s[i + w + t]))
		t++;
	if (t < 8)
		return 0;
	*keep = w;
	return w + t;
}

/* Names whose value after '=' or ':' is a credential: any name ending in one of the long words ("api_token",
 * "DB_PASSWORD"), and the short ones ("pw", "tok") only as the whole name or its last part ("db_pw", "gh-tok"),
 * so that words merely ending in them ("stock=") are left alone. */
bool redact_is_secret_key(const char *name, size_t n)
{
	static const char *const suffixes[] = { "token", "key", "secret", "password", "passwd", "pwd", "sig",
		"signature", "credential", "credentials", "apikey", "auth", "session" };
	static const char *const short_words[] = { "pw", "tok", "pass" };
	for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
		size_t m = strlen(suffixes[k]);
		if (n >= m && strncasecmp(name + n - m, suffixes[k], m) == 0)
			return true;
	}
	for (size_t k = 0; k < sizeof short_words / sizeof short_words[0]; k++) {
		size_t m = strlen(short_words[k]);
		if (n >= m && strncasecmp(name + n - m, short_words[k], m) == 0 &&
		    (n == m || name[n - m - 1] == '_' || name[n - m - 1] == '-'))
			return true;
	}
	return false;
}

/* key=value: at s[i] == '=' preceded by a secret name. Returns the value's length (0: no match). In a path a
 * value also ends at '/': a directory named "token=ghp_..." loses its value, not the rest of the path. */
enum scan_mode {
	SCAN_TEXT, /* every shape */
	SCAN_PATH, /* every shape; a key's value ends at '/' */
	SCAN_CODE, /* a function name: every shape but the vendor-prefix tokens, which look like identifiers */
};

static size_t match_key_value(const char *s, size_t i, size_t len, bool path)
{
	if (s[i] != '=')
		return 0;
	size_t b = i;
	while (b > 0 && (isalnum((unsigned char)s[b - 1]) || s[b - 1] == '_' || s[b - 1] == '-'))
		b--;
	if (b == i || !redact_is_secret_key(s + b, i - b))
		return 0;
	if (b > 0 && s[b - 1] == '/') /* the key is a path component ("/x/token=CANARY/prog" in a command line): its
					 value ends at the next '/', so the program's name is kept */
		path = true;
	size_t v = i + 1;
	while (v < len && !ends_value((unsigned char)s[v]) && !(path && s[v] == '/'))
		v++;
	return v - (i + 1);
}

static bool is_scheme_char(unsigned char c)
{
	return isalnum(c) || c == '+' || c == '.' || c == '-';
}

/* A URL starting at s[i] ("scheme://"). Appends its redacted form and returns its length, or 0. */
static size_t redact_url(struct sbuf *out, const char *s, size_t i, size_t len)
{
	if (!isalpha((unsigned char)s[i]) || (i > 0 && is_scheme_char((unsigned char)s[i - 1])))
		return 0;
	size_t j = i;
	while (j < len && is_scheme_char((unsigned char)s[j]))
		j++;
	if (j - i < 2 || !starts(s, j, len, "://"))
		return 0;
	size_t auth = j + 3;
	size_t end = auth;
	while (end < len && !ends_url((unsigned char)s[end]))
		end++;
	/* authority ends at the first '/', '?' or '#' */
	size_t auth_end = auth;
	while (auth_end < end && s[auth_end] != '/' && s[auth_end] != '?' && s[auth_end] != '#')
		auth_end++;
	sbuf_add(out, s + i, auth - i);
	const char *at = memrchr(s + auth, '@', auth_end - auth);
	if (at) {
		sbuf_addstr(out, REDACTED "@");
		sbuf_add(out, at + 1, (size_t)(s + auth_end - (at + 1)));
	} else {
		sbuf_add(out, s + auth, auth_end - auth);
	}
	size_t q = auth_end;
	while (q < end && s[q] != '?' && s[q] != '#')
		q++;
	/* the path, itself scanned for key shapes (e.g. tokens in path segments) */
	for (size_t k = auth_end; k < q;) {
		size_t m = match_vendor_key(s, k, q);
		if (m) {
			sbuf_addstr(out, REDACTED);
			k += m;
		} else {
			sbuf_addch(out, s[k++]);
		}
	}
	if (q < end) {
		sbuf_addch(out, s[q]);
		sbuf_addstr(out, REDACTED);
	}
	return end - i;
}

/* Where a bare home directory ends: at the end of the text or before white space or punctuation that cannot
 * continue a path ("cd /home/alice; make" or "(/home/alice)"). */
static bool ends_path(const char *s, size_t at, size_t len)
{
	return at == len || isspace((unsigned char)s[at]) || strchr(";:,)'\"]}>|&", s[at]);
}

/* Drops a home prefix ("$HOME/" or "/home/USER/") at s[i] when it starts a path; a bare home directory is
 * replaced by "~" (*tilde set). Returns the bytes consumed, 0 when there is none. */
static size_t match_home(const char *s, size_t i, size_t len, bool *tilde)
{
	*tilde = false;
	if (s[i] != '/' || (i > 0 && (is_word((unsigned char)s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '/')))
		return 0;
	const char *home = home_dir();
	if (home) {
		size_t h = strlen(home);
		while (h > 1 && home[h - 1] == '/')
			h--;
		if (h > 1 && len - i >= h && memcmp(s + i, home, h) == 0) {
			if (len - i > h && s[i + h] == '/')
				return h + 1;
			if (ends_path(s, i + h, len)) {
				*tilde = true;
				return h;
			}
		}
	}
	if (starts(s, i, len, "/home/")) {
		size_t u = i + 6;
		while (u < len && (isalnum((unsigned char)s[u]) || s[u] == '.' || s[u] == '_' || s[u] == '-'))
			u++;
		if (u == i + 6)
			return 0;
		if (u < len && s[u] == '/')
			return u + 1 - i;
		if (ends_path(s, u, len)) {
			*tilde = true;
			return u - i;
		}
	}
	return 0;
}

/* The redactor; home_as_tilde writes a home prefix as "~/" (a message names a place to find) instead of dropping
 * it (in a profile the prefix is noise). */
static void redact_scan(struct sbuf *out, const char *s, size_t len, enum scan_mode mode, bool home_as_tilde)
{
	size_t i = 0, copy_from = 0;
	bool tilde;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		size_t m = 0, keep = 0;
		if (c == '-' && (m = match_private_key(s, i, len))) {
			sbuf_add(out, s + copy_from, i - copy_from);
			sbuf_addstr(out, REDACTED);
		} else if (c == '/' && (m = match_home(s, i, len, &tilde))) {
			sbuf_add(out, s + copy_from, i - copy_from);
			if (tilde)
				sbuf_addch(out, '~');
			else if (home_as_tilde)
				sbuf_addstr(out, "~/");
		} else if (isalpha(c) && (m = match_auth_scheme(s, i, len, &keep))) {
			sbuf_add(out, s + copy_from, i - copy_from);
			sbuf_add(out, s + i, keep);
			sbuf_addstr(out, REDACTED);
		} else if (isalpha(c) && (m = mode == SCAN_CODE ? match_jwt(s, i, len) : match_vendor_key(s, i, len))) {
			sbuf_add(out, s + copy_from, i - copy_from);
			sbuf_addstr(out, REDACTED);
		} else if (isalpha(c) && len - i > 3 && memchr(s + i, ':', len - i > 40 ? 40 : len - i)) {
			struct sbuf tmp = SBUF_INIT;
			m = redact_url(&tmp, s, i, len);
			if (m) {
				sbuf_add(out, s + copy_from, i - copy_from);
				sbuf_add(out, tmp.buf, tmp.len);
			}
			sbuf_release(&tmp);
		} else if (c == '=' && (m = match_key_value(s, i, len, mode == SCAN_PATH)) > 0) {
			sbuf_add(out, s + copy_from, i + 1 - copy_from);
			sbuf_addstr(out, REDACTED);
			m += 1;
		}
		if (m) {
			i += m;
			copy_from = i;
		} else {
			i++;
		}
	}
	sbuf_add(out, s + copy_from, len - copy_from);
}

void redact_append(struct sbuf *out, const char *s, size_t len)
{
	redact_scan(out, s, len, SCAN_TEXT, false);
}

void redact_path_append(struct sbuf *out, const char *s, size_t len)
{
	redact_scan(out, s, len, SCAN_PATH, false);
}

void redact_code_append(struct sbuf *out, const char *s, size_t len)
{
	redact_scan(out, s, len, SCAN_CODE, false);
}

char *redact_dup(const char *s)
{
	struct sbuf sb = SBUF_INIT;
	redact_append(&sb, s, strlen(s));
	return sbuf_detach(&sb, NULL);
}

char *redact_path_dup(const char *s)
{
	struct sbuf sb = SBUF_INIT;
	redact_path_append(&sb, s, strlen(s));
	return sbuf_detach(&sb, NULL);
}

char *redact_dup_message(const char *s)
{
	struct sbuf sb = SBUF_INIT;
	redact_scan(&sb, s, strlen(s), SCAN_TEXT, true);
	return sbuf_detach(&sb, NULL);
}

void redact_add_json(struct sbuf *out, const char *in, size_t len)
{
	struct sbuf r = SBUF_INIT;
	redact_append(&r, in, len);
	sbuf_add_json_text(out, r.buf, r.len);
	out->oom |= r.oom;
	sbuf_release(&r);
}
