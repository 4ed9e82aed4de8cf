"""plumb's outputs in the real tools that read them (docs/design.md §6.7), installed by scripts/setup: `go tool
pprof -top` shows the totals and the same self counts per function as `plumb hot`; the speedscope file validates
against the schema speedscope's own npm package ships, with one frame per function and line and a real unit; the
Firefox Profiler's own importer (@firefox-devtools/profiler-cli) loads plumb's JSON, and its per-function self
counts equal `plumb hot`'s."""
import json
import os
import re
import subprocess
import unittest
from collections import Counter

from plumbtest import FIXTURES, ROOT, TempDir, needs_tool, plumb, skip_missing, target, wait_until

CONSUMERS = os.path.join(ROOT, "tests", "consumers", "node_modules")
PERF = os.path.join(FIXTURES, "flamegraph", "test", "perf-vertx-stacks-01.txt")  # events without periods
PERF_TIMED = os.path.join(FIXTURES, "inferno", "collapse-perf", "go-stacks.txt")  # cpu-clock periods
MARKS = re.compile(r"_\[[kji]\]$")


def hot(path):
    r = plumb("hot", path, "--json")
    if r.returncode != 0:
        raise AssertionError("plumb hot %s failed: %s" % (path, r.stderr))
    return json.loads(r.stdout)


def by_function(rows):
    """plumb hot's rows by bare function name (the consumers name a function without its file and mark)."""
    out = Counter()
    for r in rows:
        name = MARKS.sub("", r["name"]).strip()  # go tool pprof prints a blank name as nothing
        m = re.match(r"^(.*) \([^()]*\)$", name)
        out[m.group(1) if m and not name.startswith("[unknown] (") else name] += r["count"]
    return out


