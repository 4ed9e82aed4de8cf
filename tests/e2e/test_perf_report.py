"""`perf script` read by plumb against perf's own report of the same perf.data (docs/design.md §6.7): for `perf
record -g` of the frame-pointer build and `--call-graph dwarf,65528` of the build without frame pointers, `plumb
hot` has perf's number of samples, the time unit of the cpu-clock event (nanoseconds, each sample weighing its
period), and self and inclusive shares within 1 point of `perf report --stdio` (--no-children and --children)."""
import json
import os
import re
import subprocess
import unittest

from plumbtest import TempDir, needs_tool, plumb, target


def report_rows(perf, data, children):
    """{symbol: (share, samples or None)} from perf report's table."""
    args = [perf, "report", "-i", data, "--stdio", "-g", "none", "--sort", "sym"]
    args += ["--children"] if children else ["--no-children", "-F", "overhead,sample,sym"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError("perf report failed: " + r.stderr)
    rows = {}
    for line in r.stdout.splitlines():
        if children:
            m = re.match(r"^\s*([\d.]+)%\s+[\d.]+%\s+\[.\]\s+(.+?)\s*$", line)
            if m:
                rows[m.group(2)] = (float(m.group(1)), None)
        else:
            m = re.match(r"^\s*([\d.]+)%\s+(\d+)\s+\[.\]\s+(.+?)\s*$", line)
            if m:
                rows[m.group(3)] = (float(m.group(1)), int(m.group(2)))
    return rows


class PerfReport(TempDir):
    def check(self, build, callgraph):
        perf = needs_tool("perf", "Debian linux-perf")
        data = self.path("perf.data")
        rec = subprocess.run([perf, "record", "-q", "-F", "997", *callgraph, "-o", data, "--", target(build)],
                             capture_output=True, text=True, timeout=300)
        if rec.returncode != 0:
            raise AssertionError("perf record failed: " + rec.stderr)
        text = self.path("perf.txt")
        with open(text, "w") as f:
            r = subprocess.run([perf, "script", "-i", data], stdout=f, stderr=subprocess.PIPE, text=True,
                               timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr)
        h = plumb("hot", text, "--json", timeout=300)
        self.assertEqual(h.returncode, 0, h.stderr)
        doc = json.loads(h.stdout)
        self_rows = report_rows(perf, data, False)
        children = report_rows(perf, data, True)
        # the sample count is perf's, the unit is time and every sample weighs about one period
        self.assertEqual(doc["samples"], sum(n for _, n in self_rows.values()))
        self.assertEqual(doc["weight_unit"], "nanoseconds")
        self.assertAlmostEqual(doc["total"] / doc["samples"], doc["interval_ns"], delta=doc["interval_ns"] * 0.01)
        leaf = {r["name"]: r["share"] for r in doc["leaf"]}
        incl = {r["name"]: r["share"] for r in doc["inclusive"]}
        checked = 0
        for sym, (share, _) in self_rows.items():
            if share >= 1.0:
                self.assertAlmostEqual(leaf.get(sym, 0.0), share, delta=1.0, msg=("self", sym, build))
                checked += 1
        for sym in ("main", "path_a", "path_b", "path_c", "burn"):
            self.assertIn(sym, children, (build, sorted(children)[:20]))
            self.assertAlmostEqual(incl.get(sym, 0.0), children[sym][0], delta=1.0, msg=("children", sym, build))
        self.assertGreater(checked, 0)

    def test_frame_pointers(self):
        self.check("split", ["-g"])

    def test_dwarf(self):
        self.check("split-nofp", ["--call-graph", "dwarf,65528"])


if __name__ == "__main__":
    unittest.main()
