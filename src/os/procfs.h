/* procfs.h — the one reader of /proc: one function per file plumb uses (stat, status, comm, cmdline, schedstat,
 * maps, the task and pid lists), and a process's files as that process sees them (/proc/PID/root,
 * /proc/PID/map_files). Every read is bounded (the cap is stated beside each reader) and refuses what could
 * never end (a FIFO or a device behind /proc/PID/root).
 *
 * Ownership: nothing here allocates except procfs_cmdline and procfs_read_root, whose buffer the caller frees.
 * Readers fill caller-provided structs; iterators keep their buffer inside their struct (no stdio, no malloc),
 * so the metrics recorder inside libplumb reads /proc without allocating per sample.
 *
 * pid PROCFS_SELF (0) means /proc/self; tid 0 means the process's own file, tid > 0 /proc/PID/task/TID/. */
#ifndef PLUMB_OS_PROCFS_H
#define PLUMB_OS_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCFS_SELF 0
#define PROCFS_COMM_MAX 64            /* comm is 15 bytes for user tasks, up to 64 for kernel workers */
#define PROCFS_STAT_MAX 4096          /* a stat line is ~1 KiB at most: 52 numbers and a 64-byte comm */
#define PROCFS_LINE_MAX (4096 + 512)  /* a maps line with a PATH_MAX path; a longer line is skipped whole */
#define PROCFS_STATUS_MAX_LINES 256   /* status has ~60 lines; a longer file is cut */
#define PROCFS_MAPS_MAX_LINES (1u << 20) /* 16x the kernel's default vm.max_map_count */
#define PROCFS_CMDLINE_MAX ((size_t)8 << 20) /* ARG_MAX is far below 8 MiB */
#define PROCFS_NSPID_MAX 8            /* pid namespace levels kept (the kernel allows 32; 8 covers real nests) */
#define PROCFS_UNKNOWN UINT64_MAX     /* a status figure that was absent (a kernel thread has no VmRSS) */

/* ---- plain files ---- */

/* Writes "/proc/PID[/task/TID]/NAME" into buf. False when it does not fit. */
bool procfs_path(char *buf, size_t n, pid_t pid, pid_t tid, const char *name);
/* Opens /proc/PID[/task/TID]/NAME read-only, close-on-exec; -1 with errno on failure. For files re-read with
 * procfs_pread (a thread's stat or schedstat polled at every sample). */
int procfs_open(pid_t pid, pid_t tid, const char *name);
/* Reads at most cap-1 bytes of /proc/PID[/task/TID]/NAME into buf and NUL-terminates them. Returns the length,
 * or -1 with errno (ENOENT: the process or thread is gone). */
ssize_t procfs_read(pid_t pid, pid_t tid, const char *name, char *buf, size_t cap);
/* The same for any path (a /proc/sys setting, /proc/loadavg). */
ssize_t procfs_read_path(const char *path, char *buf, size_t cap);
/* Re-reads an open /proc file from its start into buf (cap-1 bytes at most, NUL-terminated); -1 on failure. */
ssize_t procfs_pread(int fd, char *buf, size_t cap);
/* The integer setting /proc/sys/NAME ("kernel/perf_event_paranoid"). False when absent or not a number. */
bool procfs_sysctl(const char *name, long *value);

/* ---- /proc/PID/stat ---- */

/* The fields of a stat line plumb uses (proc(5) numbers them 1..52). */
struct procfs_stat {
	pid_t pid;                     /* 1 */
	char comm[PROCFS_COMM_MAX];    /* 2, any bytes but NUL: ")", " " and "(" included */
	char state;                    /* 3: R S D Z T t X I ... */
	pid_t ppid;                    /* 4 */
	pid_t pgrp;                    /* 5 */
	pid_t session;                 /* 6 */
	uint64_t utime, stime;         /* 14, 15: clock ticks */
	uint64_t num_threads;          /* 20 */
	uint64_t starttime;            /* 22: clock ticks after boot; with the pid it names one process */
	uint64_t startcode, endcode;   /* 26, 27 (0 when the kernel hides them) */
	uint64_t startstack;           /* 28 */
	int processor;                 /* 39: the CPU it last ran on (-1 when the line is shorter) */
};

/* Parses a stat line. The comm is whatever lies between the first '(' and the LAST ')', so a name holding
 * ") (" or spaces cannot shift the fields after it. False when the text is not a stat line (fields up to 22
 * are required; 26..28 are 0 and processor is -1 when absent). */
