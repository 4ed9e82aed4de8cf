/* pyspy.c — the `py-spy` backend (forced with --backend py-spy): hands the sampling to py-spy, found by
 * probing the usual install folders before PATH (a process started by a service manager gets a minimal PATH),
 * runs `py-spy record --format raw` and reads its folded output back. Its labels are shortened the way plumb's
 * own are (the last two components of each "(file.py:LINE)" path) and become finished labels, so the writers'
 * redaction applies to them like to every other frame. */
#include "sample/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "os/atomic.h"
#include "base/clock.h"
#include "os/fs.h"
#include "base/grow.h"
#include "base/sbuf.h"
#include "profile/label.h"
#include "sample/pyspy.h"
#include "base/settings.h"

static bool is_exec_file(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

bool pyspy_locate(char *out, size_t n)
{
	const char *home = settings()->home;
	const char *fixed[] = { "/usr/local/bin", "~/.cargo/bin", "~/.local/bin", "/opt/homebrew/bin" };
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		if (fixed[i][0] == '~') {
			if (!home || !*home)
				continue;
			snprintf(out, n, "%s%s/py-spy", home, fixed[i] + 1);
		} else {
			snprintf(out, n, "%s/py-spy", fixed[i]);
		}
		if (is_exec_file(out))
			return true;
	}
	return fs_which("py-spy", out, n);
}

void pyspy_shorten_frame(struct sbuf *out, const char *frame, size_t len)
{
	/* "func (path/to/file.py:LINE)": keep the last two components of path */
	const char *open = NULL;
	if (len >= 4 && frame[len - 1] == ')')
		for (size_t i = len - 1; i-- > 0;)
			if (frame[i] == '(' && i > 0 && frame[i - 1] == ' ') {
				open = frame + i;
				break;
			}
	if (!open) {
		sbuf_add(out, frame, len);
		return;
	}
	const char *inner = open + 1, *end = frame + len - 1;
	char path[PATH_MAX];
	size_t plen = (size_t)(end - inner);
	if (plen >= sizeof path) {
		sbuf_add(out, frame, len);
		return;
	}
	memcpy(path, inner, plen);
	path[plen] = 0;
	sbuf_add(out, frame, (size_t)(inner - frame));
	sbuf_addstr(out, label_short_path(path));
	sbuf_addch(out, ')');
}

enum plumb_err pyspy_read_folded(const char *text, size_t len, struct profile *p, uint32_t thread, uint64_t *total,
				 struct perr *e)
{
	struct sbuf lab = SBUF_INIT;
	uint32_t *frames = NULL;
	size_t capf = 0;
	const char *s = text, *end = text + len;
	*total = 0;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		const char *line = s;
		s = nl ? nl + 1 : end;
		while (le > line && (le[-1] == '\r' || le[-1] == ' '))
			le--;
		const char *sp = le;
		while (sp > line && sp[-1] != ' ')
			sp--;
		if (sp == line || sp == le)
			continue; /* no "STACK COUNT" shape: py-spy's own messages, blank lines */
		uint64_t count = 0; /* the digits in [sp, le): text need not be NUL-terminated */
		const char *d = sp;
		while (d < le && *d >= '0' && *d <= '9' && count <= (UINT64_MAX - 9) / 10)
			count = count * 10 + (uint64_t)(*d++ - '0');
		if (d != le || count == 0)
			continue;
		const char *st = line, *st_end = sp - 1;
		size_t nf = 0;
		while (st < st_end) {
			const char *semi = memchr(st, ';', (size_t)(st_end - st));
			const char *fe = semi ? semi : st_end;
			if (fe > st) {
				sbuf_reset(&lab);
				pyspy_shorten_frame(&lab, st, (size_t)(fe - st));
				if (!ALLOC_GROW(frames, nf + 1, capf))
					goto oom;
				frames[nf] = label_frame(p, lab.buf, lab.len); /* a label, read into its fields */
				if (frames[nf] == PROFILE_NOMEM)
					goto oom;
				nf++;
			}
			st = semi ? semi + 1 : st_end;
		}
		if (nf == 0)
			continue;
		uint32_t stack = profile_stack_from(p, frames, nf);
		if (stack == PROFILE_NOMEM || !profile_add_sample(p, stack, thread, 0, count))
			goto oom;
		*total += count;
	}
	free(frames);
	sbuf_release(&lab);
	return PLUMB_OK;
oom:
	free(frames);
	sbuf_release(&lab);
	return perr_set(e, PLUMB_ENOMEM, "out of memory");
}

