"""Man pages and shell completion (issue 16), made by `plumb help` from the option tables that parse the options
and print --help, so they cannot drift: `man -l` renders every page the build made, every option of every
`--help` is in its page and in the completion, a bash that sources the completion completes sub-commands and
options, and `plumb --version` and `plumb COMMAND --version` agree."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from plumbtest import BUILD, ROOT, needs_tool, plumb

MAN = os.path.join(BUILD, "man")
BASH = os.path.join(BUILD, "completion", "plumb.bash")
ZSH = os.path.join(BUILD, "completion", "_plumb")
COMMANDS = ["record", "top", "dump", "hot", "diff", "flame", "annotate", "convert", "metrics", "bench", "baseline"]
SUBS = {"bench": ["run", "report", "compare", "push", "baseline", "coverage", "owners", "doctor"],
        "baseline": ["list", "show", "rm", "save"], "metrics": ["record", "push"]}


def help_options(*cmd):
    """Long options (without --) that `plumb CMD... --help` lists."""
    r = plumb(*cmd, "--help", debug=False)
    assert r.returncode == 0, r.stderr
    return set(re.findall(r"^\s+(?:-\w, )?--([\w-]+)", r.stdout, re.M)) - {"help"}


def complete(words, cwd=None):
    """What the generated bash completion offers for the words typed so far (the last may be partial)."""
    script = 'source "%s"; COMP_WORDS=(%s); COMP_CWORD=%d; _plumb; printf "%%s\\n" "${COMPREPLY[@]}"' % (
        BASH, " ".join("'%s'" % w for w in words), len(words) - 1)
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, cwd=cwd)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


class ManPages(unittest.TestCase):
    def test_every_page_renders(self):
        needs_tool("man", "Debian man-db")
        pages = sorted(os.listdir(MAN))
        self.assertEqual(pages, sorted(["plumb.1"] + ["plumb-%s.1" % c for c in COMMANDS]))
        for page in pages:
            with self.subTest(page=page):
                r = subprocess.run(["man", "--warnings", "-l", os.path.join(MAN, page)], capture_output=True,
                                   text=True, timeout=60, env=dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING=""))
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, "", "roff warnings")
                self.assertIn("EXIT STATUS", r.stdout)
                name = page[:-2]
                self.assertIn(name.upper(), r.stdout.splitlines()[0])

    def test_pages_hold_every_option_of_help(self):
        for cmd in COMMANDS:
            with open(os.path.join(MAN, "plumb-%s.1" % cmd)) as f:
                page = f.read().replace("\\-", "-")
            paths = [[cmd, s] for s in SUBS.get(cmd, [])] or [[cmd]]
            if cmd == "metrics":
                paths.append([cmd])
            for path in paths:
                if path == ["bench", "baseline"]:
                    paths += [["bench", "baseline", s] for s in ("save", "list", "show", "rm")]
                    continue
                with self.subTest(path=path):
                    for opt in help_options(*path):
                        self.assertIn("--" + opt, page, "%s: --%s is in --help but not in the man page" % (path, opt))

    def test_the_man_page_is_what_plumb_help_man_prints(self):
        r = plumb("help", "--man", "hot", debug=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(MAN, "plumb-hot.1")) as f:
            self.assertEqual(r.stdout, f.read())


class Completion(unittest.TestCase):
    def test_bash_registers_and_completes(self):
        needs_tool("bash")
        r = subprocess.run(["bash", "-c", 'source "%s"; complete -p plumb' % BASH], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("complete -F _plumb plumb", r.stdout)
        self.assertEqual(set(complete(["plumb", ""])), set(COMMANDS + ["help"]))
        self.assertEqual(complete(["plumb", "be"]), ["bench"])
        self.assertIn("phase-owners", complete(["plumb", "bench", ""]))
        self.assertEqual(set(complete(["plumb", "bench", "baseline", ""])), {"save", "list", "show", "rm"})
        self.assertEqual(complete(["plumb", "record", "--save-b"]), ["--save-baseline"])
        self.assertIn("--group-by", complete(["plumb", "record", "--gr"]))  # the shared summary options
        self.assertEqual(complete(["plumb", "bench", "compare", "--allow"]), ["--allow-missing"])
        self.assertEqual(complete(["plumb", "hot", "--top-"]), ["--top-threads"])

    def test_completion_holds_every_option_of_help(self):
        for cmd in COMMANDS:
            paths = [[cmd, s] for s in SUBS.get(cmd, []) if [cmd, s] != ["bench", "baseline"]] or [[cmd]]
            for path in paths:
                with self.subTest(path=path):
                    offered = set(o[2:] for o in complete(["plumb", *path, "--"]) if o.startswith("--"))
                    self.assertEqual(help_options(*path) - offered, set())

    def test_bash_completes_an_options_value_and_a_command_with_files(self):
        d = self.enterContext(tempfile.TemporaryDirectory(prefix="plumb-test-"))
        open(os.path.join(d, "stages.json"), "w").close()
        self.assertEqual(complete(["plumb", "hot", "--stages", "sta"], cwd=d), ["stages.json"])
        self.assertEqual(complete(["plumb", "record", "--", "sh", "sta"], cwd=d), ["stages.json"])
        self.assertIn("bash", complete(["plumb", "record", "--", "bas"], cwd=d))  # a program on PATH

    def test_zsh_script_loads(self):
        zsh = shutil.which("zsh")
        if not zsh:
            raise unittest.SkipTest("zsh not installed")
        r = subprocess.run([zsh, "-n", ZSH], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = os.path.dirname(ZSH)
        r = subprocess.run([zsh, "-f", "-c", "fpath=(%s $fpath); autoload -Uz compinit; compinit -u; "
                                            "print ${_comps[plumb]}" % d], capture_output=True, text=True)
        self.assertEqual(r.stdout.strip(), "_plumb", r.stderr)


class Version(unittest.TestCase):
    def test_every_command_says_the_same_version(self):
        with open(os.path.join(ROOT, "VERSION")) as f:
            want = "plumb %s\n" % f.read().strip()
        for args in (["--version"], ["version"], ["record", "--version"], ["top", "--version"], ["hot", "--version"],
                     ["bench", "run", "--version"], ["bench", "baseline", "list", "--version"],
                     ["baseline", "show", "--version"], ["metrics", "record", "--version"]):
            with self.subTest(args=args):
                r = plumb(*args, debug=False)
                self.assertEqual((r.returncode, r.stdout), (0, want), r.stderr)
        # after `--` it is the command's, not plumb's
        r = plumb("record", "--", "sh", "-c", "echo \"$1\"", "sh", "--version", debug=False)
        self.assertEqual(r.returncode, 1, r.stderr)  # the switch is off: the gate answers, not --version


if __name__ == "__main__":
    unittest.main()
