"""End-to-end: plumb annotate (docs/design.md §6.8) on tests/targets/annot.c, recorded once per format in setUpClass.
Two loops on lines 9 and 10 of one body, 3:1 of the rounds, each timed by the target's own CPU clock: the lines'
shares from a Firefox JSON (perf_event) and from a pprof recording (inprocess) are within 5 points of 75/25 and
within 3.5 standard errors of the target's own split, on >= 800 samples (5 points >= 3 SE). --asm lists the
instructions (imul among them) with samples summing to the function's; a stripped copy is annotated by instruction
under `annot-stripped+0x...` at two_loops' symbol address; step(), always inlined into mixed() at line 21, shows
on line 21 and under it on its own line 16; and on one perf.data recording, perf annotate --stdio and plumb give
every instruction the same percentage (both read the same samples: exact up to perf's rounding). Folded text keeps
the addresses with --addresses; without them annotate says so and shows lines only."""
# plumbtest: alone
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import PLUMB, ROOT, env, main, needs_tool, plumb, skip_missing, target  # noqa: E402

SCHEMA = os.path.join(ROOT, "docs", "annotate.schema.json")
TRUTH = re.compile(r"line9 ([0-9.]+) line10 ([0-9.]+) share9")


def base_files(v):
    """v with every "file" value cut to its last part."""
    if isinstance(v, list):
        return [base_files(x) for x in v]
    if isinstance(v, dict):
        return {k: (os.path.basename(x) if k == "file" and isinstance(x, str) else base_files(x)) for k, x in v.items()}
    return v


