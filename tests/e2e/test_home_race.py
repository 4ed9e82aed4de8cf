"""The plumb home is checked once and then used by its directory descriptor (docs/design.md §3.5): with
$PLUMB_HOME a symbolic link that another process flips, as fast as it can, between root's own 0700 directory and
a `nobody`-owned 0777 one (with the store's directories planted in it), every save either refuses (the home it
opened was the attacker's: exit 6, "belongs to uid 65534") or lands in the real home — never in the attacker's
directory, and no temporary file is left there. Before the home was walked by descriptor, a save checked the
real home and then wrote by path through the re-pointed link (6 of 150 saves landed in the attacker's
directory). Needs root (the attacker's directory belongs to nobody)."""
# plumbtest: slow
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import FIXTURES, TempDir, main, plumb  # noqa: E402

NOBODY = 65534
ROOT = os.geteuid() == 0

# Flips LINK between A and B until stdin closes (symlink + rename, so the link always exists), then leaves it
# at A. Says "ready" once it flips, and at the end how many times it did.
FLIPPER = r"""
import os, sys, threading
link, a, b = sys.argv[1:4]
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
tmp = link + ".flip"
def point(target):
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    os.symlink(target, tmp)
    os.rename(tmp, link)
n = 0
while not stop.is_set():
    point(b)
    point(a)
    n += 1
    if n == 1:
        print("ready", flush=True)
print(n)
"""


@unittest.skipUnless(ROOT, "needs root: the attacker's directory must belong to another user")
class HomeLinkFlip(TempDir):
    def setUp(self):
        super().setUp()
        self.real = self.path("real")
        self.evil = self.path("evil")
        os.mkdir(self.real, 0o700)
        os.mkdir(self.evil)
        # the attacker's home holds every store directory, ready to receive a write by path
        for sub in ("baselines", "baselines/profiles", "baselines/evidence", "metrics", "targets"):
            os.makedirs(os.path.join(self.evil, sub), exist_ok=True)
        for dirpath, dirs, _ in os.walk(self.evil):
            os.chown(dirpath, NOBODY, NOBODY)
            os.chmod(dirpath, 0o777)
        self.home = self.path("home")
        os.symlink(self.real, self.home)
        self.env = {"PLUMB_HOME": self.home}

    def evil_files(self):
        found = []
        for dirpath, _, files in os.walk(self.evil):
            found += [os.path.join(dirpath, f) for f in files]
        return found

    def flipping(self):
        flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, self.home, self.real, self.evil],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.assertEqual(flipper.stdout.readline().strip(), "ready")
        return flipper

    def stop(self, flipper):
        out, _ = flipper.communicate("", timeout=30)
        return int(out) + 1

    def run_flipped(self, argv_of, runs):
        """Runs argv_of(i) `runs` times while the link flips; returns how many saved. Every run that did not
        save must have refused as documented (a home another user owns: exit 6, saying so) — checked after
        what landed in the attacker's directory, which is the first thing to know."""
        flipper = self.flipping()
        saved, odd = 0, []
        try:
            for i in range(runs):
                r = plumb(*argv_of(i), extra_env=self.env, timeout=60)
                if r.returncode == 0:
                    saved += 1
                elif r.returncode != 6 or "belongs to uid %d" % NOBODY not in r.stderr:
                    odd.append("exit %d: %s" % (r.returncode, r.stderr.strip()))
        finally:
            flips = self.stop(flipper)
        self.assertEqual(self.evil_files(), [], "saves or temp files landed in the attacker's directory")
        self.assertEqual(odd[:5], [], "%d runs neither saved nor refused as documented" % len(odd))
        self.assertGreater(flips, runs, "the link was hardly flipped")
        return saved

    def test_profile_baseline_saves_never_land_outside_the_home(self):
        profile = os.path.join(FIXTURES, "folded", "small.folded")
        saved = self.run_flipped(lambda i: ("baseline", "save", profile, "--name", "b%d" % (i % 7), "--force"), 300)
        self.assertEqual(self.evil_files(), [], "saves or temp files landed in the attacker's directory")
        stored = os.listdir(os.path.join(self.real, "baselines", "profiles"))
        self.assertEqual(sorted(f for f in stored if not f.startswith(".")), ["b%d.json" % i for i in range(7)])
        self.assertEqual([f for f in stored if f.startswith(".")], [], "temp files left in the home")
        self.assertGreater(saved, 0)

    def test_bench_baselines_and_metrics_never_land_outside_the_home(self):
        suite = self.path("suite.ini")
        with open(suite, "w") as f:
            f.write("[case t]\nrun = true\n")
        art = self.path("a.json")
        r = plumb("bench", "run", suite, "--repeats", "1", "--warmup", "0", "--out", art, debug=False, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.run_flipped(lambda i: ("bench", "baseline", "save", art, "--name", "e%d" % (i % 3), "--force"), 30)
        self.run_flipped(lambda i: ("metrics", "record", "--every", "0.05", "--name", "m%d" % (i % 3), "--force",
                                    "--", "sleep", "0.1"), 8)
        self.assertEqual(self.evil_files(), [], "saves or temp files landed in the attacker's directory")

    def test_a_baseline_diffed_by_name_is_never_read_from_outside_the_home(self):
        # the attacker plants its own baseline of the same name; `diff NAME` checks the real one and, before the
        # read went by descriptor, read whichever the link pointed to a moment later
        profile = os.path.join(FIXTURES, "folded", "small.folded")
        r = plumb("baseline", "save", profile, "--name", "b", extra_env=self.env, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        forged_home = self.path("forged")
        forged = self.path("forged.folded")
        with open(forged, "w") as f:
            f.write("main;FORGED_function 35\n")
        r = plumb("baseline", "save", forged, "--name", "b", extra_env={"PLUMB_HOME": forged_home}, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        planted = os.path.join(self.evil, "baselines", "profiles", "b.json")
        with open(os.path.join(forged_home, "baselines", "profiles", "b.json"), "rb") as src, \
                open(planted, "wb") as dst:
            dst.write(src.read())
        os.chown(planted, NOBODY, NOBODY)
        flipper = self.flipping()
        read, shown = 0, []
        try:
            for _ in range(150):
                r = plumb("diff", "b", profile, extra_env=self.env, timeout=60)
                if "FORGED" in r.stdout + r.stderr:
                    shown.append(r.returncode)
                elif r.returncode == 0:
                    read += 1
        finally:
            self.stop(flipper)
        self.assertEqual(shown, [], "the attacker's baseline was read")
        self.assertGreater(read, 0)


if __name__ == "__main__":
    main()
