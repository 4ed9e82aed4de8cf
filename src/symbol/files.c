/* files.c — the target's view of its files (files.h). One entry per ELF path (the first process that maps it
 * opens it), one kept O_PATH descriptor of the root of each process that lives in another mount namespace (for
 * its debug files, even after it exits), one entry per perf map. Invariant: every descriptor the set holds is a
 * regular file (or a directory for roots) checked when it was opened; nothing is ever opened by a name in
 * plumb's own view when the process's view was available. */
#include "symbol/files.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow.h"
#include "base/hashmap.h"
#include "base/intern.h"
#include "os/fs.h"
#include "os/procfs.h"

#define PERF_MAP_RETRY_NS 200000000ULL

struct elf_file {
	int fd;       /* -1: could not be opened */
	int root;     /* the root descriptor of a process in another mount namespace, or -1 */
	bool tried;
};

/* A process's perf map: looked for, found (fd), or refused. */
struct perf_map {
	pid_t pid;
	int fd;
	bool refused;
	uint64_t checked_ns;
	char module[48];
};

struct sym_files {
	struct interner paths; /* every ELF path seen; its id indexes elfs */
	struct elf_file *elfs;
	size_t nelfs, cap_elfs;
	struct hmap roots;     /* pid -> root descriptor + 1 (0 stored as "same namespace") */
	int *root_fds;
	size_t nroot_fds, cap_root_fds;
	uint64_t own_mnt_ns;   /* the inode of plumb's own mount namespace, 0 when unknown */
	struct perf_map *maps;
	size_t nmaps, cap_maps;
	struct hmap map_index; /* pid -> index in maps */
	struct sbuf notes;
};

struct sym_files *sym_files_new(void)
{
	struct sym_files *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->paths = (struct interner)INTERNER_INIT;
	sbuf_init(&f->notes);
	struct stat st;
	if (stat("/proc/self/ns/mnt", &st) == 0)
		f->own_mnt_ns = (uint64_t)st.st_ino;
	return f;
}

void sym_files_free(struct sym_files *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nelfs; i++)
		if (f->elfs[i].fd >= 0)
			close(f->elfs[i].fd);
	free(f->elfs);
	interner_release(&f->paths);
	for (size_t i = 0; i < f->nroot_fds; i++)
		close(f->root_fds[i]);
	free(f->root_fds);
	hmap_release(&f->roots);
	for (size_t i = 0; i < f->nmaps; i++)
		if (f->maps[i].fd >= 0)
			close(f->maps[i].fd);
	free(f->maps);
	hmap_release(&f->map_index);
	sbuf_release(&f->notes);
	free(f);
}

/* An O_PATH descriptor of pid's root when pid lives in another mount namespace (kept by the set), -1 when it
 * shares plumb's or is gone. */
static int foreign_root(struct sym_files *f, pid_t pid)
{
	uint32_t v;
	if (hmap_get(&f->roots, (uint64_t)pid, &v))
		return v ? f->root_fds[v - 1] : -1;
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
	bool foreign = f->own_mnt_ns && stat(path, &st) == 0 && (uint64_t)st.st_ino != f->own_mnt_ns;
	int fd = -1;
	if (foreign) {
		snprintf(path, sizeof path, "/proc/%d/root", (int)pid);
		fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd >= 0 && !ALLOC_GROW(f->root_fds, f->nroot_fds + 1, f->cap_root_fds)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		f->root_fds[f->nroot_fds++] = fd;
	hmap_put(&f->roots, (uint64_t)pid, fd >= 0 ? (uint32_t)f->nroot_fds : 0);
	return fd;
}

/* path without the kernel's " (deleted)" mark, into buf. */
static const char *undeleted(const char *path, char *buf, size_t n)
{
	static const char mark[] = " (deleted)";
	size_t len = strlen(path), m = sizeof mark - 1;
	if (len <= m || strcmp(path + len - m, mark) != 0 || len - m >= n)
		return path;
	memcpy(buf, path, len - m);
	buf[len - m] = '\0';
	return buf;
}

/* fd when it is a regular file (and, when ino is known, that inode), else closes it and gives -1. */
static int keep_if_mapped(int fd, uint64_t ino)
{
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (!ino || (uint64_t)st.st_ino == ino))
		return fd;
	close(fd);
	return -1;
}

