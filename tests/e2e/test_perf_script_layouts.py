"""`perf script -F FIELDS` text read by plumb (docs/design.md §6.1, §6.6): one real `perf record -g` of the split
target, printed with the field lists people pass, each read with perf's own sample count and leaf function
(`perf report` of the same perf.data), in the one thread perf recorded — or refused with exit 5 and a line naming
the field that is missing, never read as 0 samples with exit 0."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from plumbtest import plumb, target

# the layouts of issue 25 (and the default), each read as perf's samples
READ = {
    "default": None,
    "no-dso": "-dso",
    "tid-time-period": "tid,time,period,ip,sym",
    "comm-pid-tid-time-period": "comm,pid,tid,time,period,ip,sym",
    "comm-tid": "comm,tid,ip,sym",
    "srcline": "comm,pid,ip,sym,dso,symoff,srcline",
    "realistic": "comm,pid,tid,time,event,ip,sym,dso,period",
    "stacks-only": "ip,sym",
}
# field lists that leave out what a profile needs: refused, naming it
REFUSED = {
    "comm,tid,time": "ip and sym fields are missing",
    "comm,tid,ip": "sym field",
    "comm,tid,ip,dso": "sym field",
}


class PerfScriptLayouts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.perf = shutil.which("perf")
        if not cls.perf:
            raise unittest.SkipTest("perf not installed (Debian linux-perf)")
        cls._td = tempfile.TemporaryDirectory(prefix="plumb-test-")
        cls.tmp = cls._td.name
        cls.data = os.path.join(cls.tmp, "perf.data")
        rec = subprocess.run([cls.perf, "record", "-q", "-g", "-F", "997", "-o", cls.data, "--", target("split"),
                              "0.4"], capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, SPLIT_CLOCK="cpu"))
        if rec.returncode != 0:
            raise AssertionError("perf record failed: " + rec.stderr)
        r = subprocess.run([cls.perf, "report", "-i", cls.data, "--stdio", "--no-children", "-g", "none",
                            "-F", "overhead,sample,sym"], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise AssertionError("perf report failed: " + r.stderr)
        rows = [(m.group(2), int(m.group(1))) for m in
                (re.match(r"^\s*[\d.]+%\s+(\d+)\s+\[.\]\s+(.+?)\s*$", l) for l in r.stdout.splitlines()) if m]
        cls.samples = sum(n for _, n in rows)
        cls.leaf, cls.leaf_count = max(rows, key=lambda x: x[1])

    @classmethod
    def tearDownClass(cls):
        cls._td.cleanup()

    def script(self, fields, name):
        out = os.path.join(self.tmp, name + ".txt")
        args = [self.perf, "script", "-i", self.data] + (["-F", fields] if fields else [])
        with open(out, "w") as f:
            r = subprocess.run(args, stdout=f, stderr=subprocess.PIPE, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return out

    def test_layouts_read_perfs_samples(self):
        self.assertGreater(self.samples, 200, "the recording has enough samples to tell a layout's loss")
        self.assertEqual(self.leaf, "burn")
        for name, fields in READ.items():
            with self.subTest(layout=fields or "default"):
                h = plumb("hot", self.script(fields, name), "--json", timeout=120)
                self.assertEqual(h.returncode, 0, h.stderr)
                doc = json.loads(h.stdout)
                self.assertEqual(doc["format"], "perf-script")
                self.assertEqual(doc["samples"], self.samples)
                self.assertEqual((doc["leaf"][0]["name"], doc["leaf"][0]["count"] if doc["weight_unit"] ==
                                  "samples" else None), (self.leaf, self.leaf_count if doc["weight_unit"] ==
                                                         "samples" else None))
                # one process, one thread: no thread made up of stack or srcline lines
                self.assertEqual(len(doc["threads"]), 1, doc["threads"])
                names = {r["name"] for r in doc["inclusive"]}
                self.assertIn("path_a", names)
                self.assertFalse([n for n in names if ".c:" in n or "kallsyms" in n], "srcline lines are no frames")
                # a period weighs in nanoseconds only when its event (cpu-clock) names the unit
                has_event = fields is None or "event" in fields or fields.startswith("-")
                self.assertEqual(doc["weight_unit"], "nanoseconds" if has_event and (
                    fields is None or "period" in fields or fields.startswith("-")) else "samples", fields)

    def test_missing_fields_refused(self):
        for fields, why in REFUSED.items():
            with self.subTest(layout=fields):
                h = plumb("hot", self.script(fields, fields.replace(",", "-")), timeout=120)
                self.assertEqual(h.returncode, 5, h.stdout + h.stderr)
                self.assertIn(why, h.stderr)
                self.assertEqual(len(h.stderr.strip().splitlines()), 1, h.stderr)


if __name__ == "__main__":
    unittest.main()
