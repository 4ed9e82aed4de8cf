"""The target's fate (docs/design.md §5.5, §3.2): a command plumb launched belongs to it — when the --seconds
window ends or plumb is interrupted, the command and what it started get the signal (SIGINT, then SIGTERM, then
SIGKILL after a grace), are waited for, and the summary says how the command ended; an attached process is never
signalled. Every backend reports an exit status or a killing signal; a launched command or --call that failed on
its own makes record exit 1 with the profile written."""
import os
import pty
import re
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

from plumbtest import PLUMB, SANITIZED, TempDir, env, plumb, read_folded, target, wait_until

SPLIT = target("split")
CALLME = target("libcallme.so")
PY_BURN = "import os, sys, time\nt = time.process_time()\nwhile time.process_time() < t + %s:\n    pass\n"


# Under `make asan` the --call host is the sanitized plumb, whose ASan handles SIGSEGV itself.
real_build = unittest.skipIf(SANITIZED,
                             "sanitizer build: the --call host is sanitized (ASan handles fatal signals)")


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a SIGSEGV test leaves no core file behind


def marked(mark):
    """Live processes whose environment holds PLUMB_FATE_MARK=mark (every descendant of a marked command)."""
    found = []
    needle = ("PLUMB_FATE_MARK=%s" % mark).encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if needle not in f.read().split(b"\0"):
                    continue
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rpartition(")")[2].split()[0] in ("Z", "X"):
                    continue
        except OSError:
            continue
        found.append(int(pid))
    return found


class Marked(TempDir):
    """Runs record with a mark in its environment, which every process the target starts inherits."""

    def setUp(self):
        super().setUp()
        self.mark = uuid.uuid4().hex
        self.addCleanup(self.kill_leftovers)

    def kill_leftovers(self):
        for pid in marked(self.mark):
            os.kill(pid, signal.SIGKILL)

    def record(self, *args, timeout=120):
        return subprocess.run([PLUMB, "record", *args], env=env(PLUMB_FATE_MARK=self.mark), capture_output=True,
                              text=True, timeout=timeout, preexec_fn=no_core)

    def assert_written(self, out):
        self.assertTrue(os.path.exists(out), "no profile was written")
        self.assertGreater(sum(c for _, c in read_folded(out)), 0)


