/* prom.c — the text exposition format (prom.h). Names are sanitised byte by byte, values redacted, made valid
 * UTF-8 and escaped, numbers written so they read back exactly (%.17g): whatever an artifact holds, the text is
 * one a Pushgateway accepts. */
#include "os/prom.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "os/http.h"
#include "base/redact.h"
#include "base/utf8.h"

static bool name_char(unsigned char c, bool first, bool colon)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':'))
		return true;
	return !first && c >= '0' && c <= '9';
}

static void sanitise(struct sbuf *out, const char *name, bool colon)
{
	const unsigned char *p = (const unsigned char *)(name ? name : "");
	if (!*p) {
		sbuf_addch(out, '_');
		return;
	}
	if (*p >= '0' && *p <= '9')
		sbuf_addch(out, '_');
	for (size_t i = 0; p[i]; i++)
		sbuf_addch(out, name_char(p[i], false, colon) ? (char)p[i] : '_');
}

void prom_metric_name(struct sbuf *out, const char *name)
{
	sanitise(out, name, true);
}

void prom_label_name(struct sbuf *out, const char *name)
{
	size_t at = out->len;
	sanitise(out, name, false);
	/* "__" begins Prometheus' own labels, whether the name had it or sanitising made it ("µs" is "__s") */
	if (!out->oom && out->len - at >= 2 && out->buf[at] == '_' && out->buf[at + 1] == '_') {
		sbuf_addch(out, ' ');
		if (!out->oom) {
			memmove(out->buf + at + 1, out->buf + at, out->len - at - 1);
			out->buf[at] = 'x';
		}
	}
}

bool prom_is_label_name(const char *s)
{
	if (!s || !*s || (s[0] == '_' && s[1] == '_'))
		return false;
	for (size_t i = 0; s[i]; i++)
		if (!name_char((unsigned char)s[i], i == 0, false))
			return false;
	return true;
}

void prom_label_text(struct sbuf *out, const char *value)
{
	struct sbuf red = SBUF_INIT;
	redact_append(&red, value ? value : "", value ? strlen(value) : 0);
	if (red.oom)
		out->oom = true; /* a value that could not be redacted is not written unredacted */
	else
		utf8_sanitize(out, red.buf, red.len);
	sbuf_release(&red);
}

void prom_label_value(struct sbuf *out, const char *value)
{
	struct sbuf text = SBUF_INIT;
	prom_label_text(&text, value);
	if (text.oom)
		out->oom = true;
	for (size_t i = 0; i < text.len; i++) {
		char c = text.buf[i];
		if (c == '\\' || c == '"')
			sbuf_addch(out, '\\'), sbuf_addch(out, c);
		else if (c == '\n')
			sbuf_addstr(out, "\\n");
		else
			sbuf_addch(out, c);
	}
	sbuf_release(&text);
}

void prom_family(struct sbuf *out, const char *name, const char *type, const char *help)
{
	sbuf_addstr(out, "# HELP ");
	prom_metric_name(out, name);
	sbuf_addch(out, ' ');
	/* HELP text escapes '\\' and newlines only; it is ours, but made valid UTF-8 all the same */
	for (const char *h = help ? help : ""; *h; h++) {
		if (*h == '\\')
			sbuf_addstr(out, "\\\\");
		else if (*h == '\n')
			sbuf_addstr(out, "\\n");
		else
			sbuf_addch(out, (unsigned char)*h < 0x80 ? *h : '?');
	}
	sbuf_addstr(out, "\n# TYPE ");
	prom_metric_name(out, name);
	sbuf_addf(out, " %s\n", type);
}

static void add_value(struct sbuf *out, double v)
{
	if (isnan(v))
		sbuf_addstr(out, "NaN");
	else if (isinf(v))
		sbuf_addstr(out, v > 0 ? "+Inf" : "-Inf");
	else
		sbuf_addf(out, "%.17g", v);
}

void prom_sample(struct sbuf *out, const char *name, const struct prom_label *labels, size_t nlabels, double value)
{
	prom_metric_name(out, name);
	bool open = false;
	/* the sanitised names written so far, to drop a repeat; a sample has few labels, so a scan is enough */
	size_t starts[64], lens[64], nseen = 0;
	for (size_t i = 0; i < nlabels; i++) {
		if (!labels[i].value || !labels[i].value[0])
			continue;
		size_t mark = out->len;
		sbuf_addch(out, open ? ',' : '{');
		size_t at = out->len;
		prom_label_name(out, labels[i].name);
		size_t len = out->len - at;
		bool repeat = nseen == sizeof starts / sizeof *starts;
		for (size_t k = 0; k < nseen && !repeat; k++)
			repeat = lens[k] == len && memcmp(out->buf + starts[k], out->buf + at, len) == 0;
		if (repeat || out->oom) {
			sbuf_setlen(out, out->oom ? out->len : mark);
			continue;
		}
		starts[nseen] = at;
		lens[nseen++] = len;
		sbuf_addstr(out, "=\"");
		prom_label_value(out, labels[i].value);
		sbuf_addch(out, '"');
		open = true;
	}
	sbuf_addstr(out, open ? "} " : " ");
	add_value(out, value);
	sbuf_addch(out, '\n');
}

static bool plain(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '_' || *s == '.'))
			return false;
	return true;
}

static void add_base64url(struct sbuf *out, const unsigned char *s, size_t n)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	if (!n) {
		sbuf_addch(out, '='); /* the Pushgateway's spelling of an empty value */
		return;
	}
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
		sbuf_addch(out, abc[v >> 18 & 63]);
		sbuf_addch(out, abc[v >> 12 & 63]);
		sbuf_addch(out, i + 1 < n ? abc[v >> 6 & 63] : '=');
		sbuf_addch(out, i + 2 < n ? abc[v & 63] : '=');
	}
}

void prom_grouping_path(struct sbuf *out, const char *job, const struct prom_label *key, size_t nkey)
{
	sbuf_addstr(out, "/metrics/job/");
	sbuf_addstr(out, job);
	for (size_t i = 0; i < nkey; i++) {
		struct sbuf text = SBUF_INIT;
		prom_label_text(&text, key[i].value);
		if (text.oom)
			out->oom = true;
		sbuf_addch(out, '/');
		prom_label_name(out, key[i].name);
		if (plain(text.buf)) {
			sbuf_addch(out, '/');
			sbuf_add(out, text.buf, text.len);
		} else {
			sbuf_addstr(out, "@base64/");
			add_base64url(out, (const unsigned char *)text.buf, text.len);
		}
		sbuf_release(&text);
	}
}

enum plumb_err prom_push(const char *base_url, const char *path, const struct sbuf *body, struct perr *e)
{
	struct sbuf url = SBUF_INIT;
	size_t n = strlen(base_url);
	while (n && base_url[n - 1] == '/')
		n--;
	sbuf_add(&url, base_url, n);
	sbuf_addstr(&url, path);
	enum plumb_err rc = sbuf_done(&url, e);
	if (rc == PLUMB_OK) {
		struct http_request rq = { "PUT", url.buf, PROM_TEXT_TYPE, body->buf, body->len, NULL };
		rc = http_send(&rq, NULL, e);
	}
	sbuf_release(&url);
	return rc;
}
