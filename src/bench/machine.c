/* machine.c — machine facts, git state, build classification from DWARF producers, and the doctor.
 * Only reads: /proc, /sys, statvfs, the binary's DWARF, and `git` run read-only. */
#include "bench/machine.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/grow.h"
#include "os/procfs.h"
#include "base/redact.h"
#include "base/sbuf.h"
#include "os/spawn.h"
#include "base/str.h"

/* First line of a small file (/sys, /proc), trailing newline removed; false when unreadable. */
static bool read_line(const char *path, char *buf, size_t len)
{
	if (procfs_read_path(path, buf, len) < 0)
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* The first "model name" (x86) or "Model" (ARM boards, at the end) line of /proc/cpuinfo, whose first 64 KiB
 * hold it on any machine. */
static char *cpu_model(void)
{
	enum { CAP = 64 * 1024 };
	char *text = malloc(CAP);
	char *out = NULL;
	char *line = text && procfs_read_path("/proc/cpuinfo", text, CAP) > 0 ? text : NULL;
	while (line && !out) {
		char *end = strchr(line, '\n');
		if (end)
			*end = '\0';
		char *colon = strchr(line, ':');
		if (colon && (str_starts_with(line, "model name") || str_starts_with(line, "Model")))
			out = strdup(colon + 1 + strspn(colon + 1, " \t"));
		line = end ? end + 1 : NULL;
	}
	free(text);
	return out;
}

/* The governor of cpu0, or NULL without cpufreq. `all_same` says whether every CPU has it. */
static char *governor(bool *all_same)
{
	char buf[64], other[64], path[128];
	*all_same = true;
	if (!read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", buf, sizeof buf))
		return NULL;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	for (long i = 1; i < n; i++) {
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%ld/cpufreq/scaling_governor", i);
		if (read_line(path, other, sizeof other) && strcmp(other, buf) != 0)
			*all_same = false;
	}
	return strdup(buf);
}

void bench_machine_fill(struct bench_evidence *ev)
{
	ev->cpu_model = cpu_model();
	ev->cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct utsname u;
	if (uname(&u) == 0) {
		size_t n = strlen(u.sysname) + strlen(u.release) + strlen(u.machine) + 3;
		ev->kernel = malloc(n);
		if (ev->kernel)
			snprintf(ev->kernel, n, "%s %s %s", u.sysname, u.release, u.machine);
	}
	char host[256];
	if (gethostname(host, sizeof host) == 0) {
		host[sizeof host - 1] = '\0';
		ev->hostname = redact_dup(host);
	}
	bool same;
	ev->governor = governor(&same);
	double l[3];
	if (getloadavg(l, 3) == 3)
		memcpy(ev->load, l, sizeof l);
	char ts[32];
	time_t now = time(NULL);
	struct tm tm;
	if (gmtime_r(&now, &tm) && strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm))
		ev->created = strdup(ts);
}

/* Runs argv with stdout captured into out (stderr discarded); returns the exit status or -1. */
static int capture(const char *const argv[], const char *dir, struct sbuf *out)
{
	struct child c = CHILD_INIT;
	struct perr e = PERR_INIT;
	c.argv = argv;
	c.cwd = dir;
	c.in.how = c.err.how = CHILD_IO_NULL;
	c.out.how = CHILD_IO_PIPE;
	if (child_start(&c, &e) != PLUMB_OK)
		return -1;
	char buf[4096];
	ssize_t n;
	while ((n = read(c.out.fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			sbuf_add(out, buf, (size_t)n);
	close(c.out.fd);
	int status = child_finish(&c);
	return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void bench_git_fill(struct bench_evidence *ev, const char *dir)
{
	struct sbuf out = SBUF_INIT;
	const char *head[] = { "git", "rev-parse", "--verify", "-q", "HEAD", NULL };
	if (capture(head, dir, &out) == 0 && out.len >= 40) {
		ev->git_commit = strndup(out.buf, strcspn(out.buf, "\n"));
		sbuf_reset(&out);
		const char *status[] = { "git", "status", "--porcelain", "--untracked-files=no", NULL };
		if (capture(status, dir, &out) == 0)
			ev->git_dirty = out.len > 0;
	}
	sbuf_release(&out);
}

int bench_producer_optimized(const char *p)
{
	if (strncmp(p, "GNU AS", 6) == 0 || !strstr(p, " -"))
		return -1;
	int level = 0; /* GCC's default is -O0 */
	const char *s = p;
	while ((s = strstr(s, " -O")) != NULL) {
		s += 3;
		if (*s == '\0' || *s == ' ' || (*s >= '1' && *s <= '9') || *s == 's' || *s == 'z' ||
		    strncmp(s, "fast", 4) == 0)
			level = 1;
		else /* -O0, -Og: a debug build */
			level = 0;
	}
	return level;
}

enum bench_build bench_binary_build(const char *path, char **producer, char *why, size_t why_len)
{
	if (producer)
		*producer = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_len, "cannot open %s: %s", path, strerror(errno));
		return BENCH_BUILD_UNKNOWN;
	}
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		close(fd);
		snprintf(why, why_len, "no DWARF in %s (not ELF, or stripped): build flags unknown", path);
		return BENCH_BUILD_UNKNOWN;
	}
	size_t opt = 0, unopt = 0, silent = 0;
	char *opt_prod = NULL, *unopt_prod = NULL;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die die;
		Dwarf_Attribute attr;
		if (dwarf_offdie(dw, off + hsize, &die)) {
			const char *p = dwarf_formstring(dwarf_attr(&die, DW_AT_producer, &attr));
			if (p) {
				int lv = bench_producer_optimized(p);
				if (lv == 1) {
					opt++;
					if (!opt_prod)
						opt_prod = strdup(p);
				} else if (lv == 0) {
					unopt++;
					if (!unopt_prod)
						unopt_prod = strdup(p);
				} else {
					silent++;
				}
			}
		}
		off = next;
	}
	dwarf_end(dw);
	close(fd);
	enum bench_build b;
	if (opt == 0 && unopt == 0) {
		snprintf(why, why_len, "%s: %zu compile units, none records its compiler flags: build flags unknown",
			 path, silent);
		b = BENCH_BUILD_UNKNOWN;
	} else if (unopt >= opt) {
		snprintf(why, why_len, "%s is an unoptimized build (%zu of %zu compile units without -O1 or more)", path,
			 unopt, unopt + opt);
		b = BENCH_BUILD_UNOPTIMIZED;
	} else {
		snprintf(why, why_len, "%s is an optimized build (%zu of %zu compile units with -O1 or more)", path, opt,
			 unopt + opt);
		b = BENCH_BUILD_OPTIMIZED;
	}
	if (producer) {
		*producer = b == BENCH_BUILD_UNOPTIMIZED ? unopt_prod : b == BENCH_BUILD_OPTIMIZED ? opt_prod : NULL;
		if (*producer == unopt_prod)
			unopt_prod = NULL;
		else
			opt_prod = NULL;
	}
	free(opt_prod);
	free(unopt_prod);
	return b;
}

bool bench_binary_needs(const char *path, const char *prefix)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool found = false;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	while (elf && !found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && !found && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			found = name && strncmp(name, prefix, strlen(prefix)) == 0;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

const char *bench_build_trust(enum bench_build b)
{
	return b == BENCH_BUILD_OPTIMIZED ? BENCH_TRUST_OPTIMIZED
	       : b == BENCH_BUILD_UNOPTIMIZED ? BENCH_TRUST_HARNESS
					      : BENCH_TRUST_UNKNOWN;
}

/* Next shell word of s (quotes ' and " stripped, no expansion); returns NULL at the end. */
static char *next_word(const char **s)
{
	const char *p = *s;
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (!*p)
		return NULL;
	struct sbuf w = SBUF_INIT;
	char q = 0;
	for (; *p; p++) {
		if (q) {
			if (*p == q)
				q = 0;
			else
				sbuf_addch(&w, *p);
		} else if (*p == '\'' || *p == '"') {
			q = *p;
		} else if (*p == ' ' || *p == '\t' || *p == '\n' || *p == ';' || *p == '|' || *p == '&') {
			break;
		} else {
			sbuf_addch(&w, *p);
		}
	}
	*s = p;
	return sbuf_detach(&w, NULL);
}

static bool is_assignment(const char *w)
{
	const char *eq = strchr(w, '=');
	if (!eq || eq == w || isdigit((unsigned char)w[0]))
		return false;
	for (const char *c = w; c < eq; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return false;
	return true;
}

char *bench_command_program(const char *command, const char *cwd)
{
	const char *s = command;
	char *w;
	while ((w = next_word(&s)) != NULL) {
		if (is_assignment(w) || strcmp(w, "exec") == 0 || strcmp(w, "env") == 0 || w[0] == '\0') {
			free(w);
			continue;
		}
		break;
	}
	if (!w)
		return NULL;
	struct sbuf p = SBUF_INIT;
	char *found = NULL;
	if (strchr(w, '/')) {
		if (w[0] != '/' && cwd) {
			sbuf_addstr(&p, cwd);
			sbuf_addch(&p, '/');
		}
		sbuf_addstr(&p, w);
		if (!p.oom && access(p.buf, X_OK) == 0)
			found = sbuf_detach(&p, NULL);
	} else {
		const char *path = getenv("PATH");
		if (!path)
			path = "/usr/local/bin:/usr/bin:/bin";
		while (*path && !found) {
			size_t n = strcspn(path, ":");
			sbuf_reset(&p);
			sbuf_add(&p, n ? path : ".", n ? n : 1);
			sbuf_addch(&p, '/');
			sbuf_addstr(&p, w);
			struct stat st;
			if (!p.oom && stat(p.buf, &st) == 0 && S_ISREG(st.st_mode) && access(p.buf, X_OK) == 0)
				found = sbuf_detach(&p, NULL);
			path += n;
			if (*path == ':')
				path++;
		}
	}
	sbuf_release(&p);
	free(w);
	return found;
}

bool bench_suite_programs(const struct bench_suite *s, char ***programs, size_t *n,
			  void (*unknown)(void *ctx, const struct bench_case *c), void *ctx)
{
	char **out = NULL;
	size_t count = 0, cap = 0;
	*programs = NULL;
	*n = 0;
	for (size_t i = 0; i < s->ncases; i++) {
		const struct bench_case *c = &s->cases[i];
		char *p = c->binary ? strdup(c->binary) : bench_command_program(c->run, c->cwd);
		if (!p) {
			unknown(ctx, c);
			continue;
		}
		bool dup = false;
		for (size_t k = 0; k < count && !dup; k++)
			dup = strcmp(out[k], p) == 0;
		if (!dup && !ALLOC_GROW(out, count + 1, cap)) {
			free(p);
			bench_programs_free(out, count);
			return false;
		}
		if (dup)
			free(p);
		else
			out[count++] = p;
	}
	*programs = out;
	*n = count;
	return true;
}

void bench_programs_free(char **programs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(programs[i]);
	free(programs);
}

/* ---- doctor ---- */

static void item(struct bench_doctor *d, enum bench_doctor_level lv, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void item(struct bench_doctor *d, enum bench_doctor_level lv, const char *name, const char *fmt, ...)
{
	if (d->n >= sizeof d->items / sizeof d->items[0])
		return;
	struct bench_doctor_item *it = &d->items[d->n++];
	it->level = lv;
	snprintf(it->name, sizeof it->name, "%s", name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(it->detail, sizeof it->detail, fmt, ap);
	va_end(ap);
}

struct proc_cpu {
	int pid;
	unsigned long long ticks;
	char comm[32];
};

static size_t read_procs(struct proc_cpu *out, size_t cap)
{
	struct procfs_dir dir;
	if (!procfs_pids_open(&dir))
		return 0;
	size_t n = 0;
	for (pid_t pid; n < cap && (pid = procfs_dir_next(&dir)) > 0;) {
		struct procfs_stat st;
		if (!procfs_stat_read(pid, 0, &st))
			continue;
		struct proc_cpu *p = &out[n++];
		p->pid = pid;
		snprintf(p->comm, sizeof p->comm, "%s", st.comm);
		p->ticks = st.utime + st.stime;
	}
	procfs_dir_close(&dir);
	return n;
}

static void check_busy(struct bench_doctor *d)
{
	enum { CAP = 8192 };
	struct proc_cpu *a = calloc(CAP, sizeof *a), *b = calloc(CAP, sizeof *b);
	if (!a || !b) {
		free(a);
		free(b);
		item(d, BENCH_DOCTOR_WARN, "busy", "out of memory reading /proc");
		return;
	}
	uint64_t t0 = mono_ns();
	size_t na = read_procs(a, CAP);
	struct timespec nap = { 0, 300 * 1000 * 1000 };
	while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
		;
	size_t nb = read_procs(b, CAP);
	double secs = (double)(mono_ns() - t0) / 1e9;
	double hz = (double)sysconf(_SC_CLK_TCK);
	struct sbuf list = SBUF_INIT;
	int busy = 0;
	int self = getpid();
	for (size_t i = 0; i < nb; i++) {
		if (b[i].pid == self)
			continue;
		for (size_t j = 0; j < na; j++) {
			if (a[j].pid != b[i].pid)
				continue;
			double pct = 100.0 * (double)(b[i].ticks - a[j].ticks) / hz / secs;
			if (b[i].ticks >= a[j].ticks && pct >= 20) {
				sbuf_addf(&list, "%s%s (pid %d, %.0f%% CPU)", busy ? ", " : "", b[i].comm, b[i].pid, pct);
				busy++;
			}
			break;
		}
	}
	if (busy)
		item(d, BENCH_DOCTOR_WARN, "busy", "%d competing busy process%s: %s", busy, busy == 1 ? "" : "es",
		     list.buf);
	else
		item(d, BENCH_DOCTOR_OK, "busy", "no other process used 20%% of a CPU over %.1f s", secs);
	sbuf_release(&list);
	free(a);
	free(b);
}

static bool has_cap(int bit)
{
	struct procfs_status st;
	return procfs_status_read(PROCFS_SELF, 0, &st) && ((st.cap_effective >> bit) & 1);
}

void bench_doctor_run(struct bench_doctor *d, const char *dir, unsigned long long min_free_bytes,
		      const char *const *binaries, size_t nbinaries)
{
	d->n = 0;
	char cwd[PATH_MAX];
	if (!dir)
		dir = getcwd(cwd, sizeof cwd) ? cwd : ".";
	struct statvfs vfs;
	if (statvfs(dir, &vfs) == 0) {
		unsigned long long avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
		char *shown = bench_redact_path(dir); /* the doctor is often run from the home directory itself */
		item(d, avail >= min_free_bytes ? BENCH_DOCTOR_OK : BENCH_DOCTOR_FAIL, "disk",
		     "%.1f GiB free in %s (floor %.1f GiB, --min-free-bytes %llu)", (double)avail / (1 << 30),
		     shown ? shown : "?", (double)min_free_bytes / (1 << 30), min_free_bytes);
		free(shown);
	} else {
		int err = errno;
		char *shown = bench_redact_path(dir);
		item(d, BENCH_DOCTOR_FAIL, "disk", "cannot read free space of %s: %s", shown ? shown : "?", strerror(err));
		free(shown);
	}
	double l[3];
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	if (getloadavg(l, 3) == 3)
		item(d, l[0] > 0.5 * (double)cores ? BENCH_DOCTOR_WARN : BENCH_DOCTOR_OK, "load",
		     "load average %.2f %.2f %.2f on %ld CPUs%s", l[0], l[1], l[2], cores,
		     l[0] > 0.5 * (double)cores ? " (busy: results will be noisy)" : "");
	else
		item(d, BENCH_DOCTOR_WARN, "load", "cannot read the load average");
	check_busy(d);
	bool same;
	char *gov = governor(&same);
	if (!gov)
		item(d, BENCH_DOCTOR_WARN, "governor",
		     "no cpufreq governor (a VM or a fixed-frequency CPU): the host decides the clock");
	else
		item(d, strcmp(gov, "performance") == 0 && same ? BENCH_DOCTOR_OK : BENCH_DOCTOR_WARN, "governor",
		     "%s%s%s", gov, same ? "" : " on cpu0 (others differ)",
		     strcmp(gov, "performance") == 0 ? "" : " (frequency scaling adds noise; `performance` is steadier)");
	free(gov);
	long lv, sc;
	bool perfmon = has_cap(38) || has_cap(21); /* CAP_PERFMON, CAP_SYS_ADMIN */
	if (procfs_sysctl("kernel/perf_event_paranoid", &lv)) {
		item(d, lv <= 1 || perfmon ? BENCH_DOCTOR_OK : BENCH_DOCTOR_WARN, "perf_event",
		     "perf_event_paranoid = %ld%s", lv,
		     perfmon ? " (this process has CAP_PERFMON or CAP_SYS_ADMIN: all events allowed)"
		     : lv <= 1 ? " (user-space and kernel sampling allowed)"
		     : lv == 2 ? " (user-space sampling of own processes only; kernel frames hidden)"
			       : " (perf_event_open refused for unprivileged users)");
	} else {
		item(d, BENCH_DOCTOR_WARN, "perf_event", "no /proc/sys/kernel/perf_event_paranoid: perf events unavailable");
	}
	bool ptrace_cap = has_cap(19); /* CAP_SYS_PTRACE */
	if (procfs_sysctl("kernel/yama/ptrace_scope", &sc)) {
		item(d, sc == 0 || (sc < 3 && ptrace_cap) ? BENCH_DOCTOR_OK : BENCH_DOCTOR_WARN, "ptrace",
		     "yama ptrace_scope = %ld%s", sc,
		     sc == 0 ? " (any process of the same user can be attached)"
		     : sc == 3 ? " (attaching is disabled)"
		     : ptrace_cap ? " (this process has CAP_SYS_PTRACE)"
				  : " (only descendants can be attached: `plumb record --pid` needs CAP_SYS_PTRACE)");
	} else {
		item(d, BENCH_DOCTOR_OK, "ptrace", "no Yama ptrace restriction%s",
		     ptrace_cap ? "; this process has CAP_SYS_PTRACE" : " (processes of the same user can be attached)");
	}
	for (size_t i = 0; i < nbinaries; i++) {
		char why[512];
		enum bench_build b = bench_binary_build(binaries[i], NULL, why, sizeof why);
		item(d, b == BENCH_BUILD_OPTIMIZED ? BENCH_DOCTOR_OK : b == BENCH_BUILD_UNOPTIMIZED ? BENCH_DOCTOR_FAIL
												 : BENCH_DOCTOR_WARN,
		     "build", "%s%s", why,
		     b == BENCH_BUILD_UNOPTIMIZED ? ": its runs are harness-only, never a baseline; rebuild with -O2" : "");
	}
}

void bench_doctor_write(FILE *out, const struct bench_doctor *d, size_t nbinaries, size_t *fails, size_t *warns)
{
	static const char *const level[] = { [BENCH_DOCTOR_OK] = "ok", [BENCH_DOCTOR_WARN] = "warn",
					     [BENCH_DOCTOR_FAIL] = "FAIL" };
	*fails = *warns = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct bench_doctor_item *it = &d->items[i];
		char *shown = redact_dup(it->detail);
		fprintf(out, "%-5s %-11s %s\n", level[it->level], it->name, shown ? shown : "?");
		free(shown);
		*fails += it->level == BENCH_DOCTOR_FAIL;
		*warns += it->level == BENCH_DOCTOR_WARN;
	}
	if (nbinaries == 0)
		fprintf(out, "%-5s %-11s %s\n", "-", "build", "no program under test given (--suite SUITE or --binary PATH)");
}

char *bench_redact_path(const char *path)
{
	size_t n = strlen(path);
	bool add_slash = n == 0 || path[n - 1] != '/';
	struct sbuf sb = SBUF_INIT;
	sbuf_addstr(&sb, path);
	if (add_slash)
		sbuf_addch(&sb, '/'); /* so that "$HOME" itself has the "$HOME/" prefix the redactor drops */
	char *r = sb.oom ? NULL : redact_dup(sb.buf);
	sbuf_release(&sb);
	if (!r)
		return NULL;
	size_t m = strlen(r);
	if (add_slash && m > 0 && r[m - 1] == '/')
		r[--m] = '\0';
	if (m == 0) { /* the home directory (or a /home/USER one) itself */
		free(r);
		return strdup("~");
	}
	return r;
}
