/* sampling.c — the sampling options `record`, `top` and `metrics record` share (CMD_SAMPLING_OPTS, cmd.h): one
 * check of the target, --interval/--rate, --seconds, --mode, --unwind, --stack-size and --backend, so the three
 * commands accept the same values and say the same about the wrong ones. */
#include "cmd/cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "base/opt.h"
#include "os/procfs.h"
#include "base/sbuf.h"
#include "sample/backend.h"
#include "sample/targets.h"
#include "ui/report.h"

/* cmd_fail_shown() with "WHO: " before fmt (one %s, for the redacted text). */
static int fail_shown(const char *who, const char *fmt, const char *text)
{
	char full[256];
	snprintf(full, sizeof full, "%s: %s", who, fmt);
	return cmd_fail_shown(EXIT_USAGE, full, text);
}

/* "-- COMMAND, --pid PID, --target NAME, --call LIB.so:SYMBOL or --all": the targets this command takes. */
static void target_list(const struct cmd_sampling_rules *rules, char *buf, size_t n)
{
	const char *words[5];
	size_t k = 0;
	if (rules->command)
		words[k++] = "-- COMMAND";
	words[k++] = "--pid PID";
	words[k++] = "--target NAME";
	if (rules->call)
		words[k++] = "--call LIB.so:SYMBOL";
	if (rules->all)
		words[k++] = "--all";
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < k && used < n; i++)
		used += (size_t)snprintf(buf + used, n - used, "%s%s", i == 0 ? "" : i + 1 == k ? " or " : ", ", words[i]);
}

/* Exactly one target; with none, the only announced target (docs/design.md §5.1), whose pid becomes --pid. */
static int choose_target(struct cmd_sampling *c, const struct cmd_sampling_rules *rules, const struct opt_result *r)
{
	const char *who = rules->who;
	char list[160];
	target_list(rules, list, sizeof list);
	bool command = r->dashdash >= 0 && r->npos > r->dashdash;
	if (r->dashdash < 0 && r->npos > 0)
		return fail_shown(who, rules->command ? "unexpected argument '%s' (put the command after --)"
						      : "unexpected argument '%s'", r->pos[0]);
	if (command && !rules->command)
		return perr_fail(EXIT_USAGE, "%s: give %s, not a command", who, list);
	if (c->all && !rules->all)
		return perr_fail(EXIT_USAGE, "%s: --all is not a target of %s; give %s", who, who, list);
	if (c->call && !rules->call)
		return perr_fail(EXIT_USAGE, "%s: --call is not a target of %s; give %s", who, who, list);
	int ntargets = (c->pid != NULL && !c->all) + (c->call != NULL) + (c->target_name != NULL) + c->all + command;
	if (ntargets > 1)
		return perr_fail(EXIT_USAGE, "%s: give one target: %s", who, list);
	if (c->comm && !c->all)
		return perr_fail(EXIT_USAGE, "%s: --comm narrows --all; give --all too", who);
	if (ntargets == 1 && !c->target_name)
		return EXIT_DONE;
	char found_list[2048];
	pid_t pid = 0;
	int found = targets_find(c->target_name, &pid, found_list, sizeof found_list);
	if (found != 1) {
		if (found < 0)
			return fail_shown(who, "cannot look up announced targets: %s", found_list);
		if (c->target_name)
			return perr_fail(EXIT_USAGE, "%s: no live target announced as '%s'%s%s", who, c->target_name,
					  found_list[0] ? "; announced: " : " (none is announced)", found_list);
		if (found == 0)
			return perr_fail(EXIT_USAGE, "%s: give a target: %s (no program announced itself with "
						      "plumb_announce)", who, list);
		return perr_fail(EXIT_USAGE, "%s: %d targets are announced, pick one with --target NAME: %s", who, found,
				  found_list);
	}
	snprintf(c->target_pid, sizeof c->target_pid, "%d", (int)pid);
	c->pid = c->target_pid;
	return EXIT_DONE;
}

