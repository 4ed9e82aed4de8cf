"""One rule for every file plumb reads (docs/design.md §3.5, §6.6): every option that takes a file, and every
profile input, given a character device (zero, random: made with mknod here, never the real /dev nodes), a FIFO
nobody writes to, or a 1 GB sparse file, exits 5 within 6 s and under 300 MB, with one line that names that file
(not the profile beside it). Before the rule, `--stages`/`--syms` of a device took 2.1 GB, and a FIFO blocked
`--stages`, `--syms`, `metrics --path`, `bench report`, `bench owners --catalog` and `bench run` forever. The cases
run side by side (the FIFO ones wait their 5 s together). A gzipped JSON whose one string is 3 GiB stops at the
JSON reader's string cap (exit 5, under 300 MB), where it took 2 GB. Needs root (mknod)."""
# plumbtest: slow
import os
import subprocess
import sys
import threading
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import FIXTURES, PLUMB, TempDir, env, main  # noqa: E402

ROOT = os.geteuid() == 0
LIMIT_S = 6.0  # the 5 s deadline on a FIFO and 1 s for the rest (the FIFO cases wait together, nothing else running)
LIMIT_KB = 300 * 1024
GECKO = os.path.join(FIXTURES, "gecko", "samply-ls-linux-profile.v41.json")  # has sample times: --stages applies
FOLDED = os.path.join(FIXTURES, "folded", "small.folded")


