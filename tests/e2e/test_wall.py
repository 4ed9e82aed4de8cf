"""End-to-end: --mode wall counts every thread at every tick, running or not. worksleep-nofp alternates 5 ms of
CPU work (work_path) and 5 ms of sleep (sleep_path): wall mode puts about half the samples in sleep_path (with
the stack that waits), cpu mode nearly all of them in work_path. A preemption inside work_path stretches it
past 5 ms on a loaded machine, so "half" is the split the target measured with its own clock."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import PLUMB, TempDir, env, main, needs_tool, plumb, read_folded, shares, target  # noqa: E402


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

    def test_refused_without_kernel_sampling_says_why(self):
        # Context switches happen in the kernel: without the right to sample it (perf_event_paranoid >= 2 and no
        # CAP_PERFMON) wall mode is refused with the reason; run as nobody with no capabilities to see it (a
        # machine that lets everyone sample the kernel must let wall mode run instead).
        level = paranoid()
        self.assertIsNotNone(level, "no /proc/sys/kernel/perf_event_paranoid")
        drop = []
        if os.geteuid() == 0:  # as root, drop to nobody without capabilities; as a user, run as is
            drop = [needs_tool("setpriv", "Debian util-linux"), "--reuid=65534", "--regid=65534", "--clear-groups",
                    "--inh-caps=-all"]
        os.chmod(self.tmp, 0o777)  # nobody must reach the copies and be able to write the output
        exe, tgt = self.path("plumb"), self.path("worksleep")
        shutil.copy(PLUMB, exe)
        shutil.copy(target("worksleep-nofp"), tgt)
        r = subprocess.run(drop + [exe, "record", "--mode", "wall", "-o", self.path("x.folded"), "--", tgt, "0.2"],
                           env=env(), capture_output=True, text=True, timeout=60)
        if level < 2:  # the kernel lets anyone sample it: wall mode is not refused
            self.assertEqual(r.returncode, 0, r.stderr)
            return
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("perf_event_paranoid = %d" % level, r.stderr)
        self.assertIn("--mode cpu", r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        self.assertFalse(os.path.exists(self.path("x.folded")))


if __name__ == "__main__":
    main()
