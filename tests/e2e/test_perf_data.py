"""perf.data read directly (docs/design.md §6.1), without `perf script`: `perf record -g` of the frame-pointer split
target against perf's own report of the same file (sample count, nanoseconds, self and inclusive shares within 1
point), `--call-graph dwarf` of its no-frame-pointer build unwound by plumb against the split the target measured
itself, with the names and lines plumb's own recording gives; two events in one file, `-p PID` of a threaded
process, `-a`, pipe mode (`perf record -o -`), a file cut short; and flame, convert and diff on perf.data."""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import unittest
import urllib.request

from plumbtest import (PLUMB, TempDir, env, needs_tool, plumb, read_folded, share_tolerance, shares, target,
                       wait_until)


def perf_record(perf, out, args, cmd, extra_env=None, stdout=None):
    env = dict(os.environ, **(extra_env or {}))
    r = subprocess.run([perf, "record", "-q", *args, "-o", out, "--", *cmd], stdout=stdout,
                       stderr=subprocess.PIPE, text=True, timeout=120, env=env)
    if r.returncode != 0:
        raise AssertionError("perf record failed: " + r.stderr)


def report_rows(perf, data, children, sort="sym", event=None):
    """{key: (share, samples or None)} from perf report's table."""
    args = [perf, "report", "-i", data, "--stdio", "-g", "none", "--sort", sort]
    if event:
        args += ["--event", event]
    args += ["--children"] if children else ["--no-children", "-F", "overhead,sample," + sort]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise AssertionError("perf report failed: " + r.stderr)
    rows = {}
    for line in r.stdout.splitlines():
        if children:
            m = re.match(r"^\s*([\d.]+)%\s+[\d.]+%\s+\[.\]\s+(.+?)\s*$", line)
            if m:
                rows[m.group(2)] = (float(m.group(1)), None)
        elif sort == "sym":
            m = re.match(r"^\s*([\d.]+)%\s+(\d+)\s+\[.\]\s+(.+?)\s*$", line)
            if m:
                rows[m.group(3)] = (float(m.group(1)), int(m.group(2)))
        else:
            m = re.match(r"^\s*([\d.]+)%\s+(\d+)\s+(\S+)\s*$", line)
            if m:
                rows[m.group(3)] = (float(m.group(1)), int(m.group(2)))
    return rows


def perf_samples(perf, data):
    """{event name: samples} from perf report's headers."""
    r = subprocess.run([perf, "report", "-i", data, "--stdio", "-n", "--sort", "comm"], capture_output=True,
                       text=True, timeout=120)
    out = {}
    for m in re.finditer(r"^# Samples: (\d+)\s+of event '([^']+)'", r.stdout, re.M):
        out[m.group(2).split(":")[0]] = int(m.group(1))
    return out


def bare(name):
    """A hot row's function name without plumb's file and kind marks: 'burn (targets/split.c)' -> 'burn'."""
    name = re.sub(r"_\[[ki]\]$", "", name)
    return re.sub(r" \(.*\)$", "", name)


def hot(path, *args, **kw):
    r = plumb("hot", path, "--json", *args, timeout=120, **kw)
    if r.returncode != 0:
        raise AssertionError("plumb hot failed: " + r.stderr)
    return json.loads(r.stdout), r.stderr


