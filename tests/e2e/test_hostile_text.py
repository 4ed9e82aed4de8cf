"""Untrusted text in messages and outputs (issue 27, part B; docs/design.md §3.3, §3.6, §4.1): escape sequences
from an input never reach stderr raw, stage names, bench sample names and tags with secret shapes are redacted in
every output that shows them, a command line keeps its program's name, a huge name is capped."""
import json
import os
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import PLUMB, TempDir, env, main, needs_root, plumb, target  # noqa: E402

# The eight secret shapes a stage name carried verbatim (the name, and the part of it that must not survive).
STAGE_SHAPES = [
    ("ghp_STAGE0123456789abcdefABCDEF0123", "STAGE0123456789abcdef"),
    ("AKIASTAGE7EXAMPLE42", "STAGE7EXAMPLE42"),
    ("post xoxb-1111-2222-StageSlackTok", "StageSlackTok"),
    ("call sk-proj-StageOpenAiKey0123456789abcdef", "StageOpenAiKey"),
    ("auth eyJhbGciOiJIUzI1NiJ9.eyJzdGFnZSI6MX0.StageJwtSignature0", "StageJwtSignature0"),
    ("fetch https://u:StagePassw0rd@h.example/x", "StagePassw0rd"),
    ("step token=StageTokenValue9", "StageTokenValue9"),
    ("login --password=StagePwValue7", "StagePwValue7"),
]

# Bytes a terminal obeys: C0 controls but the newline that ends a line, DEL, and CSI as a C1 control.
RAW_CONTROL = [bytes([c]) for c in range(0x20) if c != 0x0a] + [b"\x7f", b"\xc2\x9b"]


def run_bytes(*args, debug=False, cwd=None, extra=None):
    return subprocess.run([PLUMB, *args], env=env(debug, **(extra or {})), capture_output=True, timeout=60, cwd=cwd)


