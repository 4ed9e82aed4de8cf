/* fuzz_file.h — for the targets of readers that take a path (the input rule of base/readall.h, then the parser):
 * the input bytes as a regular file, rewritten in place for every run: a memfd named by /proc/self/fd/N (a
 * regular file to stat and open, with no file system under it to slow each run), else a file of ours in /tmp,
 * removed at exit. */
#ifndef PLUMB_FUZZ_FILE_H
#define PLUMB_FUZZ_FILE_H

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fuzz_fd = -1;
static char fuzz_path[96];

static void fuzz_file_remove(void)
{
	unlink(fuzz_path);
}

/* The path of a file holding data[0..size) (tag names it: one file per target and process). */
static const char *fuzz_file(const uint8_t *data, size_t size, const char *tag)
{
	if (fuzz_fd < 0 && (fuzz_fd = memfd_create(tag, MFD_CLOEXEC)) >= 0) {
		snprintf(fuzz_path, sizeof fuzz_path, "/proc/self/fd/%d", fuzz_fd);
	} else if (fuzz_fd < 0) {
		snprintf(fuzz_path, sizeof fuzz_path, "/tmp/fuzz-%s-%ld", tag, (long)getpid());
		fuzz_fd = open(fuzz_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fuzz_fd < 0)
			abort();
		atexit(fuzz_file_remove);
	}
	if (ftruncate(fuzz_fd, 0) != 0 || (size && pwrite(fuzz_fd, data, size, 0) != (ssize_t)size))
		abort();
	return fuzz_path;
}

#endif