/* One run of py-spy: where it is, the folder and file it writes into, its command line and its process. */
/* The cap on py-spy's folded output read back: far above any real run's (one line per distinct stack). */
#define PYSPY_OUTPUT_MAX ((size_t)1 << 30)

struct pyspy_job {
	char exe[PATH_MAX];
	struct atomic_file out; /* py-spy's folded output: a scratch file beside the profile (docs/design.md §3.4) */
	const char *outp;       /* its path */
	char rate[32], dur[32], pid[32];
	double secs;    /* --duration, 0 for a command's whole run */
	struct child child;
	int status;     /* its wait status */
};

/* py-spy's command line: `record --format raw --output FILE --rate HZ [--duration S] ...` and the target.
 * NULL when out of memory; the caller frees the array (its strings are the job's and the options'). */
static const char **pyspy_argv(struct pyspy_job *j, const struct record_opts *opts)
{
	unsigned long hz = opts->interval_ns ? (unsigned long)(1e9 / (double)opts->interval_ns + 0.5) : 200;
	snprintf(j->rate, sizeof j->rate, "%lu", hz ? hz : 1);
	j->secs = opts->seconds > 0 ? opts->seconds : 0;
	snprintf(j->dur, sizeof j->dur, "%lu", (unsigned long)(j->secs + 0.999));
	const char *argv[32];
	size_t na = 0, ncmd = 0;
	argv[na++] = j->exe;
	argv[na++] = "record";
	argv[na++] = "--format";
	argv[na++] = "raw";
	argv[na++] = "--output";
	argv[na++] = j->outp;
	argv[na++] = "--rate";
	argv[na++] = j->rate;
	if (j->secs > 0) {
		argv[na++] = "--duration";
		argv[na++] = j->dur;
	}
	if (opts->idle || opts->mode == MODE_WALL)
		argv[na++] = "--idle";
	if (opts->native)
		argv[na++] = "--native";
	argv[na++] = "--nonblocking";
	if (opts->target == TARGET_PID) {
		snprintf(j->pid, sizeof j->pid, "%d", (int)opts->pid);
		argv[na++] = "--pid";
		argv[na++] = j->pid;
	} else {
		argv[na++] = "--";
		while (opts->argv[ncmd])
			ncmd++;
	}
	const char **full = calloc(na + ncmd + 1, sizeof *full);
	if (!full)
		return NULL;
	memcpy(full, argv, na * sizeof *full);
	for (size_t i = 0; i < ncmd; i++)
		full[na + i] = opts->argv[i];
	return full;
}

/* Starts py-spy (res->start_ns) on the target. */
static enum plumb_err pyspy_start(struct pyspy_job *j, const struct record_opts *opts, struct record_result *res,
				  struct perr *e)
{
	const char **argv = pyspy_argv(j, opts);
	if (!argv)
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	res->start_ns = mono_ns();
	struct backend_env env;
	backend_command(opts, &j->child, &env);
	j->child.argv = argv;
	if (opts->target == TARGET_PID) /* py-spy's progress text is not ours to print (a command keeps its stdout) */
		j->child.out.how = CHILD_IO_NULL;
	struct perr se = PERR_INIT;
	enum plumb_err rc = child_start(&j->child, &se);
	backend_launched(opts, &j->child);
	free(argv);
	if (rc == PLUMB_EIO)
		return perr_set(e, rc, "%s", se.msg);
	if (rc)
		return perr_set(e, PLUMB_ENOENT, "py-spy at %s could not be run: %s", j->exe, strerror(j->child.exec_errno));
	return PLUMB_OK;
}

/* Waits for py-spy to end (j->status): by itself after --duration or with the command, after a SIGINT when we
 * are told to stop (it writes what it has), or killed 30 s past its duration (false: it timed out). */
static bool pyspy_wait(struct pyspy_job *j, const struct record_opts *opts, struct record_result *res)
{
	uint64_t limit = j->secs > 0 ? res->start_ns + (uint64_t)((j->secs + 30) * 1e9) : 0;
	bool stopped = false, done = true;
	for (;;) {
		int w = child_poll(&j->child, &j->status, NULL);
		if (w == 1)
			break;
		if (w < 0) {
			j->status = 0;
			break;
		}
		if (opts->stop && *opts->stop && !stopped) {
			child_signal(&j->child, SIGINT);
			stopped = true;
		}
		if (limit && mono_ns() > limit) {
			child_signal(&j->child, SIGKILL);
			j->status = child_finish(&j->child);
			done = false;
			break;
		}
		struct timespec ts = ns_timespec(20000000);
		nanosleep(&ts, NULL);
	}
	res->end_ns = mono_ns();
	return done;
}