/* --interval or --rate, --seconds, --mode, --unwind, --stack-size, --no-kernel, --native, --idle into o. */
static int check_how(struct cmd_sampling *c, const char *who, struct record_opts *o)
{
	o->interval_ns = 5000000;
	o->unwind = UNWIND_DWARF;
	o->stack_bytes = 16384;
	o->kernel = !c->no_kernel;
	o->native = c->native;
	o->idle = c->idle;
	if (c->interval_set && c->rate_set)
		return perr_fail(EXIT_USAGE, "%s: give --interval or --rate, not both", who);
	double interval = c->interval;
	if (c->rate_set) {
		if (!(c->rate >= 1.0 && c->rate <= 10000.0))
			return perr_fail(EXIT_USAGE, "%s: --rate must be between 1 and 10000 Hz", who);
		interval = 1.0 / c->rate;
	}
	if (c->interval_set || c->rate_set) {
		if (!(interval >= 0.0001 && interval <= 1.0))
			return perr_fail(EXIT_USAGE, "%s: --interval must be between 0.0001 and 1.0 seconds", who);
		o->interval_ns = (uint64_t)(interval * 1e9 + 0.5);
	}
	if (c->seconds_set && !(c->seconds >= 1 && c->seconds <= 86400))
		return perr_fail(EXIT_USAGE, "%s: --seconds must be between 1 and 86400", who);
	/* the one place a --mode name becomes a mode, for every sampling command */
	if (!c->mode || strcmp(c->mode, "cpu") == 0)
		o->mode = MODE_CPU;
	else if (strcmp(c->mode, "wall") == 0)
		o->mode = MODE_WALL;
	else if (strcmp(c->mode, "alloc") == 0)
		o->mode = MODE_ALLOC;
	else
		return fail_shown(who, "--mode must be cpu, wall or alloc, not '%s'", c->mode);
	if (!c->unwind || strcmp(c->unwind, "dwarf") == 0)
		o->unwind = UNWIND_DWARF;
	else if (strcmp(c->unwind, "fp") == 0)
		o->unwind = UNWIND_FP;
	else
		return fail_shown(who, "--unwind must be dwarf or fp, not '%s'", c->unwind);
	if (c->stack_set) {
		if (c->stack_size < 1024 || c->stack_size > 65000)
			return perr_fail(EXIT_USAGE, "%s: --stack-size must be between 1024 and 65000 bytes", who);
		o->stack_bytes = (size_t)c->stack_size & ~(size_t)7;
	}
	if (c->backend && !backend_find(c->backend)) {
		size_t n;
		const struct backend *const *all = backend_list(&n);
		struct sbuf names = SBUF_INIT;
		for (size_t i = 0; i < n; i++)
			sbuf_addf(&names, "%s%s", i ? ", " : "", all[i]->name);
		char tail[256];
		snprintf(tail, sizeof tail, "unknown backend '%%s' (available: %s)", names.buf);
		int rc = fail_shown(who, tail, c->backend);
		sbuf_release(&names);
		return rc;
	}
	o->backend = c->backend;
	return EXIT_DONE;
}

/* --mode alloc (docs/alloc.md): a mode of record alone, for a launched command, with its own backend and
 * --alloc-interval; checked once the target is known. */
static int check_alloc(struct cmd_sampling *c, const struct cmd_sampling_rules *rules, struct record_opts *o)
{
	const char *who = rules->who;
	if (o->mode != MODE_ALLOC)
		return c->alloc_interval ? perr_fail(EXIT_USAGE, "%s: --alloc-interval goes with --mode alloc", who)
					 : EXIT_DONE;
	if (!rules->alloc)
		return perr_fail(EXIT_USAGE, "%s: --mode alloc profiles a launched command's allocations: use plumb "
					      "record --mode alloc -- COMMAND", who);
	if (o->target != TARGET_COMMAND)
		return perr_fail(EXIT_USAGE, "%s: --mode alloc profiles launched commands only (-- COMMAND), not --pid, "
					      "--target, --call or --all", who);
	if (c->alloc_interval && (c->alloc_interval < 1024 || c->alloc_interval > (1L << 30)))
		return perr_fail(EXIT_USAGE, "%s: --alloc-interval must be between 1024 and 1073741824 bytes", who);
	if (c->backend && strcmp(c->backend, "alloc") != 0)
		return perr_fail(EXIT_USAGE, "%s: --mode alloc has its own backend", who);
	o->alloc_interval = (uint64_t)(c->alloc_interval ? c->alloc_interval : ALLOC_DEFAULT_INTERVAL);
	o->interval_ns = 0;
	if (!c->stack_set)
		o->stack_bytes = 8192;
	o->backend = "alloc";
	return EXIT_DONE;
}

/* Parses "PID[,PID...]" into c->pids; an exit code. */
static int parse_pid_list(struct cmd_sampling *c, const char *who, struct record_opts *o)
{
	size_t cap = 1;
	for (const char *q = c->pid; *q; q++)
		cap += *q == ',';
	pid_t *v = calloc(cap, sizeof *v);
	if (!v)
		return perr_fail(EXIT_FAILED, "%s: out of memory", who);
	size_t k = 0;
	for (const char *q = c->pid;;) {
		char *end;
		errno = 0;
		long pid = strtol(q, &end, 10);
		if (end == q || errno || pid <= 0 || pid > 0x3fffffff || (*end && *end != ',')) {
			free(v);
			return fail_shown(who, "--pid with --all needs a list of process ids, not '%s'", c->pid);
		}
		v[k++] = (pid_t)pid;
		if (!*end)
			break;
		q = end + 1;
	}
	c->pids = v;
	o->pids = v;
	o->npids = k;
	return EXIT_DONE;
}

