"""A `plumb record` whose output cannot be written at the end (docs/design.md §3.4: nothing is lost at the end of
a recording): the output directory fills up (a small tmpfs the test mounts and fills while the target runs) or
turns read-only (chattr +i) after the up-front check passed. The profile is saved under $PLUMB_HOME/rescue/,
the message says where, the exit code is still 6, and no temp file is left where the output was to go."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import PLUMB, TempDir, env, main, needs_root, plumb, target, wait_until  # noqa: E402


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return f.read().split()
    except OSError:
        return []


class Rescue(TempDir):
    def setUp(self):
        super().setUp()
        self.out_dir = self.path("out")
        os.mkdir(self.out_dir)
        self.home = self.path("home")
        self.mounted = self.immutable = False

    def tearDown(self):
        if self.immutable:
            subprocess.run(["chattr", "-i", self.out_dir])
        if self.mounted:
            subprocess.run(["umount", self.out_dir])
        super().tearDown()

    def record_then(self, spoil, name="p.json", home=None):
        """Starts a record into out/NAME, runs spoil() once the target runs, and returns (rc, stderr)."""
        p = subprocess.Popen([PLUMB, "record", "-o", os.path.join(self.out_dir, name), "--", target("split"), "1"],
                             env=env(True, PLUMB_HOME=home or self.home), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        try:
            self.assertTrue(wait_until(lambda: children(p.pid) or p.poll() is not None, timeout=30))
            self.assertIsNone(p.poll(), "record ended before the output could be spoiled")
            spoil()
            _, err = p.communicate(timeout=120)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        return p.returncode, err

    def fill(self):
        with open(os.path.join(self.out_dir, "fill"), "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass

    def make_immutable(self):
        subprocess.run(["chattr", "+i", self.out_dir], check=True)
        self.immutable = True

    def assert_rescued(self, rc, err, ext):
        self.assertEqual(rc, 6, err)
        rescue = os.path.join(self.home, "rescue")
        saved = os.listdir(rescue) if os.path.isdir(rescue) else []
        self.assertEqual(len(saved), 1, "nothing rescued: %s" % err)
        self.assertTrue(saved[0].startswith("record-") and saved[0].endswith(ext), saved)
        self.assertIn("saved to %s" % os.path.join(rescue, saved[0]), err)
        self.assertEqual(os.stat(os.path.join(rescue, saved[0])).st_mode & 0o777, 0o600)
        r = plumb("hot", os.path.join(rescue, saved[0]), "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(json.loads(r.stdout)["total"], 0)
        left = [n for n in os.listdir(self.out_dir) if n != "fill"]
        self.assertEqual(left, [], "the failed write left something behind")

    def test_full_disk_at_the_end(self):
        needs_root("mounts a small tmpfs to fill")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", self.out_dir], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, "mount of a tmpfs as root: %s" % r.stderr)
        self.mounted = True
        rc, err = self.record_then(self.fill, "p.json")
        self.assertIn("No space left on device", err)
        self.assert_rescued(rc, err, ".json")

    def test_read_only_directory_at_the_end(self):
        needs_root("chattr +i needs CAP_LINUX_IMMUTABLE")
        rc, err = self.record_then(self.make_immutable, "p.speedscope.json")
        self.assert_rescued(rc, err, ".speedscope.json")

    def test_rescue_that_fails_too_says_so(self):
        needs_root("chattr +i needs CAP_LINUX_IMMUTABLE")
        os.mkdir(self.home, 0o777)
        os.chmod(self.home, 0o777)  # a home others can write: the rescue refuses it
        rc, err = self.record_then(self.make_immutable, "p.folded")
        self.assertEqual(rc, 6, err)
        self.assertIn("could not be saved under $PLUMB_HOME/rescue either", err)
        self.assertFalse(os.path.exists(os.path.join(self.home, "rescue")))


if __name__ == "__main__":
    main()
