"""End-to-end tests of Python targets (docs/design.md §5.6): CPython frames read from outside on
every CPython 3.11 on the machine, attaching to a running service without slowing it, --mode cpu/wall,
--native merging with native stacks, and the py-spy backend (a stand-in in a probed folder, and missing)."""
import glob
import json
import os
import re
import shutil
import stat
import statistics
import subprocess
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import (ROOT, TempDir, main, plumb, read_folded, share_tolerance, shares, skip_installed,  # noqa: E402
                       skip_missing, wait_until)

PYTARGETS = os.path.join(ROOT, "tests", "targets", "python")
SPLIT = os.path.join(PYTARGETS, "split.py")
SERVICE = os.path.join(PYTARGETS, "service.py")
NATIVE = os.path.join(PYTARGETS, "native.py")
WANT = {"burn_a": 50.0, "burn_b": 30.0, "burn_c": 20.0}


def python_version(exe):
    try:
        out = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip()
    except OSError:
        return ""


def debian_python():
    exe = "/usr/bin/python3"
    return exe if os.access(exe, os.X_OK) and python_version(exe) == "3.11" else None


def other_pythons_311():
    """Other CPython 3.11 interpreters on the machine (pyenv builds), by their real path."""
    found = []
    for home in {os.path.expanduser("~"), "/root"}:
        for exe in sorted(glob.glob(os.path.join(home, ".pyenv", "versions", "3.11*", "bin", "python3.11"))):
            if os.access(exe, os.X_OK) and exe not in found and python_version(exe) == "3.11":
                found.append(exe)
    return found


def pythons_312():
    return [e for e in sorted(set(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")) +
                                  glob.glob("/root/.pyenv/versions/3.12*/bin/python3.12")))
            if python_version(e) == "3.12"]


def frames_matching(rows, pattern):
    rx = re.compile(pattern)
    return sum(c for fr, c in rows if any(rx.search(f) for f in fr))


class Progress:
    """Reads the service's "<time> <cpu> <done>" lines in a thread; count() says how many came (it runs)."""

    def __init__(self, proc):
        self.points = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self.thread.start()

    def _read(self, proc):
        for line in proc.stdout:
            parts = line.split()
            if len(parts) == 3:
                with self.lock:
                    self.points.append((float(parts[0]), float(parts[1]), int(parts[2])))

    def count(self):
        with self.lock:
            return len(self.points)


