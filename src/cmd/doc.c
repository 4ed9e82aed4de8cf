/* doc.c — `plumb help`: a command's help, and the man pages and shell completions generated from the very option
 * tables that parse the options and print --help (so they cannot drift). Each command is run with --help while
 * cmd_help_hook is set: cmd_parse_options() hands its usage, description and table here instead of printing
 * them, and nothing else of the command runs. The Makefile calls `plumb help --man-pages DIR` and
 * `plumb help --completion bash|zsh`. */
#include "cmd/cmd.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os/atomic.h"
#include "base/err.h"
#include "base/grow.h"
#include "base/sbuf.h"
#include "base/str.h"
#include "cmd/bench_cmd.h"
#include "ui/report.h"

/* One option as a page shows it (copied: the command's table lives on its stack). */
struct doc_opt {
	char *long_name, *argname, *help;
	char short_name;
	bool takes_arg;
};

/* What one `--help` gave: the command path ("bench run"), its usage, description and options. */
struct doc_page {
	char *path, *mode, *usage, *description; /* mode: the flag that selects it (diff --folded), or NULL */
	struct doc_opt *opts;
	size_t nopts;
};

struct doc_set {
	struct doc_page *pages;
	size_t n, cap;
	const char *path, *mode; /* the command path being run, and its mode flag */
	const char *version;
	bool oom;
};

/* cmd_help_hook: keeps a copy of what --help would have printed. */
static void collect(void *ctx, const char *usage, const char *description, const struct opt *opts)
{
	struct doc_set *ds = ctx;
	if (!ALLOC_GROW(ds->pages, ds->n + 1, ds->cap)) {
		ds->oom = true;
		return;
	}
	struct doc_page *p = &ds->pages[ds->n++];
	memset(p, 0, sizeof *p);
	p->path = str_dup_or_null(ds->path, &ds->oom);
	p->mode = str_dup_or_null(ds->mode, &ds->oom);
	p->usage = str_dup_or_null(usage, &ds->oom);
	p->description = str_dup_or_null(description, &ds->oom);
	size_t n = 0;
	while (opts[n].type != OPT_END)
		n++;
	p->opts = calloc(n + 1, sizeof *p->opts);
	if (!p->opts) {
		ds->oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct doc_opt *o = &p->opts[p->nopts++];
		o->long_name = str_dup_or_null(opts[i].long_name, &ds->oom);
		o->argname = str_dup_or_null(opts[i].type == OPT_FLAG ? NULL : opts[i].argname ? opts[i].argname : "VALUE",
					 &ds->oom);
		o->help = str_dup_or_null(opts[i].help, &ds->oom);
		o->short_name = opts[i].short_name;
		o->takes_arg = opts[i].type != OPT_FLAG;
	}
}

static void doc_set_release(struct doc_set *ds)
{
	for (size_t i = 0; i < ds->n; i++) {
		struct doc_page *p = &ds->pages[i];
		for (size_t k = 0; k < p->nopts; k++) {
			free(p->opts[k].long_name);
			free(p->opts[k].argname);
			free(p->opts[k].help);
		}
		free(p->opts);
		free(p->path);
		free(p->mode);
		free(p->usage);
		free(p->description);
	}
	free(ds->pages);
}

/* The sub-command tables of the commands that have them (the dispatch tables themselves). */
static const struct {
	const char *path;
	const struct cmd_sub *subs;
} sub_tables[] = {
	{ "bench", cmd_bench_subs },
	{ "bench baseline", bench_cmd_baseline_subs },
	{ "baseline", cmd_baseline_subs },
	{ "metrics", cmd_metrics_subs },
};

static const struct cmd_sub *subs_of(const char *path)
{
	for (size_t i = 0; i < sizeof sub_tables / sizeof sub_tables[0]; i++)
		if (strcmp(sub_tables[i].path, path) == 0)
			return sub_tables[i].subs;
	return NULL;
}

/* Modes of a command that have a table of their own, shown by `CMD FLAG --help` (diff --folded). */
static const struct {
	const char *path, *flag;
} variants[] = {
	{ "diff", "--folded" },
};

/* Runs `fn` as `path ... --help` (argv[0] its last word) into ds; extra is a flag that selects a mode, or NULL. */
static void run_help(struct doc_set *ds, const char *path, int (*fn)(int, char **), const char *extra)
{
	const char *word = strrchr(path, ' ');
	char *argv[4] = { (char *)(word ? word + 1 : path), NULL, NULL, NULL };
	int argc = 1;
	if (extra)
		argv[argc++] = (char *)extra;
	argv[argc++] = "--help";
	ds->path = path;
	ds->mode = extra;
	fn(argc, argv);
}

