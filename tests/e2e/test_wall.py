"""End-to-end: --mode wall counts every thread at every tick, running or not. worksleep-nofp alternates 5 ms of
CPU work (work_path) and 5 ms of sleep (sleep_path): wall mode puts about half the samples in sleep_path (with
the stack that waits), cpu mode nearly all of them in work_path. A preemption inside work_path stretches it
past 5 ms on a loaded machine, so "half" is the split the target measured with its own clock."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import TempDir, main, plumb, read_folded, shares, target  # noqa: E402


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


if __name__ == "__main__":
    main()