class Annotate(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.tmp = tempfile.mkdtemp(prefix="plumb-annotate-")
        cls.truth = {}
        cls.paths = {}
        for name, out, opts, scale in (("gecko", "r.json", ("--backend", "perf_event"), "1.5"),
                                       ("pprof", "r.pb.gz", ("--backend", "inprocess"), "1.5")):
            path = os.path.join(cls.tmp, out)
            r = plumb("record", "--rate", "2000", *opts, "-o", path, "--", target("annot"), scale, timeout=300)
            assert r.returncode == 0, r.stderr
            m = TRUTH.search(r.stdout)
            assert m, r.stdout
            a, b = float(m.group(1)), float(m.group(2))
            cls.truth[name] = 100.0 * a / (a + b)
            cls.paths[name] = path
        cls.stripped = os.path.join(cls.tmp, "annot-stripped")
        subprocess.run(["strip", "-o", cls.stripped, target("annot")], check=True)
        cls.paths["stripped"] = os.path.join(cls.tmp, "s.json")
        r = plumb("record", "--rate", "2000", "-o", cls.paths["stripped"], "--", cls.stripped, "0.3", timeout=300)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def annotate(self, profile, func, *args, code=0):
        r = plumb("annotate", profile, func, "--source-root", ROOT, *args)
        self.assertEqual(r.returncode, code, r.stderr)
        return r

    def doc(self, profile, func, *args):
        d = json.loads(self.annotate(profile, func, "--json", *args).stdout)
        self.validate(d)
        return d

    def validate(self, d):
        try:
            import jsonschema
        except ImportError:
            skip_missing("python3-jsonschema", "it validates plumb.annotate.v1")
        with open(SCHEMA) as f:
            jsonschema.validate(d, json.load(f))

    def func(self, d, name):
        for f in d["functions"]:
            if f["function"] == name:
                return f
        self.fail("no %s in %s" % (name, [f["function"] for f in d["functions"]]))

    def check_split(self, fmt):
        f = self.func(self.doc(self.paths[fmt], "^two_loops$"), "two_loops")
        lines = {ln["line"]: ln for ln in f["lines"]}
        s9, s10 = lines[9]["samples"], lines[10]["samples"]
        n = s9 + s10
        self.assertGreaterEqual(n, 800, "too few samples on lines 9 and 10 for 5 points to be 3 SE: %d" % n)
        share = 100.0 * s9 / n
        se = 100.0 * (0.25 * 0.75 / n) ** 0.5
        self.assertLessEqual(abs(share - 75.0), 5.0, "line 9 %.1f%% for 75 (%d samples)" % (share, n))
        truth = self.truth[fmt]
        self.assertLessEqual(abs(share - truth), max(3.5 * se, 1.0),
                             "line 9 %.1f%% for the target's own %.1f%% (%d samples, SE %.2f)" % (share, truth, n, se))
        self.assertIn("3 * n", lines[9]["text"])  # the source, read through --source-root
        self.assertGreaterEqual(lines[9]["inclusive"], s9)
        return f

    def test_lines_from_firefox_json(self):
        self.check_split("gecko")

    def test_lines_from_pprof(self):
        self.check_split("pprof")

    def test_asm_lists_instructions_with_samples(self):
        for fmt in ("gecko", "pprof"):
            f = self.func(self.doc(self.paths[fmt], "^two_loops$", "--asm"), "two_loops")
            ins = f["instructions"]
            texts = [i["text"] for i in ins]
            self.assertTrue(any(t.startswith("imul") for t in texts), texts)
            self.assertEqual(sum(i["samples"] for i in ins) + f["no_address"], f["samples"], fmt)
            self.assertEqual(f["no_address"], 0, fmt)
            hot = max(ins, key=lambda i: i["samples"])
            self.assertEqual(hot["line"], 9, hot)  # the 3x loop's instructions hold the most samples
            loop_targets = [i for i in ins if i["branch_target"] and i["line"] in (9, 10)]
            self.assertGreaterEqual(len(loop_targets), 2, "each loop's head is a jump target")
            calls = [i for i in ins if i["text"].startswith("call")]
            self.assertTrue(calls, texts)

    def test_call_instructions_carry_their_callees_inclusive_samples(self):
        callee = self.func(self.doc(self.paths["gecko"], "^two_loops$"), "two_loops")
        main_ = self.func(self.doc(self.paths["gecko"], "^main$", "--asm"), "main")
        calls = [i for i in main_["instructions"] if i["call"] == "two_loops (targets/annot.c)"]
        self.assertEqual(len(calls), 1, [i for i in main_["instructions"] if i["call"]])
        self.assertTrue(calls[0]["text"].startswith("call"), calls[0])
        self.assertLessEqual(calls[0]["inclusive"], callee["inclusive"])
        self.assertGreaterEqual(calls[0]["inclusive"], 0.95 * callee["inclusive"], calls[0])

    def test_terminal_view_fits_80_columns_and_marks_hot_lines(self):
        r = self.annotate(self.paths["gecko"], "^two_loops$", "--asm")
        for line in r.stdout.splitlines():
            self.assertLessEqual(len(line), 80, line)
        marked = [ln for ln in r.stdout.splitlines() if ln.startswith(">>")]
        self.assertTrue(any(re.search(r"\b9 \| ", ln) for ln in marked), r.stdout[:2000])
        self.assertTrue(any("imul" in ln or "add" in ln for ln in marked), r.stdout)

    def test_html_page(self):
        out = os.path.join(self.tmp, "two_loops.html")
        self.annotate(self.paths["gecko"], "^two_loops$", "--asm", "--html", out)
        with open(out) as f:
            page = f.read()
        self.assertIn("<table", page)
        self.assertIn("imul", page)
        self.assertIn("3 * n", page)

    def test_flame_links_to_annotation_pages(self):
        svg, pages = os.path.join(self.tmp, "f.svg"), os.path.join(self.tmp, "pages")
        r = plumb("flame", self.paths["gecko"], "-o", svg, "--annotate-dir", pages)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(svg) as f:
            doc = f.read()
        m = re.search(r'<g data-annotate="([^"]+)"><title>two_loops \(targets/annot\.c:9\)', doc)
        self.assertTrue(m, doc[:3000])
        with open(m.group(1)) as f:
            page = f.read()
        self.assertIn("two_loops (targets/annot.c)", page)
        self.assertIn("imul", page)

    def test_stripped_copy_by_instruction(self):
        nm = subprocess.run(["nm", target("annot")], capture_output=True, text=True, check=True).stdout
        start = int(re.search(r"^([0-9a-f]+) T two_loops$", nm, re.M).group(1), 16)
        d = self.doc(self.paths["stripped"], r"annot-stripped\+0x", "--asm")
        f = self.func(d, "annot-stripped+0x%x" % start)
        self.assertGreater(f["samples"], 0)
        self.assertIsNone(f["source"])
        ins = f["instructions"]
        self.assertTrue(any(i["text"].startswith("imul") for i in ins), ins)
        self.assertEqual(sum(i["samples"] for i in ins), f["samples"])
        self.assertEqual(ins[0]["offset"], 0)
        self.assertEqual(ins[0]["address"], start)
        r = self.annotate(self.paths["stripped"], "annot-stripped+0x%x" % start, "--asm")  # as a label reads
        self.assertTrue(r.stdout.startswith("annot-stripped+0x%x\n" % start), r.stdout[:200])
        self.assertRegex(r.stdout, r"\+0x[0-9a-f]+ +\S* *imul")  # instructions by offset, no source line

    def test_inlined_cost_on_the_callers_line_and_the_callees_own(self):
        f = self.func(self.doc(self.paths["gecko"], "^mixed$"), "mixed")
        self.assertGreaterEqual(f["samples"], 20, f)
        lines = {ln["line"]: ln for ln in f["lines"]}
        self.assertGreaterEqual(lines[21]["samples"], 0.9 * f["samples"], lines)
        inl = [x for x in lines[21]["inlined"] if x["function"] == "step"]
        self.assertEqual(len(inl), 1, lines[21])
        self.assertGreaterEqual(inl[0]["samples"], 0.9 * f["samples"])
        own = {ln["line"]: ln["samples"] for ln in inl[0]["lines"]}
        self.assertGreaterEqual(own.get(16, 0), 0.9 * inl[0]["samples"], own)
        # and step annotated by itself: its own lines
        g = self.func(self.doc(self.paths["gecko"], "^step$"), "step")
        glines = {ln["line"]: ln["samples"] for ln in g["lines"]}
        self.assertGreaterEqual(glines.get(16, 0), 0.9 * g["samples"], glines)
        self.assertEqual(g["samples"], inl[0]["samples"])

    def test_perf_annotate_gives_the_same_instructions(self):
        needs_tool("perf")
        data = os.path.join(self.tmp, "p.data")
        r = subprocess.run(["perf", "record", "-q", "-F", "2000", "-g", "-o", data, target("annot"), "0.6"],
                           capture_output=True, text=True, env=env())
        self.assertEqual(r.returncode, 0, r.stderr)
        perf = subprocess.run(["perf", "annotate", "--stdio", "-i", data, "two_loops"], capture_output=True,
                              text=True, env=env())
        self.assertEqual(perf.returncode, 0, perf.stderr)
        theirs = {}
        for m in re.finditer(r"^\s+([0-9]+\.[0-9]+) :\s+([0-9a-f]+):", perf.stdout, re.M):
            if float(m.group(1)) > 0:
                theirs[int(m.group(2), 16)] = float(m.group(1))
        self.assertTrue(theirs, perf.stdout[:3000])
        f = self.func(self.doc(data, "^two_loops$", "--asm"), "two_loops")
        ours = {i["address"]: 100.0 * i["samples"] / f["samples"] for i in f["instructions"] if i["samples"]}
        top = lambda d: sorted(d, key=lambda a: -d[a])[:3]  # noqa: E731
        self.assertEqual(top(ours), top(theirs), "ours %s, perf's %s" % (ours, theirs))
        self.assertEqual(set(ours), set(theirs))
        for a in theirs:
            self.assertAlmostEqual(ours[a], theirs[a], delta=0.006, msg="at 0x%x" % a)

    def test_profile_without_addresses_shows_lines_only(self):
        folded = os.path.join(self.tmp, "r.folded")
        r = plumb("convert", self.paths["gecko"], "-o", folded)
        self.assertEqual(r.returncode, 0, r.stderr)
        f = self.func(self.doc(folded, "^two_loops$", "--asm"), "two_loops")
        self.assertEqual(f["instructions"], [])
        self.assertIn("addresses", f["asm_missing"])
        self.assertGreater({ln["line"]: ln["samples"] for ln in f["lines"]}[9], 0)

    def test_folded_with_addresses_keeps_them(self):
        folded = os.path.join(self.tmp, "ra.folded")
        r = plumb("convert", self.paths["gecko"], "-o", folded, "--addresses")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(folded) as fh:
            self.assertRegex(fh.read(), r"two_loops \(targets/annot\.c:9\)@0x[0-9a-f]+")
        want = self.func(self.doc(self.paths["gecko"], "^two_loops$"), "two_loops")
        got = self.func(self.doc(folded, "^two_loops$"), "two_loops")
        self.assertEqual(got["instructions"], want["instructions"])
        # an inlined frame's file is a label in folded text (its last two parts, targets/annot.c), the full path
        # in the recording: the rest must match
        self.assertEqual(base_files(got["lines"]), base_files(want["lines"]))

    def test_hostile_paths_are_not_opened(self):
        # a profile naming a device as its module and a FIFO as its source: both said missing, nothing blocks
        fifo = os.path.join(self.tmp, "src.fifo")
        os.mkfifo(fifo)
        with open(self.paths["gecko"]) as f:
            doc = f.read()
        doc = re.sub(r'"[^"]*/targets/annot"', '"/dev/zero"', doc)
        doc = re.sub(r'"[^"]*targets/annot\.c"', '"%s"' % fifo, doc)
        hostile = os.path.join(self.tmp, "hostile.json")
        with open(hostile, "w") as f:
            f.write(doc)
        r = plumb("annotate", hostile, "^two_loops$", "--asm", "--json", timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        f = self.func(json.loads(r.stdout), "two_loops")
        self.assertIsNone(f["source"])
        self.assertIn("not a regular file", f["source_missing"])
        self.assertIn("not a file plumb reads code from", f["asm_missing"])
        self.assertGreater({ln["line"]: ln["samples"] for ln in f["lines"]}[9], 0)

    def test_bad_arguments(self):
        self.annotate(self.paths["gecko"], "(", code=2)
        r = self.annotate(self.paths["gecko"], "^no_such_function$", code=2)
        self.assertIn("no function", r.stderr)
        self.annotate(os.path.join(self.tmp, "absent.json"), "x", code=3)
        r = plumb("annotate", self.paths["gecko"])
        self.assertEqual(r.returncode, 2, r.stderr)


if __name__ == "__main__":
    main()
