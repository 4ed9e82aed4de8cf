/* main.c — plumb's command table and dispatch (git.c / perf.c style). The dispatcher does the shared work
 * once: the signal handlers that remove temp files, --help, the debug gate for commands that sample, and a
 * checked flush of stdout. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "os/cleanup.h"
#include "base/err.h"
#include "base/gate.h"
#include "cmd/cmd.h"
#include "ui/report.h"
#include "base/settings.h"

#ifndef PLUMB_VERSION
#error "PLUMB_VERSION comes from the file VERSION (the Makefile passes it)"
#endif

/* The commands, in the order --help lists them; the man pages and completions are made from this table. */
static const struct cmd_sub commands[] = {
	{ "record", cmd_record, "sample a command, a running process or one function" },
	{ "top", cmd_top, "a live view of a running process or of the whole machine" },
	{ "dump", cmd_dump, "every thread of a running process now: state and native and Python stacks" },
	{ "hot", cmd_hot, "leaf and inclusive hot tables of a profile" },
	{ "diff", cmd_diff, "what moved between two profiles" },
	{ "flame", cmd_flame, "draw an interactive flame graph (SVG)" },
	{ "annotate", cmd_annotate, "a function's source lines and instructions with their samples" },
	{ "convert", cmd_convert, "convert between profile formats" },
	{ "metrics", cmd_metrics, "record and read per-process resource recordings" },
	{ "bench", cmd_bench, "run benchmark suites, keep evidence, compare with baselines" },
	{ "baseline", cmd_baseline, "list, show, remove or save profile baselines" },
	{ NULL, NULL, NULL },
};

/* The commands that sample or record, which refuse unless PLUMB_DEBUG is on (docs/design.md §3.1). */
static bool gated(const char *name)
{
	static const char *const sampling[] = { "record", "top", "metrics", "dump" };
	for (size_t i = 0; i < sizeof sampling / sizeof sampling[0]; i++)
		if (strcmp(name, sampling[i]) == 0)
			return true;
	return false;
}

static void usage(FILE *out)
{
	fputs("usage: plumb COMMAND [OPTIONS] [ARGS]\n\ncommands:\n", out);
	for (const struct cmd_sub *c = commands; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fputs("\n`plumb COMMAND --help` (or `plumb help COMMAND`) shows a command's options, `man plumb-COMMAND` its\n"
	      "manual. Commands that sample need PLUMB_DEBUG=1.\n", out);
}

/* True when argv (before a `--`) holds one of the flags. */
static bool asks(int argc, char **argv, const char *a, const char *b)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], a) == 0 || (b && strcmp(argv[i], b) == 0))
			return true;
	return false;
}

/* A command's output reached stdout whole, or the exit code says it did not (docs/design.md §3.3: a full disk is
 * exit 6, with the system's reason). */
static int finish_stdout(int rc)
{
	errno = 0;
	int flushed = fflush(stdout);
	int err = errno;
	bool failed = flushed != 0 || ferror(stdout);
	if (close(STDOUT_FILENO) != 0 && !failed && errno != EBADF) {
		failed = true;
		err = errno;
	}
	if (failed && rc == EXIT_DONE)
		rc = err ? perr_fail(EXIT_OUTPUT, "cannot write to standard output: %s", strerror(err))
			 : perr_fail(EXIT_OUTPUT, "cannot write to standard output");
	return rc;
}

/* Reads plumb's own environment variables once, for the code below (base/settings.h). */
static void settings_from_environment(void)
{
	struct settings s = SETTINGS_DEFAULT;
	const char *v = getenv("PLUMB_SYMBOL_CACHE");
	s.symbol_cache = !v || (strcmp(v, "0") != 0 && strcmp(v, "off") != 0 && strcmp(v, "no") != 0);
	const char *urls = getenv("DEBUGINFOD_URLS");
	s.debuginfod = urls && urls[strspn(urls, " \t")];
	const char *t = getenv("PLUMB_DEBUGINFOD_TIMEOUT");
	double secs = t ? strtod(t, NULL) : 0;
	s.debuginfod_timeout_s = secs > 0 && secs < 3600 ? secs : 0;
	const char *preload = getenv("PLUMB_PRELOAD");
	s.preload = preload && *preload ? preload : NULL;
	const char *home = getenv("HOME");
	s.home = home && home[0] == '/' ? home : NULL;
	settings_set(&s);
}

int main(int argc, char **argv)
{
	cleanup_install();
	settings_from_environment();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		usage(stdout);
		return EXIT_DONE;
	}
	/* `plumb --version` and `plumb COMMAND [SUB] --version` say the same */
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0 || asks(argc - 1, argv + 1, "--version", NULL)) {
		printf("plumb %s\n", PLUMB_VERSION);
		return finish_stdout(EXIT_DONE);
	}
	if (strcmp(name, "help") == 0) {
		const struct cmd_help_ctx h = { commands, PLUMB_VERSION, usage };
		return finish_stdout(cmd_help(&h, argc - 1, argv + 1));
	}
	const struct cmd_sub *cmd = NULL;
	for (const struct cmd_sub *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			cmd = c;
	if (!cmd)
		return perr_fail(EXIT_USAGE, "'%s' is not a plumb command (see plumb --help)", name);
	if (gated(cmd->name) && !gate_enabled() && !asks(argc - 1, argv + 1, "--help", "-h")) {
		if (gate_value_read(getenv("PLUMB_DEBUG")) == GATE_UNKNOWN) /* the one place the note is printed */
			perr_warn("PLUMB_DEBUG=%s is not understood, so the switch is off (on: 1, true, yes, on)",
				  getenv("PLUMB_DEBUG"));
		return perr_fail(EXIT_FAILED, "%s: " GATE_HOWTO, name);
	}
	return finish_stdout(cmd->fn(argc - 1, argv + 1));
}
