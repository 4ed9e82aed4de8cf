"""The bench gate neither cries wolf nor sleeps (issue 26): a suite of two CPU-bound cases and one that sleeps,
run as a baseline, then
  - unchanged, with a burst of load (two busy loops the test starts during the run and kills): the gate passes;
  - with one CPU-bound case doing 25% more work: the gate fails, naming that case and no other;
  - with the sleeping case sleeping 25% longer: the gate fails on its wall time (less its waits for a CPU).
PLUMB_GATE_PAIRS (default 2) says how many times; `make bench` (bench/gate.sh) runs 20 and counts. Also: the
artifact's per-repeat contention figures, the "inconclusive: ..." reason compare prints, interleaved repeats,
prepare commands, parameter lists, and an artifact from before all this still read."""
import json
import os
import re
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import TempDir, plumb, target  # noqa: E402

BENCHWORK = target("benchwork")
PAIRS = int(os.environ.get("PLUMB_GATE_PAIRS", "2"))

# spin 20: ~20 ms of CPU; sleep 0.03: 30 ms asleep, ~1 ms of CPU. No catalog: each case's core metric is the
# one its runs' CPU/wall ratio chose (cpu_ms for hot and steady; for nap, which sleeps, unqueued_ms: its wall
# time less its waits for a CPU).
SUITE = """[suite]
name = gate
repeats = 10
warmup = 1

[case hot]
run = {bw} spin 20
env = BENCH_SCALE_FILE=hot.txt

[case steady]
run = {bw} spin 20

[case nap]
run = {bw} sleep 0.03
env = BENCH_SCALE_FILE=nap.txt
"""


class Burst:
    """Two busy loops started `delay` seconds after the run begins, killed when it ends: a neighbour's build."""

    def __init__(self, delay=0.3):
        self.delay, self.procs, self.stop = delay, [], threading.Event()
        self.thread = threading.Thread(target=self._start)

    def _start(self):
        if not self.stop.wait(self.delay):
            self.procs = [subprocess.Popen([BENCHWORK, "spin", "1000000"], stdout=subprocess.DEVNULL)
                          for _ in range(2)]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        for p in self.procs:
            p.kill()
            p.wait()