class PythonRecord(TempDir):
    def record_split(self, exe):
        out = self.path("split.folded")
        r = plumb("record", "--interval", "0.001", "-o", out, "--", exe, SPLIT, "3", cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("with python/", r.stderr)
        rows = read_folded(out)
        got = shares(rows, list(WANT))
        for name, want in WANT.items():
            self.assertAlmostEqual(got[name], want, delta=3.0, msg="%s: %r" % (exe, got))
        labels = {f for fr, _ in rows for f in fr}
        self.assertTrue(any(re.fullmatch(r"burn_a \(python/split\.py:1[0-4]\)", lb) for lb in labels), labels)
        self.assertTrue(any(re.fullmatch(r"main \(python/split\.py:\d+\)", lb) for lb in labels), labels)
        self.assertFalse(any(ROOT in lb for lb in labels), "labels keep only two path components")

    def test_python__launch_debian_python(self):
        exe = debian_python()
        if not exe:
            skip_missing("python3.11", "Debian's /usr/bin/python3.11")
        self.record_split(exe)

    def test_python__launch_python3_on_path(self):
        exe = shutil.which("python3")
        if not exe or python_version("python3") != "3.11":
            skip_missing("CPython 3.11 as python3 on PATH")
        self.record_split("python3")  # as a user types it (on a pyenv machine: a shim script that execs it)

    def test_python__launch_other_python_311(self):
        exes = other_pythons_311()
        if not exes:
            skip_missing("a second CPython 3.11", "pyenv: ~/.pyenv/versions/3.11*")
        for exe in exes:
            with self.subTest(exe=exe):
                self.record_split(exe)


    def test_python__launch_python_312(self):
        exes = pythons_312()
        if not exes:
            skip_missing("CPython 3.12", "pyenv: ~/.pyenv/versions/3.12*")
        self.record_split(exes[0])


class PythonAttach(TempDir):
    def start_service(self, exe):
        p = subprocess.Popen([exe, SERVICE], stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (p.kill(), p.wait(), p.stdout.close()))
        prog = Progress(p)
        self.assertTrue(wait_until(lambda: prog.count() >= 3, timeout=20), "the service did not start")
        return p, prog

    def test_python__attach_keeps_split(self):
        exe = debian_python() or (other_pythons_311() or [None])[0]
        if not exe:
            skip_missing("CPython 3.11", "Debian python3.11 or pyenv")
        p, _ = self.start_service(exe)
        # Attach at 500 Hz a few times to the running service: the shares are summed over the attaches, and the
        # service goes on. What attaching costs the service is a speed figure: bench/python.sh measures it
        # against perf in the same run (make bench), not this test.
        rows = []
        for i in range(4):
            out = self.path("attach%d.folded" % i)
            r = plumb("record", "--pid", str(p.pid), "--seconds", "1", "--interval", "0.002", "-o", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("with python/", r.stderr)
            rows += read_folded(out)
        got = shares(rows, list(WANT))
        for name, want in WANT.items():
            self.assertAlmostEqual(got[name], want, delta=share_tolerance(rows, 3.0), msg=repr(got))
        self.assertIsNone(p.poll(), "the service must keep running")

    def test_python__thread_names_312(self):
        exes = pythons_312()
        if not exes:
            skip_missing("CPython 3.12", "pyenv: ~/.pyenv/versions/3.12*")
        p, _ = self.start_service(exes[0])
        wall = self.path("wall312.folded")
        r = plumb("record", "--pid", str(p.pid), "--seconds", "1", "--mode", "wall", "--threads", "-o", wall)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = read_folded(wall)
        roots = {fr[0] for fr, _ in rows}
        self.assertTrue(any(re.fullmatch(r"idler \(\d+\)", r) for r in roots), roots)
        self.assertTrue(any(re.fullmatch(r"MainThread \(%d\)" % p.pid, r) for r in roots), roots)
        self.assertGreater(frames_matching(rows, r"^idle \(python/service\.py:\d+\)$"), 0)

    def test_python__attach_missing_pid(self):
        r = plumb("record", "--pid", "999999999", "--seconds", "1", "-o", self.path("x.folded"))
        self.assertEqual(r.returncode, 2, r.stderr)


class PythonNative(TempDir):
    def test_python__native_merges_c_extension(self):
        exe = debian_python() or (other_pythons_311() or [None])[0]
        if not exe:
            skip_missing("CPython 3.11", "Debian python3.11 or pyenv")
        out = self.path("native.folded")
        r = plumb("record", "--native", "-o", out, "--", exe, NATIVE, "2", cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("--native unavailable", r.stderr)
        rows = read_folded(out)
        total = sum(c for _, c in rows)
        # compress_half's Python frame sits above (outside) the native frames of zlib's compressor
        in_zlib = 0
        for fr, c in rows:
            idx = [i for i, f in enumerate(fr) if f.startswith("compress_half (python/native.py:")]
            if idx and any("libz.so" in f or "zlib" in f for f in fr[idx[0] + 1:]):
                in_zlib += c
        self.assertGreater(in_zlib, total * 0.25, "compress_half above libz frames: %d of %d" % (in_zlib, total))
        # native frames above, too: the interpreter's own entry (Py_RunMain ... PyEval_EvalCode) outside <module>
        outer = 0
        for fr, c in rows:
            mod = [i for i, f in enumerate(fr) if f.startswith("<module> (python/native.py:")]
            if mod and any(f.startswith(("Py_RunMain ", "PyEval_EvalCode ", "Py_BytesMain ")) for f in fr[:mod[0]]):
                outer += c
        self.assertGreater(outer, total * 0.5, "native frames above the Python ones: %d of %d" % (outer, total))
        # and evaluation-loop frames are replaced by Python frames (a rare sample whose Python chain changed
        # between the kernel's sample and our read may keep one)
        left = frames_matching(rows, r"^_PyEval_EvalFrameDefault")
        self.assertLess(left, total * 0.02, "evaluation-loop frames left in %d of %d samples" % (left, total))
        sh = shares(rows, ["compress_half", "spin_half"])
        self.assertGreater(sh["spin_half"], 20.0, repr(sh))

    def test_python__native_intervals_are_random(self):
        # docs/design.md §5.2: half the interval plus an exponential half, so the gaps between a busy thread's
        # samples spread with a coefficient of variation of 0.5; a fixed period read 0.03 (over ~300 gaps the
        # estimate's error is ~0.05)
        exe = debian_python() or (other_pythons_311() or [None])[0]
        if not exe:
            skip_missing("CPython 3.11", "Debian python3.11 or pyenv")
        out = self.path("native.json")
        r = plumb("record", "--native", "--interval", "0.002", "-o", out, "--",
                  exe, os.path.join(PYTARGETS, "funcs.py"), "0.6", cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        main_thread = max(doc["threads"], key=lambda t: len(t["samples"]["time"]))
        times = main_thread["samples"]["time"]
        self.assertGreater(len(times), 150, r.stderr)
        gaps = [b - a for a, b in zip(times, times[1:])]
        cv = statistics.pstdev(gaps) / statistics.mean(gaps)
        self.assertGreater(cv, 0.3, "the gaps between samples hardly vary: the period is fixed")


STANDIN = r'''#!/bin/sh
# a py-spy stand-in: records its arguments and writes folded stacks to --output
out=""
prev=""
for a in "$@"; do
	[ "$prev" = "--output" ] && out="$a"
	prev="$a"
done
echo "$@" > "$(dirname "$0")/args.txt"
cat > "$out" <<'EOT'
<module> (/home/someone/proj/app/main.py:40);serve (/home/someone/proj/app/server.py:12);handle (/home/someone/proj/app/server.py:30) 60
<module> (/home/someone/proj/app/main.py:40);connect https://bob:hunter2@db.example.com/x (db/conn.py:3) 40
EOT
echo "py-spy> Wrote raw flamegraph data"
'''


def pyspy_elsewhere():
    """A real py-spy in a probed system folder would win over the stand-in."""
    return [d for d in ("/usr/local/bin", "/opt/homebrew/bin", "/usr/bin", "/bin")
            if os.path.exists(os.path.join(d, "py-spy"))]


class PySpyBackend(TempDir):
    def test_python__pyspy_missing_exits_3(self):
        if pyspy_elsewhere():
            skip_installed("py-spy", pyspy_elsewhere())
        home = self.path("home")
        os.makedirs(home)
        r = plumb("record", "--backend", "py-spy", "--pid", str(os.getpid()), "--seconds", "1",
                  "-o", self.path("x.folded"), extra_env={"HOME": home, "PATH": "/usr/bin:/bin"})
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("py-spy", r.stderr)
        self.assertIn("without --backend", r.stderr)
        self.assertFalse(os.path.exists(self.path("x.folded")))

    def test_python__pyspy_standin_in_probed_folder(self):
        if pyspy_elsewhere():
            skip_installed("py-spy", pyspy_elsewhere())
        home = self.path("home")
        bindir = os.path.join(home, ".local", "bin")
        os.makedirs(bindir)
        exe = os.path.join(bindir, "py-spy")
        with open(exe, "w") as f:
            f.write(STANDIN)
        os.chmod(exe, stat.S_IRWXU)
        out = self.path("spy.folded")
        r = plumb("record", "--backend", "py-spy", "--pid", str(os.getpid()), "--seconds", "1", "-o", out,
                  extra_env={"HOME": home, "PATH": "/usr/bin:/bin"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("with py-spy/", r.stderr)
        with open(os.path.join(bindir, "args.txt")) as f:
            args = f.read().split()
        self.assertEqual(args[:3], ["record", "--format", "raw"])
        self.assertIn("--pid", args)
        self.assertEqual(args[args.index("--pid") + 1], str(os.getpid()))
        rows = read_folded(out)
        labels = {f for fr, _ in rows for f in fr}
        self.assertIn("handle (app/server.py:30)", labels)
        self.assertIn("<module> (app/main.py:40)", labels)
        with open(out) as f:
            text = f.read()
        self.assertNotIn("hunter2", text)
        self.assertNotIn("/home/someone", text)
        self.assertEqual(sum(c for _, c in rows), 100)


if __name__ == "__main__":
    main()
# plumbtest: alone
