"""Inputs read as bounded streams, and the defects of one profile through every path that each had no test
(docs/design.md §6.6, §6.7): memory bounded by what the profile holds (the 10 GiB gzip: test_inputs_bomb.py), devices, FIFOs,
a 1 GiB line, a sparse file, too little memory, counts that would wrap, stacks of 70,000 and 1,000,000 frames;
perf script's count and time, folded input without invented periods or times, pprof input, the --threads root as
the thread, the Firefox and speedscope outputs' required fields, and --summary's format."""
import gzip
import json
import os
import re
import shutil
import subprocess
import threading
import time
import unittest

from plumbtest import PLUMB, TempDir, env, needs_tool, plumb, skip_missing, skip_sanitized, target


def run_measured(args, timeout=120, stdin=None, prlimit_as=None):
    """Runs plumb; returns (exit code, stderr, seconds, peak RSS in MB) of that one process. The RSS comes from
    GNU time, whose child is not a fork of this (big) Python process."""
    gnu_time = needs_tool("/usr/bin/time", "Debian time: it measures the peak RSS of one process")
    rss_file = os.path.join(os.path.dirname(PLUMB), "rss.%d" % os.getpid())
    argv = [gnu_time, "-f", "%M", "-o", rss_file, PLUMB, *args]
    if prlimit_as:
        argv = ["prlimit", "--as=%d" % prlimit_as, *argv]
    start = time.monotonic()
    try:
        r = subprocess.run(argv, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env(), timeout=timeout)
        code, err = r.returncode, r.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return -1, "timed out", time.monotonic() - start, 0.0
    secs = time.monotonic() - start
    with open(rss_file) as f:
        lines = f.read().split()
    os.unlink(rss_file)
    # GNU time reports the child's exit status on its own line when it is not 0
    return code, err, secs, float(lines[-1]) / 1024.0