bool procfs_stat_parse(const char *text, size_t len, struct procfs_stat *out);
/* Reads and parses /proc/PID[/task/TID]/stat (PROCFS_STAT_MAX bytes at most). False when gone or malformed. */
bool procfs_stat_read(pid_t pid, pid_t tid, struct procfs_stat *out);
/* Field 22 of pid's stat (start time in clock ticks after boot); 0 when unknown. */
uint64_t procfs_start_time(pid_t pid);
/* True when pid exists and is neither a zombie nor dead (an exited child of someone else is still "there"
 * for kill(pid, 0)). */
bool procfs_alive(pid_t pid);
/* A pidfd of pid (pidfd_open, Linux 5.3): poll() finds it readable once the process has ended, whoever its
 * parent is, and it cannot name a recycled pid. Close-on-exec; -1 with errno (ENOSYS on an older kernel, when
 * the caller falls back to polling). */
int procfs_pidfd(pid_t pid);

/* ---- /proc/PID/status ---- */

struct procfs_status {
	char name[PROCFS_COMM_MAX];    /* Name: (escaped by the kernel: "\n" for a newline) */
	pid_t ppid;                    /* PPid: */
	pid_t tracer_pid;              /* TracerPid: (0 when not traced) */
	uid_t uid_real, uid_effective; /* Uid: (first two of four) */
	uint64_t threads;              /* Threads: */
	uint64_t vm_rss_bytes;         /* VmRSS: in bytes, PROCFS_UNKNOWN when absent */
	uint64_t vm_hwm_bytes;         /* VmHWM: likewise */
	uint64_t voluntary_ctxt_switches; /* voluntary_ctxt_switches: */
	uint64_t cap_effective;        /* CapEff: bit mask */
	pid_t nspid[PROCFS_NSPID_MAX]; /* NSpid: the pid in each pid namespace, outermost (ours) first */
	size_t nnspid;                 /* 0 when the kernel has no NSpid line (before 4.1) */
};

/* Parses status text (any order of lines; absent lines leave zeros, or PROCFS_UNKNOWN for the Vm figures).
 * False when it holds no "Name:" line. */
bool procfs_status_parse(const char *text, size_t len, struct procfs_status *out);
/* Reads /proc/PID[/task/TID]/status line by line (PROCFS_STATUS_MAX_LINES lines at most; an over-long line
 * such as a huge Groups: list is skipped, not cut into). False when the process is gone. */
bool procfs_status_read(pid_t pid, pid_t tid, struct procfs_status *out);
/* The pid that pid has inside its own (innermost) pid namespace: what a process in a container calls itself,
 * and names its /tmp/perf-PID.map with. pid itself when there is one level or NSpid is unknown; 0 when gone. */
pid_t procfs_ns_pid(pid_t pid);
/* Finds "Key:<blanks><number>" in status-like text (status, smaps_rollup); `key` includes the colon. False
 * when the line is absent or not a number. */
bool procfs_field_u64(const char *text, size_t len, const char *key, uint64_t *value);

/* ---- small per-thread files ---- */

/* /proc/PID[/task/TID]/comm without its newline, into buf (at most n-1 bytes). False ("" in buf) when gone. */
bool procfs_comm(pid_t pid, pid_t tid, char *buf, size_t n);
/* The first field of schedstat: nanoseconds the task has run on a CPU. False when the text is not a number. */
bool procfs_schedstat_parse(const char *text, uint64_t *run_ns);
/* procfs_schedstat_parse of /proc/PID[/task/TID]/schedstat; 0 when unknown. */
uint64_t procfs_runtime_ns(pid_t pid, pid_t tid);
/* All of /proc/PID[/task/TID]/schedstat: ns on a CPU, ns waiting on a runqueue, and how many times it was put on
 * a CPU (a thread stopped where it ran has the count it had; one that had to be scheduled first has one more).
 * False when gone or unreadable. */
struct procfs_sched {
	uint64_t run_ns, wait_ns, slices;
};
bool procfs_sched_read(pid_t pid, pid_t tid, struct procfs_sched *out);
/* readlink of /proc/PID/exe into buf (NUL-terminated). Returns the length, or -1 with errno (also when the
 * target does not fit: ENAMETOOLONG). */
ssize_t procfs_exe(pid_t pid, char *buf, size_t n);

