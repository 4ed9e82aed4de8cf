/* preload_common.c — what both halves of libplumb-preload.so (sampler.c, alloc.c) do alike: reach the memory plumb
 * shares with them (the memfd it names in the environment) and copy a slice of a thread's stack. Linked into the
 * preload library only (its version script keeps these local). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/lib_internal.h"

void *lib_map_env_fd(const char *env, size_t min_size, bool (*valid)(const void *m, uint64_t size))
{
	const char *v = getenv(env);
	if (!v || !*v)
		return NULL;
	char *end;
	long fd = strtol(v, &end, 10);
	if (*end || fd < 0 || fd > 1 << 20)
		return NULL;
	struct stat st;
	if (fstat((int)fd, &st) != 0 || st.st_size < (off_t)min_size)
		return NULL;
	/* the system calls themselves: alloc.c interposes mmap and munmap */
	void *m = (void *)syscall(SYS_mmap, NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (!valid(m, (uint64_t)st.st_size)) {
		syscall(SYS_munmap, m, (size_t)st.st_size);
		return NULL;
	}
	return m;
}

void lib_thread_stack(uintptr_t *lo, uintptr_t *hi)
{
	pthread_attr_t attr;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		void *addr;
		size_t size;
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			*lo = (uintptr_t)addr;
			*hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
}

uint32_t lib_copy_stack(uint8_t *dst, uint64_t sp, uint32_t want, uintptr_t lo, uintptr_t hi, pid_t pid)
{
	if (hi && sp >= lo && sp < hi) {
		uint64_t avail = hi - sp;
		uint32_t n = avail < want ? (uint32_t)avail : want;
		memcpy(dst, (const void *)(uintptr_t)sp, n);
		return n;
	}
	struct iovec local = { dst, want }, remote = { (void *)(uintptr_t)sp, want };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	return n > 0 ? (uint32_t)n : 0;
}