/* Every page of a command and of its sub-commands, depth first. */
static void collect_command(struct doc_set *ds, const char *path, int (*fn)(int, char **))
{
	const struct cmd_sub *subs = subs_of(path);
	if (!subs || strcmp(path, "metrics") == 0) /* metrics has options of its own besides `record` */
		run_help(ds, path, fn, NULL);
	for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
		if (strcmp(variants[i].path, path) == 0)
			run_help(ds, path, fn, variants[i].flag);
	for (const struct cmd_sub *s = subs; s && s->name; s++) {
		bool alias = false; /* another name of a sub-command already shown (phase-owners is owners) */
		for (const struct cmd_sub *t = subs; t < s; t++)
			alias |= t->fn == s->fn;
		if (alias)
			continue;
		char sub[128];
		snprintf(sub, sizeof sub, "%s %s", path, s->name);
		collect_command(ds, sub, s->fn);
	}
}

/* Pages of one top-level command (all when name is NULL). Returns false when out of memory. */
static bool collect_all(struct doc_set *ds, const struct cmd_sub *commands, const char *name)
{
	cmd_help_hook = collect;
	cmd_help_hook_ctx = ds;
	for (const struct cmd_sub *c = commands; c->name; c++)
		if (!name || strcmp(name, c->name) == 0)
			collect_command(ds, c->name, c->fn);
	cmd_help_hook = NULL;
	cmd_help_hook_ctx = NULL;
	return !ds->oom;
}

/* ---- man pages ---- */

/* Text for roff: backslashes escaped, a line never starting with '.' or '\'', option dashes as \-. */
static void roff(FILE *out, const char *s, bool dashes)
{
	bool bol = true;
	for (; s && *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", out);
		if (*s == '\\')
			fputs("\\e", out);
		else if (*s == '-' && dashes)
			fputs("\\-", out);
		else
			fputc(*s, out);
		bol = *s == '\n';
	}
}

static void man_options(FILE *out, const struct doc_page *p)
{
	for (size_t i = 0; i < p->nopts; i++) {
		const struct doc_opt *o = &p->opts[i];
		fputs(".TP\n\\fB", out);
		if (o->short_name)
			fprintf(out, "\\-%c, ", o->short_name);
		fputs("\\-\\-", out);
		roff(out, o->long_name, true);
		fputs("\\fR", out);
		if (o->takes_arg) {
			fputs(" \\fI", out);
			roff(out, o->argname, false);
			fputs("\\fR", out);
		}
		fputc('\n', out);
		roff(out, o->help, false);
		fputc('\n', out);
	}
	fputs(".TP\n.B \\-h, \\-\\-help\nshow this help\n", out);
}

/* The usage lines, each without the indent that lines them up under "usage: " in --help. */
static void man_synopsis(FILE *out, const struct doc_page *p)
{
	fputs(".nf\n", out);
	for (const char *l = p->usage; l && *l;) {
		l += strspn(l, " ");
		size_t n = strcspn(l, "\n");
		char line[1024];
		snprintf(line, sizeof line, "%.*s", (int)n, l);
		roff(out, line, false);
		fputc('\n', out);
		l += n + (l[n] == '\n');
	}
	fputs(".fi\n", out);
}

static void man_common_tail(FILE *out, const struct cmd_sub *commands, const char *self)
{
	fputs(".SH EXIT STATUS\n", out);
	for (int code = 0; code <= EXIT_OUTPUT; code++) {
		fprintf(out, ".TP\n.B %d\n", code);
		roff(out, perr_exit_text(code), false);
		fputc('\n', out);
	}
	fputs(".SH ENVIRONMENT\n"
	      ".TP\n.B PLUMB_DEBUG\nthe debug switch: sampling and recording are off unless it is true (1, yes, on)\n"
	      ".TP\n.B PLUMB_HOME\nwhere baselines, recordings and announced targets are kept (default "
	      "${XDG_STATE_HOME:\\-~/.local/state}/plumb)\n"
	      ".TP\n.B PLUMB_PROGRESS\n0 turns the progress line off; it is drawn only on a terminal, never when "
	      ".B CI\nis set\n"
	      ".SH SEE ALSO\n", out);
	bool first = true;
	if (self) {
		fputs(".BR plumb (1)", out);
		first = false;
	}
	for (const struct cmd_sub *c = commands; c->name; c++) {
		if (self && strcmp(self, c->name) == 0)
			continue;
		fprintf(out, "%s.BR plumb\\-%s (1)", first ? "" : ",\n", c->name);
		first = false;
	}
	fputs("\n", out);
}

