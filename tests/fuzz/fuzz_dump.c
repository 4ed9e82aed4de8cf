/* fuzz_dump.c — libFuzzer target for `plumb dump`'s readers: the /proc/PID/task/TID/syscall line parser, and
 * `--core FILE` on whatever bytes (the input, written to a memfd, read as a core file: elfutils' parse, then the
 * thread walk and the symbolizer over what it reports). No crash, no read past the input, one error or a dump. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sample/dump.h"

/* elfutils 0.188 leaks 16 bytes inside dwfl_getthreads for some malformed cores (an allocation of libdw's own,
 * made and lost in its core-attach code, whatever the caller does). Leaks under libdw are not reported; every
 * allocation of plumb's own is freed by dump_free (checked by the AddressSanitizer runs of test_dump). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libdw.so\n";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	long nr;
	uint64_t sp, pc;
	if (dump_parse_syscall(text, &nr, &sp, &pc) && nr < -1)
		abort();
	free(text);

	int fd = memfd_create("core", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		struct dump_opts o = { .core = path };
		struct dump *d = NULL;
		struct perr e = PERR_INIT;
		if (dump_take(&o, &d, &e) == PLUMB_OK) {
			for (size_t i = 0; i < d->nthreads; i++)
				if (d->threads[i].nframes && !d->threads[i].frames)
					abort();
			dump_free(d);
		} else if (!e.msg[0]) {
			abort(); /* a failure always says why */
		}
	}
	close(fd);
	return 0;
}