def measured(argv, extra_env):
    """Runs argv; (exit code, stderr, seconds, max RSS in KB) — the RSS from the child's own rusage."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=env(True, **extra_env), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    killer = threading.Timer(30, p.kill)
    killer.start()
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    _, status, usage = os.wait4(p.pid, 0)
    killer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err, time.monotonic() - t0, usage.ru_maxrss


@unittest.skipUnless(ROOT, "needs root: the devices are made with mknod")
class InputRule(TempDir):
    def setUp(self):
        super().setUp()
        self.home = self.path("home")
        self.out = self.path("out")
        os.mkdir(self.out)
        self.inputs = {"zero": self.path("zero"), "random": self.path("random"), "fifo": self.path("fifo"),
                       "sparse": self.path("sparse")}
        os.mknod(self.inputs["zero"], 0o644 | 0o020000, os.makedev(1, 5))
        os.mknod(self.inputs["random"], 0o644 | 0o020000, os.makedev(1, 8))
        os.mkfifo(self.inputs["fifo"])
        with open(self.inputs["sparse"], "wb") as f:
            f.truncate(1 << 30)
        suite = self.path("suite.ini")
        with open(suite, "w") as f:
            f.write("[case t]\nrun = true\n")

    def cases(self):
        """(what, argv, the file the message must name) for every file-taking option × every hostile input."""
        out = []
        for kind, z in self.inputs.items():
            o = os.path.join(self.out, kind)
            for what, argv in [
                    ("hot --stages", ["hot", GECKO, "--stages", z]),
                    ("hot --syms", ["hot", GECKO, "--syms", z]),
                    ("baseline save --stages", ["baseline", "save", GECKO, "--name", "b" + kind, "--stages", z]),
                    ("metrics --path", ["metrics", "--path", z]),
                    ("bench report", ["bench", "report", z]),
                    ("bench owners --catalog", ["bench", "owners", "--catalog", z]),
                    ("bench run SUITE", ["bench", "run", z, "--out", o + ".bench.json"]),
                    ("dump --core", ["dump", "--core", z]),
                    ("hot PROFILE", ["hot", z]),
                    ("diff PROFILE", ["diff", z, FOLDED]),
                    ("convert PROFILE", ["convert", z, "-o", o + ".json"]),
                    ("flame PROFILE", ["flame", z, "-o", o + ".svg"])]:
                out.append(("%s %s" % (what, kind), argv, z))
        return out

    def run_all(self, cases):
        results = {}
        lock = threading.Lock()
        todo = []

        def worker():
            while True:
                with lock:
                    if not todo:
                        return
                    name, argv, named = todo.pop(0)
                r = measured([PLUMB, *argv], {"PLUMB_HOME": self.home})
                with lock:
                    results[name] = (r, named)

        # the FIFO cases each wait their 5 s: one thread each, so they wait together, and before the others, whose
        # reads of devices and of the 1 GB file would otherwise take the CPU their starts need (6.0 s seen for
        # `bench owners --catalog FIFO` under a loaded make check when they were mixed)
        fifo = self.inputs["fifo"]
        for phase in ([c for c in cases if c[2] == fifo], [c for c in cases if c[2] != fifo]):
            todo[:] = phase
            threads = [threading.Thread(target=worker) for _ in range(max(1, min(len(phase), 12)))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        return results

    def test_every_file_option_refuses_devices_fifos_and_huge_files(self):
        cases = self.cases()
        results = self.run_all(cases)
        self.assertEqual(len(results), len(cases))
        bad = []
        for name, ((code, err, secs, rss), named) in sorted(results.items()):
            lines = [l for l in err.splitlines() if l.startswith("plumb: ")]
            why = []
            if code != 5:
                why.append("exit %d" % code)
            if secs >= LIMIT_S:
                why.append("%.1f s" % secs)
            if rss >= LIMIT_KB:
                why.append("%d MB" % (rss // 1024))
            if len(lines) != 1 or named not in lines[0]:
                why.append("message %r does not name %s" % (err.strip()[:300], named))
            elif GECKO in lines[0] and "PROFILE" not in name:
                why.append("the message blames the profile: %r" % lines[0])
            if why:
                bad.append("%s: %s" % (name, ", ".join(why)))
        self.assertEqual(bad, [])

    def test_a_pipe_that_gives_data_late_is_still_read(self):
        # the deadline is on silence, not on streams: a stage file from a pipe whose writer starts after 0.5 s reads
        # as the same file on disk does
        stages = self.path("st.json")
        text = ('{"schema":"plumb.stages.v1","time_unit":"ms","time_origin":"profile_start","stages":'
                '[{"name":"all","start_ms":0,"end_ms":1000000000}]}')
        with open(stages, "w") as f:
            f.write(text)
        want = subprocess.run([PLUMB, "hot", GECKO, "--stages", stages, "-n", "3"], env=env(True), text=True,
                              capture_output=True, timeout=60)
        self.assertEqual(want.returncode, 0, want.stderr)
        self.assertIn("== stage all", want.stdout)
        p = subprocess.Popen([PLUMB, "hot", GECKO, "--stages", "/dev/stdin", "-n", "3"], env=env(True), text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(0.5)  # the writer is late on purpose: what is tested is that the reader waits for it
        out, err = p.communicate(text, timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(out, want.stdout)

    def test_a_gzipped_json_string_of_3_gib_stops_at_the_string_cap(self):
        # gzip members one after the other are one stream: 192 copies of one 16 MiB run of 'A' make 3 GiB
        def member(data):
            c = zlib.compressobj(9, zlib.DEFLATED, 31)
            return c.compress(data) + c.flush()
        bomb = self.path("bomb.json.gz")
        run = member(b"A" * (16 << 20))
        with open(bomb, "wb") as f:
            f.write(member(b'{"meta": {"version": 24}, "threads": [], "x": "'))
            for _ in range(192):
                f.write(run)
            f.write(member(b'"}'))
        self.assertLess(os.path.getsize(bomb), 4 << 20)
        for cmd in (["hot", bomb], ["convert", bomb, "-o", self.path("b.folded")]):
            code, err, secs, rss = measured([PLUMB, *cmd], {"PLUMB_HOME": self.home})
            self.assertEqual(code, 5, err)
            self.assertIn("a JSON string of more than 64 MiB", err)
            self.assertLess(rss, LIMIT_KB, "%s took %d MB" % (cmd[0], rss // 1024))

    def test_memory_follows_distinct_stacks_not_lines(self):
        # 6 M identical folded lines, gzipped (one member of 100k lines, 60 times): a .json or speedscope output
        # kept one timeline entry per line (18 M lines took 578 MB, these about 190 MB); the untimed timeline now
        # follows distinct stacks
        def member(data):
            c = zlib.compressobj(6, zlib.DEFLATED, 31)
            return c.compress(data) + c.flush()
        bomb = self.path("same.folded.gz")
        block = member(b"main;alpha;beta;gamma 1\n" * 100000)
        with open(bomb, "wb") as f:
            for _ in range(60):
                f.write(block)
        outs = ("o.json", "o.speedscope.json")
        results = self.run_all([(out, ["convert", bomb, "-o", self.path(out)], "") for out in outs])
        for out in outs:
            (code, err, secs, rss), _ = results[out]
            self.assertEqual(code, 0, err)
            self.assertLess(rss, 64 * 1024, "convert to %s took %d MB for one distinct stack" % (out, rss // 1024))
        code, err, _, _ = measured([PLUMB, "convert", self.path("o.json"), "-o", self.path("back.folded")], {})
        self.assertEqual(code, 0, err)
        with open(self.path("back.folded")) as f:
            self.assertEqual(f.read(), "main;alpha;beta;gamma 6000000\n")


if __name__ == "__main__":
    main()
