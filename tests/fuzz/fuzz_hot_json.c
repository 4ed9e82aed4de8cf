/* fuzz_hot_json.c — libFuzzer target for the plumb.hot.v1 summary reader (what `plumb diff` reads back), and
 * the writer and diff over whatever it accepted. */
#include <stdint.h>
#include <stdlib.h>

#include "analyze/analyze.h"
#include "format/hot_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hot_summary *s = NULL;
	struct perr e = PERR_INIT;
	if (fmt_hot_json_read((const char *)data, size, &s, &e) != PLUMB_OK)
		return 0;
	struct sbuf out = SBUF_INIT;
	fmt_hot_json_write(&out, s, size % 3);
	sbuf_release(&out);
	for (int k = 0; k < HOT_NTABLES; k++) {
		const struct hot_table *t = hot_summary_table(s, NULL, (enum hot_table_kind)k);
		struct hot_diff_row *rows = NULL;
		size_t n;
		if (t && hot_diff(t, s->all.total, &s->all.tables[HOT_LEAF], s->all.total, &rows, &n, &e) == PLUMB_OK)
			free(rows);
	}
	hot_summary_free(s);
	return 0;
}
