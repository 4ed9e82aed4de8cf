"""record --mode alloc (docs/alloc.md): the sampling allocation profiler, checked against programs whose allocations
are known (tests/targets/allocs.c): three call sites with 60/30/10% of the bytes (freed at once, later, never),
threads freeing each other's blocks, fork + exec, realloc growth chains, a program that never frees, anonymous
mmap. Shares are read with `go tool pprof` itself. Tolerances are statistical: at --alloc-interval I a site of B
bytes in blocks of s bytes gets about B / I * (1 - exp(-s / I)) / (s / I) samples, and every bound below is at
least 4 standard errors of its estimate (at 2.5 or 3, one of the dozens of such bounds in a full check fails
every few runs by chance alone)."""
import json
import os
import re
import subprocess
import time

from plumbtest import ROOT, TempDir, main, needs_tool, plumb, read_folded, skip_missing, target

MIB = 1024 * 1024
SITES = ("site_once", "site_later", "site_leak")


def go_top(path, index, unit=None):
    """{function: flat value} from `go tool pprof -sample_index=INDEX -top` (every node: -nodefraction=0)."""
    args = ["go", "tool", "pprof", "-sample_index=" + index, "-top", "-nodefraction=0", "-edgefraction=0"]
    if unit:
        args.append("-unit=" + unit)
    p = subprocess.run(args + [path], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    rows = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)(\w*)\s+([\d.]+)%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(.+)$", line)
        if m:
            rows[m.group(4).strip()] = (float(m.group(1)), float(m.group(3)))
    return rows, p.stdout


def truth(stderr):
    """The target's own account, its last "truth alloc A inuse I" line (forkexec: "truth parent P child C exec E",
    after the exec'd image's own line)."""
    m = re.findall(r"truth ((?:\w+ \d+ ?)+)", stderr)[-1]
    vals = m.split()
    return {vals[i]: int(vals[i + 1]) for i in range(0, len(vals), 2)}