class EscapedMessages(TempDir):
    def no_raw_control(self, what, data):
        for c in RAW_CONTROL:
            self.assertNotIn(c, data, "%s: raw %r reached the terminal: %r" % (what, c, data[:300]))

    def test_an_input_cannot_drive_the_terminal(self):
        ev = self.path("e.json")
        with open(ev, "wb") as f:
            f.write(b'{"schema":"plumb.evidence.v\x1b[2J\x1b]0;PWN\x07"}')
        r = run_bytes("hot", ev)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.no_raw_control("hot of a schema with escapes", r.stderr)
        self.assertIn(b"\\x1b[2J\\x1b]0;PWN\\x07", r.stderr)  # shown, escaped
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        # INI: a case name and an unknown key with control bytes
        for name, text in (("case.ini", b"[case \x1b[31mred\x1b]0;PWN\x07]\nrun = true\n"),
                           ("key.ini", b"[case ok]\nrun = true\nbad\x1b[2Jkey\x07 = 3\n")):
            suite = self.path(name)
            with open(suite, "wb") as f:
                f.write(text)
            r = run_bytes("bench", "run", suite, "--out", self.path("a.json"))
            self.assertNotEqual(r.returncode, 0, r.stderr)
            self.no_raw_control("bench run " + name, r.stderr)
            self.assertIn(b"\\x1b", r.stderr)
        # frame names on hot's text report
        folded = self.path("x.folded")
        with open(folded, "wb") as f:
            f.write(b"main;ev\x1b]0il\x07 5\nmain;ok\x1b[2J 3\n")
        r = run_bytes("hot", folded)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.no_raw_control("hot's report", r.stdout + r.stderr)
        self.assertIn(b"ev\\x1b]0il\\x07", r.stdout)
        r = run_bytes("diff", folded, folded)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.no_raw_control("diff's report", r.stdout + r.stderr)
        # a bench sample named with escape sequences: every report prints metric names
        script = self.path("emit.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\nprintf '%s\\n' '{\"name\":\"m\\u001b]0;PWN\\u0007x\",\"value\":1.5}' "
                    ">> \"$PLUMB_SAMPLES\"\n")
        os.chmod(script, stat.S_IRWXU)
        suite = self.path("esc.ini")
        with open(suite, "w") as f:
            f.write("[case c]\nrun = %s\n" % script)
        art = self.path("esc.json")
        r = run_bytes("bench", "run", suite, "--repeats", "3", "--warmup", "0", "--out", art)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.no_raw_control("bench run", r.stdout + r.stderr)
        for args in (("report", art), ("report", art, "--markdown"), ("compare", art, art)):
            r = run_bytes("bench", *args)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.no_raw_control("bench " + " ".join(args[:1] + args[2:]), r.stdout + r.stderr)
            self.assertIn(b"c.m\\x1b]0;PWN\\x07x", r.stdout)

    def test_a_huge_name_is_capped(self):
        # a 1 MiB function name (the 200 MB perf-map name, smaller) is kept as its first 16 KiB and "..."
        folded = self.path("big.folded")
        with open(folded, "w") as f:
            f.write("main;%s 3\nmain;small 2\n" % ("A" * (1 << 20)))
        out = self.path("out.folded")
        r = plumb("convert", folded, "-o", out, debug=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(os.path.getsize(out), 40 << 10)
        with open(out) as f:
            frames = [fr for line in f for fr in line.rsplit(" ", 1)[0].split(";")]
        self.assertIn("A" * (16 << 10) + "...", frames)
        self.assertTrue(all(len(fr) <= (16 << 10) + 3 for fr in frames))


class NothingReadAndWriteErrors(TempDir):
    def test_an_input_with_no_sample_is_exit_5(self):
        # a comment-only folded file, and a stage file whose first '{' was flipped (read as perf script text), held
        # no sample and read as an empty profile with exit 0
        comments = self.path("c.folded")
        with open(comments, "w") as f:
            f.write("# just a comment\n# another one\n")
        flipped = self.path("flipped.json")
        with open(flipped, "w") as f:
            # as record writes a stage file, its first '{' flipped to '['
            f.write('["schema": "plumb.stages.v1", "time_unit": "ms", "time_origin": "profile_start", "stages": [\n'
                    '  {"name": "command", "start_ms": 0.000, "end_ms": 294.381},\n'
                    '  {"name": "parse", "start_ms": 6.373, "end_ms": 66.097}\n]}\n')
        for path in (comments, flipped):
            for args in (("hot", path), ("convert", path, "-o", self.path("o.json")), ("flame", path, "-o",
                                                                                        self.path("o.svg"))):
                r = plumb(*args, debug=False)
                self.assertEqual(r.returncode, 5, (args, r.stdout, r.stderr))
                last = r.stderr.splitlines()[-1]  # (perf script's reader may warn about the line first)
                self.assertTrue(last.startswith("plumb: ") and "warning" not in last, r.stderr)
                if args[0] == "hot":  # folded text and perf script text say what they held instead
                    self.assertTrue(any(w in last for w in ("holds no sample", "no stacks in it",
                                                            "events without stack lines")), last)
            self.assertFalse(os.path.exists(self.path("o.json")))

    def test_a_full_disk_says_why(self):
        needs_root("it mounts a 64 KiB tmpfs to fill")
        a = self.path("a.folded")
        with open(a, "w") as f:
            for i in range(20000):
                f.write("main;fn%d;leaf%d %d\n" % (i, i, i % 7 + 1))
        full = self.path("full")
        os.mkdir(full)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", full], check=True, timeout=30)
        try:
            r = plumb("diff", "--folded", a, a, "-o", os.path.join(full, "out.folded"), debug=False)
            self.assertEqual(r.returncode, 6, r.stderr)
            self.assertIn("No space left on device", r.stderr)
            self.assertEqual(os.listdir(full), [], "a temporary file was left behind")
        finally:
            subprocess.run(["umount", full], check=True, timeout=30)

    def test_a_fifo_no_one_reads_is_given_up(self):
        src = self.path("x.folded")
        with open(src, "w") as f:
            f.write("main;a 3\nmain;b 2\n")
        fifo = self.path("out.fifo")
        os.mkfifo(fifo)
        t0 = time.monotonic()
        r = plumb("convert", src, "--to", "folded", "-o", fifo, debug=False, timeout=30)
        took = time.monotonic() - t0
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("no one read", r.stderr)
        self.assertLess(took, 8, "it waited %.1f s" % took)
        # with a reader it is written in place, whole
        reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE, text=True)
        r = plumb("convert", src, "--to", "folded", "-o", fifo, debug=False, timeout=30)
        out, _ = reader.communicate(timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(out.splitlines()), ["main;a 3", "main;b 2"])


