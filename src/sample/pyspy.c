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

#include "base/grow.h"
#include "base/clock.h"
#include "base/sbuf.h"
#include "profile/label.h"
#include "sample/pyspy.h"

static bool is_exec_file(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

bool pyspy_locate(char *out, size_t n)
{
	const char *home = getenv("HOME");
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
	const char *path = getenv("PATH");
	while (path && *path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		if (len) {
			snprintf(out, n, "%.*s/py-spy", (int)len, path);
			if (is_exec_file(out))
				return true;
		}
		path += len;
		if (*path == ':')
			path++;
	}
	return false;
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
		char *endnum;
		unsigned long long count = strtoull(sp, &endnum, 10);
		if (endnum != le || count == 0)
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

static enum plumb_err read_whole(const char *path, char **out, size_t *len, struct perr *e)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return perr_set(e, PLUMB_EFORMAT, "py-spy wrote no output: %s", strerror(errno));
	struct sbuf sb = SBUF_INIT;
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		sbuf_add(&sb, buf, n);
	fclose(f);
	*out = sbuf_detach(&sb, len);
	return *out ? PLUMB_OK : perr_set(e, PLUMB_ENOMEM, "out of memory");
}

static enum plumb_err pyspy_run(const struct record_opts *opts, struct profile *p, struct record_result *res,
				struct perr *e)
{
	char exe[PATH_MAX];
	if (!pyspy_locate(exe, sizeof exe))
		return perr_set(e, PLUMB_ENOENT,
				"py-spy is not installed (looked in /usr/local/bin, ~/.cargo/bin, ~/.local/bin, "
				"/opt/homebrew/bin and PATH); plumb reads CPython frames itself: run plumb record "
				"without --backend");
	if (opts->target == TARGET_CALL)
		return perr_set(e, PLUMB_EUNSUPPORTED, "the py-spy backend cannot run --call");

	char dir[] = "/tmp/plumb-pyspy-XXXXXX";
	if (!mkdtemp(dir))
		return perr_set(e, PLUMB_EIO, "cannot create a temporary folder: %s", strerror(errno));
	char outp[sizeof dir + 16];
	snprintf(outp, sizeof outp, "%s/out.txt", dir);

	char rate[32], dur[32], pid[32];
	unsigned long hz = opts->interval_ns ? (unsigned long)(1e9 / (double)opts->interval_ns + 0.5) : 200;
	snprintf(rate, sizeof rate, "%lu", hz ? hz : 1);
	double secs = opts->seconds > 0 ? opts->seconds : 0;
	snprintf(dur, sizeof dur, "%lu", (unsigned long)(secs + 0.999));
	const char *argv[64];
	size_t na = 0;
	argv[na++] = exe;
	argv[na++] = "record";
	argv[na++] = "--format";
	argv[na++] = "raw";
	argv[na++] = "--output";
	argv[na++] = outp;
	argv[na++] = "--rate";
	argv[na++] = rate;
	if (secs > 0) {
		argv[na++] = "--duration";
		argv[na++] = dur;
	}
	if (opts->idle || opts->mode == MODE_WALL)
		argv[na++] = "--idle";
	if (opts->native)
		argv[na++] = "--native";
	argv[na++] = "--nonblocking";
	size_t ncmd = 0;
	if (opts->target == TARGET_PID) {
		snprintf(pid, sizeof pid, "%d", (int)opts->pid);
		argv[na++] = "--pid";
		argv[na++] = pid;
	} else {
		argv[na++] = "--";
		while (opts->argv[ncmd])
			ncmd++;
	}
	const char **full = calloc(na + ncmd + 1, sizeof *full);
	if (!full) {
		rmdir(dir);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	memcpy(full, argv, na * sizeof *full);
	for (size_t i = 0; i < ncmd; i++)
		full[na + i] = opts->argv[i];

	res->start_ns = mono_ns();
	struct child child = CHILD_INIT;
	struct backend_env env;
	backend_command(opts, &child, &env);
	child.argv = full;
	if (opts->target == TARGET_PID) /* py-spy's progress text is not ours to print (a command keeps its stdout) */
		child.out.how = CHILD_IO_NULL;
	struct perr se = PERR_INIT;
	enum plumb_err src = child_start(&child, &se);
	free(full);
	if (src) {
		rmdir(dir);
		return src == PLUMB_EIO ? perr_set(e, src, "%s", se.msg)
					: perr_set(e, PLUMB_ENOENT, "py-spy at %s could not be run: %s", exe,
						   strerror(child.exec_errno));
	}
	/* py-spy ends by itself after --duration (or with the command); allow it 30 s more before giving up. */
	uint64_t limit = secs > 0 ? res->start_ns + (uint64_t)((secs + 30) * 1e9) : 0;
	int status = 0;
	bool timed_out = false, stopped = false;
	for (;;) {
		int w = child_poll(&child, &status, NULL);
		if (w == 1)
			break;
		if (w < 0) {
			status = 0;
			break;
		}
		if (opts->stop && *opts->stop && !stopped) {
			child_signal(&child, SIGINT); /* py-spy writes what it has on SIGINT */
			stopped = true;
		}
		if (limit && mono_ns() > limit) {
			child_signal(&child, SIGKILL);
			status = child_finish(&child);
			timed_out = true;
			break;
		}
		struct timespec ts = { 0, 20000000 };
		nanosleep(&ts, NULL);
	}
	res->end_ns = mono_ns();
	enum plumb_err rc = PLUMB_OK;
	char *text = NULL;
	size_t len = 0;
	if (timed_out) {
		rc = perr_set(e, PLUMB_ETIMEDOUT, "py-spy (%s) did not finish within %.0f s", exe, secs + 30);
		goto out;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && access(outp, F_OK) != 0) {
		rc = perr_set(e, PLUMB_ENOENT, "py-spy at %s could not be run", exe);
		goto out;
	}
	if (read_whole(outp, &text, &len, e)) {
		rc = e->code;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			rc = perr_set(e, PLUMB_EPERM, "py-spy failed (%s) and wrote nothing; if the attach was refused, "
				      "another tracer may hold the process or privileges are missing",
				      WIFEXITED(status) ? "non-zero exit" : "killed by a signal");
		goto out;
	}
	int tpid = opts->target == TARGET_PID ? (int)opts->pid : 0;
	uint32_t thread = profile_thread(p, (uint32_t)tpid, (uint32_t)tpid, "");
	uint64_t total = 0;
	rc = pyspy_read_folded(text, len, p, thread, &total, e);
	if (rc)
		goto out;
	if (total == 0) {
		rc = perr_set(e, PLUMB_EFORMAT, "py-spy reported %s but wrote no readable stacks",
			      WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "success" : "an error");
		goto out;
	}
	struct profile_meta *meta = profile_meta(p);
	meta->ticks += total;
	meta->backend = profile_intern_cstr(p, "py-spy");
	meta->unwinder = profile_intern_cstr(p, opts->native ? "py-spy+native" : "py-spy");
	if (opts->target == TARGET_COMMAND) {
		res->target_exited = true;
		res->wait_status = status;
		describe_wait_status(status, res->ended, sizeof res->ended);
	}
	snprintf(res->limits, sizeof res->limits, "sampled by %s", exe);
out:
	free(text);
	unlink(outp);
	rmdir(dir);
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
};
