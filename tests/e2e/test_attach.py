"""End-to-end: an attach with the perf_event backend samples what the process does after it, however short-lived
its threads: shortthreads does all its work in threads that live ~1 ms, shorter than the 5 ms interval, which a
per-thread timer (inherited events start theirs afresh in each new thread) never samples. Per-CPU events kept to
the process sample them as often as any other code (docs/design.md §5.1): >= 80% of the CPU time the target
spent during the window is in the profile, in burst_work."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import TempDir, main, plumb, read_folded, target  # noqa: E402


def cpu_seconds(pid):
    fields = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class AttachThreads(TempDir):
    def test_short_lived_threads_are_sampled(self):
        proc = subprocess.Popen([target("shortthreads"), "30"], stdout=subprocess.PIPE)
        try:
            proc.stdout.readline()  # "ready"
            out = self.path("st.folded")
            c0, w0 = cpu_seconds(proc.pid), time.monotonic()
            r = plumb("record", "--backend", "perf_event", "--pid", str(proc.pid), "--seconds", "3", "-o", out,
                      timeout=60)
            c1, w1 = cpu_seconds(proc.pid), time.monotonic()
        finally:
            proc.kill()
            proc.wait()
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r"Sampled (\d+) ticks over ([\d.]+)s \(.*?, ([\d.]+)s requested\)", r.stderr)
        self.assertTrue(m, r.stderr)
        ticks, window, interval = int(m.group(1)), float(m.group(2)), float(m.group(3))
        # the target runs at a steady rate: what it spent in the window is that rate times the window
        expected = (c1 - c0) / (w1 - w0) * window
        self.assertGreater(expected, 0.3, "the target did not run")
        rows = read_folded(out)
        burst = sum(n for frames, n in rows if any(f.startswith("burst_work") for f in frames))
        self.assertGreaterEqual(ticks * interval, 0.8 * expected,
                                "%d samples of %.3f s for %.2f s of CPU" % (ticks, interval, expected))
        # about a tenth of its CPU is the kernel creating and ending threads (clone, exit, madvise of a stack)
        self.assertGreaterEqual(burst, 0.8 * ticks, rows[:5])


if __name__ == "__main__":
    main()
# plumbtest: alone
