/* dump.c — `plumb dump`: every thread of a process, now (docs/dump.md): its state, the system call it waits in
 * and its whole stack, native and Python, as text or as plumb.dump.v1 JSON. The work is sample/dump.c's; this
 * file picks the target and writes. Everything the target wrote (thread names, paths, function names) passes
 * through the redactor, and a text dump escapes control bytes so nothing from the target drives the terminal. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/opt.h"
#include "base/redact.h"
#include "base/shown.h"
#include "base/sbuf.h"
#include "base/str.h"
#include "profile/label.h"
#include "sample/dump.h"
#include "sample/targets.h"
#include "ui/report.h"

static const char *const usage_text =
	"plumb dump [--json] [--nonblocking] --pid PID\n"
	"       plumb dump [--json] [--nonblocking] --target NAME\n"
	"       plumb dump [--json] --core FILE [--exe BINARY]";

static const char *const description =
	"Shows every thread of a running process now: its name, state (running, sleeping, disk wait, stopped),\n"
	"the system call and kernel function it waits in, and its whole stack — native frames unwound with DWARF\n"
	"CFI (inlined calls included) and, for CPython, the Python frames in place of the evaluation loop. The\n"
	"target is stopped only while its registers and stacks are copied (the dump says how long), then left\n"
	"running as it was. Needs PLUMB_DEBUG=1. See docs/dump.md for the plumb.dump.v1 JSON schema.";

/* The x86_64 system calls a blocked thread is most often found in. */
static const char *syscall_name(long nr)
{
	static const struct {
		long nr;
		const char *name;
	} names[] = {
		{ 0, "read" }, { 1, "write" }, { 7, "poll" }, { 17, "pread64" }, { 18, "pwrite64" }, { 23, "select" },
		{ 24, "sched_yield" }, { 34, "pause" }, { 35, "nanosleep" }, { 42, "connect" }, { 43, "accept" },
		{ 44, "sendto" }, { 45, "recvfrom" }, { 46, "sendmsg" }, { 47, "recvmsg" }, { 61, "wait4" },
		{ 65, "semop" }, { 70, "msgrcv" }, { 72, "fcntl" }, { 73, "flock" }, { 74, "fsync" },
		{ 128, "rt_sigtimedwait" }, { 130, "rt_sigsuspend" }, { 202, "futex" }, { 208, "io_getevents" },
		{ 220, "semtimedop" }, { 230, "clock_nanosleep" }, { 232, "epoll_wait" }, { 247, "waitid" },
		{ 257, "openat" }, { 270, "pselect6" }, { 271, "ppoll" }, { 281, "epoll_pwait" }, { 288, "accept4" },
		{ 426, "io_uring_enter" }, { 441, "epoll_pwait2" }, { 449, "futex_waitv" },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].nr == nr)
			return names[i].name;
	return NULL;
}

/* Appends text to out through the one escaper (base/shown.h: control bytes as \xNN, a terminal never sees them
 * raw); a backslash is doubled, so a dump reads back unambiguously. */
static void add_escaped(struct sbuf *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		char esc[SHOWN_ESC_MAX];
		size_t el, take = shown_char(s + i, len - i, esc, &el);
		if (el)
			sbuf_add(out, esc, el);
		else if (s[i] == '\\')
			sbuf_addstr(out, "\\\\");
		else
			sbuf_add(out, s + i, take);
		i += take;
	}
}

enum shown { SHOWN_TEXT, SHOWN_PATH, SHOWN_CODE };