/* ---- /proc/PID/cmdline ---- */

/* The whole command line (arguments separated by NULs; trailing NULs dropped, so trailing empty arguments are
 * not seen; *out NUL-terminated, malloc'd, the caller frees it). Read whole, never cut: a secret cut in half no longer has the shape the redactor
 * knows. Returns 0, or an errno: ENOENT when gone, ENODATA for an empty line (a kernel thread, a zombie),
 * EFBIG past PROCFS_CMDLINE_MAX, ENOMEM. */
int procfs_cmdline(pid_t pid, char **out, size_t *len);

/* ---- directories: the pids of the machine, the threads of a process ---- */

/* Iterates over the numeric entries of a /proc directory with getdents64 into a buffer held here. */
struct procfs_dir {
	int fd;
	long len, off;
	char buf[4096] __attribute__((aligned(8)));
};
/* Opens /proc (every process of the machine, as this pid namespace sees it). False with errno on failure. */
bool procfs_pids_open(struct procfs_dir *d);
/* Opens /proc/PID/task (the threads of pid). False with errno (ENOENT: pid is gone). */
bool procfs_tasks_open(struct procfs_dir *d, pid_t pid);
/* The next pid or tid, in directory order; 0 at the end (or on a read error). Entries that are not numbers
 * ("self", "net") are skipped. */
pid_t procfs_dir_next(struct procfs_dir *d);
/* Closes the directory; safe to call twice. */
void procfs_dir_close(struct procfs_dir *d);

/* ---- /proc/PID/maps ---- */

struct procfs_map {
	uint64_t start, end, offset;
	char perms[5];                 /* "r-xp" */
	unsigned dev_major, dev_minor;
	uint64_t inode;
	const char *path;              /* "" when anonymous; "[heap]", "/x (deleted)" as the kernel shows it.
					* Points into the iterator: valid until the next call. */
	size_t path_len;
};

/* Reads a file line by line through a buffer held here (internal to maps and status; exposed for its size). */
struct procfs_lines {
	int fd;
	size_t len, off;
	bool eof;
	char buf[PROCFS_LINE_MAX];
};

struct procfs_maps {
	struct procfs_lines lines;
	unsigned nlines;
};

/* Opens pid's maps. False with errno (ENOENT: gone). */
bool procfs_maps_open(struct procfs_maps *m, pid_t pid);
/* The next mapping; false at the end, after PROCFS_MAPS_MAX_LINES lines, or on a read error. Malformed lines
 * are skipped. */
bool procfs_maps_next(struct procfs_maps *m, struct procfs_map *out);
void procfs_maps_close(struct procfs_maps *m);
/* Parses one maps line of len bytes (without its newline). path points into line: it ends at line + len, and
 * is NUL-terminated only when line is (the iterator's lines are). */
bool procfs_maps_parse_line(const char *line, size_t len, struct procfs_map *out);

/* ---- a process's own view of files ---- */

/* "/proc/PID/root" + path into buf: the file at `path` in pid's mount namespace and root. */
bool procfs_root_path(pid_t pid, const char *path, char *buf, size_t n);
/* Opens `path` (absolute) as pid sees it: resolved inside pid's root, so an absolute symlink in a container
 * stays in the container (openat2 RESOLVE_IN_ROOT; on a kernel without openat2, a plain open of
 * /proc/PID/root/path). Read-only, close-on-exec. -1 with errno. */
int procfs_open_root(pid_t pid, const char *path);
/* Reads the regular file `path` as pid sees it, whole (at most max bytes; EFBIG beyond), into *out
 * (NUL-terminated, malloc'd; the caller frees it). Anything but a regular file (a FIFO, a device) is refused
 * with EINVAL before a byte is read. Returns 0 or an errno. */
int procfs_read_root(pid_t pid, const char *path, size_t max, char **out, size_t *len);
/* "/proc/PID/map_files/START-END" into buf: the file mapped at [start, end), reachable even when it was
 * deleted or replaced on disk since (reading it needs CAP_SYS_ADMIN). */
bool procfs_map_file_path(pid_t pid, uint64_t start, uint64_t end, char *buf, size_t n);
/* Opens that file read-only, close-on-exec; -1 with errno (EPERM without CAP_SYS_ADMIN, ENOENT when nothing is
 * mapped there). */
int procfs_open_map_file(pid_t pid, uint64_t start, uint64_t end);

#endif
