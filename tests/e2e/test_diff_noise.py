"""`plumb diff` tells signal from sampling noise (docs/diff.md) on real recordings: build/targets/split recorded
20 times in pairs, unchanged, gets no row marked in at least 19 of the 20 diffs; the same program with path_a's
share moved from 50% to 20% (split 0.5 20 48 32), recorded 10 times, gets path_a marked every time. Also --significant and the
p-values of --json on small hand-made inputs."""
import json
import os
import unittest

from plumbtest import TempDir, main, plumb, target

PAIRS = 20
CHANGED = 10        # recordings of the changed program, each diffed against an unchanged one
SECONDS = "0.15"    # of CPU time (SPLIT_CLOCK=cpu): a loaded machine stretches the run, the samples stay
INTERVAL = "0.0005"  # ~300 samples a recording (diff() asks for more than 200; 287-307 beside two busy loops):
                     # the samples 0.3 s at 1 ms gave, in half the suite's time


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Noise(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import tempfile
        cls._td = tempfile.TemporaryDirectory(prefix="plumb-test-")
        cls.tmp = cls._td.name
        cls.same, cls.changed = [], []
        for i in range(PAIRS):
            a, b, c = (os.path.join(cls.tmp, "%s%d.folded" % (k, i)) for k in "abc")
            runs = ((a, []), (b, []), (c, ["20", "48", "32"])) if i < CHANGED else ((a, []), (b, []))
            for out, extra in runs:
                # --no-kernel: the kernel's share of an unchanged program is the machine's, not sampling noise
                # (beside a loaded check, interrupts and preemption moved burn's leaf share by 5-6 points between
                # two recordings, p 0.005 after Holm; a quiet or a busy-loop-loaded machine reads 0-2% kernel)
                r = plumb("record", "--no-kernel", "--interval", INTERVAL, "-o", out, "--", target("split"), SECONDS,
                          *extra, extra_env={"SPLIT_CLOCK": "cpu"})
                if r.returncode != 0:
                    raise AssertionError("record failed: " + r.stderr)
            cls.same.append((a, b))
            if i < CHANGED:
                cls.changed.append((a, c))

    @classmethod
    def tearDownClass(cls):
        cls._td.cleanup()

    def diff(self, a, b, table):
        r = plumb("diff", a, b, "--json", "--table", table)
        self.assertEqual(r.returncode, 0, r.stderr)
        d = json.loads(r.stdout)
        # too few samples would make every verdict "noise": the recordings must have enough to mean something
        self.assertGreater(min(d["before"]["total"], d["after"]["total"]), 200, (a, b))
        self.assertEqual(d["test"]["correction"], "holm")
        return d

    def test_unchanged_program_is_noise(self):
        marked = []
        for a, b in self.same:
            rows = [r for table in ("leaf", "inclusive") for r in self.diff(a, b, table)["rows"] if r["significant"]]
            if rows:
                marked.append([(r["name"], round(r["delta_points"], 1), r["p_adjusted"]) for r in rows])
        self.assertLessEqual(len(marked), 1, marked)

    def test_known_change_is_signal(self):
        for a, c in self.changed:
            d = self.diff(a, c, "inclusive")
            row = next(r for r in d["rows"] if r["name"].startswith("path_a "))
            self.assertLess(row["delta_points"], -15, row)
            self.assertTrue(row["significant"], row)
            self.assertLess(row["p_adjusted"], 0.01, row)
            self.assertGreaterEqual(row["p_adjusted"], row["p_value"], row)


class Marks(TempDir):
    def test_marks_filter_and_json(self):
        a, b, c, d = (self.path(n) for n in ("a.folded", "b.folded", "c.folded", "d.folded"))
        write(a, "main;x 150\nmain;y 150\n")  # 300 samples, then a 2-point move
        write(b, "main;x 156\nmain;y 144\n")
        write(c, "main;x 350\nmain;y 350\n")  # 700 samples, then a 30-point move
        write(d, "main;x 140\nmain;y 560\n")
        r = plumb("diff", a, b, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = json.loads(r.stdout)["rows"]
        self.assertTrue(all(not x["significant"] and x["p_adjusted"] > 0.5 for x in rows), rows)
        r = plumb("diff", c, d, "--json")
        doc = json.loads(r.stdout)
        self.assertEqual(doc["test"]["rows_compared"], 2)
        self.assertTrue(all(x["significant"] and x["p_value"] < 1e-20 for x in doc["rows"]), doc)
        # the table marks them and says how
        r = plumb("diff", c, d)
        marked = [l for l in r.stdout.splitlines() if l.startswith("  * ")]
        self.assertEqual(len(marked), 2, r.stdout)
        self.assertIn("Holm", r.stdout)
        r = plumb("diff", a, b)
        self.assertFalse([l for l in r.stdout.splitlines() if l.startswith("  * ")], r.stdout)
        # --significant keeps only marked rows: none for noise, both for signal (the inclusive table's main stays out)
        r = plumb("diff", a, b, "--json", "--significant")
        self.assertEqual(json.loads(r.stdout)["rows"], [])
        r = plumb("diff", c, d, "--json", "--significant", "--table", "inclusive")
        self.assertEqual(sorted(x["name"] for x in json.loads(r.stdout)["rows"]), ["x", "y"])
        self.assertEqual(json.loads(r.stdout)["test"]["rows_compared"], 3)
        # a stricter alpha can turn a mark off; a bad one is a usage error
        r = plumb("diff", c, d, "--json", "--alpha", "1e-40")
        self.assertTrue(all(not x["significant"] for x in json.loads(r.stdout)["rows"]))
        self.assertEqual(plumb("diff", c, d, "--alpha", "1.5").returncode, 2)


if __name__ == "__main__":
    main()
# plumbtest: slow