/* s redacted as what it is, into out: escaped for a terminal (json false) or as a JSON string. */
static void add_shown(struct sbuf *out, const char *s, enum shown how, bool json)
{
	struct sbuf r = SBUF_INIT;
	size_t len = strlen(s);
	if (how == SHOWN_PATH)
		redact_path_append(&r, s, len);
	else if (how == SHOWN_CODE)
		redact_code_append(&r, s, len);
	else
		redact_append(&r, s, len);
	if (json)
		sbuf_add_json_text(out, r.buf ? r.buf : "", r.len);
	else
		add_escaped(out, r.buf ? r.buf : "", r.len);
	sbuf_release(&r);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void text_frame(struct sbuf *out, size_t k, const struct dump_frame *f)
{
	sbuf_addf(out, "  #%-3zu ", k);
	if (f->func)
		add_shown(out, f->func, SHOWN_CODE, false);
	else if (f->module && f->offset) {
		add_shown(out, base_name(f->module), SHOWN_PATH, false);
		sbuf_addf(out, "+0x%llx", (unsigned long long)f->offset);
	} else if (f->addr)
		sbuf_addf(out, "0x%llx", (unsigned long long)f->addr);
	else
		sbuf_addstr(out, "[unknown]");
	if (f->file) {
		sbuf_addstr(out, " (");
		add_shown(out, f->kind == DUMP_PYTHON ? f->file : label_short_path(f->file), SHOWN_PATH, false);
		if (f->line)
			sbuf_addf(out, ":%u", (unsigned)f->line);
		sbuf_addch(out, ')');
	}
	if (f->module && f->kind == DUMP_NATIVE && (f->func || !f->offset)) {
		sbuf_addstr(out, " in ");
		add_shown(out, base_name(f->module), SHOWN_PATH, false);
	}
	if (f->inlined)
		sbuf_addstr(out, " [inlined]");
	if (f->kind == DUMP_PYTHON)
		sbuf_addstr(out, " [python]");
	sbuf_addch(out, '\n');
}

static void text_thread(struct sbuf *out, const struct dump *d, const struct dump_thread *t)
{
	sbuf_addf(out, "\nthread %d \"", (int)t->tid);
	add_shown(out, t->name, SHOWN_TEXT, false);
	sbuf_addch(out, '"');
	if (t->py_name && strcmp(t->py_name, t->name) != 0) {
		sbuf_addstr(out, " (Python \"");
		add_shown(out, t->py_name, SHOWN_TEXT, false);
		sbuf_addstr(out, "\")");
	}
	if (t->tid == d->pid)
		sbuf_addstr(out, " [main]");
	if (t->state == '?')
		sbuf_addstr(out, ": state unknown");
	else
		sbuf_addf(out, ": %s", t->state_text);
	if (t->syscall >= 0) {
		const char *name = syscall_name(t->syscall);
		if (name)
			sbuf_addf(out, " in %s()", name);
		else
			sbuf_addf(out, " in syscall %ld", t->syscall);
	}
	if (t->wchan[0]) {
		sbuf_addstr(out, ", kernel ");
		add_shown(out, t->wchan, SHOWN_TEXT, false);
	}
	if (t->holds_gil)
		sbuf_addstr(out, ", holds the GIL");
	if (t->torn)
		sbuf_addstr(out, " (native frames may be torn: read while it ran)");
	if (t->no_native && d->nonblocking)
		sbuf_addstr(out, " (no native frames: not blocked)");
	sbuf_addch(out, '\n');
	for (size_t k = 0; k < t->nframes; k++)
		text_frame(out, k, &t->frames[k]);
	if (t->nframes == 0)
		sbuf_addstr(out, "  (no frames)\n");
}

static void write_text(struct sbuf *out, const struct dump *d)
{
	sbuf_addf(out, "pid %d \"", (int)d->pid);
	add_shown(out, d->comm, SHOWN_TEXT, false);
	sbuf_addch(out, '"');
	if (d->exe[0]) {
		sbuf_addch(out, ' ');
		add_shown(out, d->exe, SHOWN_PATH, false);
	}
	sbuf_addf(out, ", %zu thread%s", d->nthreads, d->nthreads == 1 ? "" : "s");
	if (d->python_version[0])
		sbuf_addf(out, ", CPython %s", d->python_version);
	if (d->core)
		sbuf_addstr(out, "; from a core file");
	else if (d->nonblocking)
		sbuf_addstr(out, "; not stopped (--nonblocking)");
	else
		sbuf_addf(out, "; stopped for %.1f ms", (double)d->stopped_ns / 1e6);
	sbuf_addf(out, ", dump took %.1f ms\n", (double)d->total_ns / 1e6);
	if (d->note[0]) {
		sbuf_addstr(out, "note: ");
		add_shown(out, d->note, SHOWN_TEXT, false);
		sbuf_addch(out, '\n');
	}
	for (size_t i = 0; i < d->nthreads; i++)
		text_thread(out, d, &d->threads[i]);
}

static void json_str_or_null(struct sbuf *out, const char *key, const char *s, enum shown how)
{
	sbuf_addf(out, ",\"%s\":", key);
	if (s && *s)
		add_shown(out, s, how, true);
	else
		sbuf_addstr(out, "null");
}

static void json_frame(struct sbuf *out, const struct dump_frame *f)
{
	sbuf_addf(out, "{\"kind\":\"%s\"", f->kind == DUMP_PYTHON ? "python" : "native");
	json_str_or_null(out, "function", f->func, SHOWN_CODE);
	json_str_or_null(out, "file", f->file, SHOWN_PATH);
	if (f->line)
		sbuf_addf(out, ",\"line\":%u", (unsigned)f->line);
	else
		sbuf_addstr(out, ",\"line\":null");
	json_str_or_null(out, "module", f->kind == DUMP_NATIVE ? f->module : NULL, SHOWN_PATH);
	if (f->kind == DUMP_NATIVE && f->addr && !f->inlined)
		sbuf_addf(out, ",\"address\":\"0x%llx\"", (unsigned long long)f->addr);
	else
		sbuf_addstr(out, ",\"address\":null");
	if (f->kind == DUMP_NATIVE && f->offset)
		sbuf_addf(out, ",\"function_offset\":\"0x%llx\"", (unsigned long long)f->offset);
	else
		sbuf_addstr(out, ",\"function_offset\":null");
	sbuf_addf(out, ",\"inlined\":%s}", f->inlined ? "true" : "false");
}

static void json_thread(struct sbuf *out, const struct dump *d, const struct dump_thread *t)
{
	sbuf_addf(out, "{\"tid\":%d", (int)t->tid);
	json_str_or_null(out, "name", t->name, SHOWN_TEXT);
	sbuf_addf(out, ",\"main\":%s,\"state\":\"%c\",\"state_text\":\"%s\"", t->tid == d->pid ? "true" : "false",
		  t->state >= 'A' && t->state <= 'z' ? t->state : '?', t->state_text);
	if (t->syscall >= 0) {
		const char *name = syscall_name(t->syscall);
		sbuf_addf(out, ",\"syscall\":{\"nr\":%ld,\"name\":", t->syscall);
		if (name)
			sbuf_addf(out, "\"%s\"}", name);
		else
			sbuf_addstr(out, "null}");
	} else {
		sbuf_addstr(out, ",\"syscall\":null");
	}
	json_str_or_null(out, "wchan", t->wchan, SHOWN_TEXT);
	json_str_or_null(out, "python_name", t->py_name, SHOWN_TEXT);
	sbuf_addf(out, ",\"python\":%s,\"holds_gil\":%s,\"torn\":%s,\"frames\":[", t->python ? "true" : "false",
		  t->holds_gil ? "true" : "false", t->torn ? "true" : "false");
	for (size_t k = 0; k < t->nframes; k++) {
		if (k)
			sbuf_addch(out, ',');
		json_frame(out, &t->frames[k]);
	}
	sbuf_addstr(out, "]}");
}

static void write_json(struct sbuf *out, const struct dump *d)
{
	sbuf_addf(out, "{\"schema\":\"plumb.dump.v1\",\"pid\":%d", (int)d->pid);
	json_str_or_null(out, "process", d->comm, SHOWN_TEXT);
	json_str_or_null(out, "exe", d->exe, SHOWN_PATH);
	json_str_or_null(out, "python_version", d->python_version, SHOWN_TEXT);
	json_str_or_null(out, "note", d->note, SHOWN_TEXT);
	sbuf_addf(out, ",\"mode\":\"%s\"", d->core ? "core" : d->nonblocking ? "nonblocking" : "stopped");
	sbuf_addf(out, ",\"stopped_ns\":%llu,\"took_ns\":%llu,\"threads\":[", (unsigned long long)d->stopped_ns,
		  (unsigned long long)d->total_ns);
	for (size_t i = 0; i < d->nthreads; i++) {
		if (i)
			sbuf_addch(out, ',');
		json_thread(out, d, &d->threads[i]);
	}
	sbuf_addstr(out, "]}\n");
}

/* --pid PID or --target NAME (or the only announced target) into *pid; false with *rc set otherwise. */
static bool choose_pid(const char *pid_arg, const char *target, pid_t *pid, int *rc)
{
	*rc = EXIT_USAGE;
	if (pid_arg && target) {
		perr_fail(EXIT_USAGE, "dump: give --pid PID or --target NAME, not both");
		return false;
	}
	if (pid_arg) {
		char *end;
		long v = strtol(pid_arg, &end, 10);
		if (end == pid_arg || *end || v <= 0 || v > 0x3fffffff) {
			cmd_fail_shown(EXIT_USAGE, "dump: --pid must be a process id, not '%s'", pid_arg);
			return false;
		}
		*pid = (pid_t)v;
		return true;
	}
	char list[2048];
	int found = targets_find(target, pid, list, sizeof list);
	if (found == 1)
		return true;
	if (found < 0)
		cmd_fail_shown(EXIT_USAGE, "dump: cannot look up announced targets: %s", list);
	else if (target)
		perr_fail(EXIT_USAGE, "dump: no live target announced as '%s'%s%s", target,
			   list[0] ? "; announced: " : " (none is announced)", list);
	else if (found == 0)
		perr_fail(EXIT_USAGE, "dump: give a target: --pid PID or --target NAME");
	else
		perr_fail(EXIT_USAGE, "dump: %d targets are announced, pick one with --target NAME: %s", found, list);
	return false;
}

int cmd_dump(int argc, char **argv)
{
	const char *pid_arg = NULL, *target = NULL, *core = NULL, *exe = NULL;
	bool json = false, nonblocking = false;
	long stack_size = 0;
	bool stack_set = false;
	const struct opt opts[] = {
		OPT_STRING("pid", 'p', &pid_arg, "PID", "the process to dump (all its threads)"),
		OPT_STRING("target", 't', &target, "NAME", "a process that announced itself (plumb.h)"),
		OPT_BOOL("json", 0, &json, "write plumb.dump.v1 JSON (docs/dump.md) instead of text"),
		OPT_BOOL("nonblocking", 0, &nonblocking,
			 "never stop the target: Python frames, and native frames of blocked threads (may be torn)"),
		OPT_STRING("core", 0, &core, "FILE", "dump the threads of a core file (gcore, a kernel core dump)"),
		OPT_STRING("exe", 0, &exe, "BINARY",
			   "with --core: the program that dumped it (default: as the core names it)"),
		OPT_LONG_SEEN("stack-size", 0, &stack_size, "BYTES", "stack copied per thread (default 262144)",
			      &stack_set),
		OPT_END(),
	};
	struct opt_result res;
	int code;
	if (!cmd_parse_options(opts, usage_text, description, argc, argv, &res, &code))
		return code;
	if (res.npos > 0) {
		code = cmd_fail_shown(EXIT_USAGE, "dump: unexpected argument '%s'", res.pos[0]);
		opt_result_release(&res);
		return code;
	}
	opt_result_release(&res);
	if (stack_set && (stack_size < 4096 || stack_size > (64l << 20)))
		return perr_fail(EXIT_USAGE, "dump: --stack-size must be between 4096 and 67108864 bytes");
	struct dump_opts o = { .nonblocking = nonblocking, .stack_bytes = (size_t)stack_size, .core = core,
			       .exe = exe };
	if (exe && !core)
		return perr_fail(EXIT_USAGE, "dump: --exe names the program of a --core file; give --core too");
	if (core && (pid_arg || target || nonblocking))
		return perr_fail(EXIT_USAGE, "dump: --core reads a core file; it takes no --pid, --target or --nonblocking");
	if (!core && !choose_pid(pid_arg, target, &o.pid, &code))
		return code;
	struct dump *d = NULL;
	struct perr e = PERR_INIT;
	if (dump_take(&o, &d, &e) != PLUMB_OK)
		return cmd_report_redacted(&e);
	struct sbuf out = SBUF_INIT;
	if (json)
		write_json(&out, d);
	else
		write_text(&out, d);
	dump_free(d);
	if (out.oom) {
		sbuf_release(&out);
		return perr_fail(EXIT_FAILED, "dump: out of memory");
	}
	fwrite(out.buf, 1, out.len, stdout);
	sbuf_release(&out);
	return EXIT_DONE;
}
