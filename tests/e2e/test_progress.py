"""The progress line (docs/design.md §3.7, base/progress.h): `record` on a terminal shows elapsed time, samples and
the effective rate on one line that updates at most ~10 times a second once the work has lasted ~2 s, and erases
it before the summary; into a pipe, or in a CI log, it prints none."""
import os
import pty
import re
import select
import subprocess
import unittest

from plumbtest import PLUMB, TempDir, env, target

FRAME = re.compile(rb"\r(recording split): ([\d.]+)s, ([\d,]+) samples?, (\d+)/s effective\x1b\[K")


def run_on_terminal(args, extra=None, drop=("CI",)):
    """Runs plumb with stderr on a new pseudo-terminal; returns (exit status, bytes the terminal got)."""
    e = {k: v for k, v in env(**(extra or {})).items() if k not in drop}
    e.setdefault("TERM", "xterm")
    master, slave = pty.openpty()
    p = subprocess.Popen([PLUMB, *args], env=e, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO once the child has closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    return p.wait(timeout=60), seen


class RecordProgress(TempDir):
    def record_args(self):
        return ["record", "-o", self.path("p.folded"), "--", target("split"), "3.5"]

    def test_the_line_updates_on_a_terminal(self):
        rc, seen = run_on_terminal(self.record_args())
        self.assertEqual(rc, 0, seen)
        frames = FRAME.findall(seen)
        self.assertGreaterEqual(len(frames), 3, seen[-800:])
        elapsed = [float(f[1]) for f in frames]
        samples = [int(f[2].replace(b",", b"")) for f in frames]
        self.assertEqual(elapsed, sorted(elapsed), "elapsed time went back")
        self.assertEqual(samples, sorted(samples))
        self.assertGreater(samples[-1], samples[0], "the sample count never moved")
        self.assertGreaterEqual(elapsed[0], 1.5, "drawn before the work had lasted ~2 s")
        # at most ~10 redraws a second (a little slack for the first and last)
        self.assertLessEqual(len(frames), 10 * (elapsed[-1] - elapsed[0]) + 3, frames)
        # erased before the summary, which starts on a clean line
        self.assertRegex(seen, rb"\x1b\[K\r\x1b\[KSampled \d+ ticks")

    def test_an_attach_shows_the_line_too(self):
        # issue 16: a long attach printed nothing until its end
        p = subprocess.Popen([target("split"), "8"], stdout=subprocess.DEVNULL)
        try:
            rc, seen = run_on_terminal(["record", "--pid", str(p.pid), "--seconds", "3", "-o", self.path("a.folded")])
        finally:
            p.kill()
            p.wait()
        self.assertEqual(rc, 0, seen)
        frames = re.findall(rb"\r(recording pid %d \(split\)): ([\d.]+)s, [\d,]+ samples?, \d+/s effective\x1b\[K"
                            % p.pid, seen)
        self.assertGreaterEqual(len(frames), 3, seen[-800:])

    def test_no_line_into_a_pipe(self):
        r = subprocess.run([PLUMB, *self.record_args()], env=env(), capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"\r", r.stderr)
        self.assertNotIn(b"recording", r.stderr)
        self.assertIn(b"Sampled", r.stderr)

    def test_no_line_in_a_ci_log_or_on_a_dumb_terminal(self):
        for extra in ({"CI": "true"}, {"TERM": "dumb"}, {"PLUMB_PROGRESS": "0"}):
            with self.subTest(extra=extra):
                rc, seen = run_on_terminal(self.record_args(), extra=extra, drop=())
                self.assertEqual(rc, 0, seen)
                self.assertNotIn(b"recording split", seen)

    def test_short_work_stays_silent(self):
        rc, seen = run_on_terminal(["record", "-o", self.path("s.folded"), "--", target("split"), "0.5"])
        self.assertEqual(rc, 0, seen)
        self.assertNotIn(b"recording split", seen)


if __name__ == "__main__":
    unittest.main()