class Fate(Marked):

    def test_seconds_window_ends_the_command_and_what_it_started(self):
        out = self.path("w.folded")
        t0 = time.monotonic()
        r = self.record("--seconds", "1", "-o", out, "--", "sh", "-c", "%s 60 & %s 60; wait" % (SPLIT, SPLIT))
        took = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sh was killed by SIGINT (plumb sent it when the 1s window ended).", r.stderr)
        self.assertEqual(marked(self.mark), [], "record left the command's processes running")
        self.assertLess(took, 1 + 2 + 30, r.stderr)
        self.assert_written(out)

    def test_a_command_ignoring_sigint_and_sigterm_gets_sigkill(self):
        out = self.path("k.folded")
        t0 = time.monotonic()
        r = self.record("--seconds", "1", "-o", out, "--", "sh", "-c", "trap '' INT TERM; while :; do :; done")
        took = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sh was killed by SIGKILL (plumb sent SIGINT when the 1s window ended, then SIGTERM, then "
                      "SIGKILL).", r.stderr)
        self.assertEqual(marked(self.mark), [])
        self.assertGreater(took, 1 + 2 + 2 - 0.5, "the grace before SIGTERM and SIGKILL was cut short")
        self.assert_written(out)

    def signal_plumb(self, sig, *args):
        """Starts a long record, sends sig to plumb alone once sampling is under way; returns (status, stderr)."""
        with tempfile.TemporaryFile() as err:
            p = subprocess.Popen([PLUMB, "record", *args], env=env(PLUMB_FATE_MARK=self.mark),
                                 stdout=subprocess.DEVNULL, stderr=err, preexec_fn=no_core)
            try:
                self.assertTrue(wait_until(lambda: marked(self.mark), timeout=20), "the target never started")
                time.sleep(0.7)  # sampling is under way
                p.send_signal(sig)
                p.wait(timeout=60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            err.seek(0)
            return p.returncode, err.read().decode()

    def test_sigint_and_sigterm_to_plumb_alone_are_passed_on(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            with self.subTest(sig=sig.name):
                out = self.path("s.folded")
                rc, err = self.signal_plumb(sig, "-o", out, "--", SPLIT, "60")
                self.assertEqual(rc, 0, err)
                self.assertIn("split was killed by %s (plumb passed it on)." % sig.name, err)
                self.assertEqual(marked(self.mark), [], "the command outlived plumb")
                self.assert_written(out)
                os.unlink(out)

    def test_ctrl_c_on_a_terminal_reaches_the_command_once(self):
        # the terminal sends SIGINT to the whole foreground group, the command included: plumb does not send it
        # a second one (a program that handles SIGINT would see two), it waits for the command and writes
        out = self.path("t.folded")
        pid, fd = pty.fork()
        if pid == 0:
            os.environ.update(env(PLUMB_FATE_MARK=self.mark))
            os.execv(PLUMB, [PLUMB, "record", "-o", out, "--", SPLIT, "60"])
        try:
            self.assertTrue(wait_until(lambda: marked(self.mark), timeout=20), "the target never started")
            time.sleep(0.7)
            os.write(fd, b"\x03")
            seen = b""
            while True:
                ready, _, _ = select.select([fd], [], [], 30)
                if not ready:
                    break
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        finally:
            _, status = os.waitpid(pid, 0)
            os.close(fd)
        self.assertEqual(os.waitstatus_to_exitcode(status), 0, seen)
        self.assertIn(b"split was killed by SIGINT (the terminal sent it).", seen)
        self.assertEqual(marked(self.mark), [])
        self.assert_written(out)

    def test_an_attached_process_is_never_signalled(self):
        for backend in ("perf_event", "ptrace"):
            with self.subTest(backend=backend):
                p = subprocess.Popen([SPLIT, "60"], stdout=subprocess.DEVNULL)  # killed below (8 s ended under CI load)
                try:
                    wait_until(lambda: open("/proc/%d/stat" % p.pid).read().split()[13] != "0", timeout=5)
                    out = self.path("a.folded")
                    r = plumb("record", "--backend", backend, "--pid", str(p.pid), "--seconds", "1", "-o", out)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertRegex(r.stderr, r"pid %d \(split\) is still running\." % p.pid)
                    self.assertIsNone(p.poll(), "the attached process was ended")
                finally:
                    p.kill()
                    p.wait()


class FateByBackend(Marked):
    """exit 3 and SIGSEGV, as every backend reports them."""

    def launched(self, backend_args, command, want):
        out = self.path("f.folded")
        r = self.record(*backend_args, "-o", out, "--", *command)
        self.assertEqual(r.returncode, 1, "a failed command is exit 1: " + r.stderr)
        self.assertIn(want, r.stderr)
        self.assertIn("Wrote", r.stderr)
        self.assert_written(out)
        return r

    def test_perf_event_and_inprocess(self):
        for backend in ("perf_event", "inprocess"):
            with self.subTest(backend=backend):
                r = self.launched(["--backend", backend], ["sh", "-c", "%s 0.4 >/dev/null; exit 3" % SPLIT],
                                  "lost. sh exited with 3.")
                self.assertIn("with %s/" % backend, r.stderr)
                self.launched(["--backend", backend], ["sh", "-c", "%s 0.4 >/dev/null; kill -SEGV $$" % SPLIT],
                              "lost. sh was killed by SIGSEGV.")

    def test_python(self):
        r = self.launched([], [sys.executable, "-c", PY_BURN % 0.3 + "sys.exit(3)"], "python3")
        self.assertRegex(r.stderr, r"with python/python; \d+ lost\. python3[.\d]* exited with 3\.")
        r = self.launched([], [sys.executable, "-c", PY_BURN % 0.3 + "os.kill(os.getpid(), 11)"], "python3")
        self.assertRegex(r.stderr, r"with python/python; \d+ lost\. python3[.\d]* was killed by SIGSEGV\.")

    def test_ptrace_attach(self):
        for code, want in (("os._exit(3)", "exited with 3 during the attach."),
                           ("os.kill(os.getpid(), 11)", "was killed by SIGSEGV during the attach.")):
            with self.subTest(want=want):
                p = subprocess.Popen([sys.executable, "-c", PY_BURN % 1.5 + code], preexec_fn=no_core)
                try:
                    wait_until(lambda: open("/proc/%d/stat" % p.pid).read().split()[13] != "0", timeout=5)
                    out = self.path("p.folded")
                    r = plumb("record", "--backend", "ptrace", "--pid", str(p.pid), "--seconds", "20", "-o", out)
                    # an attached process is not plumb's: its end is reported, and is no failure of record
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertRegex(r.stderr, r"pid %d \(python3[.\d]*\) %s" % (p.pid, re.escape(want)))
                    self.assert_written(out)
                finally:
                    if p.poll() is None:
                        p.kill()
                    p.wait()

    def test_call_returning_three(self):
        out = self.path("c.folded")
        r = self.record("--call", CALLME + ":returns_three", "-o", out)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("returns_three() returned 3.", r.stderr)
        self.assert_written(out)

    @real_build
    def test_call_killed_by_sigsegv(self):
        out = self.path("c.folded")
        r = self.record("--call", CALLME + ":crash_segv", "-o", out)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("crash_segv() was killed by SIGSEGV", r.stderr)
        self.assert_written(out)

    def test_call_returning_twice_reports_the_hosts_return(self):
        # the function forks; the forked copy returns 0 from the same call after the host returned 5
        for _ in range(3):
            r = self.record("--call", CALLME + ":fork_returns_five", "-o", self.path("t.folded"))
            self.assertIn("fork_returns_five() returned 5.", r.stderr)
            self.assertEqual(r.returncode, 1, r.stderr)

    def setsid_call(self, symbol):
        # output to files: a child left running would hold a pipe open, and reading it to its end would wait
        pidfile, errfile = self.path("child.pid"), self.path("err.txt")
        with open(errfile, "w") as err, open(self.path("out.txt"), "w") as out:
            rc = subprocess.run([PLUMB, "record", "--call", CALLME + ":" + symbol, "-o", self.path("s.folded")],
                                env=env(PLUMB_FATE_MARK=self.mark, CALLME_PIDFILE=pidfile), stdout=out, stderr=err,
                                timeout=120, preexec_fn=no_core).returncode
        with open(errfile) as f:
            stderr = f.read()
        with open(pidfile) as f:
            child = int(f.read())
        self.assertNotIn(child, marked(self.mark), "the setsid child is still running after plumb exited")
        self.assertEqual(marked(self.mark), [])
        return rc, stderr

    def test_call_ends_the_setsid_child_it_started(self):
        # issue 27: a function that forks a child which leaves the session (setsid) left it running after plumb
        # exited; the --call host is a subreaper and ends what the call started before it reports the return
        rc, stderr = self.setsid_call("setsid_child")
        self.assertIn("setsid_child() returned 0.", stderr)
        self.assertEqual(rc, 0, stderr)

    @real_build
    def test_call_that_crashes_ends_the_setsid_child_too(self):
        # the host dies first: its orphan comes back to plumb (a subreaper during --call), which ends it
        rc, stderr = self.setsid_call("setsid_child_then_segv")
        self.assertIn("setsid_child_then_segv() was killed by SIGSEGV", stderr)
        self.assertEqual(rc, 1, stderr)

    @real_build
    def test_one_tick_is_one_tick(self):
        # one sample a second: the crash's own stack is the only sample
        r = self.record("--interval", "1", "--call", CALLME + ":crash_segv", "-o", self.path("o.folded"))
        self.assertIn("Sampled 1 tick over", r.stderr)


if __name__ == "__main__":
    unittest.main()
# plumbtest: slow