class RedactedStageNames(TempDir):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = tempfile.mkdtemp(prefix="plumb-stagenames-")
        cls.prof = os.path.join(cls.dir, "p.json")
        cls.stages = os.path.join(cls.dir, "st.json")
        cls.summary = os.path.join(cls.dir, "sum.json")
        cls.home = os.path.join(cls.dir, "home")
        cls.rec = plumb("record", "--interval", "0.002", "--stages", cls.stages, "--summary", cls.summary,
                        "--save-baseline", "stg", "-o", cls.prof, "--", target("stagenames"),
                        *[name for name, _ in STAGE_SHAPES], extra_env={"PLUMB_HOME": cls.home})

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, ignore_errors=True)

    def no_secret(self, what, text):
        for _, secret in STAGE_SHAPES:
            self.assertNotIn(secret, text, "%s keeps the stage name's secret %s" % (what, secret))

    def test_every_output_redacts_the_stage_names(self):
        self.assertEqual(self.rec.returncode, 0, self.rec.stderr)
        outputs = {"record": self.rec.stdout + self.rec.stderr}
        for what, path in (("the stage file", self.stages), ("the summary", self.summary)):
            with open(path) as f:
                outputs[what] = f.read()
        names = [s["name"] for s in json.loads(outputs["the stage file"])["stages"]]
        self.assertEqual(len(names), 1 + len(STAGE_SHAPES), names)
        self.assertTrue(all("[REDACTED]" in n for n in names[1:]), names)
        self.assertIn("step token=[REDACTED]", names)  # only the secret goes
        for args in ((), ("--json",)):
            r = plumb("hot", self.prof, "--stages", self.stages, *args, debug=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            outputs["hot --stages " + " ".join(args)] = r.stdout + r.stderr
        r = plumb("baseline", "show", "stg", debug=False, extra_env={"PLUMB_HOME": self.home})
        self.assertEqual(r.returncode, 0, r.stderr)
        outputs["baseline show"] = r.stdout + r.stderr
        for what, text in outputs.items():
            self.no_secret(what, text)

    def test_a_stage_file_someone_else_wrote_is_redacted_when_read(self):
        self.assertEqual(self.rec.returncode, 0, self.rec.stderr)
        with open(self.stages) as f:
            doc = json.load(f)
        for s, (name, _) in zip(doc["stages"][1:], STAGE_SHAPES):
            s["name"] = name  # the raw shapes, as a hand-made stage file would hold them
        foreign = self.path("foreign.json")
        with open(foreign, "w") as f:
            json.dump(doc, f)
        for args in ((), ("--json",)):
            r = plumb("hot", self.prof, "--stages", foreign, *args, debug=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.no_secret("hot --stages of a foreign stage file " + " ".join(args), r.stdout + r.stderr)
            self.assertIn("token=[REDACTED]", r.stdout)


class RedactedBench(TempDir):
    SAMPLE = "ghp_SampleName0123456789abcdef0123456789"
    SECRETS = ("SampleName0123456789", "CANARYTOK77", "TagPw1234", "TagKeyName0123456789")

    def test_sample_names_and_tags_are_redacted_everywhere(self):
        script = self.path("emit.sh")
        line = {"name": self.SAMPLE, "value": 1.5, "unit": "ms",
                "tags": {"token": "CANARYTOK77", "url": "https://u:TagPw1234@h.example/x",
                         "ghp_TagKeyName0123456789": "v", "input": "plain.txt"}}
        with open(script, "w") as f:
            f.write("#!/bin/sh\nprintf '%%s\\n' '%s' >> \"$PLUMB_SAMPLES\"\n" % json.dumps(line))
        os.chmod(script, stat.S_IRWXU)
        suite = self.path("b.ini")
        with open(suite, "w") as f:
            f.write("[case sec]\nrun = %s\n" % script)
        home = {"PLUMB_HOME": self.path("home")}
        outputs = {}
        for art in ("a.json", "b.json"):
            r = plumb("bench", "run", suite, "--repeats", "5", "--warmup", "0", "--out", self.path(art), debug=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            outputs["bench run " + art] = r.stdout + r.stderr
            with open(self.path(art)) as f:
                outputs["artifact " + art] = f.read()
        doc = json.loads(outputs["artifact a.json"])
        tags = [s["tags"] for s in doc["samples"] if s.get("tags")]
        self.assertEqual(len(tags), 5, tags)
        self.assertEqual(tags[0]["token"], "[REDACTED]")        # a credential-named key loses its whole value
        self.assertEqual(tags[0]["input"], "plain.txt")         # the rest stays
        self.assertIn("sec.[REDACTED]", [s["name"] for s in doc["samples"]])
        for args in ((), ("--json",), ("--markdown",)):
            r = plumb("bench", "report", self.path("a.json"), *args, debug=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            outputs["bench report " + " ".join(args)] = r.stdout + r.stderr
        r = plumb("bench", "compare", self.path("a.json"), self.path("b.json"), debug=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        outputs["bench compare"] = r.stdout + r.stderr
        r = plumb("bench", "baseline", "save", self.path("a.json"), "--name", "sec", debug=False, extra_env=home)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = plumb("bench", "baseline", "show", "sec", debug=False, extra_env=home)
        self.assertEqual(r.returncode, 0, r.stderr)
        outputs["bench baseline show"] = r.stdout + r.stderr
        # an artifact written by someone else, with the raw shapes, is redacted as it is read
        raw = json.loads(outputs["artifact a.json"])
        for s in raw["samples"]:
            if s.get("tags"):
                s["name"], s["tags"] = "sec." + self.SAMPLE, line["tags"]
        with open(self.path("raw.json"), "w") as f:
            json.dump(raw, f)
        for args in (("report", self.path("raw.json")), ("compare", self.path("raw.json"), self.path("a.json"))):
            r = plumb("bench", *args, debug=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            outputs["bench %s of a raw artifact" % args[0]] = r.stdout + r.stderr
        for what, text in outputs.items():
            for s in self.SECRETS:
                self.assertNotIn(s, text, "%s keeps %s" % (what, s))


class RedactedCommandLine(TempDir):
    def test_the_program_name_survives_a_path_with_secrets(self):
        # /…/token=CANARY/api_key=X/sectarget --password=…: each value ends at '/', the program's name stays
        d = os.path.join(self.tmp, "token=CANARY4242", "api_key=XKEY5757")
        os.makedirs(d)
        prog = os.path.join(d, "sectarget")
        os.symlink(target("split"), prog)
        summary = self.path("s.json")
        r = plumb("record", "--interval", "0.002", "--summary", summary, "-o", self.path("p.json"), "--", prog,
                  "0.2", "--password=PwCanary42")
        self.assertIn(r.returncode, (0, 1), r.stderr)
        with open(self.path("p.json")) as f:
            prof = f.read()
        text = prof + r.stdout + r.stderr
        for s in ("CANARY4242", "XKEY5757", "PwCanary42"):
            self.assertNotIn(s, text)
        self.assertIn("token=[REDACTED]/api_key=[REDACTED]/sectarget", prof)


if __name__ == "__main__":
    main()
