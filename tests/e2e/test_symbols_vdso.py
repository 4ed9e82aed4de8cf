"""vDSO frames are named: a program that spends its time in clock_gettime(CLOCK_MONOTONIC) runs the vDSO's
code, which no file on disk holds; plumb names it from its own copy of the vDSO (the same image in every process
on one kernel), as perf does (`__vdso_clock_gettime ([vdso])`), for launched and attached processes (perf_event and
ptrace backends) and for the in-process sampler."""
import os
import re
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from plumbtest import TempDir, main, plumb, read_folded, target  # noqa: E402

VDSO_LABEL = re.compile(r"^(\S+) \(\[vdso\]\)$")


def vdso_share(rows):
    """(share of samples with a named vDSO frame below read_clocks, the vDSO labels seen)."""
    total = sum(c for _, c in rows)
    named = 0
    labels = set()
    for frames, count in rows:
        names = [f.split(" ")[0] for f in frames]
        for i, f in enumerate(frames):
            m = VDSO_LABEL.match(f)
            if not m:
                continue
            labels.add(f)
            if m.group(1) != "[unknown]" and "clock_gettime" in m.group(1) and "read_clocks" in names[:i]:
                named += count
                break
    return (named / total if total else 0.0), labels


class VdsoFrames(TempDir):
    def check(self, out, what):
        rows = read_folded(out)
        share, labels = vdso_share(rows)
        # the target is in the vDSO ~95% of its time; leave room for a loaded machine
        self.assertGreater(share, 0.6, (what, labels, rows[:3]))

    def test_launched_command(self):
        for build in ("vdsoclock", "vdsoclock-nofp"):
            out = self.path(build + ".folded")
            r = plumb("record", "--interval", "0.002", "-o", out, "--", target(build), "0.7")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.check(out, build)

    def test_attached_process(self):
        for backend in ("perf_event", "ptrace"):
            p = subprocess.Popen([target("vdsoclock"), "5"], stdout=subprocess.DEVNULL)
            try:
                out = self.path(backend + ".folded")
                r = plumb("record", "--backend", backend, "--pid", str(p.pid), "--seconds", "1", "--interval",
                          "0.005", "-o", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.check(out, "attach " + backend)
            finally:
                p.kill()
                p.wait()

    def test_inprocess_sampler(self):
        out = self.path("inproc.folded")
        r = plumb("record", "--backend", "inprocess", "--interval", "0.002", "-o", out, "--", target("vdsoclock"),
                  "0.7")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check(out, "inprocess")


if __name__ == "__main__":
    main()