int sym_files_elf(struct sym_files *f, pid_t pid, const char *path, uint64_t start, uint64_t end, uint64_t ino)
{
	if (!f || path[0] != '/')
		return -1;
	uint32_t id = intern(&f->paths, path, strlen(path), NULL);
	if (id == INTERN_NOMEM)
		return -1;
	if (id >= f->nelfs) {
		if (!ALLOC_GROW(f->elfs, (size_t)id + 1, f->cap_elfs))
			return -1;
		for (; f->nelfs <= id; f->nelfs++)
			f->elfs[f->nelfs] = (struct elf_file){ -1, -1, false };
	}
	struct elf_file *e = &f->elfs[id];
	if (e->tried)
		return e->fd;
	e->tried = true;
	char clean[4096];
	const char *name = undeleted(path, clean, sizeof clean);
	/* the mapped file itself, whatever happened to its name since (needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE) */
	int fd = keep_if_mapped(procfs_open_map_file(pid, start, end), 0);
	if (fd < 0)
		fd = keep_if_mapped(procfs_open_root(pid, name), ino);
	if (fd < 0)
		fd = keep_if_mapped(open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY), ino);
	if (fd >= 0) {
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	} else if (name != path || ino) {
		sbuf_addf(&f->notes, "note: %s (process %d) is no longer on disk as it was mapped, and "
			  "/proc/%d/map_files needs CAP_SYS_ADMIN: its frames stay unnamed\n", name, (int)pid, (int)pid);
	}
	e->fd = fd;
	e->root = foreign_root(f, pid);
	return fd;
}

int sym_files_elf_fd(const struct sym_files *f, const char *path)
{
	if (!f)
		return -1;
	uint32_t id = intern_find(&f->paths, path, strlen(path));
	return id < f->nelfs ? f->elfs[id].fd : -1;
}

bool sym_files_elf_tried(const struct sym_files *f, const char *path)
{
	if (!f)
		return false;
	uint32_t id = intern_find(&f->paths, path, strlen(path));
	return id < f->nelfs && f->elfs[id].tried;
}

const char *sym_files_view_path(const struct sym_files *f, const char *path, char *buf, size_t n)
{
	if (!f)
		return path;
	uint32_t id = intern_find(&f->paths, path, strlen(path));
	if (id >= f->nelfs || f->elfs[id].root < 0)
		return path;
	char clean[4096];
	int w = snprintf(buf, n, "/proc/self/fd/%d%s", f->elfs[id].root, undeleted(path, clean, sizeof clean));
	return w > 0 && (size_t)w < n ? buf : path;
}

static struct perf_map *perf_map_state(struct sym_files *f, pid_t pid)
{
	uint32_t idx;
	if (hmap_get(&f->map_index, (uint64_t)pid, &idx))
		return &f->maps[idx];
	if (!ALLOC_GROW(f->maps, f->nmaps + 1, f->cap_maps) ||
	    !hmap_put(&f->map_index, (uint64_t)pid, (uint32_t)f->nmaps))
		return NULL;
	struct perf_map *m = &f->maps[f->nmaps++];
	*m = (struct perf_map){ .pid = pid, .fd = -1 };
	return m;
}

bool sym_files_perf_map(struct sym_files *f, pid_t pid, char *module, size_t n)
{
	struct perf_map *m = f ? perf_map_state(f, pid) : NULL;
	if (!m || m->refused)
		return false;
	if (m->fd < 0) {
		uint64_t now = mono_ns();
		if (m->checked_ns && now - m->checked_ns < PERF_MAP_RETRY_NS)
			return false;
		m->checked_ns = now;
		pid_t nspid = procfs_ns_pid(pid);
		struct procfs_status st;
		char root[64];
		snprintf(root, sizeof root, "/proc/%d/root", (int)pid);
		int rfd = nspid > 0 && procfs_status_read(pid, 0, &st) ? open(root, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		if (rfd < 0)
			return false;
		snprintf(m->module, sizeof m->module, "/tmp/perf-%d.map", (int)nspid);
		struct perr e = PERR_INIT;
		m->fd = fs_open_trusted_in_root(rfd, m->module, st.uid_effective, NULL, &e);
		close(rfd);
		if (m->fd < 0 && e.code != PLUMB_ENOENT) {
			sbuf_addf(&f->notes, "note: the perf map of process %d is ignored: %s (its JIT frames stay unnamed)\n",
				  (int)pid, e.msg);
			m->refused = true;
		}
		if (m->fd < 0)
			return false;
	}
	snprintf(module, n, "%s", m->module);
	return true;
}

int sym_files_perf_map_fd(const struct sym_files *f, const char *module)
{
	for (size_t i = 0; f && i < f->nmaps; i++)
		if (f->maps[i].fd >= 0 && strcmp(f->maps[i].module, module) == 0)
			return f->maps[i].fd;
	return -1;
}

const char *sym_files_notes(const struct sym_files *f)
{
	return f ? f->notes.buf : "";
}