class PerfData(TempDir):
    def setUp(self):
        super().setUp()
        self.perf = needs_tool("perf", "Debian linux-perf")

    def test_frame_pointers_as_perf_reports(self):
        data = self.path("perf.data")
        perf_record(self.perf, data, ["-F", "997", "-g"], [target("split"), "0.8"], {"SPLIT_CLOCK": "cpu"})
        doc, _ = hot(data)
        self_rows = report_rows(self.perf, data, False)
        children = report_rows(self.perf, data, True)
        self.assertEqual(doc["format"], "perf-data")
        self.assertEqual(doc["samples"], sum(n for _, n in self_rows.values()))
        self.assertEqual(doc["weight_unit"], "nanoseconds")
        self.assertAlmostEqual(doc["total"] / doc["samples"], doc["interval_ns"], delta=doc["interval_ns"] * 0.01)
        leaf, incl = {}, {}
        for r in doc["leaf"]:
            leaf[bare(r["name"])] = leaf.get(bare(r["name"]), 0.0) + r["share"]
        for r in doc["inclusive"]:
            incl[bare(r["name"])] = max(incl.get(bare(r["name"]), 0.0), r["share"])
        checked = 0
        for sym, (share, _) in self_rows.items():
            if share >= 1.0:
                self.assertAlmostEqual(leaf.get(sym, 0.0), share, delta=1.0, msg=("self", sym))
                checked += 1
        self.assertGreater(checked, 0)
        for sym in ("main", "path_a", "path_b", "path_c", "burn"):
            self.assertAlmostEqual(incl.get(sym, 0.0), children[sym][0], delta=1.0, msg=("children", sym))
        # kernel frames, named from the running kernel: test_kernel_of_another_build, on kshare (split's user loop
        # gave no kernel sample at all in a loaded full check)

    def test_dwarf_unwound_by_plumb(self):
        data, truth = self.path("perf.data"), self.path("split.report")
        perf_record(self.perf, data, ["-F", "997", "--call-graph", "dwarf"], [target("split-nofp"), "1.2"],
                    {"SPLIT_CLOCK": "cpu", "SPLIT_REPORT": truth})
        folded = self.path("perf.folded")
        r = plumb("convert", data, "-o", folded)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_folded(folded)
        with open(truth) as f:
            cpu = [float(x) for x in next(l for l in f if l.startswith("cpu")).split()[1:]]
        got = shares(rows, ["path_a", "path_b", "path_c"])
        tol = share_tolerance(rows, 2.0)
        for name, want in zip(("path_a", "path_b", "path_c"), cpu):
            self.assertAlmostEqual(got[name], want, delta=tol, msg=(name, got, cpu))
        # every caller is there (a frame-pointer walk of this build loses them all)
        self.assertGreater(shares(rows, ["main"])["main"], 95.0)
        # names and lines as plumb's own recording of the same build gives them
        own = self.path("own.folded")
        r = plumb("record", "-o", own, "--unwind", "dwarf", "--", target("split-nofp"), "0.3")
        self.assertEqual(r.returncode, 0, r.stderr)

        def program_frames(path):
            return {f for fr, _ in read_folded(path) for f in fr if "targets/split" in f}
        mine, theirs = program_frames(folded), program_frames(own)
        for fn in ("main", "path_a", "path_b", "path_c", "burn"):
            a = sorted(f for f in mine if f.startswith(fn + " "))
            b = sorted(f for f in theirs if f.startswith(fn + " "))
            self.assertTrue(a and b, (fn, a, b))
            self.assertTrue(set(a) & set(b), (fn, a, b))

    def test_binaries_by_build_id(self):
        """A program rebuilt after its recording is read from perf's build-ID cache (~/.debug), which perf record
        filled; without the cache a warning says its names may be wrong."""
        home = self.path("home")
        os.mkdir(home)
        prog, data = self.path("prog"), self.path("perf.data")
        shutil.copy(target("split"), prog)
        perf_record(self.perf, data, ["-F", "997", "-g"], [prog, "0.3"], {"HOME": home})
        shutil.copy(target("threads"), prog + ".new")
        os.replace(prog + ".new", prog)  # another program at the recorded path
        doc, err = hot(data, extra_env={"HOME": home})
        names = {bare(r["name"]) for r in doc["inclusive"]}
        for fn in ("main", "path_a", "path_b", "path_c", "burn"):
            self.assertIn(fn, names, (names, err))
        shutil.rmtree(os.path.join(home, ".debug"))
        _, err = hot(data, extra_env={"HOME": home})
        self.assertIn("build ID", err)

    def test_binary_from_debuginfod(self):
        """A program gone since its recording, in no build-ID cache, is fetched by its build ID from the servers
        of DEBUGINFOD_URLS (Debian's debuginfod, started here over a directory holding a copy of it)."""
        server_bin = needs_tool("debuginfod", "Debian package debuginfod")
        home, served = self.path("home"), self.path("served")
        os.mkdir(home)
        os.mkdir(served)
        prog, data = self.path("prog"), self.path("perf.data")
        shutil.copy(target("split-nofp"), prog)
        shutil.copy(prog, os.path.join(served, "prog"))
        perf_record(self.perf, data, ["-F", "997", "--call-graph", "dwarf"], [prog, "0.3"], {"HOME": home})
        os.unlink(prog)
        shutil.rmtree(os.path.join(home, ".debug"))
        alone, _ = hot(data, extra_env={"HOME": home})
        self.assertNotIn("path_a", {bare(r["name"]) for r in alone["inclusive"]})
        note = subprocess.run(["readelf", "-n", os.path.join(served, "prog")], capture_output=True, text=True,
                              check=True).stdout
        build_id = re.search(r"Build ID: ([0-9a-f]+)", note).group(1)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        sock.close()
        server = subprocess.Popen([server_bin, "-F", "-p", str(port), "-d", self.path("db.sqlite"), served],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            url = "http://127.0.0.1:%d" % port

            def indexed():
                try:
                    with urllib.request.urlopen("%s/buildid/%s/executable" % (url, build_id), timeout=2) as r:
                        return r.status == 200
                except OSError:
                    return False
            self.assertTrue(wait_until(indexed, timeout=30, step=0.2), "debuginfod never served the program")
            doc, err = hot(data, extra_env={"HOME": home, "DEBUGINFOD_URLS": url,
                                            "DEBUGINFOD_CACHE_PATH": self.path("client-cache")})
        finally:
            server.kill()
            server.wait()
        names = {bare(r["name"]) for r in doc["inclusive"]}
        for fn in ("main", "path_a", "path_b", "path_c", "burn"):
            self.assertIn(fn, names, (names, err))

    def test_kernel_of_another_build(self):
        """Kernel frames: named from the running kernel when it is the recorded one; of a recording whose kernel
        is not the running one, from perf's cached copy of that kernel's kallsyms, else kept unnamed with a
        warning that says why."""
        with open("/sys/kernel/notes", "rb") as f:
            notes = f.read()
        i = notes.find(b"GNU\0")
        self.assertGreater(i, 0, "the running kernel has a build ID")
        desc = struct.unpack_from("<I", notes, i - 8)[0]
        kid = notes[i + 4:i + 4 + desc]
        home = self.path("home")
        os.mkdir(home)
        data = self.path("perf.data")
        # kshare spends about a fifth of its CPU time in the kernel (reads of /dev/zero): a CPU-bound user loop
        # alone gave no kernel sample at all in some runs, and the check below then had nothing to check
        perf_record(self.perf, data, ["-F", "997", "-g"], [target("kshare"), "1.0", "8"], {"HOME": home})
        # the running kernel is the recorded one: named from it when perf's cache has no copy
        empty = self.path("empty")
        os.mkdir(empty)
        folded = self.path("k.folded")
        r = plumb("convert", data, "-o", folded, extra_env={"HOME": empty})
        self.assertEqual(r.returncode, 0, r.stderr)
        kernel = [f for fr, _ in read_folded(folded) for f in fr if f.endswith("_[k]")]
        # (a loaded machine gives kshare less CPU: 15 kernel frames in the rows of one 0.4 s run)
        self.assertGreater(len(kernel), 10, "the recording has kernel frames to name")
        self.assertGreater(sum(not f.startswith("[") for f in kernel), len(kernel) // 2, kernel[:10])
        with open(data, "rb") as f:
            blob = f.read()
        self.assertIn(kid, blob)
        fake = bytes(b ^ 0x5a for b in kid)
        other = self.path("other.data")
        with open(other, "wb") as f:
            f.write(blob.replace(kid, fake))
        cache = os.path.join(home, ".debug", "[kernel.kallsyms]")
        os.rename(os.path.join(cache, kid.hex()), os.path.join(cache, fake.hex()))
        r = plumb("convert", other, "-o", folded, extra_env={"HOME": home})
        self.assertEqual(r.returncode, 0, r.stderr)
        kernel = [f for fr, _ in read_folded(folded) for f in fr if f.endswith("_[k]")]
        self.assertTrue(kernel)
        self.assertGreater(sum(not f.startswith("[") for f in kernel), len(kernel) // 2, kernel[:10])
        shutil.rmtree(cache)
        r = plumb("convert", other, "-o", folded, extra_env={"HOME": home})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("kernel frames are not named", r.stderr)
        kernel = {f for fr, _ in read_folded(folded) for f in fr if f.endswith("_[k]")}
        self.assertEqual(kernel, {"[unknown]_[k]"})

    def test_two_events_kept_apart(self):
        data = self.path("perf.data")
        perf_record(self.perf, data, ["-F", "997", "-g", "-e", "cpu-clock,context-switches"],
                    [target("split"), "0.7"])
        counts = perf_samples(self.perf, data)
        doc, err = hot(data)
        self.assertEqual(doc["samples"], counts["cpu-clock"])
        self.assertEqual(doc["weight_unit"], "nanoseconds")
        self.assertIn("2 events", err)
        cs, _ = hot(data, "--sample-index", "context-switches")
        self.assertEqual(cs["samples"], counts["context-switches"])
        self.assertEqual(cs["weight_unit"], "context-switches")
        by_index, _ = hot(data, "--sample-index", "1")
        self.assertEqual(by_index["samples"], cs["samples"])
        r = plumb("hot", data, "--sample-index", "cycles")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cpu-clock", r.stderr)

    def test_pid_with_threads(self):
        data = self.path("perf.data")
        proc = subprocess.Popen([target("threads"), "4"])
        try:  # both workers run all the while (worker-b's work alone lasts 2 s of CPU)
            task = "/proc/%d/task" % proc.pid
            self.assertTrue(wait_until(lambda: len(os.listdir(task)) >= 3), "the workers did not start")
            perf_record(self.perf, data, ["-F", "997", "-g", "-p", str(proc.pid)], ["sleep", "0.8"])
        finally:
            proc.kill()
            proc.wait(timeout=60)
        doc, _ = hot(data)
        comm = report_rows(self.perf, data, False, sort="comm")
        threads = {t["name"]: t["share"] for t in doc["threads"]}
        self.assertEqual(doc["samples"], sum(n for _, n in comm.values()))
        for name in ("worker-a", "worker-b"):
            self.assertIn(name, threads, threads)
            self.assertAlmostEqual(threads[name], comm[name][0], delta=1.0, msg=(name, threads, comm))
        self.assertTrue(all(t["pid"] == proc.pid for t in doc["threads"]), doc["threads"])

    def test_system_wide(self):
        data = self.path("perf.data")
        perf_record(self.perf, data, ["-a", "-F", "199", "-g"], [target("split"), "0.5"])
        counts = perf_samples(self.perf, data)
        doc, _ = hot(data)
        self.assertEqual(doc["samples"], counts["cpu-clock"])
        self.assertIn("split", {t["name"] for t in doc["threads"]})
        self.assertIn("burn", {bare(r["name"]) for r in doc["inclusive"]})

    def test_pipe_mode(self):
        data = self.path("pipe.data")
        with open(data, "wb") as f:
            perf_record(self.perf, "-", ["-F", "997", "-g"], [target("split"), "0.7"], stdout=f)
        counts = perf_samples(self.perf, data)
        doc, _ = hot(data)
        self.assertEqual(doc["samples"], counts["cpu-clock"])
        with open(data, "rb") as f:
            r = subprocess.run([PLUMB, "hot", "-", "--json"], stdin=f, capture_output=True, text=True, timeout=60,
                               env=env())
        self.assertEqual(r.returncode, 0, r.stderr)
        piped = json.loads(r.stdout)
        self.assertEqual(piped["samples"], doc["samples"])
        self.assertEqual([x["name"] for x in piped["inclusive"][:6]], [x["name"] for x in doc["inclusive"][:6]])

    def test_cut_short(self):
        data = self.path("perf.data")
        perf_record(self.perf, data, ["-F", "997", "--call-graph", "dwarf"], [target("split-nofp"), "0.7"])
        full, _ = hot(data)
        cut = self.path("cut.data")
        with open(data, "rb") as f, open(cut, "wb") as g:
            blob = f.read()
            g.write(blob[:len(blob) // 2 + 5])
        doc, err = hot(cut)
        self.assertIn("cut short", err)
        self.assertGreater(doc["samples"], full["samples"] // 4)
        self.assertLess(doc["samples"], full["samples"])
        # the header alone cut: one clear error, exit 5
        head = self.path("head.data")
        with open(head, "wb") as g:
            g.write(blob[:60])
        r = plumb("hot", head)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_flame_convert_diff(self):
        a, b = self.path("a.data"), self.path("b.data")
        perf_record(self.perf, a, ["-F", "997", "-g"], [target("split"), "0.4", "70", "20", "10"])
        perf_record(self.perf, b, ["-F", "997", "-g"], [target("split"), "0.4", "10", "20", "70"])
        svg = self.path("a.svg")
        r = plumb("flame", a, "-o", svg)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(svg) as f:
            self.assertIn("path_a", f.read())
        js = self.path("a.json")
        r = plumb("convert", a, "-o", js)
        self.assertEqual(r.returncode, 0, r.stderr)
        back, _ = hot(js)
        orig, _ = hot(a)
        self.assertEqual(back["samples"], orig["samples"])
        r = plumb("diff", a, b, "--json", "--table", "inclusive")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = {bare(x["name"]): x for x in json.loads(r.stdout)["rows"]}
        self.assertLess(rows["path_a"]["delta_points"], -40, rows["path_a"])
        self.assertGreater(rows["path_c"]["delta_points"], 40, rows["path_c"])


if __name__ == "__main__":
    unittest.main()

# plumbtest: alone
