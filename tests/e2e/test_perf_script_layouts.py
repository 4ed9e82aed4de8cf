"""`perf script -F FIELDS` text read by plumb (docs/design.md §6.1, §6.6): one real `perf record -g` of the split
target, printed with the field lists people pass, each read with perf's own sample count and leaf function
(`perf report` of the same perf.data), in the one thread perf recorded — or refused with exit 5 and a line naming
the field that is missing, never read as 0 samples with exit 0. Through folded text the time unit and the sample
count survive (`# plumb: samples=N unit=ns`), `diff` of two halves of the run marks nothing, and `diff` of the
perf script text against plumb's own recording of the program lists each function once."""
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
    "realistic": "comm,pid,tid,cpu,time,event,ip,sym,dso",
    "with-period": "comm,pid,tid,time,event,ip,sym,dso,period",
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
        # --sample-cpu: the cpu field can be printed (its "[001]" sits between the thread and the time)
        rec = subprocess.run([cls.perf, "record", "-q", "-g", "--sample-cpu", "-F", "997", "-o", cls.data, "--",
                              target("split"), "0.4"], capture_output=True, text=True, timeout=300,
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
        cls.printed = {}

    @classmethod
    def tearDownClass(cls):
        cls._td.cleanup()

    def script(self, fields, name):
        """perf script's text with -F fields (None: the default), printed once per field list."""
        if fields in self.printed:
            return self.printed[fields]
        out = os.path.join(self.tmp, name + ".txt")
        self.printed[fields] = out
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


    # perf script -> folded keeps the time unit and the sample count (the "# plumb:" first line); diff compares
    # like with like and names a function once whichever reader named it (same recording as the layouts)

    def folded(self, text_path, name):
        out = os.path.join(self.tmp, name + ".folded")
        r = plumb("convert", text_path, "-o", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        return out

    def test_time_unit_and_samples_survive_folded(self):
        text = self.script(None, "default")
        folded = self.folded(text, "default")
        with open(folded) as f:
            self.assertEqual(f.readline().strip(), "# plumb: samples=%d unit=ns" % self.samples)
        h = [json.loads(plumb("hot", p, "--json").stdout) for p in (text, folded)]
        self.assertEqual(h[1]["weight_unit"], "nanoseconds")
        self.assertEqual((h[1]["samples"], h[1]["total"]), (self.samples, h[0]["total"]))
        self.assertEqual(h[1]["leaf"][0]["name"], self.leaf)
        shown = plumb("hot", folded).stdout.splitlines()[0]
        self.assertRegex(shown, r"[\d.]+ ms \(%d samples\)" % self.samples)

    def test_diff_of_two_halves_marks_nothing(self):
        """Alternate events of one run, in two perf script files, then folded: the same program both sides."""
        with open(self.script(None, "whole")) as f:
            events = [e for e in f.read().split("\n\n") if e.strip()]
        halves = []
        for k in range(2):
            path = os.path.join(self.tmp, "half%d.txt" % k)
            with open(path, "w") as f:
                f.write("\n\n".join(events[k::2]) + "\n\n")
            halves.append(self.folded(path, "half%d" % k))
        for table in ("leaf", "inclusive"):
            r = plumb("diff", halves[0], halves[1], "--table", table, "--json")
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.loads(r.stdout)
            self.assertIsNotNone(doc["test"], "time weights with a known sample count are tested as samples")
            self.assertEqual([x["name"] for x in doc["rows"] if x["significant"]], [], table)

    def test_diff_perf_script_against_plumb_lists_each_function_once(self):
        own = os.path.join(self.tmp, "own.folded")
        r = plumb("record", "-o", own, "--", target("split"), "0.3", extra_env={"SPLIT_CLOCK": "cpu"})
        self.assertEqual(r.returncode, 0, r.stderr)
        text = self.script(None, "perf")
        for table in ("leaf", "inclusive"):
            d = plumb("diff", text, own, "--table", table, "--json")
            self.assertEqual(d.returncode, 0, d.stderr)
            self.assertIn("compared as numbers of samples", d.stderr)
            names = [x["name"] for x in json.loads(d.stdout)["rows"]]
            bare = [re.sub(r" \(.*\)$", "", re.sub(r"_\[[kj]\]$", "", n)) for n in names]
            self.assertEqual(sorted(set(b for b in bare if bare.count(b) > 1)), [], names)
            self.assertIn("burn", bare)
            if table == "inclusive":
                self.assertIn("path_a", bare)


if __name__ == "__main__":
    unittest.main()