class Alloc(TempDir):
    def record(self, out, *cmd, interval=16384, timeout=60):
        p = plumb("record", "--mode", "alloc", "--alloc-interval", str(interval), "-o", self.path(out), "--",
                  target("allocs"), *cmd, timeout=timeout)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def hot_json(self, path, weight):
        p = plumb("hot", "--json", "--weight", weight, path)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def leaf(self, path, weight):
        """{function name: bytes} of the leaf table of plumb hot --weight WEIGHT."""
        return {r["name"].split(" ")[0]: r["count"] for r in self.hot_json(path, weight)["leaf"]}

    def test_alloc__known_split_in_go_pprof_and_folded(self):
        needs_tool("go", "go tool pprof reads the profile (Debian golang-go)")
        p = self.record("s.pb.gz", "split")
        t = truth(p.stderr)
        self.assertRegex(p.stderr, r"Sampled [\d,]+ allocations of [\d.]+ MiB \(one per 16 KiB\); [\d.]+ MiB in use "
                                   r"at exit in [\d,]+ blocks")
        # 23,000 samples: a 10% share has a standard error of 0.2 points
        rows, text = go_top(self.path("s.pb.gz"), "alloc_space")
        for name, want in zip(SITES, (60.0, 30.0, 10.0)):
            self.assertIn(name, rows, text)
            self.assertLess(abs(rows[name][1] - want), 3.0, text)
        # in use at exit: only the never-freed site, within 10% of its true bytes (about 3,300 samples: 1.7%)
        rows, text = go_top(self.path("s.pb.gz"), "inuse_space", unit="B")
        self.assertLess(abs(rows["site_leak"][0] - t["inuse"]) / t["inuse"], 0.10, text)
        for name in ("site_once", "site_later"):
            self.assertLess(rows.get(name, (0, 0))[0], 0.01 * t["inuse"], text)
        # the other sample types are there for go tool pprof too
        rows, text = go_top(self.path("s.pb.gz"), "alloc_objects")
        self.assertLess(abs(rows["site_leak"][0] - t["inuse"] / 512) / (t["inuse"] / 512), 0.10, text)
        go_top(self.path("s.pb.gz"), "inuse_objects")
        # the folded output of another run agrees (weights: bytes allocated)
        p = self.record("s.folded", "split")
        rows = read_folded(self.path("s.folded"))
        total = sum(c for _, c in rows)
        self.assertLess(abs(total - t["alloc"]) / t["alloc"], 0.05, (total, t))
        for name, want in zip(SITES, (60.0, 30.0, 10.0)):
            got = 100.0 * sum(c for fr, c in rows if fr[-1].startswith(name + " ")) / total
            self.assertLess(abs(got - want), 3.0, (name, got))

    def test_alloc__hot_and_diff_show_bytes(self):
        self.record("s.pb.gz", "split")
        self.record("l.pb.gz", "leak", "32")
        p = plumb("hot", self.path("s.pb.gz"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"\d+ bytes in 1 thread")
        self.assertRegex(p.stdout, r"\n +bytes +share +function\n")
        peak = self.leaf(self.path("s.pb.gz"), "peak")
        # the peak is at the end, when every site_later block is held: 30% and 10% of 512 MiB
        self.assertLess(abs(peak["site_later"] - 0.3 * 512 * MIB) / (0.3 * 512 * MIB), 0.10, peak)
        self.assertLess(peak.get("site_once", 0), 0.01 * 512 * MIB, peak)
        p = plumb("diff", "--weight", "inuse", self.path("s.pb.gz"), self.path("l.pb.gz"))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("bytes), after", p.stdout)
        self.assertRegex(p.stdout, r"change +before +after +bytes +name")
        self.assertRegex(p.stdout, r"-100\.0 +100\.0% +0\.0% +-\d+ +site_leak")
        self.assertRegex(p.stdout, r"\+100\.0 +0\.0% +100\.0% +\+\d+ +leak_block")

    def test_alloc__threads_free_each_others_blocks(self):
        p = self.record("t.pb.gz", "threads")
        t = truth(p.stderr)
        alloc = self.hot_json(self.path("t.pb.gz"), "alloc")
        inuse = self.leaf(self.path("t.pb.gz"), "inuse")
        self.assertGreaterEqual(len(alloc["threads"]), 4, alloc["threads"])
        # 14,000 samples (0.7%); in use: 1,300 samples of the 16 KiB leaks (1.7%)
        self.assertLess(abs(alloc["total"] - t["alloc"]) / t["alloc"], 0.07, (alloc["total"], t))
        self.assertLess(abs(inuse["thread_leak"] - t["inuse"]) / t["inuse"], 0.12, (inuse, t))
        # blocks freed by another thread are freed: what is left of thread_alloc is what the queues held
        self.assertLess(inuse.get("thread_alloc", 0), 4 * 256 * 8192 * 1.5, inuse)

    def test_alloc__fork_and_exec(self):
        # 8 KiB: the child's 2,048 blocks of 4 KiB give 800 samples (2.8%); the 40 MiB kept, 7,000 (1.1%)
        p = self.record("f.pb.gz", "forkexec", interval=8192)
        t = truth(p.stderr)
        alloc = self.leaf(self.path("f.pb.gz"), "alloc")
        inuse = self.leaf(self.path("f.pb.gz"), "inuse")
        pids = {th["pid"] for th in self.hot_json(self.path("f.pb.gz"), "alloc")["threads"]}
        self.assertGreaterEqual(len(pids), 2, pids)
        # the parent's 16 MiB and the exec'd image's 24 MiB stay; the child's 8 MiB went with its exec
        want = t["parent"] + t["exec"]
        self.assertLess(abs(inuse["leak_block"] - want) / want, 0.10, (inuse, t))
        self.assertLess(abs(alloc["child_block"] - t["child"]) / t["child"], 0.15, (alloc, t))
        self.assertEqual(inuse.get("child_block", 0), 0, inuse)

    def test_alloc__realloc_growth_chains(self):
        p = self.record("r.pb.gz", "realloc")
        t = truth(p.stderr)
        j = self.hot_json(self.path("r.pb.gz"), "alloc")
        inuse = self.leaf(self.path("r.pb.gz"), "inuse")
        # every realloc is an allocation of its new size; the 1 MiB ends are always sampled (exact)
        self.assertLess(abs(j["total"] - t["alloc"]) / t["alloc"], 0.05, (j["total"], t))
        self.assertLess(abs(inuse["grow"] - t["inuse"]) / t["inuse"], 0.01, (inuse, t))

    def test_alloc__never_frees(self):
        p = self.record("n.pb.gz", "leak", "64")
        t = truth(p.stderr)
        alloc = self.leaf(self.path("n.pb.gz"), "alloc")
        inuse = self.leaf(self.path("n.pb.gz"), "inuse")
        # 3,500 samples (1.4%)
        self.assertLess(abs(alloc["leak_block"] - t["alloc"]) / t["alloc"], 0.10, (alloc, t))
        self.assertLess(abs(inuse["leak_block"] - t["inuse"]) / t["inuse"], 0.10, (inuse, t))
        self.assertIn(" in use at exit", p.stderr)

    def test_alloc__anonymous_mmap_is_its_own_frame(self):
        p = self.record("m.pb.gz", "mmap")
        t = truth(p.stderr)
        alloc = self.leaf(self.path("m.pb.gz"), "alloc")
        inuse = self.leaf(self.path("m.pb.gz"), "inuse")
        self.assertLess(abs(alloc["[anonymous"] - t["alloc"]) / t["alloc"], 0.01, alloc)
        self.assertLess(abs(inuse["[anonymous"] - t["inuse"]) / t["inuse"], 0.01, inuse)

    def test_alloc__firefox_profiler_reads_bytes(self):
        """The Firefox Profiler's own importer loads the JSON output: samples weighted in bytes (its functions'
        self weights are plumb hot's), and the native allocations table beside them."""
        exe = os.path.join(ROOT, "tests", "consumers", "node_modules", ".bin", "profiler-cli")
        if not os.path.exists(exe):
            skip_missing("@firefox-devtools/profiler-cli (npm)", "scripts/setup installs it into tests/consumers")
        needs_tool("node", "the Firefox Profiler's importer runs on Node.js")
        self.record("g.json", "split")
        with open(self.path("g.json")) as f:
            thread = json.load(f)["threads"][0]
        self.assertEqual(thread["samples"]["weightType"], "bytes")
        native = thread["nativeAllocations"]
        self.assertEqual(sum(native["weight"]), sum(thread["samples"]["weight"]))
        self.assertEqual(native["length"], len(native["time"]))
        env = dict(os.environ, HOME=self.tmp)

        def cli(*args):
            return subprocess.run([exe, *args, "--session", "alloc"], capture_output=True, text=True, timeout=120,
                                  env=env)
        try:
            # its client gives the daemon 500 ms to start; on a loaded machine the daemon goes on starting and
            # loads the profile after the client gave up: ask it until it answers (with a deadline)
            r = cli("load", self.path("g.json"))
            if r.returncode != 0 and "did not become ready" in r.stdout + r.stderr:
                deadline = time.time() + 90
                while time.time() < deadline and cli("thread", "list", "--json").returncode != 0:
                    time.sleep(0.5)
            else:
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            r = cli("thread", "functions", "--thread", "t-0", "--json", "--include-idle")
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.loads(r.stdout)
        finally:
            cli("stop")
        self.assertEqual(doc["weightType"], "bytes")
        got = {fn["name"].strip(): fn["selfSamples"] for fn in doc["functions"] if fn["selfSamples"]}
        want = {r["name"].split(" ")[0]: r["count"] for r in self.hot_json(self.path("g.json"), "alloc")["leaf"]}
        self.assertEqual(got, want)

    def test_alloc__seconds_window_ends_the_command(self):
        p = plumb("record", "--mode", "alloc", "--seconds", "1", "-o", self.path("w.pb.gz"), "--", target("allocs"),
                  "churn", "1000", timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("allocs was killed by SIGINT (plumb sent it when the 1s window ended)", p.stderr)
        self.assertGreater(self.hot_json(self.path("w.pb.gz"), "alloc")["total"], 0)

    def test_alloc__launched_only_and_bad_options(self):
        p = plumb("record", "--mode", "alloc", "--pid", str(os.getpid()), "-o", self.path("x.pb.gz"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("launched commands only", p.stderr)
        for args in (["--alloc-interval", "10"], ["--alloc-interval", "99999999999"]):
            p = plumb("record", "--mode", "alloc", *args, "-o", self.path("x.pb.gz"), "--", "true")
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("--alloc-interval must be", p.stderr)
        p = plumb("record", "--alloc-interval", "65536", "-o", self.path("x.pb.gz"), "--", "true")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("goes with --mode alloc", p.stderr)
        p = plumb("hot", "--weight", "bogus", self.path("x.pb.gz"))
        self.assertEqual(p.returncode, 2, p.stderr)


if __name__ == "__main__":
    main()
