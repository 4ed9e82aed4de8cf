"""The progress line (docs/design.md §3.7, base/progress.h): `record` on a terminal shows elapsed time, samples and
the effective rate on one line that updates at most ~10 times a second once the work has lasted ~2 s, and erases
it before the summary; into a pipe, or in a CI log, it prints none."""
import os
import pty
import re
import select
import subprocess
import time
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
    def record_args(self, seconds="3.5"):
        """A record of split that lasts `seconds`: 3.5 gives ~15 redraws of the line, which appears after 2 s of
        work; 2.8 is long enough for a test that it does not appear (it would have been drawn ~8 times)."""
        return ["record", "-o", self.path("p.folded"), "--", target("split"), seconds]

    def sleep_args(self, seconds="2.8"):
        """The same length of recording of a process that sleeps (--mode wall samples it): the line is the
        session's whatever it samples, and the suite's CPU goes to the tests that need a busy target."""
        return ["record", "--mode", "wall", "-o", self.path("w.folded"), "--", "sleep", seconds]

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
        p = subprocess.Popen(["sleep", "8"], stdout=subprocess.DEVNULL)
        try:
            rc, seen = run_on_terminal(["record", "--mode", "wall", "--pid", str(p.pid), "--seconds", "3", "-o",
                                        self.path("a.folded")])
        finally:
            p.kill()
            p.wait()
        self.assertEqual(rc, 0, seen)
        frames = re.findall(rb"\r(recording pid %d \(sleep\)): ([\d.]+)s, [\d,]+ samples?, \d+/s effective\x1b\[K"
                            % p.pid, seen)
        self.assertGreaterEqual(len(frames), 3, seen[-800:])

    def test_no_line_into_a_pipe(self):
        r = subprocess.run([PLUMB, *self.sleep_args()], env=env(), capture_output=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn(b"\r", r.stderr)
        self.assertNotIn(b"recording", r.stderr)
        self.assertIn(b"Sampled", r.stderr)

    def test_no_line_in_a_ci_log_or_on_a_dumb_terminal(self):
        for extra in ({"CI": "true"}, {"TERM": "dumb"}, {"PLUMB_PROGRESS": "0"}):
            with self.subTest(extra=extra):
                rc, seen = run_on_terminal(self.sleep_args(), extra=extra, drop=())
                self.assertEqual(rc, 0, seen)
                self.assertIn(b"Sampled", seen)
                self.assertNotIn(b"recording sleep", seen)

    def test_short_work_stays_silent(self):
        rc, seen = run_on_terminal(["record", "-o", self.path("s.folded"), "--", target("split"), "0.5"])
        self.assertEqual(rc, 0, seen)
        self.assertNotIn(b"recording split", seen)



class ConvertProgress(TempDir):
    """issue 16: a long `convert` said nothing, even on a terminal. Input fed slowly through stdin for ~3.5 s: the
    terminal sees "reading stdin: N kB" grow and erased at the end; a pipe sees nothing."""

    def feed(self, stderr):
        r, w = os.pipe()
        e = {k: v for k, v in env().items() if k != "CI"}
        e["TERM"] = "xterm"
        p = subprocess.Popen([PLUMB, "convert", "-", "-o", self.path("c.folded")], env=e, stdin=r,
                             stdout=subprocess.DEVNULL, stderr=stderr)
        os.close(r)
        return p, w

    def test_the_line_grows_on_a_terminal(self):
        master, slave = pty.openpty()
        p, w = self.feed(slave)
        os.close(slave)
        seen = b""
        for _ in range(30):
            os.write(w, b"main;work 10\n" * 2000)
            if select.select([master], [], [], 0.12)[0]:
                seen += os.read(master, 65536)
        os.close(w)
        self.assertEqual(p.wait(timeout=60), 0)
        while select.select([master], [], [], 0.5)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        sizes = [float(x) for x in re.findall(rb"\rreading stdin: ([\d.]+) kB\x1b\[K", seen)]
        self.assertGreaterEqual(len(sizes), 3, seen[-400:])
        self.assertEqual(sizes, sorted(sizes))
        self.assertGreater(sizes[-1], sizes[0])
        self.assertTrue(seen.endswith(b"\r\x1b[K"), seen[-100:])

    def test_no_line_into_a_pipe(self):
        p, w = self.feed(subprocess.PIPE)
        for _ in range(25):
            os.write(w, b"main;work 10\n" * 2000)
            time.sleep(0.12)
        os.close(w)
        err = p.communicate(timeout=60)[1]
        self.assertEqual(p.returncode, 0, err)
        self.assertNotIn(b"reading", err)


if __name__ == "__main__":
    unittest.main()
# plumbtest: light
