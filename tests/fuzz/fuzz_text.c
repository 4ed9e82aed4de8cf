/* fuzz_text.c — libFuzzer target for what untrusted text passes on its way to a person (docs/design.md §3.3,
 * §3.6): the one escaper (base/shown.h) never lets a control byte, a C1 control or a byte that is not UTF-8
 * through, never writes past its buffer and always cuts with its marker; the terminal layer's fitting keeps to its
 * width with the same guarantee; the redactor's three forms and a bench sample's tag redaction accept any bytes. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/redact.h"
#include "base/shown.h"
#include "base/utf8.h"
#include "bench/evidence.h"
#include "render/term.h"

static void check_safe(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] == 0x7f || (p[i] == 0xc2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] < 0xa0))
			abort();
	if (!utf8_valid(s, n))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	size_t max = size ? data[0] : 0;
	char small[64], big[SHOWN_LINE_MAX * 4 + 64];
	size_t n = shown_escape(small, sizeof small, s, size, max);
	if (n >= sizeof small || strlen(small) != n)
		abort();
	check_safe(small, n);
	n = shown_escape(big, sizeof big, s, size, SHOWN_LINE_MAX);
	if (n >= sizeof big || strlen(big) != n)
		abort();
	check_safe(big, n);

	char *z = malloc(size + 1); /* a C string for the terminal layer (it stops at a NUL) */
	if (!z)
		return 0;
	memcpy(z, data, size);
	z[size] = '\0';
	struct sbuf out = SBUF_INIT;
	size_t width = size ? data[size - 1] : 0;
	size_t cols = term_fit(&out, z, width, size & 1);
	if (cols > width || (size & 1 && cols != width))
		abort();
	check_safe(out.buf, out.len);
	sbuf_release(&out);

	struct sbuf r = SBUF_INIT;
	redact_append(&r, s, size);
	redact_path_append(&r, s, size);
	redact_code_append(&r, s, size);
	sbuf_release(&r);

	json_t *tags = json_loadb(s, size, JSON_DECODE_ANY, NULL);
	if (json_is_object(tags)) {
		char *text = NULL;
		if (bench_tags_redacted(tags, &text) && text) {
			json_t *back = json_loads(text, 0, NULL);
			if (!json_is_object(back))
				abort(); /* what it writes is a JSON object */
			json_decref(back);
		}
		free(text);
	}
	json_decref(tags);
	free(z);
	return 0;
}
