/* fuzz_folded_order.c — libFuzzer target for the folded reader, strict and lenient. Besides not crashing, the
 * reader must not depend on line order: it reuses the previous line's prefix, so the same lines in reverse
 * order must give the same folded output (unless the text starts with a byte-order mark, which only counts there, or
 * has a "# plumb:" unit line, which counts only before the first stack). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

/* Reads text as folded and writes it back as folded into a malloc'd string (NULL when the read failed). */
static char *round_trip(const char *text, size_t len, bool lenient, size_t *out_len)
{
	struct fmt_read_opts o = { 0 };
	o.lenient = lenient;
	o.warn = quiet;
	struct profile *p = profile_new();
	struct perr e = PERR_INIT;
	char *out = NULL;
	*out_len = 0;
	if (p && fmt_folded_read_opts(text, len, &o, p, &e) == PLUMB_OK) {
		FILE *f = open_memstream(&out, out_len);
		struct fmt_write_opts wo = { 0 };
		if (f) {
			fmt_folded_write(p, f, &wo, &e);
			fclose(f);
		}
	}
	profile_free(p);
	return out;
}

static bool starts_with_bom(const char *t, size_t n)
{
	return n >= 2 && ((t[0] == '\xff' && t[1] == '\xfe') || (t[0] == '\xfe' && t[1] == '\xff'));
}

/* Whether a line of t, after blanks, starts with "# plumb:" (format/folded.c's plumb_header). */
static bool has_unit_line(const char *t, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && (t[j] == ' ' || t[j] == '\t'))
			j++;
		if (n - j >= 8 && memcmp(t + j, "# plumb:", 8) == 0)
			return true;
		const char *nl = memchr(t + j, '\n', n - j);
		if (!nl)
			break;
		i = (size_t)(nl - t) + 1;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	bool lenient = data[0] & 1;
	const char *text = (const char *)data + 1;
	size_t len = size - 1;
	/* the same lines, last first (each line keeps its bytes; a missing final newline is added) */
	char *rev = malloc(len + 2);
	if (!rev)
		return 0;
	size_t w = 0;
	const char *end = text + len;
	while (end > text) {
		const char *e = end;
		if (e[-1] == '\n')
			e--;
		const char *s = e;
		while (s > text && s[-1] != '\n')
			s--;
		memcpy(rev + w, s, (size_t)(e - s));
		w += (size_t)(e - s);
		rev[w++] = '\n';
		end = s;
	}
	size_t n1, n2;
	char *a = round_trip(text, len, lenient, &n1);
	char *b = round_trip(rev, w, lenient, &n2);
	/* a byte-order mark says how the whole file is encoded (UTF-16 folded, as speedscope reads it, format/stream.c) only at its
	 * start: reversed, its line is somewhere else and the file is another text (the fuzzer found FF FE), and a last
	 * line that starts with one starts the reversed text (FE FF) */
	bool bom = starts_with_bom(text, len) || starts_with_bom(rev, w);
	/* so does a "# plumb: samples=N unit=U" line, the unit of the counts after it: read only before the first
	 * stack (docs/design.md §6.1), so moving it past one or ahead of all changes the profile */
	bool unit_line = has_unit_line(text, len);
	/* the reverse order can only succeed or fail together with the original (same lines) */
	if (!bom && !unit_line && (a == NULL) != (b == NULL))
		abort();
	if (!bom && !unit_line && a && (n1 != n2 || memcmp(a, b, n1) != 0))
		abort();
	free(a);
	free(b);
	free(rev);
	return 0;
}
