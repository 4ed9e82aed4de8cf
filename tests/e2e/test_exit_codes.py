"""One exit-code rule for every command (docs/design.md §3.2), held as a table: each command and sub-command ×
{missing input: 3, input there but unreadable, malformed or empty: 5, bad argument or impossible combination: 2,
output that cannot be written: 6, nothing sampled or a failed check: 1}. A cell a command has no use for is left
out of its row and the reason is written beside it. Every failing cell also ends with a `plumb: ...` line
that names what went wrong (no silence)."""
import ast
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import unittest

from plumbtest import FIXTURES, PLUMB, env, target

MISSING, UNUSABLE, USAGE, OUTPUT, FAILED = 3, 5, 2, 6, 1
FOLDED = "main;parse;lex 30\nmain;parse 20\nmain;eval 50\n"


class ExitCodes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._td = tempfile.TemporaryDirectory(prefix="plumb-exit-")
        d = cls.d = cls._td.name
        cls.home = os.path.join(d, "home")
        os.mkdir(cls.home)
        cls.w("good.folded", FOLDED)
        cls.w("empty.folded", "")
        cls.w("junk.bin", "\x00\x01\x02 this is not a profile \xff\n" * 4)
        cls.w("junk.json", '{"schema": "plumb.evidence.v1", "cases": [], "samples": [{"name": 3}]}')
        cls.w("empty.json", "")
        cls.w("suite.ini", "[suite]\nname = tiny\n[case ok]\nrun = true\n")
        cls.w("failing.ini", "[case bad]\nrun = exit 3\n")
        cls.w("junk.ini", "[case a]\nrun = true\nrunn = x\n")
        cls.w("nocase.ini", "[suite]\nname = nothing\n")
        cls.w("catalog.ini", "[metric ok.wall_ms]\nkind = latency\nunit = ms\nbetter = lower\ntier = core\n"
                             "phase = run\nowner = suite.ini\nrequired = all\n")
        cls.w("junkcat.ini", "[metric ok.wall_ms]\ntier = gold\n")
        os.mkdir(os.path.join(d, "dir"))
        shutil.copy(os.path.join(FIXTURES, "metrics_read", "recording.json"), os.path.join(d, "rec.json"))
        # a real artifact, and a copy whose core metric is gone (the regression gate fails on it)
        r = cls.run_plumb("bench", "run", cls.p("suite.ini"), "--repeats", "2", "--warmup", "0", "--out",
                          cls.p("art.json"))
        assert r.returncode == 0, r.stderr
        with open(cls.p("art.json")) as f:
            art = json.load(f)
        core = "ok." + art["cases"][0]["core_metric"]  # the core metric the runner chose for the case
        art["samples"] = [s for s in art["samples"] if s["name"] != core]
        cls.w("art-lost.json", json.dumps(art))
        # a saved bench baseline and a saved profile baseline of this home
        r = cls.run_plumb("bench", "baseline", "save", cls.p("art.json"), "--name", "main")
        assert r.returncode == 0, r.stderr
        r = cls.run_plumb("baseline", "save", cls.p("good.folded"), "--name", "prof")
        assert r.returncode == 0, r.stderr
        cls.w("home/baselines/profiles/broken.json", "{not json")
        cls.w("home/baselines/evidence/broken.json", "{not json")
        cls.w("afile", "x")  # a PLUMB_HOME that is a file: nothing can be saved under it

    @classmethod
    def tearDownClass(cls):
        cls._td.cleanup()

    @classmethod
    def p(cls, name):
        return os.path.join(cls.d, name)

    @classmethod
    def w(cls, name, text):
        path = cls.p(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path

    @classmethod
    def run_plumb(cls, *args, home=None, stdout=subprocess.PIPE):
        e = env(True, PLUMB_HOME=home or cls.home)
        return subprocess.run([PLUMB, *args], env=e, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120,
                              cwd=cls.d)

    def check(self, rows):
        """rows: (args, expected exit code[, PLUMB_HOME]). Each one a subtest."""
        for row in rows:
            args, want = row[0], row[1]
            home = self.p(row[2]) if len(row) > 2 else None
            with self.subTest(args=" ".join(args)):
                r = self.run_plumb(*args, home=home)
                self.assertEqual(r.returncode, want, r.stderr)
                last = [ln for ln in r.stderr.splitlines() if ln.startswith("plumb: ")][-1:]
                self.assertTrue(last and not last[0].startswith("plumb: warning:"), "a message says why: " + r.stderr)

    def check_stdout_full(self, rows):
        """Commands writing to stdout: a full stdout is exit 6 (a character device the test made, as /dev/full)."""
        full = self.p("full")
        if not os.path.exists(full):
            os.mknod(full, 0o600 | 0o020000, os.makedev(1, 7))
        for args in rows:
            with self.subTest(stdout_full=" ".join(args)):
                with open(full, "w") as out:
                    r = self.run_plumb(*args, stdout=out)
                self.assertEqual(r.returncode, OUTPUT, r.stderr)
                self.assertIn("No space left on device", r.stderr)

    def test_record(self):
        # record reads no input file: a target that cannot be resolved is a bad argument (§3.2 row 2)
        self.check([
            (["record", "--rate", "x", "--", "true"], USAGE),
            (["record", "--backend", "ptrace", "--", "true"], USAGE),      # ptrace attaches, it cannot launch
            (["record", "--backend", "perf_event", "--call", "x.so:f"], USAGE),
            (["record", "--", "/nonexistent/command"], USAGE),
            (["record", "--all", "--", "true"], USAGE),                     # two targets
            (["record", "--comm", "x", "--", "true"], USAGE),                # --comm narrows --all
            (["record", "--all", "--comm", "(", "--seconds", "1", "-o", self.p("a.folded")], USAGE),
            (["record", "-o", "/nonexistent-dir/x.folded", "--", "true"], OUTPUT),
            (["record", "--interval", "1", "-o", self.p("none.folded"), "--", "true"], FAILED),
        ])

    def test_top(self):
        # top reads no input file: a process that cannot be resolved is a bad argument (§3.2 row 2)
        self.check([
            (["top"], USAGE),
            (["top", "--pid", "x"], USAGE),
            (["top", "--pid", "999999999"], USAGE),
            (["top", "--pid", str(os.getpid()), "--interval", "0"], USAGE),
        ])
        self.check_stdout_full([["top", "--pid", str(os.getpid()), "--iterations", "1", "--refresh", "0.2"]])

    def test_dump(self):
        # dump reads no input file with --pid: a process that cannot be resolved is a bad argument (§3.2 row 2)
        self.check([
            (["dump"], USAGE),
            (["dump", "--pid", "x"], USAGE),
            (["dump", "--pid", "999999999"], USAGE),
            (["dump", "--pid", "1", "--target", "x"], USAGE),
            (["dump", "--pid", str(os.getpid()), "--stack-size", "1"], USAGE),
            (["dump", "--exe", "/bin/true"], USAGE),                      # --exe belongs to --core
            (["dump", "--core", self.p("absent.core")], MISSING),
            (["dump", "--core", self.p("junk.bin")], UNUSABLE),
        ])

    def test_hot(self):
        self.check([
            (["hot", self.p("absent.folded")], MISSING),
            (["hot", self.p("dir")], UNUSABLE),
            (["hot", self.p("junk.bin")], UNUSABLE),
            (["hot", self.p("empty.folded")], UNUSABLE),
            (["hot", self.p("good.folded"), "--top", "-1"], USAGE),
            (["hot", self.p("good.folded"), "--group-by", "planet"], USAGE),
            (["hot", os.path.join(FIXTURES, "gecko", "fxprof-profile_without_js.v66.json"), "--stages",
              self.p("absent.json")], MISSING),
        ])
        self.check_stdout_full([["hot", self.p("good.folded")]])

    def test_diff(self):
        g = self.p("good.folded")
        self.check([
            (["diff", self.p("absent.folded"), g], MISSING),
            (["diff", g, "never-saved"], MISSING),
            (["diff", g, self.p("junk.bin")], UNUSABLE),
            (["diff", self.p("empty.folded"), g], UNUSABLE),
            (["diff", g], USAGE),
            (["diff", g, g, "--table", "sideways"], USAGE),
            (["diff", g, g, "--folded", "-o", "/nonexistent-dir/d.folded"], OUTPUT),
        ])
        self.check_stdout_full([["diff", g, g]])

    def test_flame_and_convert(self):
        g = self.p("good.folded")
        for cmd, out in (("flame", "f.svg"), ("convert", "c.json")):
            self.check([
                ([cmd, self.p("absent.folded"), "-o", self.p(out)], MISSING),
                ([cmd, self.p("dir"), "-o", self.p(out)], UNUSABLE),
                ([cmd, self.p("junk.bin"), "-o", self.p(out)], UNUSABLE),
                ([cmd, self.p("empty.folded"), "-o", self.p(out)], UNUSABLE),
                ([cmd, g, "-o", "/nonexistent-dir/" + out], OUTPUT),
            ])
        self.check([
            (["flame", g, "-o", self.p("f.svg"), "--width", "x"], USAGE),
            (["convert", g, "-o", self.p("c.out"), "--to", "jpeg"], USAGE),
        ])

    def test_annotate(self):
        g = self.p("good.folded")
        self.check([
            (["annotate", self.p("absent.folded"), "parse"], MISSING),
            (["annotate", self.p("dir"), "parse"], UNUSABLE),
            (["annotate", self.p("junk.bin"), "parse"], UNUSABLE),
            (["annotate", self.p("empty.folded"), "parse"], UNUSABLE),
            (["annotate", g, "("], USAGE),
            (["annotate", g, "^nothing$"], USAGE),
            (["annotate", g, "parse", "--html", "/nonexistent-dir/a.html"], OUTPUT),
        ])
        self.check_stdout_full([["annotate", g, "parse"]])

    def test_metrics(self):
        self.check([
            (["metrics", "--path", self.p("absent.json")], MISSING),
            (["metrics", "--name", "never"], MISSING),
            (["metrics", "--path", self.p("junk.bin")], UNUSABLE),
            (["metrics", "--path", self.p("empty.json")], UNUSABLE),
            (["metrics", "--path", self.p("rec.json"), "--top", "x"], USAGE),
            (["metrics", "record", "--every", "x", "--", "true"], USAGE),
            (["metrics", "record", "--", "/nonexistent/command"], USAGE),
            (["metrics", "record", "--name", "m", "--", "true"], OUTPUT, "afile"),
        ])
        self.check_stdout_full([["metrics", "--path", self.p("rec.json")]])

    def test_bench_run(self):
        self.check([
            (["bench", "run", self.p("absent.ini")], MISSING),
            (["bench", "run", self.p("junk.ini")], UNUSABLE),
            (["bench", "run", self.p("empty.json")], UNUSABLE),
            (["bench", "run", self.p("nocase.ini")], UNUSABLE),
            (["bench", "run", self.p("suite.ini"), "--repeats", "x"], USAGE),
            (["bench", "run", self.p("suite.ini"), "--out", "/nonexistent-dir/x.json"], OUTPUT),
            (["bench", "run", self.p("failing.ini"), "--repeats", "1", "--out", self.p("f.json")], FAILED),
        ])

    def test_push(self):
        # a push that cannot reach its gateway is exit 6 (§3.2 row 6): nothing listens on a port just freed
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            dead = "http://127.0.0.1:%d" % s.getsockname()[1]
        art = self.p("art.json")
        self.check([
            (["bench", "push", self.p("absent.json"), "--to", dead], MISSING),
            (["bench", "push", self.p("junk.json"), "--to", dead], UNUSABLE),
            (["bench", "push", art], USAGE),
            (["bench", "push", art, "--to", "ftp://127.0.0.1/"], USAGE),
            (["bench", "push", art, "--to", dead, "--label", "bad-name=x"], USAGE),
            (["bench", "push", art, "--to", dead], OUTPUT),
            (["bench", "run", self.p("suite.ini"), "--push", dead, "--out", self.p("pushed.json")], OUTPUT),
            (["metrics", "push", "--path", self.p("absent.json"), "--to", dead], MISSING),
            (["metrics", "push", "--path", self.p("junk.bin"), "--to", dead], UNUSABLE),
            (["metrics", "push", "--path", self.p("rec.json")], USAGE),
            (["metrics", "push", "--path", self.p("rec.json"), "--to", dead], OUTPUT),
        ])

    def test_bench_report_and_compare(self):
        art = self.p("art.json")
        self.check([
            (["bench", "report", self.p("absent.json")], MISSING),
            (["bench", "report", self.p("junk.json")], UNUSABLE),
            (["bench", "report", self.p("empty.json")], UNUSABLE),
            (["bench", "report", art, "--json", "--markdown"], USAGE),
            (["bench", "compare", "never-saved", art], MISSING),
            (["bench", "compare", self.p("absent.json"), art], MISSING),
            (["bench", "compare", art, self.p("junk.json")], UNUSABLE),
            (["bench", "compare", art, art, "--rank", "luck"], USAGE),
            (["bench", "compare", "main", self.p("art-lost.json"), "--fail-on-regression"], FAILED),
        ])
        self.check_stdout_full([["bench", "report", art], ["bench", "compare", art, art]])

    def test_bench_baseline(self):
        self.check([
            (["bench", "baseline", "save", self.p("absent.json"), "--name", "x"], MISSING),
            (["bench", "baseline", "save", self.p("junk.json"), "--name", "x"], UNUSABLE),
            (["bench", "baseline", "save", self.p("art.json"), "--name", "../x"], USAGE),
            (["bench", "baseline", "save", self.p("art.json"), "--name", "main"], USAGE),  # taken: --force
            (["bench", "baseline", "save", self.p("art.json"), "--name", "x"], OUTPUT, "afile"),
            (["bench", "baseline", "show", "never"], MISSING),
            (["bench", "baseline", "show", "broken"], UNUSABLE),
            (["bench", "baseline", "show", "../x"], USAGE),
            (["bench", "baseline", "rm", "never"], MISSING),
            (["bench", "baseline", "list", "extra"], USAGE),
        ])
        self.check_stdout_full([["bench", "baseline", "list"], ["bench", "baseline", "show", "main"]])

    def test_profile_baseline(self):
        self.check([
            (["baseline", "save", self.p("absent.folded"), "--name", "x"], MISSING),
            (["baseline", "save", self.p("empty.folded"), "--name", "x"], UNUSABLE),
            (["baseline", "save", self.p("good.folded"), "--name", "prof"], USAGE),  # taken: --force
            (["baseline", "save", self.p("good.folded"), "--name", ".x"], USAGE),
            (["baseline", "save", self.p("good.folded"), "--name", "x"], OUTPUT, "afile"),
            (["baseline", "show", "never"], MISSING),
            (["baseline", "show", "broken"], UNUSABLE),
            (["baseline", "rm", "never"], MISSING),
            (["baseline", "list", "extra"], USAGE),
            (["baseline", "frobnicate"], USAGE),
            (["record", "--save-baseline", "prof", "-o", self.p("r.folded"), "--", "true"], USAGE),  # taken
        ])
        self.check_stdout_full([["baseline", "list"], ["baseline", "show", "prof"]])

    def test_bench_coverage_owners_doctor(self):
        art = self.p("art.json")
        self.check([
            (["bench", "coverage", "--artifact", self.p("absent.json")], MISSING),
            (["bench", "coverage", "--artifact", self.p("junk.json")], UNUSABLE),
            (["bench", "coverage"], USAGE),
            (["bench", "coverage", "--strict", "--artifact", art, "--catalog", self.p("catalog.ini")], FAILED),
            (["bench", "owners", "--catalog", self.p("absent.ini")], MISSING),
            (["bench", "owners", "--catalog", self.p("junkcat.ini")], UNUSABLE),
            (["bench", "owners", "--catalog", self.p("catalog.ini"), "extra"], USAGE),
            (["bench", "phase-owners", "--catalog", self.p("absent.ini")], MISSING),
            (["bench", "doctor", "--binary", "./nonexist"], MISSING),
            (["bench", "doctor", "--min-free-bytes", "x"], USAGE),
            (["bench", "doctor", "--min-free-bytes", str(2 ** 62), "--binary", target("benchwork")], FAILED),
            (["bench", "frobnicate"], USAGE),
        ])
        self.check_stdout_full([["bench", "owners", "--catalog", self.p("catalog.ini")]])

    def test_every_command_and_subcommand_has_rows(self):
        # the commands `plumb --help` lists and the sub-commands their own --help lists, against the command lines
        # this table runs (read from this file): a new command cannot be added without its rows
        def listed(*cmd):
            r = self.run_plumb(*cmd, "--help")
            self.assertEqual(r.returncode, 0, r.stderr)
            return set(re.findall(r"^  ([a-z][\w-]*)  ", r.stdout, re.M))
        want = {(c,) for c in listed()}
        for c in ("bench", "baseline"):
            want |= {(c, s) for s in listed(c)}
        want |= {("metrics", "record"), ("metrics", "push")}
        with open(__file__) as f:
            tree = ast.parse(f.read())
        lines = [[e.value for e in n.elts[:2] if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                 for n in ast.walk(tree) if isinstance(n, ast.List) and n.elts]
        have = {tuple(ln[:2]) for ln in lines if len(ln) == 2} | {(ln[0],) for ln in lines if ln}
        self.assertGreater(len(want), 15, want)
        self.assertEqual(sorted(w for w in want if w not in have), [], "commands without a row in the table")

    def test_dispatcher(self):
        self.check([
            (["frobnicate"], USAGE),
            (["hot", "--no-such-option", self.p("good.folded")], USAGE),
        ])


if __name__ == "__main__":
    unittest.main()
