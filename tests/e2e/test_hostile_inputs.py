"""The bench and metrics readers on inputs that never end (docs/design.md §3.5): /dev/zero, /dev/urandom and a
FIFO fed forever, given as a suite, a catalog, an artifact or a recording, end with exit 5 within 10 s and
say why (a device is refused unread; a stream stops at its cap). The profile readers' side is the model's
(test_convert and friends)."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import PLUMB, TempDir, env, main  # noqa: E402

DEADLINE_S = 10


class EndlessInputs(TempDir):
    def run_bounded(self, args, what):
        t0 = time.monotonic()
        p = subprocess.run([PLUMB, *args], env=env(True), capture_output=True, text=True, timeout=60)
        took = time.monotonic() - t0
        self.assertEqual(p.returncode, 5, "%s: %s" % (what, p.stderr))
        self.assertLess(took, DEADLINE_S, "%s took %.1f s" % (what, took))
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        return p.stderr

    def fifo_fed_forever(self):
        fifo = self.path("endless")
        if not os.path.exists(fifo):
            os.mkfifo(fifo)
        feeder = subprocess.Popen(["sh", "-c", "exec yes '[case x] run = true' > %s" % fifo],
                                  stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: (feeder.kill(), feeder.wait()))
        return fifo

    def commands(self, src):
        ok_suite = self.path("ok.ini")
        with open(ok_suite, "w") as f:
            f.write("[case x]\nrun = true\n")
        return [
            (["bench", "report", src], "artifact"),
            (["bench", "compare", src, src], "artifact"),
            (["bench", "run", src, "--out", self.path("o.json")], "suite"),
            (["bench", "doctor", "--suite", src], "suite"),
            (["bench", "report", "--catalog", src, src], "catalog or artifact"),
            (["metrics", "--path", src], "recording"),
        ]

    def test_devices_are_refused_unread(self):
        for dev in ("/dev/zero", "/dev/urandom"):
            for args, what in self.commands(dev):
                with self.subTest(dev=dev, args=args):
                    err = self.run_bounded(args, " ".join(args))
                    self.assertIn(dev, err)

    def test_a_fifo_that_never_ends_stops_at_the_cap(self):
        for args, what in self.commands(self.path("endless")):
            if args[0] == "metrics":
                continue  # a recording must be a regular file: refused unread, as the devices above
            with self.subTest(args=args):
                self.fifo_fed_forever()
                err = self.run_bounded(args, " ".join(args))
                self.assertIn("cap", err)


if __name__ == "__main__":
    main()