/* plumb.1: the commands, the rules they share. */
static void man_overview(FILE *out, const struct cmd_sub *commands, const char *version)
{
	fprintf(out, ".TH PLUMB 1 \"\" \"plumb %s\" \"plumb manual\"\n", version);
	fputs(".SH NAME\nplumb \\- sampling profiler and keeper of performance evidence\n"
	      ".SH SYNOPSIS\n.B plumb\n.I COMMAND\n[\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n.br\n"
	      ".B plumb \\-\\-version\n.SH DESCRIPTION\n"
	      "plumb samples programs and writes their stacks (folded, Firefox Profiler, speedscope, pprof, SVG), "
	      "reads profiles into hot tables, diffs and flame graphs, and runs benchmark suites into evidence "
	      "that is compared with named baselines.\n"
	      ".B plumb COMMAND \\-\\-help\nprints a command's options.\n.SH COMMANDS\n", out);
	for (const struct cmd_sub *c = commands; c->name; c++) {
		fprintf(out, ".TP\n.BR plumb\\-%s (1)\n", c->name);
		roff(out, c->summary, false);
		fputc('\n', out);
	}
	man_common_tail(out, commands, NULL);
}

/* One page's options, after its synopsis and description when it is a sub-command's or a mode's. */
static void man_section(FILE *out, const struct doc_page *p, bool sub)
{
	if (sub) {
		fprintf(out, ".SS \"plumb %s%s%s\"\n", p->path, p->mode ? " " : "", p->mode ? p->mode : "");
		man_synopsis(out, p);
		if (p->description) {
			roff(out, p->description, false);
			fputc('\n', out);
		}
		fputs(".PP\nOptions:\n", out);
	}
	man_options(out, p);
}

/* plumb-CMD.1 from its pages: the command's own (when it has options of its own), its modes, its sub-commands. */
static void man_command(FILE *out, const struct cmd_sub *commands, const struct cmd_sub *cmd,
			const struct doc_set *ds)
{
	char upper[64];
	size_t k = 0;
	for (; cmd->name[k] && k + 1 < sizeof upper; k++)
		upper[k] = (char)toupper((unsigned char)cmd->name[k]);
	upper[k] = '\0';
	fprintf(out, ".TH PLUMB\\-%s 1 \"\" \"plumb %s\" \"plumb manual\"\n.SH NAME\nplumb\\-%s \\- ", upper,
		ds->version, cmd->name);
	roff(out, cmd->summary, false);
	fputs("\n.SH SYNOPSIS\n", out);
	for (size_t i = 0; i < ds->n; i++)
		man_synopsis(out, &ds->pages[i]);
	bool own = ds->n && strcmp(ds->pages[0].path, cmd->name) == 0 && !ds->pages[0].mode;
	fputs(".SH DESCRIPTION\n", out);
	roff(out, own && ds->pages[0].description ? ds->pages[0].description : cmd->summary, false);
	fputc('\n', out);
	if (own) {
		fputs(".SH OPTIONS\n", out);
		man_section(out, &ds->pages[0], false);
	}
	for (size_t i = own ? 1 : 0; i < ds->n; i++) {
		if (i == (own ? 1u : 0u))
			fputs(".SH SUB\\-COMMANDS AND MODES\n", out);
		man_section(out, &ds->pages[i], true);
	}
	man_common_tail(out, commands, cmd->name);
}

/* `plumb help --man [CMD]` to out. */
static int man_page(FILE *out, const struct cmd_sub *commands, const char *version, const char *name)
{
	if (!name) {
		man_overview(out, commands, version);
		return EXIT_DONE;
	}
	const struct cmd_sub *cmd = NULL;
	for (const struct cmd_sub *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			cmd = c;
	if (!cmd)
		return perr_fail(EXIT_USAGE, "help: '%s' is not a plumb command", name);
	struct doc_set ds = { .version = version };
	int rc = collect_all(&ds, commands, name) ? EXIT_DONE : perr_fail(EXIT_FAILED, "help: out of memory");
	if (!rc)
		man_command(out, commands, cmd, &ds);
	doc_set_release(&ds);
	return rc;
}

/* One man page, written whole to path. */
static int man_file(const struct cmd_sub *commands, const char *version, const char *name, const char *path)
{
	struct atomic_file af = ATOMIC_FILE_INIT;
	struct perr e = PERR_INIT;
	if (atomic_open(&af, path, &e))
		return cmd_report_redacted(&e);
	int rc = man_page(af.fp, commands, version, name);
	if (rc) {
		atomic_abort(&af);
		return rc;
	}
	return atomic_commit(&af, &e) ? cmd_report_redacted(&e) : EXIT_DONE;
}

/* `plumb help --man-pages DIR`: plumb.1 and plumb-CMD.1 for every command. */
static int man_pages(const struct cmd_sub *commands, const char *version, const char *dir)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/plumb.1", dir);
	int rc = man_file(commands, version, NULL, path);
	for (const struct cmd_sub *c = commands; !rc && c->name; c++) {
		snprintf(path, sizeof path, "%s/plumb-%s.1", dir, c->name);
		rc = man_file(commands, version, c->name, path);
	}
	return rc;
}

