"""A $PLUMB_HOME that someone else controls (docs/design.md §3.5): owned by another user, writable by others, or
with an entry that is a symbolic link to a victim's directory. Whatever root's plumb is asked to keep there —
a metrics recording, a bench baseline, a profile baseline, a target lock — is refused with one line saying why
and what to do, and nothing is written through it; what is planted there is not read. The owner cases need
root (chown to nobody); the writable-by-others cases run as anyone."""
import contextlib
import json
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plumbtest import TempDir, env, main, plumb, target, wait_until  # noqa: E402

NOBODY = 65534
ROOT = os.geteuid() == 0
# every entry under the home that plumb uses for what it keeps
ENTRIES = ("metrics", "targets", os.path.join("baselines", "profiles"), os.path.join("baselines", "evidence"))


class HostileHome(TempDir):
    def setUp(self):
        super().setUp()
        self.home = self.path("home")
        self.victim = self.path("victim")
        os.mkdir(self.victim, 0o700)
        self.env = {"PLUMB_HOME": self.home}

    def plant(self, owner=None, mode=0o700, links=True):
        """The home with each entry a symlink to the victim directory (or a real directory when not links),
        then owned by `owner` and given `mode`."""
        os.makedirs(os.path.join(self.home, "baselines"))
        for entry in ENTRIES:
            p = os.path.join(self.home, entry)
            if links:
                os.symlink(self.victim, p)
            else:
                os.mkdir(p, 0o700)
        for d in (self.home, os.path.join(self.home, "baselines")):
            if owner is not None:
                os.chown(d, owner, owner)
            os.chmod(d, mode)

    def hostile_homes(self):
        """(description, plant kwargs, the phrase the refusal must carry): another user's home (as root), and a
        home every user can write."""
        cases = [("writable by others", {"mode": 0o777}, "writable by every user")]
        if ROOT:
            cases.insert(0, ("owned by nobody", {"owner": NOBODY}, "belongs to uid %d" % NOBODY))
        return cases

    def assert_refused(self, r, phrase, what):
        self.assertNotEqual(r.returncode, 0, "%s was not refused: %s" % (what, r.stderr))
        lines = [l for l in r.stderr.splitlines() if l.startswith("plumb: ") and not l.startswith("plumb: warning")]
        self.assertTrue(any(phrase in l for l in lines), "%s: no line says why: %r" % (what, r.stderr))
        self.assertIn("PLUMB_HOME", r.stderr, "%s: the refusal does not say what to do" % what)

    def assert_victim_untouched(self, what, planted=()):
        self.assertEqual(sorted(os.listdir(self.victim)), sorted(planted), "%s wrote through the link" % what)

    def reset(self):
        subprocess.run(["rm", "-rf", self.home], check=True)
        for n in os.listdir(self.victim):
            os.unlink(os.path.join(self.victim, n))

    @contextlib.contextmanager
    def planted(self, **kw):
        """The home planted as plant(**kw) for the body, removed afterwards whatever the body did."""
        self.plant(**kw)
        try:
            yield
        finally:
            self.reset()

    # ---- writers: nothing reaches the victim ----

    def test_metrics_record_is_refused(self):
        for why, kw, phrase in self.hostile_homes():
            with self.subTest(why), self.planted(**kw):
                r = plumb("metrics", "record", "--every", "0.2", "--name", "m", "--", "true", extra_env=self.env,
                          timeout=60)
                self.assert_refused(r, phrase, "metrics record (%s)" % why)
                self.assert_victim_untouched("metrics record")

    def test_profile_baseline_save_is_refused(self):
        for why, kw, phrase in self.hostile_homes():
            with self.subTest(why), self.planted(**kw):
                r = plumb("record", "--save-baseline", "base", "-o", self.path("p.folded"), "--",
                          target("split"), "0.2", extra_env=self.env, timeout=60)
                self.assert_refused(r, phrase, "record --save-baseline (%s)" % why)
                self.assert_victim_untouched("record --save-baseline")

    def bench_artifact(self):
        suite = self.path("suite.ini")
        with open(suite, "w") as f:
            f.write("[case t]\nrun = true\n")
        out = self.path("a.json")
        r = plumb("bench", "run", suite, "--repeats", "1", "--warmup", "0", "--out", out, debug=False, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return out

    def test_bench_baseline_save_is_refused(self):
        art = self.bench_artifact()
        for why, kw, phrase in self.hostile_homes():
            with self.subTest(why), self.planted(**kw):
                r = plumb("bench", "baseline", "save", art, "--name", "b", debug=False, extra_env=self.env)
                self.assert_refused(r, phrase, "bench baseline save (%s)" % why)
                self.assert_victim_untouched("bench baseline save")

    def test_target_announce_is_refused(self):
        for why, kw, _ in self.hostile_homes():
            with self.subTest(why), self.planted(**kw):
                p = subprocess.run([target("plumb_api"), "hold", "svc"], env=env(True, PLUMB_HOME=self.home),
                                   input="", capture_output=True, text=True, timeout=30)
                self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                self.assertNotEqual(p.stdout.strip(), "ready")
                self.assert_victim_untouched("plumb_announce")

    # ---- readers: what is planted is not read ----

    def test_planted_files_are_not_read(self):
        art = self.bench_artifact()
        with open(art) as f:
            evidence = f.read()
        sleeper = subprocess.Popen(["sleep", "60"])
        try:
            for why, kw, phrase in self.hostile_homes():
                with self.subTest(why), self.planted(**kw):
                    planted = {"b.json": evidence, "svc.lock": "%d 0\n" % sleeper.pid,
                               "m.json": json.dumps({"schema": "plumb.metrics.v1"})}
                    for name, text in planted.items():
                        with open(os.path.join(self.victim, name), "w") as f:
                            f.write(text)
                    r = plumb("bench", "baseline", "show", "b", debug=False, extra_env=self.env)
                    self.assert_refused(r, phrase, "bench baseline show (%s)" % why)
                    self.assertNotIn("t.wall_ms", r.stdout)
                    r = plumb("bench", "baseline", "list", debug=False, extra_env=self.env)
                    self.assert_refused(r, phrase, "bench baseline list (%s)" % why)
                    r = plumb("metrics", "--name", "m", extra_env=self.env)
                    self.assert_refused(r, phrase, "metrics --name (%s)" % why)
                    r = plumb("diff", "b", art, extra_env=self.env)  # b.json as a profile baseline
                    self.assert_refused(r, phrase, "diff BASELINE (%s)" % why)
                    # the planted lock names a live process: record must not attach to it
                    r = plumb("record", "--target", "svc", "--seconds", "1", "-o", self.path("t.folded"),
                              extra_env=self.env, timeout=60)
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertIn(phrase, r.stderr)
                    self.assertNotIn(str(sleeper.pid), r.stderr)
                    self.assertFalse(os.path.exists(self.path("t.folded")))
                    self.assert_victim_untouched("the readers", planted)
        finally:
            sleeper.kill()
            sleeper.wait()

    # ---- the user's own home: links inside it are not followed either ----

    def test_own_home_with_linked_entries(self):
        self.plant(links=True)  # our own home, 0700, but each entry a link to the victim
        r = plumb("metrics", "record", "--every", "0.2", "--name", "m", "--", "true", extra_env=self.env, timeout=60)
        self.assert_refused(r, "symbolic link", "metrics record into a linked entry")
        self.assert_victim_untouched("metrics record into a linked entry")

    def test_stored_file_that_is_a_link_is_not_read_or_written(self):
        os.makedirs(os.path.join(self.home, "metrics"), 0o700)
        os.chmod(self.home, 0o700)
        secret = os.path.join(self.victim, "secret.json")
        with open(secret, "w") as f:
            f.write("{}")
        os.symlink(secret, os.path.join(self.home, "metrics", "m.json"))
        r = plumb("metrics", "--name", "m", extra_env=self.env)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("symbolic link", r.stderr)
        r = plumb("metrics", "record", "--every", "0.2", "--name", "m", "--", "true", extra_env=self.env, timeout=60)
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("symbolic link", r.stderr)
        with open(secret) as f:
            self.assertEqual(f.read(), "{}")

    def test_a_good_home_still_works(self):
        r = plumb("metrics", "record", "--every", "0.2", "--name", "m", "--", "sleep", "0.5", extra_env=self.env,
                  timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.stat(self.home).st_mode & 0o777, 0o700)
        self.assertEqual(os.stat(os.path.join(self.home, "metrics")).st_mode & 0o777, 0o700)
        r = plumb("metrics", "--name", "m", extra_env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    main()