class Sources(TempDir):
    """The profiles every consumer gets: a recording (samples with a period), perf script (nanoseconds with a
    sample count), and folded stacks (plain counts)."""

    def sources(self):
        rec = self.path("rec.json")
        r = plumb("record", "-o", rec, "--", target("split"), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        folded = self.path("counts.folded")
        with open(folded, "w") as f:
            f.write("main (a/m.c:3);work (a/w.c:9);clear_page_erms_[k] 7\nmain (a/m.c:3);work (a/w.c:11) 5\n"
                    "main (a/m.c:4);jit_fn (perf-9.map)_[j] 2\nmain (a/m.c:4);libfoo.so.1+0x4300 1\n")
        return [rec, PERF, PERF_TIMED, folded]


class GoPprof(Sources):
    def test_totals_and_self_counts(self):
        go = needs_tool("go", "Debian golang-go: go tool pprof reads the pprof output")
        for src in self.sources():
            with self.subTest(src=os.path.basename(src)):
                want = hot(src)
                pb = self.path(os.path.basename(src) + ".pb.gz")
                self.assertEqual(plumb("convert", src, "-o", pb).returncode, 0)
                # every node and edge, however small (-top hides those under 0.5% by default: a one-sample
                # kernel row of a long recording went missing from the self counts)
                top = subprocess.run([go, "tool", "pprof", "-top", "-nodecount=100000", "-nodefraction=0",
                                      "-edgefraction=0", "-sample_index=samples", pb],
                                     capture_output=True, text=True, timeout=120)
                self.assertEqual(top.returncode, 0, top.stderr)
                total = re.search(r"accounting for (\d+), [\d.]+% of (\d+) total", top.stdout)
                self.assertIsNotNone(total, top.stdout[:500])
                self.assertEqual(int(total.group(2)), want["samples"])
                flat = Counter()
                for line in top.stdout.splitlines():
                    m = re.match(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(.*)$", line)
                    if m and int(m.group(1)):
                        # pprof marks a function sampled where it was inlined "NAME (inline)"; plumb's rows name
                        # the function alike with a mark by_function drops
                        flat[re.sub(r" \(inline\)$", "", m.group(2).strip())] += int(m.group(1))
                if want["weight_unit"] == "samples":
                    self.assertEqual(flat, by_function(want["leaf"]))
                else:  # self counts in samples: the same functions, the same order of the top ones
                    self.assertEqual(set(flat), set(by_function(want["leaf"])))

    def test_time_unit_and_period(self):
        go = needs_tool("go", "Debian golang-go")
        pb = self.path("perf.pb.gz")
        self.assertEqual(plumb("convert", PERF_TIMED, "-o", pb).returncode, 0)
        want = hot(PERF_TIMED)
        self.assertEqual(want["weight_unit"], "nanoseconds")
        raw = subprocess.run([go, "tool", "pprof", "-raw", pb], capture_output=True, text=True, timeout=120)
        self.assertEqual(raw.returncode, 0, raw.stderr)
        self.assertIn("samples/count cpu/nanoseconds", raw.stdout)
        self.assertRegex(raw.stdout, r"PeriodType: cpu nanoseconds\nPeriod: %d\n" % want["interval_ns"])
        top = subprocess.run([go, "tool", "pprof", "-top", "-nodefraction=0", "-edgefraction=0", "-unit=ns",
                              "-sample_index=cpu", pb], capture_output=True, text=True, timeout=120)
        total = re.search(r"of (\d+)ns total", top.stdout)
        self.assertIsNotNone(total, top.stdout[:500])
        self.assertEqual(int(total.group(1)), want["total"])


class Speedscope(Sources):
    def test_schema_frames_and_unit(self):
        try:
            import jsonschema
        except ImportError:
            skip_missing("python3-jsonschema", "it validates against speedscope's schema")
        schema_path = os.path.join(CONSUMERS, "speedscope", "dist", "release", "file-format-schema.json")
        if not os.path.exists(schema_path):
            skip_missing("speedscope (npm)", "scripts/setup installs it into tests/consumers/node_modules")
        with open(schema_path) as f:
            schema = json.load(f)
        for src in self.sources():
            with self.subTest(src=os.path.basename(src)):
                out = self.path(os.path.basename(src) + ".speedscope.json")
                self.assertEqual(plumb("convert", src, "-o", out).returncode, 0)
                with open(out) as f:
                    doc = json.load(f)
                jsonschema.validate(doc, schema)
                frames = doc["shared"]["frames"]
                keys = [(fr["name"], fr.get("file"), fr.get("line")) for fr in frames]
                self.assertEqual(len(keys), len(set(keys)), "one frame per function and line")
                for fr in frames:  # the name holds no location when file and line hold it
                    if fr.get("file"):
                        self.assertNotRegex(fr["name"], r" \([^()]*:\d+\)")
                want = hot(src)
                units = {p["unit"] for p in doc["profiles"]}
                if want["weight_unit"] == "nanoseconds" or want["interval_ns"]:
                    self.assertEqual(units, {"nanoseconds"})
                else:
                    self.assertEqual(units, {"none"})  # plain counts: speedscope's unit for them
                leaf = Counter()
                for p in doc["profiles"]:
                    for st, w in zip(p["samples"], p["plumb_samples"]):
                        leaf[MARKS.sub("", frames[st[-1]]["name"])] += w
                self.assertEqual(sum(leaf.values()), want["samples"])


class FirefoxProfiler(Sources):
    def cli(self, *args, timeout=120):
        exe = os.path.join(CONSUMERS, ".bin", "profiler-cli")
        if not os.path.exists(exe):
            skip_missing("@firefox-devtools/profiler-cli (npm)",
                         "scripts/setup installs it into tests/consumers/node_modules")
        needs_tool("node", "the Firefox Profiler's importer runs on Node.js")
        env = dict(os.environ, HOME=self.tmp)  # its sessions live under $HOME
        return subprocess.run([exe, *args, "--session", "plumbtest"], capture_output=True, text=True,
                              timeout=timeout, env=env)

    def load(self, path):
        """profiler-cli gives its daemon 500 ms to start, too little for node on a loaded machine; the daemon it
        gave up on goes on loading the profile and answers once it has: it is polled (with a deadline), never
        killed and started again (which is slow again, every time)."""
        r = self.cli("load", path)
        if r.returncode == 0 or "still starting" not in r.stdout + r.stderr:
            return r
        ready = wait_until(lambda: (lambda x: x if x.returncode == 0 else None)(self.cli("thread", "list", "--json")),
                           timeout=90, step=0.5)
        return ready if ready else r

    def tearDown(self):
        exe = os.path.join(CONSUMERS, ".bin", "profiler-cli")
        if os.path.exists(exe):
            subprocess.run([exe, "stop", "--session", "plumbtest"], capture_output=True, timeout=60,
                           env=dict(os.environ, HOME=self.tmp))
        super().tearDown()

    def test_importer_self_counts_equal_hot(self):
        for src in self.sources():
            with self.subTest(src=os.path.basename(src)):
                out = self.path(os.path.basename(src) + ".json")
                self.assertEqual(plumb("convert", src, "-o", out).returncode, 0)
                r = self.load(out)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                r = self.cli("thread", "list", "--json")
                self.assertEqual(r.returncode, 0, r.stderr)
                handles = [t["threadHandle"] for t in json.loads(r.stdout)["threads"]]
                got = Counter()
                for h in handles:
                    r = self.cli("thread", "functions", "--thread", h, "--json", "--include-idle")
                    self.assertEqual(r.returncode, 0, r.stderr)
                    doc = json.loads(r.stdout)
                    for fn in doc["functions"]:
                        if fn["selfSamples"]:
                            got[fn["name"].strip()] += fn["selfSamples"]
                self.cli("stop")
                want = hot(src)
                leaf = by_function(want["leaf"])
                if want["weight_unit"] == "nanoseconds":  # tracing-ms: the importer counts milliseconds
                    leaf = Counter({k: v / 1e6 for k, v in leaf.items()})
                    self.assertEqual(set(got), set(leaf))
                    for k in leaf:
                        self.assertAlmostEqual(got[k], leaf[k], delta=0.01, msg=k)
                else:
                    diff = {k: (got[k], leaf[k]) for k in set(got) | set(leaf) if got[k] != leaf[k]}
                    self.assertEqual(diff, {})


if __name__ == "__main__":
    unittest.main()
# plumbtest: slow
