/* fuzz_prom_push.c — libFuzzer target for what a push sends: an artifact (plumb.evidence.v1) or a metrics
 * recording (plumb.metrics.v1) read from the input and rendered into Prometheus' text format. Whatever the input
 * holds, every line must be one the format allows (a # HELP/# TYPE line or NAME{LABELS} VALUE with legal names,
 * quoted values whose only escapes are \\ \" \n, valid UTF-8) and the grouping path must hold no byte a URL
 * cannot carry, and the remote-write encoder must read the text back; anything else aborts. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "os/prom.h"
#include "os/prom_rw.h"
#include "base/utf8.h"
#include "bench/evidence.h"
#include "bench/push.h"
#include "metrics/metrics.h"

static bool name_at(const char **p, bool colon)
{
	const char *s = *p;
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || (colon && *s == ':')))
		return false;
	while ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
	       (colon && *s == ':'))
		s++;
	*p = s;
	return true;
}

static void check_line(const char *line, size_t len)
{
	if (!utf8_valid(line, len))
		abort();
	if (len >= 7 && (memcmp(line, "# HELP ", 7) == 0 || memcmp(line, "# TYPE ", 7) == 0)) {
		const char *p = line + 7;
		if (!name_at(&p, true) || *p != ' ')
			abort();
		return;
	}
	const char *p = line;
	if (!name_at(&p, true))
		abort();
	if (*p == '{') {
		p++;
		for (;;) {
			const char *n = p;
			if (!name_at(&p, false) || (n[0] == '_' && n[1] == '_') || *p++ != '=' || *p++ != '"')
				abort();
			while (*p != '"') {
				if (*p == '\n' || !*p)
					abort();
				if (*p == '\\' && !(p[1] == '\\' || p[1] == '"' || p[1] == 'n'))
					abort();
				p += *p == '\\' ? 2 : 1;
			}
			p++;
			if (*p == '}')
				break;
			if (*p++ != ',')
				abort();
		}
		p++;
	}
	if (*p != ' ' || (size_t)(p - line) + 1 >= len)
		abort();
}

static void check(const struct sbuf *body, const struct sbuf *path)
{
	/* the remote-write encoder reads back exactly what the text writer wrote */
	struct sbuf rw = SBUF_INIT;
	struct perr e = PERR_INIT;
	const struct prom_label job[] = { { "job", "j" } };
	if (prom_rw_encode(body, job, 1, 0, &rw, &e) != PLUMB_OK && e.code != PLUMB_ENOMEM)
		abort();
	sbuf_release(&rw);
	for (size_t i = 0; i < body->len;) {
		const char *nl = memchr(body->buf + i, '\n', body->len - i);
		if (!nl)
			abort(); /* every line ends with a newline */
		check_line(body->buf + i, (size_t)(nl - body->buf) - i);
		i = (size_t)(nl - body->buf) + 1;
	}
	for (size_t i = 0; i < path->len; i++) {
		unsigned char c = (unsigned char)path->buf[i];
		if (c <= ' ' || c >= 0x7f || c == '?' || c == '#' || c == '%')
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perr e = PERR_INIT;
	struct bench_evidence ev;
	if (bench_evidence_parse((const char *)data, size, "fuzz", &ev, &e) == PLUMB_OK) {
		const struct prom_label extra[] = { { "branch", "main" } };
		struct bench_push_opts o = { NULL, extra, 1 };
		struct sbuf body = SBUF_INIT, path = SBUF_INIT;
		if (bench_push_render(&ev, &o, &body, &path, &e) == PLUMB_OK)
			check(&body, &path);
		sbuf_release(&body);
		sbuf_release(&path);
		bench_evidence_release(&ev);
	}
	struct metrics_doc doc;
	if (metrics_doc_parse((const char *)data, size, &doc, &e) == PLUMB_OK) {
		struct sbuf body = SBUF_INIT, path = SBUF_INIT;
		if (metrics_doc_prom(&doc, "m", NULL, 0, &body, &path, &e) == PLUMB_OK)
			check(&body, &path);
		sbuf_release(&body);
		sbuf_release(&path);
		metrics_doc_release(&doc);
	}
	return 0;
}
