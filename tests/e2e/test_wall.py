"""End-to-end: --mode wall counts every thread at every tick, running or not. worksleep-nofp alternates 5 ms of
CPU work (work_path) and 5 ms of sleep (sleep_path): wall mode puts about half the samples in sleep_path (with
the stack that waits), cpu mode nearly all of them in work_path. A preemption inside work_path stretches it
past 5 ms on a loaded machine, so "half" is the split the target measured with its own clock."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import (PLUMB, SANITIZED, TempDir, env, main, needs_tool, plumb, read_folded, shares,  # noqa: E402
                       target)


def paranoid():
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return int(f.read())
    except (OSError, ValueError):
        return None


class WallModeTest(TempDir):
    def record(self, mode):
        out, truth = self.path(mode + ".folded"), self.path(mode + ".truth")
        r = plumb("record", "--mode", mode, "--interval", "0.001", "-o", out, "--", target("worksleep-nofp"), "2",
                  timeout=60, extra_env={"TRUTH": truth})
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(truth) as f:
            work, sleep = (float(x) for x in f.read().split())
        return read_folded(out), 100.0 * sleep / (work + sleep)

    def test_wall_mode_counts_the_sleep(self):
        rows, sleep_truth = self.record("wall")
        total = sum(c for _, c in rows)
        # every tick of the 2 s run, running or not (at 1 kHz: about 2000; a loaded machine loses some)
        self.assertGreater(total, 1500)
        got = shares(rows, ["sleep_path", "work_path"])
        msg = "%r, the target measured %.1f%% asleep" % (got, sleep_truth)
        self.assertAlmostEqual(got["sleep_path"], sleep_truth, delta=5.0, msg=msg)
        self.assertGreater(got["work_path"], 100.0 - sleep_truth - 10.0, msg)
        # the waiting stack is the whole user chain down to the sleep call
        sleeping = [fr for fr, _ in rows if any(f.startswith("sleep_path ") for f in fr)]
        self.assertTrue(all(fr[0].startswith("_start") for fr in sleeping), sleeping[:3])

    def test_cpu_mode_sees_only_the_work(self):
        got = shares(self.record("cpu")[0], ["sleep_path", "work_path"])
        self.assertGreater(got["work_path"], 93.0, repr(got))
        self.assertLess(got["sleep_path"], 5.0, repr(got))

    def test_attach_sees_a_thread_blocked_all_along(self):
        # waiter-nofp's second thread sits in read() for its whole life: it never switches while sampled, so only
        # the stack read at attach time can show it; it must count at every tick of the attach.
        proc = subprocess.Popen([target("waiter-nofp"), "20"], stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(proc.stdout.readline().strip(), "ready")
            out = self.path("attach.folded")
            r = plumb("record", "--mode", "wall", "--pid", str(proc.pid), "--seconds", "1", "--interval", "0.002",
                      "-o", out, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = read_folded(out)
        finally:
            proc.kill()
            proc.wait()
        waiting = sum(c for fr, c in rows if any(f.startswith("wait_path ") for f in fr)
                      and any(f.startswith("blocked_main ") for f in fr))
        self.assertGreater(waiting, 400, rows[:4])  # 1 s at 2 ms: ~500
        self.assertLess(waiting, 600)

    def test_effective_rate_is_per_thread(self):
        # waiter has two threads sampled at every tick: the effective rate is per thread, not their sum
        r = plumb("record", "--mode", "wall", "--interval", "0.005", "-o", self.path("w.folded"), "--",
                  target("waiter"), "1.5", timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = re.search(r"\((\d+)/s effective per thread, 0.005s requested\)", r.stderr)
        self.assertTrue(m, r.stderr)
        if not SANITIZED:
            self.assertLess(int(m.group(1)), 200 * 1.3, r.stderr)

    def as_nobody(self, *args, extra_env=None):
        """Runs a copy of plumb as nobody with no capabilities (as root) or as is (as a user)."""
        drop = []
        if os.geteuid() == 0:
            drop = [needs_tool("setpriv", "Debian util-linux"), "--reuid=65534", "--regid=65534", "--clear-groups",
                    "--inh-caps=-all"]
        os.chmod(self.tmp, 0o777)  # nobody must reach the copies and be able to write the output
        exe, tgt = self.path("plumb"), self.path("worksleep")
        shutil.copy(PLUMB, exe)
        shutil.copy(target("worksleep-nofp"), tgt)
        return subprocess.run(drop + [exe, "record", "--mode", "wall", *args, "-o", self.path("x.folded"), "--", tgt,
                                      "0.2"], env=env(**(extra_env or {})), capture_output=True, text=True,
                              timeout=60)

    def test_without_kernel_sampling_perf_event_refuses_and_inprocess_takes_over(self):
        # Context switches happen in the kernel: without the right to sample it (perf_event_paranoid >= 2 and no
        # CAP_PERFMON) perf_event cannot do wall mode and says why; a launched command falls back to the inprocess
        # backend (wall-clock timers in the target), as docs/wall-mode.md says. A machine that lets everyone
        # sample the kernel must let wall mode run with perf_event instead.
        level = paranoid()
        self.assertIsNotNone(level, "no /proc/sys/kernel/perf_event_paranoid")
        r = self.as_nobody("--backend", "perf_event")
        if level < 2:  # the kernel lets anyone sample it: wall mode is not refused
            self.assertEqual(r.returncode, 0, r.stderr)
            return
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("perf_event_paranoid = %d" % level, r.stderr)
        self.assertIn("--mode cpu", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(self.path("x.folded")))
        preload = self.path("libplumb-preload.so")
        shutil.copy(os.path.join(os.path.dirname(PLUMB), "libplumb-preload.so"), preload)
        os.chmod(preload, 0o755)
        r = self.as_nobody(extra_env={"PLUMB_PRELOAD": preload})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("fell back to the inprocess backend", r.stderr)
        self.assertIn("perf_event_paranoid = %d" % level, r.stderr)
        self.assertIn("with inprocess/", r.stderr)
        self.assertIn("wall-clock ticks", r.stderr)
        self.assertGreater(shares(read_folded(self.path("x.folded")), ["sleep_path"])["sleep_path"], 20)

if __name__ == "__main__":
    main()
# plumbtest: alone
