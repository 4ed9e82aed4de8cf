/* fuzz_pyspy_folded.c — py-spy's folded output as plumb reads it (sample/pyspy.c): any bytes must parse
 * without crashing, and the labels built from them must label and redact cleanly. */
#include <stddef.h>
#include <stdint.h>

#include "profile/label.h"
#include "profile/profile.h"
#include "sample/pyspy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile *p = profile_new();
	if (!p)
		return 0;
	struct perr e = PERR_INIT;
	uint64_t total = 0;
	uint32_t th = profile_thread(p, 1, 1, "");
	if (pyspy_read_folded((const char *)data, size, p, th, &total, &e) == PLUMB_OK) {
		struct label_table *t = label_table_build(p, 0);
		label_table_free(t);
	}
	profile_free(p);
	return 0;
}
