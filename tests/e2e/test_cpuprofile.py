"""A real `node --cpu-prof` run read by `plumb hot`: tests/targets/js/split31.js calls heavy (three units of work)
and light (one) in turns and reports the wall time it spent in each. plumb names both (and the function they call,
and Node's own frames; a function without a name is "(anonymous)", the tree's "(root)" is no frame), counts one
sample per sample of the file, weighs each function exactly as the samples and time deltas of the .cpuprofile
say (a sample lasts until the next one, the last until the profile's end), and splits heavy and light as the
program measured them itself, within 3.5 standard errors (of the samples' effective number: each weighs
its time)."""
import glob
import json
import os
import re
import subprocess
import tempfile
import unittest

from plumbtest import ROOT, needs_tool, plumb

SCRIPT = os.path.join(ROOT, "tests", "targets", "js", "split31.js")


def base_name(label):
    m = re.match(r"^(.*\S) \([^()]*\)$", label)
    return m.group(1) if m else label


def durations_ns(prof):
    """Each sample's time (ns) from the .cpuprofile's own timeDeltas: sample i lasts from its time to the next
    sample's (times never go back), the last one to endTime."""
    times, t, top = [], prof["startTime"], float("-inf")
    for d in prof["timeDeltas"]:
        t += d
        top = max(top, t)
        times.append(top)
    times.append(max(top, prof["endTime"]))
    return [round((times[i + 1] - times[0]) * 1000) - round((times[i] - times[0]) * 1000)
            for i in range(len(prof["samples"]))]


def self_ns(prof):
    """Each function's self time (ns): the durations of the samples it is the leaf of."""
    nodes = {n["id"]: n for n in prof["nodes"]}
    out = {}
    for nid, ns in zip(prof["samples"], durations_ns(prof)):
        name = nodes[nid]["callFrame"]["functionName"] or "(anonymous)"
        out[name] = out.get(name, 0) + ns
    return out


def effective_samples(prof, names):
    """How many equal samples the time-weighted samples under any of `names` are worth, (sum d)^2 / sum d^2: on a
    loaded machine V8's sampler thread wakes late, and one sample before a 10 ms gap weighs 40 of 250 us."""
    parent = {c: n["id"] for n in prof["nodes"] for c in n.get("children", [])}
    nodes = {n["id"]: n for n in prof["nodes"]}

    def under(nid):
        while nid is not None:
            if nodes[nid]["callFrame"]["functionName"] in names:
                return True
            nid = parent.get(nid)
        return False
    ds = [d for nid, d in zip(prof["samples"], durations_ns(prof)) if under(nid)]
    return sum(ds) ** 2 / max(1, sum(d * d for d in ds))


class NodeCpuProf(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="plumb-cpuprof-")
        cls.node = None
        try:
            cls.node = needs_tool("node", "Debian's nodejs; scripts/setup installs it")
        except unittest.SkipTest:
            return
        r = subprocess.run([cls.node, "--cpu-prof", "--cpu-prof-interval", "250", "--cpu-prof-dir", cls.tmp.name,
                            SCRIPT, "0.5"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        cls.truth = json.loads(r.stdout)
        (cls.path,) = glob.glob(os.path.join(cls.tmp.name, "*.cpuprofile"))
        with open(cls.path) as f:
            cls.prof = json.load(f)
        r = plumb("hot", cls.path, "--json")
        assert r.returncode == 0, r.stderr
        cls.hot = json.loads(r.stdout)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        if not self.node:
            needs_tool("node", "Debian's nodejs; scripts/setup installs it")

    def test_names_and_counts_are_the_files(self):
        h = self.hot
        self.assertEqual(h["format"], "cpuprofile")
        self.assertEqual(h["weight_unit"], "nanoseconds")
        self.assertEqual(h["samples"], len(self.prof["samples"]))
        self.assertGreater(h["samples"], 100)
        mine = {}
        for row in h["leaf"]:
            mine[base_name(row["name"])] = mine.get(base_name(row["name"]), 0) + row["count"]
        want = {k: v for k, v in self_ns(self.prof).items() if v}
        self.assertEqual(mine, want)
        self.assertEqual(h["total"], sum(want.values()))
        inclusive = {r["name"] for r in h["inclusive"]}
        for fn in ("heavy", "light", "work"):
            self.assertIn("%s (js/split31.js)" % fn, inclusive)
        self.assertIn("(anonymous)", {base_name(n) for n in inclusive})  # the module's wrapper has no name
        self.assertNotIn("(root)", {base_name(n) for n in inclusive})

    def test_heavy_and_light_split_as_the_program_measured(self):
        inc = {r["name"]: r["count"] for r in self.hot["inclusive"]}
        heavy, light = inc["heavy (js/split31.js)"], inc["light (js/split31.js)"]
        share = 100.0 * heavy / (heavy + light)
        truth = 100.0 * self.truth["heavy_ms"] / (self.truth["heavy_ms"] + self.truth["light_ms"])
        # each sample weighs its time, so the share's standard error is that of the effective number of samples
        n = effective_samples(self.prof, ("heavy", "light"))
        self.assertGreater(n, 50, "V8's sampler gave too few samples to compare")
        tol = 3.5 * 100 * (0.25 / n) ** 0.5
        self.assertLess(abs(share - truth), tol, "heavy %.1f%% of heavy+light, the program measured %.1f%% "
                        "(tolerance %.1f: %.0f effective samples)" % (share, truth, tol, n))


if __name__ == "__main__":
    unittest.main()