class Caps(TempDir):
    def test_devices_end_at_once(self):
        for dev in ("/dev/zero", "/dev/urandom"):
            for cmd in (["hot", dev], ["convert", dev, "-o", self.path("x.folded")], ["flame", dev, "-o",
                                                                                        self.path("x.svg")]):
                with self.subTest(dev=dev, cmd=cmd[0]):
                    rc, err, secs, _ = run_measured(cmd, timeout=30)
                    self.assertEqual(rc, 5, err)
                    self.assertLess(secs, 10)

    def test_devices_through_stdin_end_at_the_first_nul(self):
        for dev in ("/dev/zero", "/dev/urandom"):
            with open(dev, "rb") as f, self.subTest(dev=dev):
                rc, err, secs, _ = run_measured(["hot", "-"], stdin=f, timeout=30)
                self.assertEqual(rc, 5, err)
                self.assertIn("binary", err)
                self.assertLess(secs, 10)

    def test_fifo_that_never_ends(self):
        fifo = self.path("never")
        os.mkfifo(fifo)
        stop = threading.Event()

        def silent_writer():  # opens the FIFO and never writes
            fd = os.open(fifo, os.O_WRONLY)
            stop.wait(30)
            os.close(fd)

        def zero_writer():  # writes zeros forever
            try:
                with open(fifo, "wb") as f:
                    while not stop.is_set():
                        f.write(b"\0" * 65536)
            except (BrokenPipeError, OSError):
                pass

        for writer in (silent_writer, zero_writer):
            with self.subTest(writer=writer.__name__):
                stop.clear()
                t = threading.Thread(target=writer, daemon=True)
                t.start()
                rc, err, secs, _ = run_measured(["hot", fifo], timeout=30)
                stop.set()
                self.assertEqual(rc, 5, err)
                self.assertLess(secs, 10)
                t.join(5)

    def test_one_gib_line_ends_at_the_line_cap(self):
        skip_sanitized("the sanitizer's own memory is not plumb's")
        rfd, wfd = os.pipe()

        def writer():  # one line of 1 GiB, written until plumb stops reading
            chunk = b"a" * (1 << 20)
            try:
                for _ in range(1024):
                    os.write(wfd, chunk)
            except OSError:
                pass
            os.close(wfd)

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        rc, err, secs, rss = run_measured(["hot", "-"], stdin=rfd, timeout=60)
        os.close(rfd)
        t.join(10)
        self.assertEqual(rc, 5, err)
        self.assertIn("cap on one line", err)
        self.assertLess(rss, 300)

    def test_sparse_gigabyte_is_binary(self):
        path = self.path("sparse.folded")
        with open(path, "wb") as f:
            f.truncate(1 << 30)
        rc, err, secs, rss = run_measured(["hot", path], timeout=30)
        self.assertEqual(rc, 5, err)
        self.assertIn("NUL byte", err)
        self.assertLess(secs, 10)

    def test_out_of_memory_is_exit_5_with_the_size(self):
        skip_sanitized("address space limits do not apply to a sanitizer build")
        needs_tool("prlimit", "util-linux")
        path = self.path("many.folded")
        with open(path, "w") as f:
            for i in range(600000):
                f.write("main;f%d;g%d;h%d %d\n" % (i, i * 7, i * 13, 1 + i % 5))
        rc, err, _, _ = run_measured(["hot", path], prlimit_as=120 << 20, timeout=120)
        self.assertEqual(rc, 5, err)
        self.assertRegex(err, r"out of memory after [\d.]+ (MiB|bytes) of input, with \d+ distinct stacks")

    def test_counts_never_wrap(self):
        path = self.path("big.folded")
        with open(path, "w") as f:
            f.write("a;b 9223372036854775807\na;c 9223372036854775807\na;d 9223372036854775807\n")
        r = plumb("hot", path)
        self.assertEqual(r.returncode, 5, r.stdout + r.stderr)
        self.assertIn("add up past", r.stderr)

    def deep(self, frames):
        path = self.path("deep%d.folded" % frames)
        with open(path, "w") as f:
            f.write(";".join("f%d" % i for i in range(frames)) + " 3\nmain 1\n")
        return path

    def test_seventy_thousand_frames_to_firefox(self):
        src = self.deep(70000)
        out = self.path("deep.json")
        r = plumb("convert", src, "-o", out, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(max(len(t["stackTable"]["frame"]) for t in doc["threads"]), 70001)

    def test_400k_frames_convert_to_every_format(self):
        # 400k frames: a reader or writer that recursed once per frame would need 8 MB of stack at 20 bytes a
        # frame (a real one takes 32 or more) and overflow the default stack; a quadratic one would take hours
        src = self.deep(400000)
        for ext in (".json", ".json.gz", ".speedscope.json", ".pb.gz", ".folded"):
            with self.subTest(ext=ext):
                out = self.path("deep" + ext)
                rc, err, _, _ = run_measured(["convert", src, "-o", out], timeout=300)
                self.assertEqual(rc, 0, err)
                r = plumb("hot", out, "--json", "--top", "5", timeout=300)  # every row would be 110 MB of JSON
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(json.loads(r.stdout)["total"], 4)


class Defects(TempDir):
    """Each of issue 14's defects in format and model, as a test that failed before."""

    def test_perf_script_has_a_count_and_a_time(self):
        path = self.path("p.txt")
        with open(path, "w") as f:
            for i in range(3):
                f.write("prog 7/7 100.%06d: 1001001 cpu-clock:pppH:\n\t 4005d0 work+0x10 (/bin/prog)\n"
                        "\t 400600 main+0x20 (/bin/prog)\n\n" % (i * 1001))
        doc = json.loads(plumb("hot", path, "--json").stdout)
        self.assertEqual(doc["samples"], 3)
        self.assertEqual(doc["total"], 3003003)
        self.assertEqual(doc["weight_unit"], "nanoseconds")
        self.assertEqual(doc["interval_ns"], 1001001)

    def test_folded_input_invents_no_period_and_no_times(self):
        src = self.path("x.folded")
        with open(src, "w") as f:
            f.write("main (a/m.c:3);work (a/w.c:9) 117\nmain (a/m.c:3) 3\n")
        pb, js = self.path("x.pb.gz"), self.path("x.json")
        self.assertEqual(plumb("convert", src, "-o", pb).returncode, 0)
        self.assertEqual(plumb("convert", src, "-o", js).returncode, 0)
        go = shutil.which("go")
        if go:
            raw = subprocess.run([go, "tool", "pprof", "-raw", pb], capture_output=True, text=True, timeout=120)
            self.assertIn("PeriodType: samples count", raw.stdout)
            self.assertNotIn("nanoseconds", raw.stdout)
            # one function per name: no ":LINE" inside function names
            self.assertRegex(raw.stdout, r"\d+: 0x0 (M=\d+ )?work a/w\.c:9")
        with open(js) as f:
            doc = json.load(f)
        self.assertFalse(doc["meta"]["plumb"]["timeline"])
        self.assertIn("no sample times", doc["meta"]["importedFrom"])
        times = doc["threads"][0]["samples"]["time"]
        self.assertNotEqual(set(times), {0})
        names = [doc["threads"][0]["stringArray"][i] for i in doc["threads"][0]["funcTable"]["name"]]
        self.assertEqual(sorted(names), ["main", "work"])

    def test_firefox_output_fields(self):
        rec = self.path("rec.json")
        r = plumb("record", "-o", rec, "--", target("split"), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(rec) as f:
            doc = json.load(f)
        self.assertIn("stackwalk", doc["meta"])
        for t in doc["threads"]:
            self.assertNotIn(None, t["funcTable"]["resource"])
            self.assertEqual(len(t["samples"]["threadCPUDelta"]), t["samples"]["length"])
            self.assertGreater(sum(t["samples"]["threadCPUDelta"]), 0)
        ss = self.path("rec.speedscope.json")
        self.assertEqual(plumb("convert", rec, "-o", ss).returncode, 0)
        with open(ss) as f:
            self.assertEqual({p["unit"] for p in json.load(f)["profiles"]}, {"nanoseconds"})

    def test_kernel_frames_keep_their_kind_in_firefox_json(self):
        src = self.path("k.folded")
        with open(src, "w") as f:
            f.write("main;clear_page_erms_[k] 11\nmain;work 3\n")
        js = self.path("k.json")
        self.assertEqual(plumb("convert", src, "-o", js).returncode, 0)
        with open(js) as f:
            doc = json.load(f)
        t = doc["threads"][0]
        cats = [c["name"] for c in doc["meta"]["categories"]]
        strings = t["stringArray"]
        kernel = [i for i, fn in enumerate(t["frameTable"]["func"]) if strings[t["funcTable"]["name"][fn]] ==
                  "clear_page_erms"]
        self.assertEqual(cats[t["frameTable"]["category"][kernel[0]]], "Kernel")
        res = t["funcTable"]["resource"][t["frameTable"]["func"][kernel[0]]]
        self.assertEqual(strings[t["resourceTable"]["name"][res]], "[kernel]")
        d = plumb("diff", src, js, "--json")
        self.assertEqual([r for r in json.loads(d.stdout)["rows"] if r["delta_count"]], [])

    def test_speedscope_one_frame_per_line_and_no_doubled_location(self):
        """A recorded profile as speedscope: one frame per function (name, file), its line written when every
        sample of the function was at that one line (design §6.1), and read back without a doubled location."""
        folded = self.path("rec.folded")
        r = plumb("record", "-o", folded, "--", target("split"), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        rec = self.path("rec.speedscope.json")
        c = plumb("convert", folded, "-o", rec)
        self.assertEqual(c.returncode, 0, c.stderr)
        with open(rec) as f:
            frames = json.load(f)["shared"]["frames"]
        keys = [(fr["name"], fr.get("file"), fr.get("line")) for fr in frames]
        self.assertEqual(len(keys), len(set(keys)))
        self.assertEqual(len(keys), len({(n, f) for n, f, _ in keys}))
        back = plumb("convert", rec, "-o", "-")
        self.assertEqual(back.returncode, 0, back.stderr)
        self.assertNotRegex(back.stdout, r"\([^()]*:\d+\) \([^()]*:\d+\)")
        # main's lines in the recording: one line (the inlined split_round's call site, most runs) is kept, and
        # several (a sample in main's own loop) are no line, never the wrong one
        with open(folded) as f:
            lines = set(re.findall(r"(?:^|;)main \(targets/split\.c(?::(\d+))?\)", f.read(), re.M))
        self.assertTrue(lines)
        main = [fr for fr in frames if fr["name"] == "main"]
        self.assertEqual(len(main), 1, main)
        if len(lines) == 1 and "" not in lines:
            (line,) = lines
            self.assertEqual(main[0].get("line"), int(line))
            self.assertRegex(back.stdout, r"main \(targets/split\.c:%s\)" % line)
        else:
            self.assertNotIn("line", main[0], lines)
            self.assertRegex(back.stdout, r"main \(targets/split\.c\)")

    def test_pprof_is_read(self):
        src = self.path("x.folded")
        with open(src, "w") as f:
            f.write("main (a/m.c:3);work (a/w.c:9) 7\nmain (a/m.c:3) 2\n")
        pb = self.path("x.pb.gz")
        self.assertEqual(plumb("convert", src, "-o", pb).returncode, 0)
        doc = json.loads(plumb("hot", pb, "--json").stdout)
        self.assertEqual(doc["format"], "pprof")
        self.assertEqual({r["name"]: r["count"] for r in doc["leaf"]}, {"work (a/w.c)": 7, "main (a/m.c)": 2})
        raw = self.path("x.pb")
        with gzip.open(pb) as f, open(raw, "wb") as g:
            g.write(f.read())
        r = plumb("convert", raw, "--from", "pprof", "-o", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(r.stdout.splitlines()), ["main (a/m.c:3) 2", "main (a/m.c:3);work (a/w.c:9) 7"])
        r = plumb("hot", pb, "--sample-index", "nope")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("0 samples", r.stderr)

    def test_go_cpu_profile(self):
        go = needs_tool("go", "Debian golang-go: it writes a real Go CPU profile")
        src = self.path("main.go")
        with open(src, "w") as f:
            f.write('package main\nimport ("os"; "runtime/pprof"; "time")\n'
                    'func spin(n int) int { s := 0; for i := 0; i < n; i++ { s += i % 7 }; return s }\n'
                    'func main() { f, _ := os.Create(os.Args[1]); pprof.StartCPUProfile(f)\n'
                    ' t := time.Now(); s := 0; for time.Since(t) < 600*time.Millisecond { s += spin(1000000) }\n'
                    ' pprof.StopCPUProfile(); f.Close(); if s == 42 { println(s) } }\n')
        prof = self.path("cpu.pprof")
        e = dict(os.environ, GOCACHE=self.path("gocache"), GOPATH=self.path("gopath"), GOFLAGS="-mod=mod",
                 GO111MODULE="off")
        r = subprocess.run([go, "run", src, prof], capture_output=True, text=True, timeout=300, env=e)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(plumb("hot", prof, "--json").stdout)
        self.assertEqual(doc["weight_unit"], "nanoseconds")  # Go's default: cpu/nanoseconds
        self.assertGreater(doc["samples"], 10)
        self.assertTrue(any(r["name"].startswith("main.spin ") for r in doc["leaf"]), doc["leaf"][:5])
        doc = json.loads(plumb("hot", prof, "--json", "--sample-index", "samples").stdout)
        self.assertEqual(doc["weight_unit"], "samples")

    def test_gperftools_profile_converted_by_pprof(self):
        go = needs_tool("go", "Debian golang-go: go tool pprof -proto converts gperftools' profile")
        lib = "/usr/lib/x86_64-linux-gnu/libprofiler.so.0"
        if not os.path.exists(lib):
            skip_missing("libgoogle-perftools-dev", "gperftools' CPU profiler")
        raw, pb = self.path("gp.prof"), self.path("gp.pb.gz")
        r = subprocess.run([target("split"), "0.5"], env=dict(os.environ, LD_PRELOAD=lib, CPUPROFILE=raw,
                                                            CPUPROFILE_FREQUENCY="997"),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(pb, "wb") as f:
            r = subprocess.run([go, "tool", "pprof", "-proto", target("split"), raw], stdout=f,
                               stderr=subprocess.PIPE, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(plumb("hot", pb, "--json").stdout)
        self.assertEqual(doc["format"], "pprof")
        self.assertEqual(doc["leaf"][0]["name"], "burn (targets/split.c)")
        self.assertIn("path_a (targets/split.c)", {row["name"] for row in doc["inclusive"]})

    def test_threads_root_is_the_thread(self):
        rec = self.path("t.folded")
        r = plumb("record", "--threads", "-o", rec, "--", target("threads"), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(plumb("hot", rec, "--json").stdout)
        self.assertGreater(len(doc["threads"]), 1)
        roots = {line.split(";")[0] for line in open(rec).read().splitlines()}
        names = {"%s (%d)" % (t["name"], t["tid"]) for t in doc["threads"]}
        self.assertEqual(roots, names)
        self.assertFalse(any(re.match(r".* \(\d+\)$", row["name"]) for row in doc["inclusive"]))

    def test_summary_carries_the_format(self):
        rec, summary = self.path("s.json.gz"), self.path("s.summary.json")
        r = plumb("record", "-o", rec, "--summary", summary, "--", target("split"), timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(summary) as f:
            doc = json.load(f)
        self.assertEqual(doc["format"], "gecko")
        self.assertGreater(doc["samples"], 0)
        self.assertGreater(doc["interval_ns"], 0)


if __name__ == "__main__":
    unittest.main()
# plumbtest: slow
