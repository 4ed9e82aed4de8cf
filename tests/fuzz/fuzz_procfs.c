/* fuzz_procfs.c — libFuzzer target for base/procfs's parsers of /proc text (a stat line, status, a maps line,
 * schedstat) and base/announce's lock-file parser: whatever the bytes (a comm may hold any of them), no read
 * past the input and no crash. The input is copied into a buffer of exactly its size, so an overread shows. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "os/announce.h"
#include "os/procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	char *cstr = malloc(size + 1);
	if (!text || !cstr) {
		free(text);
		free(cstr);
		return 0;
	}
	memcpy(text, data, size);
	memcpy(cstr, data, size);
	cstr[size] = '\0';

	struct procfs_stat st;
	if (procfs_stat_parse(text, size, &st) && strlen(st.comm) >= PROCFS_COMM_MAX)
		abort();
	struct procfs_status ss;
	if (procfs_status_parse(text, size, &ss) && (strlen(ss.name) >= PROCFS_COMM_MAX || ss.nnspid > PROCFS_NSPID_MAX))
		abort();
	uint64_t v;
	procfs_field_u64(text, size, "VmRSS:", &v);
	procfs_schedstat_parse(cstr, &v);
	struct announce a;
	announce_parse(text, size, &a);
	/* every line as a maps line */
	for (size_t at = 0; at < size;) {
		const char *nl = memchr(text + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (text + at)) : size - at;
		struct procfs_map m;
		if (procfs_maps_parse_line(text + at, len, &m) &&
		    (m.path < text + at || m.path + m.path_len != text + at + len || m.end < m.start))
			abort();
		at += len + 1;
	}
	free(text);
	free(cstr);
	return 0;
}