/* ---- completion ---- */

/* True when option j of page k was listed already for the command path of page i (a mode repeats --folded). */
static bool listed_before(const struct doc_set *ds, size_t i, size_t k, size_t j)
{
	const char *name = ds->pages[k].opts[j].long_name;
	for (size_t a = i; a <= k; a++) {
		if (strcmp(ds->pages[a].path, ds->pages[i].path) != 0)
			continue;
		for (size_t b = 0; b < (a == k ? j : ds->pages[a].nopts); b++)
			if (strcmp(ds->pages[a].opts[b].long_name, name) == 0)
				return true;
	}
	return false;
}

/* The data functions both shells' completion share: sub-commands, options, and options that take a value,
 * per command path. */
static void completion_data(FILE *out, const struct cmd_sub *commands, const struct doc_set *ds)
{
	fputs("_plumb_subs() {\n\tcase \"$1\" in\n\t\"\") echo \"", out);
	for (const struct cmd_sub *c = commands; c->name; c++)
		fprintf(out, "%s%s", c == commands ? "" : " ", c->name);
	fputs(" help\" ;;\n", out);
	for (size_t t = 0; t < sizeof sub_tables / sizeof sub_tables[0]; t++) {
		fprintf(out, "\t\"%s\") echo \"", sub_tables[t].path);
		for (const struct cmd_sub *s = sub_tables[t].subs; s->name; s++)
			fprintf(out, "%s%s", s == sub_tables[t].subs ? "" : " ", s->name);
		fputs("\" ;;\n", out);
	}
	fputs("\tesac\n}\n\n", out);
	for (int want_arg = 0; want_arg < 2; want_arg++) {
		fprintf(out, "%s() {\n\tcase \"$1\" in\n", want_arg ? "_plumb_argopts" : "_plumb_opts");
		for (size_t i = 0; i < ds->n; i++) {
			const struct doc_page *p = &ds->pages[i];
			bool seen = false; /* a mode's page (diff --folded) adds to the command's */
			for (size_t k = 0; k < i; k++)
				seen |= strcmp(ds->pages[k].path, p->path) == 0;
			if (seen)
				continue;
			fprintf(out, "\t\"%s\") echo \"", p->path);
			bool first = true;
			for (size_t k = i; k < ds->n; k++) {
				if (strcmp(ds->pages[k].path, p->path) != 0)
					continue;
				for (size_t j = 0; j < ds->pages[k].nopts; j++) {
					const struct doc_opt *o = &ds->pages[k].opts[j];
					if ((want_arg && !o->takes_arg) || listed_before(ds, i, k, j))
						continue;
					fprintf(out, "%s--%s", first ? "" : " ", o->long_name);
					if (o->short_name)
						fprintf(out, " -%c", o->short_name);
					first = false;
				}
			}
			fputs(want_arg ? "\" ;;\n" : " --help\" ;;\n", out);
		}
		fputs("\tesac\n}\n\n", out);
	}
}

/* The end of both shells' walk over the words before the cursor (after `--` the command's own words): options are
 * passed over, a word naming a subcommand of the key so far extends the key; then whether the word before the
 * cursor is an option that takes an argument. */
#define COMPLETION_KEY_WALK \
	"\t\t\treturn\n" \
	"\t\tfi\n" \
	"\t\t[[ $w == -* ]] && continue\n" \
	"\t\tsubs=\" $(_plumb_subs \"$key\") \"\n" \
	"\t\t[[ $subs == *\" $w \"* ]] && key=\"${key:+$key }$w\"\n" \
	"\tdone\n" \
	"\tif [[ $prev == -* && \" $(_plumb_argopts \"$key\") \" == *\" $prev \"* ]]; then\n"

