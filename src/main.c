/* main.c — plumb's command table and dispatch (git.c / perf.c style). The dispatcher does the shared work
 * once: the signal handlers that remove temp files, --help, the debug gate for commands that sample, and a
 * checked flush of stdout. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/cleanup.h"
#include "base/err.h"
#include "base/gate.h"
#include "cmd/cmd.h"

#ifndef PLUMB_VERSION
#error "PLUMB_VERSION comes from the file VERSION (the Makefile passes it)"
#endif

enum cmd_flags { CMD_GATED = 1 }; /* refuses unless PLUMB_DEBUG is on (docs/design.md §3.1) */

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	unsigned flags;
	const char *summary;
} commands[] = {
	{ "record", cmd_record, CMD_GATED, "sample a command, a running process or one function" },
	{ "top", cmd_top, CMD_GATED, "a live view of a running process or of the whole machine" },
	{ "hot", cmd_hot, 0, "leaf and inclusive hot tables of a profile" },
	{ "diff", cmd_diff, 0, "what moved between two profiles" },
	{ "flame", cmd_flame, 0, "draw an interactive flame graph (SVG)" },
	{ "convert", cmd_convert, 0, "convert between profile formats" },
	{ "metrics", cmd_metrics, CMD_GATED, "record and read per-process resource recordings" },
	{ "bench", cmd_bench, 0, "run benchmark suites, keep evidence, compare with baselines" },
};

static void usage(FILE *out)
{
	fputs("usage: plumb COMMAND [OPTIONS] [ARGS]\n\ncommands:\n", out);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n`plumb COMMAND --help` shows a command's options. Commands that sample need PLUMB_DEBUG=1.\n", out);
}

static int wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	cleanup_install();
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
		usage(stdout);
		return EXIT_DONE;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
		printf("plumb %s\n", PLUMB_VERSION);
		return EXIT_DONE;
	}
	const struct command *cmd = NULL;
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, name) == 0)
			cmd = &commands[i];
	if (!cmd)
		return plumb_fail(EXIT_USAGE, "'%s' is not a plumb command (see plumb --help)", name);
	if ((cmd->flags & CMD_GATED) && !gate_enabled() && !wants_help(argc - 1, argv + 1))
		return plumb_fail(EXIT_FAILED, "%s: " GATE_HOWTO, name);
	int rc = cmd->fn(argc - 1, argv + 1);
	if (fflush(stdout) != 0 || ferror(stdout) || close(STDOUT_FILENO) != 0) {
		if (rc == EXIT_DONE)
			rc = plumb_fail(EXIT_OUTPUT, "cannot write to standard output");
	}
	return rc;
}
