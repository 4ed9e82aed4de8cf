"""Redaction in every output (docs/design.md §3.6), neither leaky nor greedy: a real process named
"pw=hunter2COMM" with a thread "tok=ghp_THRD01", a JIT function "tok=ghp_JITFN1" and a symbol "ghp_kept_fn",
built from a source in a directory named "token=ghp_DIR0001" (tests/targets/secrets.c), is recorded and read
into every format plumb writes — folded, Firefox JSON, speedscope, pprof (decoded), svg, hot --json, diff
--json, a metrics recording and its report, a bench artifact and its report. No secret may appear in any of
them; and only the secret goes: the rest of the path and the file name stay, the JIT frame keeps its _[j], the
symbol keeps its name."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import ROOT, TempDir, main, plumb, skip_missing  # noqa: E402

SECRETS = ("hunter2COMM", "ghp_THRD01", "ghp_JITFN1", "ghp_DIR0001")
SECRET_DIR = "token=ghp_DIR0001"


def pprof_strings(path):
    """The string table of a gzipped pprof profile (field 6 of perftools.profiles.Profile)."""
    data = gzip.open(path).read()
    out, i = [], 0

    def varint(i):
        v = shift = 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return v, i
    while i < len(data):
        key, i = varint(i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(i)
        elif wire == 2:
            n, i = varint(i)
            if field == 6:
                out.append(data[i:i + n].decode("utf-8", "replace"))
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError("bad wire type %d" % wire)
    return out


class RedactOutputs(TempDir):
    def setUp(self):
        super().setUp()
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            skip_missing("cc", "the test compiles its target inside a directory named after a secret")
        self.src_dir = os.path.join(self.tmp, "app", SECRET_DIR)
        os.makedirs(self.src_dir)
        src = os.path.join(self.src_dir, "secrets.c")
        shutil.copy(os.path.join(ROOT, "tests", "targets", "secrets.c"), src)
        self.bin = os.path.join(self.src_dir, "secrets")
        subprocess.run([cc, "-g", "-O1", "-fno-omit-frame-pointer", "-pthread", "-o", self.bin, src], check=True,
                       timeout=120)
        self.pids = []

    def tearDown(self):
        for pid in self.pids:
            try:
                os.unlink("/tmp/perf-%s.map" % pid)
            except FileNotFoundError:
                pass
        super().tearDown()

    def record(self, out, *args):
        r = plumb("record", "--interval", "0.002", *args, "-o", out, "--", self.bin, "0.4", timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.pids += re.findall(r"secrets pid (\d+)", r.stdout)
        self.no_secret("record's messages", r.stdout + r.stderr)

    def no_secret(self, what, text):
        for s in SECRETS:
            self.assertNotIn(s, text, "%s leaks %s" % (what, s))

    def read(self, path):
        with open(path, errors="replace") as f:
            return f.read()

    def test_every_output_is_redacted_and_keeps_the_rest(self):
        p = self.path
        outputs = {}
        # recorded straight into each format, and converted from folded (the finished-label path)
        self.record(p("r.folded"), "--threads")
        self.record(p("r.json"))
        self.record(p("r.speedscope.json"))
        self.record(p("r.pb.gz"))
        self.record(p("r.svg"), "--threads")
        for name in ("c.json", "c.speedscope.json", "c.pb.gz"):
            r = plumb("convert", p("r.folded"), "-o", p(name))
            self.assertEqual(r.returncode, 0, r.stderr)
        r = plumb("flame", p("r.folded"), "-o", p("f.svg"))
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("r.folded", "r.json", "r.speedscope.json", "r.svg", "c.json", "c.speedscope.json", "f.svg"):
            outputs[name] = self.read(p(name))
        for name in ("r.pb.gz", "c.pb.gz"):
            outputs[name + " (decoded)"] = "\n".join(pprof_strings(p(name)))
        for src in ("r.folded", "r.json"):
            r = plumb("hot", p(src), "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            outputs["hot --json " + src] = r.stdout
        r = plumb("diff", p("r.folded"), p("r.json"), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        outputs["diff --json"] = r.stdout
        for what, text in outputs.items():
            self.no_secret(what, text)

        # greedy nowhere: the symbol is kept, the path keeps its file name, the JIT frame its mark
        folded = outputs["r.folded"]
        self.assertIn("ghp_kept_fn (%s/secrets.c:" % "token=[REDACTED]", folded)
        self.assertRegex(folded, r"(^|;)tok=\[REDACTED\]_\[j\]( |;)")
        roots = "thread roots: %s" % sorted({line.split(";")[0] for line in folded.splitlines()})
        self.assertRegex(folded, r"(^|\n)pw=\[REDACTED\] \(\d+\);", roots)
        self.assertRegex(folded, r"(^|\n)tok=\[REDACTED\] \(\d+\);", roots)
        # recorded or read back from folded: one rule for the symbol's name
        for what in ("r.json", "r.speedscope.json", "r.pb.gz (decoded)", "r.svg", "hot --json r.folded",
                     "hot --json r.json", "c.json", "c.speedscope.json", "c.pb.gz (decoded)", "f.svg"):
            self.assertIn("ghp_kept_fn", outputs[what], "%s lost the symbol's name" % what)
        for what in ("r.json", "c.json", "r.speedscope.json", "r.svg", "f.svg"):
            self.assertIn("secrets.c", outputs[what], "%s lost the file name" % what)
        gecko = json.loads(outputs["r.json"])
        names = [t.get("name", "") for t in gecko["threads"]]
        self.assertIn("tok=[REDACTED]", names)
        self.assertIn("pw=[REDACTED]", names)

    def test_metrics_and_bench_are_redacted(self):
        home = self.path("home")
        env = {"PLUMB_HOME": home}
        r = plumb("metrics", "record", "--every", "0.1", "--name", "sec", "--", self.bin, "0.5", extra_env=env,
                  timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.pids += re.findall(r"secrets pid (\d+)", r.stdout)
        outputs = {"metrics record": r.stdout + r.stderr}
        with open(os.path.join(home, "metrics", "sec.json")) as f:
            outputs["the recording"] = f.read()
        self.assertIn("pw=[REDACTED]", outputs["the recording"], "the process name did not reach the recording")
        for args in ((), ("--json",)):
            r = plumb("metrics", "--name", "sec", *args, extra_env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            outputs["metrics " + " ".join(args)] = r.stdout + r.stderr
        suite = self.path("suite.ini")
        with open(suite, "w") as f:
            f.write("[case sec]\nrun = %s 0.05\n" % self.bin)
        art = self.path("art.json")
        r = plumb("bench", "run", suite, "--repeats", "1", "--warmup", "0", "--out", art, debug=False, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        outputs["bench run"] = r.stdout + r.stderr
        outputs["the artifact"] = self.read(art)
        self.assertIn(SECRET_DIR.replace("ghp_DIR0001", "[REDACTED]"), outputs["the artifact"])
        for args in ((), ("--json",), ("--markdown",)):
            r = plumb("bench", "report", art, *args, debug=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            outputs["bench report " + " ".join(args)] = r.stdout + r.stderr
        for what, text in outputs.items():
            self.no_secret(what, text)


if __name__ == "__main__":
    main()