/* The target into o (and c->subject): every process, a live process, LIB.so:SYMBOL, or the command after --. */
static int set_target(struct cmd_sampling *c, const struct cmd_sampling_rules *rules, const struct opt_result *r,
		      struct record_opts *o)
{
	const char *who = rules->who;
	double seconds = c->seconds_set ? c->seconds : 0;
	if (c->all) {
		if (c->backend && strcmp(c->backend, "system") != 0)
			return fail_shown(who, "--all samples with the system backend, not '%s'", c->backend);
		if (o->mode == MODE_WALL)
			return perr_fail(EXIT_USAGE, "%s: --mode wall follows the threads of one target; it cannot be used "
						      "with --all", who);
		o->target = TARGET_ALL;
		o->backend = "system";
		o->seconds = c->seconds_set ? seconds : rules->attach_seconds;
		o->comm_re = c->comm;
		snprintf(c->subject, sizeof c->subject, "every process");
		return c->pid ? parse_pid_list(c, who, o) : EXIT_DONE;
	}
	if (c->pid) {
		char *end;
		long v = strtol(c->pid, &end, 10);
		if (*end || end == c->pid || v <= 0 || v > 0x3fffffff)
			return fail_shown(who, "--pid needs a process id, not '%s'", c->pid);
		o->target = TARGET_PID;
		o->pid = (pid_t)v;
		o->seconds = c->seconds_set ? seconds : rules->attach_seconds;
		if ((kill(o->pid, 0) != 0 && errno == ESRCH) || !procfs_alive(o->pid))
			return perr_fail(EXIT_USAGE, "%s: process %d does not exist", who, (int)o->pid);
		char comm[PROCFS_COMM_MAX];
		if (procfs_comm(o->pid, 0, comm, sizeof comm))
			snprintf(c->subject, sizeof c->subject, "pid %d (%s)", (int)o->pid, comm);
		else
			snprintf(c->subject, sizeof c->subject, "pid %d", (int)o->pid);
		return EXIT_DONE;
	}
	if (c->call) {
		const char *colon = strrchr(c->call, ':');
		if (!colon || colon == c->call || !colon[1])
			return fail_shown(who, "--call needs LIB.so:SYMBOL, not '%s'", c->call);
		snprintf(c->call_lib, sizeof c->call_lib, "%.*s", (int)(colon - c->call), c->call);
		o->target = TARGET_CALL;
		o->call_lib = c->call_lib;
		o->call_sym = colon + 1;
		o->seconds = seconds;
		snprintf(c->subject, sizeof c->subject, "%s()", o->call_sym);
		return EXIT_DONE;
	}
	o->target = TARGET_COMMAND;
	o->argv = (char **)&r->pos[r->dashdash];
	o->seconds = seconds;
	const char *slash = strrchr(o->argv[0], '/');
	snprintf(c->subject, sizeof c->subject, "%s", slash && slash[1] ? slash + 1 : o->argv[0]);
	return EXIT_DONE;
}

/* A forced backend that cannot sample this kind of target is a bad argument, said before anything runs. */
static int check_backend_target(const struct cmd_sampling *c, const char *who, const struct record_opts *o)
{
	const struct backend *b = c->backend ? backend_find(c->backend) : NULL;
	if (!b || (b->targets & BACKEND_TARGET(o->target)))
		return EXIT_DONE;
	char can[160];
	return perr_fail(EXIT_USAGE, "%s: the %s backend samples %s, not %s", who, b->name,
			  backend_targets_text(b, can, sizeof can),
			  o->target == TARGET_COMMAND ? "a launched command"
			  : o->target == TARGET_PID  ? "a running process"
			  : o->target == TARGET_ALL  ? "every process"
						     : "--call");
}

int cmd_sampling_apply(struct cmd_sampling *c, const struct cmd_sampling_rules *rules, const struct opt_result *r,
		       struct record_opts *o)
{
	int rc = choose_target(c, rules, r);
	if (!rc)
		rc = check_how(c, rules->who, o);
	if (!rc)
		rc = set_target(c, rules, r, o);
	if (!rc)
		rc = check_alloc(c, rules, o);
	if (!rc)
		rc = check_backend_target(c, rules->who, o);
	return rc;
}

void cmd_sampling_release(struct cmd_sampling *c)
{
	free(c->pids);
	c->pids = NULL;
}