static const char bash_main[] =
	"_plumb() {\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} key=\"\" w i subs\n"
	"\tCOMPREPLY=()\n"
	"\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	"\t\tw=${COMP_WORDS[i]}\n"
	"\t\tif [[ $w == -- ]]; then  # the command plumb runs: a program, then its files\n"
	"\t\t\tif ((i == COMP_CWORD - 1)); then COMPREPLY=($(compgen -c -- \"$cur\")); else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
	COMPLETION_KEY_WALK
	"\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	"\telif [[ $cur == -* ]]; then\n"
	"\t\tCOMPREPLY=($(compgen -W \"$(_plumb_opts \"$key\")\" -- \"$cur\"))\n"
	"\telse\n"
	"\t\tsubs=$(_plumb_subs \"$key\")\n"
	"\t\tif [[ -n $subs ]]; then COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\")); else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
	"\tfi\n"
	"}\n"
	"complete -F _plumb plumb\n";

static const char zsh_main[] =
	"_plumb() {\n"
	"\tlocal key=\"\" w i subs cur=${words[CURRENT]} prev=${words[CURRENT-1]}\n"
	"\tfor ((i = 2; i < CURRENT; i++)); do\n"
	"\t\tw=${words[i]}\n"
	"\t\tif [[ $w == -- ]]; then\n"
	"\t\t\tif ((i == CURRENT - 1)); then _command_names -e; else _files; fi\n"
	COMPLETION_KEY_WALK
	"\t\t_files\n"
	"\telif [[ $cur == -* ]]; then\n"
	"\t\tcompadd -- ${=$(_plumb_opts \"$key\")}\n"
	"\telse\n"
	"\t\tsubs=$(_plumb_subs \"$key\")\n"
	"\t\tif [[ -n $subs ]]; then compadd -- ${=subs}; else _files; fi\n"
	"\tfi\n"
	"}\n"
	"\n"
	"_plumb \"$@\"\n";

static int completion(FILE *out, const struct cmd_sub *commands, const char *version, const char *shell)
{
	bool zsh = strcmp(shell, "zsh") == 0;
	if (!zsh && strcmp(shell, "bash") != 0)
		return perr_fail(EXIT_USAGE, "help: --completion is bash or zsh, not '%s'", shell);
	struct doc_set ds = { .version = version };
	if (!collect_all(&ds, commands, NULL)) {
		doc_set_release(&ds);
		return perr_fail(EXIT_FAILED, "help: out of memory");
	}
	fprintf(out, "%s# %s completion for plumb %s, generated by `plumb help --completion %s` from the option tables\n"
		     "# that parse plumb's options (edit those, not this file).\n\n",
		zsh ? "#compdef plumb\n" : "", shell, version, shell);
	completion_data(out, commands, &ds);
	fputs(zsh ? zsh_main : bash_main, out);
	doc_set_release(&ds);
	return EXIT_DONE;
}

int cmd_help(const struct cmd_help_ctx *h, int argc, char **argv)
{
	const char *man_dir = NULL, *shell = NULL;
	bool man = false;
	const struct opt opts[] = {
		OPT_BOOL("man", 0, &man, "print the man page of plumb, or of COMMAND (roff)"),
		OPT_STRING("man-pages", 0, &man_dir, "DIR", "write every man page into DIR (make does)"),
		OPT_STRING("completion", 0, &shell, "SHELL", "print the bash or zsh completion script"),
		OPT_END(),
	};
	struct opt_result res;
	int rc;
	if (!cmd_parse_options(opts, "plumb help [COMMAND] [--man] | --man-pages DIR | --completion bash|zsh",
			       "Shows plumb's commands, or a command's help (as plumb COMMAND --help does); with --man its "
			       "manual page.",
			       argc, argv, &res, &rc))
		return rc;
	const char *name = res.npos ? res.pos[0] : NULL;
	const struct cmd_sub *cmd = NULL;
	for (const struct cmd_sub *c = h->commands; name && c->name; c++)
		if (strcmp(c->name, name) == 0)
			cmd = c;
	if (res.npos > 1)
		rc = perr_fail(EXIT_USAGE, "help: give at most one COMMAND");
	else if (name && !cmd)
		rc = perr_fail(EXIT_USAGE, "help: '%s' is not a plumb command (see plumb --help)", name);
	else if (man_dir)
		rc = man_pages(h->commands, h->version, man_dir);
	else if (shell)
		rc = completion(stdout, h->commands, h->version, shell);
	else if (man)
		rc = man_page(stdout, h->commands, h->version, name);
	else if (cmd)
		rc = cmd->fn(2, (char *[]){ (char *)cmd->name, "--help", NULL });
	else {
		h->usage(stdout);
		rc = EXIT_DONE;
	}
	opt_result_release(&res);
	return rc;
}