class GateHarness(TempDir):
    def setUp(self):
        super().setUp()
        self.suite = self.path("gate.ini")
        with open(self.suite, "w") as f:
            f.write(SUITE.format(bw=BENCHWORK))

    def run_suite(self, out, hot=1.0, nap=1.0, burst=False):
        for name, scale in (("hot.txt", hot), ("nap.txt", nap)):
            with open(self.path(name), "w") as f:
                f.write("%g\n" % scale)
        path = self.path(out)
        if burst:
            with Burst():
                r = plumb("bench", "run", self.suite, "--out", path, debug=False, timeout=300)
        else:
            r = plumb("bench", "run", self.suite, "--out", path, debug=False, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        return path

    def gate(self, base, cur):
        r = plumb("bench", "compare", base, cur, "--fail-on-regression", debug=False)
        j = plumb("bench", "compare", base, cur, "--json", debug=False)
        self.assertEqual(j.returncode, 0, j.stderr)
        slower = sorted(m["name"] for m in json.loads(j.stdout)["metrics"] if m["core"] and m["verdict"] == "slower")
        return r, slower


def gate_trial(t, i, base=None):
    """One trial: a baseline (unless given), then the three runs against it. Returns what each gate did."""
    base = base or t.run_suite("base%d.json" % i)
    aa = t.gate(base, t.run_suite("burst%d.json" % i, burst=True))
    hot = t.gate(base, t.run_suite("hot%d.json" % i, hot=1.25))
    nap = t.gate(base, t.run_suite("nap%d.json" % i, nap=1.25))
    return base, aa, hot, nap


class BenchGate(GateHarness):
    def test_gate_passes_unchanged_under_load_and_fails_real_slowdowns(self):
        base = self.run_suite("base.json")  # one baseline for the PAIRS trials here (bench/gate.sh: one each)
        for i in range(PAIRS):
            _, aa, hot, nap = gate_trial(self, i, base)
            (r, slower) = aa
            self.assertEqual(r.returncode, 0, "A/A with a burst failed the gate (trial %d): %s\n%s"
                             % (i, r.stderr, r.stdout))
            self.assertEqual(slower, [], r.stdout)
            (r, slower) = hot
            self.assertEqual(r.returncode, 1, "25%% more CPU work passed the gate (trial %d):\n%s" % (i, r.stdout))
            self.assertEqual(slower, ["hot.cpu_ms"], r.stdout)  # that case, by its core metric, and no other
            self.assertIn("first: hot.cpu_ms +", r.stderr)
            (r, slower) = nap
            self.assertEqual(r.returncode, 1, "a 25%% longer sleep passed the gate (trial %d):\n%s" % (i, r.stdout))
            self.assertEqual(slower, ["nap.unqueued_ms"], r.stdout)  # its wall time less its waits for a CPU
        # the baseline chose each case's core metric from its own runs
        cases = {c["name"]: c for c in json.load(open(base))["cases"]}
        self.assertEqual(cases["hot"]["core_metric"], "cpu_ms", cases["hot"])
        self.assertEqual(cases["steady"]["core_metric"], "cpu_ms", cases["steady"])
        self.assertEqual(cases["nap"]["core_metric"], "unqueued_ms", cases["nap"])
        self.assertGreater(cases["hot"]["cpu_wall_ratio"], 0.5)
        self.assertLess(cases["nap"]["cpu_wall_ratio"], 0.5)


class BenchContention(GateHarness):
    def test_repeats_record_contention_and_compare_says_inconclusive(self):
        base = self.run_suite("base.json")
        cur = self.run_suite("busy.json", burst=True)
        self.check_contention(base, cur)
        self.check_old_artifact(base)

    def check_contention(self, base, cur):
        doc = json.load(open(cur))
        self.assertEqual(doc["policy"]["order"], "shuffle")
        self.assertIsInstance(doc["policy"]["seed"], int)
        for c in doc["cases"]:
            self.assertEqual(len(c["runs"]), 10, c)
            contended = 0
            for run in c["runs"]:
                ct = run["contention"]
                for key in ("other_cpu_pct", "steal_pct", "idle_pct", "load"):
                    self.assertIsInstance(ct[key], (int, float), run)
                self.assertTrue(0 <= ct["other_cpu_pct"] <= 100, run)
                # spin and sleep are exec'd by the shell: the run's own wait for a CPU is known
                self.assertIsInstance(ct["wait_pct"], (int, float), run)
                self.assertGreaterEqual(run["attempts"], 1)
                contended += ct["contended"]
            self.assertEqual(c["contended_runs"], contended)
            if c["core_metric"] == "cpu_ms":
                self.assertEqual(c["reruns"], 0, c)  # CPU time is what it used: a contended repeat stands
            else:
                self.assertEqual(c["reruns"], sum(r["attempts"] - 1 for r in c["runs"]), c)
        # two busy loops beside a CPU-bound case on this machine: it waits for a CPU in most repeats
        hot = {c["name"]: c for c in doc["cases"]}["hot"]
        self.assertGreater(hot["contended_runs"], 2, hot)
        r = plumb("bench", "report", cur, debug=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"case hot: core cpu_ms \(cpu/wall ratio [0-9.]+\); \d+ of 10 repeats contended, "
                                   r"0 re-runs; other processes used \d+% of the CPUs")
        md = plumb("bench", "report", cur, "--markdown", debug=False).stdout.splitlines()
        table = md.index("| metric | n | min | p50 | p95 | max | mean | CV | unit | SLO |")
        self.assertTrue(md[table - 2].startswith("- case "), md[:table])  # the case lines are a list ...
        self.assertEqual(md[table - 1], "")  # ... that ends before the table
        r = plumb("bench", "report", cur, "--json", debug=False)
        rep = {c["name"]: c for c in json.loads(r.stdout)["cases"]}
        self.assertEqual(rep["hot"]["contended_runs"], hot["contended_runs"])
        r = plumb("bench", "compare", base, cur, debug=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        # CPU time is not judged by contention: its verdict stands, with the interval and the floor beside p
        row = [ln for ln in r.stdout.splitlines() if ln.startswith("hot.cpu_ms ")][0]
        self.assertRegex(row, r"\[[-+][0-9.]+, [-+][0-9.]+\] +[0-9.]+% ")
        self.assertNotIn("inconclusive", row)
        j = json.loads(plumb("bench", "compare", base, cur, "--json", debug=False).stdout)
        m = {x["name"]: x for x in j["metrics"]}
        self.assertLessEqual(m["hot.cpu_ms"]["ci_low_pct"], m["hot.cpu_ms"]["change_pct"])
        self.assertGreaterEqual(m["hot.cpu_ms"]["ci_high_pct"], m["hot.cpu_ms"]["change_pct"])
        self.assertGreaterEqual(m["hot.cpu_ms"]["noise_floor_pct"], 10)
        self.check_inconclusive(base)

    def check_inconclusive(self, base):
        """Whether the burst made a wall time untrustworthy depends on how busy the machine already was; so the
        rule is checked on the baseline's own repeats made 3 times slower, once with the waits for a CPU to explain
        it (inconclusive, with the reason) and once without (slower)."""
        doc = json.load(open(base))
        for s in doc["samples"]:
            if s["name"] == "hot.wall_ms":
                s["value"] *= 3
        plain = self.path("slow-plain.json")
        with open(plain, "w") as f:
            json.dump(doc, f)
        walls = {s["run"]: s["value"] for s in doc["samples"] if s["name"] == "hot.wall_ms"}
        hot = [c for c in doc["cases"] if c["name"] == "hot"][0]
        for run in hot["runs"]:
            ct = run["contention"]
            ct["wait_ms"] += walls[run["index"]] * 2 / 3  # the two thirds of the new wall time that were added
            ct["wait_pct"], ct["other_cpu_pct"], ct["contended"] = 40.0, 85.0, True
        waited = self.path("slow-waited.json")
        with open(waited, "w") as f:
            json.dump(doc, f)
        m = {x["name"]: x for x in json.loads(plumb("bench", "compare", base, plain, "--json", debug=False).stdout)
             ["metrics"]}
        self.assertEqual(m["hot.wall_ms"]["verdict"], "slower", m["hot.wall_ms"])
        r = plumb("bench", "compare", base, waited, debug=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        row = [ln for ln in r.stdout.splitlines() if ln.startswith("hot.wall_ms ")][0]
        self.assertIn("inconclusive", row)
        self.assertRegex(r.stdout, r"hot\.wall_ms inconclusive: 10 of 10 repeats of the current run ran while other "
                                   r"processes used 85% of the CPUs; the current run's repeats waited for a CPU "
                                   r"\+[0-9.]+ ms \(median\) against the baseline's, beside a change of \+[0-9.]+ ms")
        # a core metric made inconclusive is said on stderr too (the gate passes it: it is not shown slower)
        cat = self.path("wallcore.ini")
        with open(cat, "w") as f:
            f.write("[metric hot.wall_ms]\ntier = core\n")
        r = plumb("bench", "compare", base, waited, "--fail-on-regression", "--catalog", cat, debug=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bench compare: hot.wall_ms inconclusive: 10 of 10 repeats", r.stderr)
        r = plumb("bench", "compare", base, plain, "--fail-on-regression", "--catalog", cat, debug=False)
        self.assertEqual(r.returncode, 1, r.stderr)

    def check_old_artifact(self, base):
        """An artifact from before issue 26 (without the new fields) reads, and gates on wall time as it did."""
        doc = json.load(open(base))
        for key in ("order", "seed", "retries"):
            del doc["policy"][key]
        for c in doc["cases"]:
            for key in ("core_metric", "core_source", "cpu_wall_ratio", "reruns", "contended_runs"):
                del c[key]
            for run in c["runs"]:
                del run["contention"], run["attempts"]
        old = self.path("old.json")
        with open(old, "w") as f:
            json.dump(doc, f)
        r = plumb("bench", "report", old, debug=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("contended", r.stdout)
        j = json.loads(plumb("bench", "compare", old, old, "--json", debug=False).stdout)
        core = sorted(m["name"] for m in j["metrics"] if m["core"])
        self.assertEqual(core, ["hot.wall_ms", "nap.wall_ms", "steady.wall_ms"])  # the rule before issue 26
        self.assertTrue(all(m["verdict"] == "~" for m in j["metrics"]), j["metrics"])
        # a contention record of the wrong shape is refused with the field named, exit 5
        doc["cases"][0]["runs"][0]["contention"] = {"contended": "yes"}
        with open(old, "w") as f:
            json.dump(doc, f)
        r = plumb("bench", "report", old, debug=False)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("cases[0] has a run whose contention is not", r.stderr)


class BenchYardstick(GateHarness):
    """The machine's speed drifts on a shared machine (beside a loaded make check every CPU-bound case's CPU time
    moved up to 10% at once, and the gate failed an unchanged suite): each repeat records the launcher's yardstick
    (a fixed loop's CPU time) and compare judges CPU time at the baseline's speed. Artifacts are edited from one
    real run, so the drift is exactly known."""

    def variant(self, doc, name, cpu=None, yard=1.0, drop_yard=False):
        """doc with each kind-cpu sample of case C times cpu[C] (default 1), each yardstick times yard."""
        doc = json.loads(json.dumps(doc))
        for smp in doc["samples"]:
            if smp["kind"] == "cpu":
                smp["value"] *= (cpu or {}).get(smp["name"].split(".")[0], 1.0)
        for c in doc["cases"]:
            for run in c["runs"]:
                if drop_yard:
                    del run["contention"]["yardstick_ms"]
                else:
                    run["contention"]["yardstick_ms"] *= yard
        path = self.path(name)
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def compare(self, base, cur):
        r, slower = self.gate(base, cur)
        j = json.loads(plumb("bench", "compare", base, cur, "--json", debug=False).stdout)
        return r, slower, j

    def test_cpu_time_is_judged_at_the_baselines_machine_speed(self):
        base = self.run_suite("base.json")
        doc = json.load(open(base))
        for c in doc["cases"]:
            for run in c["runs"]:
                y = run["contention"]["yardstick_ms"]
                self.assertTrue(0.05 < y < 200, run)  # ~2 ms here; a loop's CPU time, not a clock's noise
        drift = 1.12  # beyond the 10% floor
        # the machine 12% slower, the code unchanged: CPU time follows the yardstick, the gate passes
        slow = self.variant(doc, "slow.json", {"hot": drift, "steady": drift, "nap": drift}, yard=drift)
        r, slower, j = self.compare(base, slow)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(slower, [])
        self.assertAlmostEqual(j["yardstick"]["speed_scale"], 1 / drift, places=6)
        cpu = {m["name"]: m for m in j["metrics"] if m["name"].endswith(".cpu_ms")}
        for m in cpu.values():
            self.assertTrue(m["speed_scaled"], m)
            self.assertAlmostEqual(m["change_pct"], 0.0, delta=0.01)
        self.assertFalse(any(m["speed_scaled"] for m in j["metrics"] if m["name"].endswith(".wall_ms")))
        self.assertRegex(r.stdout, r"machine speed \(the yardstick, a fixed loop timed before each repeat\): "
                                   r"baseline [\d.]+ ms, current [\d.]+ ms \(\+12\.0%\)")
        # 25% more work on that slower machine: still caught, that case alone, at +25%
        both = self.variant(doc, "both.json", {"hot": 1.25 * drift, "steady": drift, "nap": drift}, yard=drift)
        r, slower, j = self.compare(base, both)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertEqual(slower, ["hot.cpu_ms"], r.stdout)
        hot = {m["name"]: m for m in j["metrics"]}["hot.cpu_ms"]
        self.assertAlmostEqual(hot["change_pct"], 25.0, delta=0.01)
        # the same 12% with the machine's speed unchanged is the code's: every CPU-bound case is slower
        code = self.variant(doc, "code.json", {"hot": drift, "steady": drift})
        r, slower, j = self.compare(base, code)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertEqual(slower, ["hot.cpu_ms", "steady.cpu_ms"], r.stdout)
        # a side without the yardstick (an older artifact): nothing is scaled, and compare says no speed
        old = self.variant(doc, "old.json", {"hot": drift, "steady": drift, "nap": drift}, drop_yard=True)
        r, slower, j = self.compare(base, old)
        self.assertIsNone(j["yardstick"])
        self.assertEqual(slower, ["hot.cpu_ms", "steady.cpu_ms"], r.stdout)
        self.assertNotIn("machine speed", r.stdout)
        # a yardstick that is no time at all is refused with the field named, exit 5
        doc["cases"][1]["runs"][2]["contention"]["yardstick_ms"] = -1
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            json.dump(doc, f)
        r = plumb("bench", "compare", base, bad, debug=False)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("cases[1] has a run whose contention.yardstick_ms is not a positive number of ms", r.stderr)


class BenchSchedule(TempDir):
    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)
        return self.path(name)

    def test_repeats_interleave_and_prepare_runs_before_each(self):
        log = self.path("order.log")
        suite = self.write("s.ini", "[suite]\nrepeats = 4\nwarmup = 1\nretries = 0\n" +
                           "".join("[case %s]\nrun = %s spin 1\nprepare = echo %s >> %s\n"
                                   % (n, BENCHWORK, n, log) for n in "abc"))
        first = None
        for order, seed in (("round-robin", None), ("shuffle", "7"), ("shuffle", "7")):
            if os.path.exists(log):
                os.unlink(log)
            args = ["bench", "run", suite, "--order", order, "--out", self.path("o.json")]
            if seed:
                args += ["--seed", seed]
            r = plumb(*args, debug=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            seq = open(log).read().split()
            self.assertEqual(len(seq), 3 * 5, seq)  # the prepare command before every warm-up and repeat
            rounds = [seq[k:k + 3] for k in range(0, 15, 3)]
            for rnd in rounds:
                self.assertEqual(sorted(rnd), ["a", "b", "c"], seq)  # one repeat of each case per round
            if order == "round-robin":
                self.assertEqual(rounds, [["a", "b", "c"]] * 5)
            elif first:
                self.assertEqual(seq, first)  # the same seed, the same order
            else:
                first = seq
            doc = json.load(open(self.path("o.json")))
            self.assertEqual(doc["policy"]["order"], order)
            self.assertEqual(doc["cases"][0]["prepare"], "echo a >> %s" % log)
        # a prepare command that fails ends its case as failed, with its reason
        suite = self.write("f.ini", "[case a]\nrun = %s spin 1\nprepare = echo no >&2; exit 3\n" % BENCHWORK)
        r = plumb("bench", "run", suite, "--out", self.path("f.json"), debug=False)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("case a's prepare command exited with status 3 in warm-up run 1: no", r.stderr)

    def test_parameter_lists(self):
        suite = self.write("p.ini", "[suite]\nrepeats = 3\nwarmup = 0\n"
                                    "[case spin-{n}]\nparams = n=2,8\nrun = %s spin {n}\ncore = cpu_ms\n"
                                    "[case mode]\nparams = how=x,y\nrun = %s spin 1\nenv = TAG={how}\n"
                           % (BENCHWORK, BENCHWORK))
        r = plumb("bench", "run", suite, "--out", self.path("p.json"), debug=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.load(open(self.path("p.json")))
        cases = {c["name"]: c for c in doc["cases"]}
        self.assertEqual(sorted(cases), ["mode-x", "mode-y", "spin-2", "spin-8"])
        self.assertTrue(cases["spin-8"]["command"].endswith("spin 8"))
        self.assertEqual(cases["mode-y"]["env"], ["TAG=y"])
        self.assertEqual(cases["spin-2"]["core_source"], "suite")
        cpu = {n: sorted(s["value"] for s in doc["samples"] if s["name"] == n + ".cpu_ms")[1]
               for n in ("spin-2", "spin-8")}
        self.assertGreater(cpu["spin-8"], 2 * cpu["spin-2"], cpu)  # {n} reached the command
        for bad, why in (("[case a-{n}]\nrun = true\n", "names a parameter but has no params"),
                         ("[case a]\nparams = n=0.5\nrun = true\n", "expands to case name 'a-0.5'"),
                         ("[case a-{n}]\nparams = n=x,x\nrun = true\n", "two cases are named 'a-x'")):
            r = plumb("bench", "run", self.write("bad.ini", bad), "--out", self.path("b.json"), debug=False)
            self.assertEqual(r.returncode, 5, r.stderr)
            self.assertIn(why, r.stderr)


def count(pairs):
    """`make bench` (bench/gate.sh): `pairs` trials, each outcome counted instead of stopping at the first; exit 0
    when the gate passed the A/A pair and failed both slowed pairs, naming the right metric, in at least 19 of 20."""
    t = BenchGate("test_gate_passes_unchanged_under_load_and_fails_real_slowdowns")
    t.setUp()
    ok = {"aa": 0, "hot": 0, "nap": 0}
    try:
        for i in range(pairs):
            _, aa, hot, nap = gate_trial(t, i)
            got = {"aa": aa[0].returncode == 0 and aa[1] == [],
                   "hot": hot[0].returncode == 1 and hot[1] == ["hot.cpu_ms"],
                   "nap": nap[0].returncode == 1 and nap[1] == ["nap.unqueued_ms"]}
            for k in ok:
                ok[k] += got[k]
            print("trial %2d: A/A with a burst %s; hot +25%% CPU %s; nap +25%% sleep %s"
                  % (i + 1, "passed" if got["aa"] else "FAILED (%s)" % (aa[1] or aa[0].stderr.strip()),
                     "caught" if got["hot"] else "MISSED (%s)" % hot[1],
                     "caught" if got["nap"] else "MISSED (%s)" % nap[1]), flush=True)
    finally:
        t.tearDown()
    need = -(-19 * pairs // 20)
    print("A/A with a burst passed the gate in %d of %d pairs; hot +25%% failed it in %d of %d naming hot.cpu_ms; "
          "nap +25%% failed it in %d of %d naming nap.unqueued_ms (need %d of %d each)"
          % (ok["aa"], pairs, ok["hot"], pairs, ok["nap"], pairs, need, pairs))
    return 0 if min(ok.values()) >= need else 1


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--count":
        sys.exit(count(int(sys.argv[2])))
    unittest.main()

# plumbtest: alone