/* Reads what py-spy wrote into the profile and says what was sampled. */
static enum plumb_err pyspy_collect(struct pyspy_job *j, const struct record_opts *opts, struct profile *p,
				    struct record_result *res, struct perr *e)
{
	int status = j->status;
	struct stat st;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && (lstat(j->outp, &st) != 0 || st.st_size == 0))
		return perr_set(e, PLUMB_ENOENT, "py-spy at %s could not be run", j->exe);
	char *text = NULL;
	size_t len = 0;
	/* py-spy wrote it by path: reopened under the trust rule and read up to a cap, as any file others could touch */
	struct perr fe = PERR_INIT;
	enum plumb_err frc = fs_read_trusted(AT_FDCWD, j->outp, geteuid(), PYSPY_OUTPUT_MAX, &text, &len, &fe);
	int err = frc == PLUMB_OK ? 0 : frc == PLUMB_ENOMEM ? ENOMEM : frc == PLUMB_EFORMAT ? EFBIG : EIO;
	if (frc == PLUMB_EPERM || frc == PLUMB_EFORMAT)
		return perr_set(e, PLUMB_EFORMAT, "py-spy's output: %s", fe.msg);
	if (err) {
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return perr_set(e, PLUMB_EPERM, "py-spy failed (%s) and wrote nothing; if the attach was refused, "
					"another tracer may hold the process or privileges are missing",
					WIFEXITED(status) ? "non-zero exit" : "killed by a signal");
		return err == ENOMEM ? perr_set(e, PLUMB_ENOMEM, "out of memory")
				     : perr_set(e, PLUMB_EFORMAT, "py-spy wrote no output: %s", strerror(err));
	}
	int tpid = opts->target == TARGET_PID ? (int)opts->pid : 0;
	uint32_t thread = profile_thread(p, (uint32_t)tpid, (uint32_t)tpid, "");
	uint64_t total = 0;
	enum plumb_err rc = pyspy_read_folded(text, len, p, thread, &total, e);
	free(text);
	if (rc)
		return rc;
	if (total == 0)
		return perr_set(e, PLUMB_EFORMAT, "py-spy reported %s but wrote no readable stacks",
				WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "success" : "an error");
	backend_meta(p, "py-spy", opts->native ? "py-spy+native" : "py-spy", total, 0);
	if (opts->target == TARGET_COMMAND) {
		backend_ended_with(res, status);
	}
	snprintf(res->limits, sizeof res->limits, "sampled by %s", j->exe);
	return PLUMB_OK;
}

static enum plumb_err pyspy_run(const struct record_opts *opts, struct profile *p, struct record_result *res,
				struct perr *e)
{
	struct pyspy_job j = { .child = CHILD_INIT };
	if (!pyspy_locate(j.exe, sizeof j.exe))
		return perr_set(e, PLUMB_ENOENT,
				"py-spy is not installed (looked in /usr/local/bin, ~/.cargo/bin, ~/.local/bin, "
				"/opt/homebrew/bin and PATH); plumb reads CPython frames itself: run plumb record "
				"without --backend");
	if (opts->target == TARGET_CALL)
		return perr_set(e, PLUMB_EUNSUPPORTED, "the py-spy backend cannot run --call");
	j.out = (struct atomic_file)ATOMIC_FILE_INIT;
	if (atomic_scratch_open(&j.out, opts->output ? opts->output : "-", e))
		return e->code;
	j.outp = j.out.tmp_path;
	enum plumb_err rc = pyspy_start(&j, opts, res, e);
	if (!rc && !pyspy_wait(&j, opts, res))
		rc = perr_set(e, PLUMB_ETIMEDOUT, "py-spy (%s) did not finish within %.0f s", j.exe, j.secs + 30);
	if (!rc)
		rc = pyspy_collect(&j, opts, p, res, e);
	atomic_abort(&j.out);
	return rc;
}

/* Never chosen automatically: py-spy runs only when asked for with --backend py-spy. */
static bool pyspy_wants(const struct record_opts *opts)
{
	(void)opts;
	return false;
}

const struct backend backend_pyspy = {
	.name = "py-spy",
	.wants = pyspy_wants,
	.run = pyspy_run,
	.forced_only = true,
	.targets = BACKEND_TARGET(TARGET_COMMAND) | BACKEND_TARGET(TARGET_PID),
};
