"""plumb as a Unix tool (issue 16): hot and flame read what record wrote when given no input, a command line that
misses its `--` gets a hint, counts read right ("1 sample"), and `plumb --version` and `plumb CMD --version` agree."""
import json
import os
import stat
import unittest

from plumbtest import FIXTURES, TempDir, plumb, target

FOLDED = "main;parse;lex 30\nmain;parse 20\nmain;eval 50\n"


class DefaultInput(TempDir):
    def test_hot_and_flame_read_records_default_output(self):
        r = plumb("hot", cwd=self.tmp)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("there is no ./plumb-profile.folded here", r.stderr)
        r = plumb("record", "--", target("split"), "0.3", cwd=self.tmp, extra_env={"SPLIT_CLOCK": "cpu"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Wrote ./plumb-profile.folded", r.stderr)
        r = plumb("hot", cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("./plumb-profile.folded (folded)", r.stdout)
        self.assertIn("path_a", r.stdout)
        r = plumb("flame", "-o", "f.svg", cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("f.svg")) as f:
            self.assertIn("path_a", f.read())
        r = plumb("hot", "a", "b", cwd=self.tmp)
        self.assertEqual(r.returncode, 2, r.stderr)


class MissingDashDash(TempDir):
    def test_a_command_without_dashdash_gets_a_hint(self):
        for cmd in (["record"], ["metrics", "record"]):
            with self.subTest(cmd=cmd):
                r = plumb(*cmd, "perl", "-e", "print 1", cwd=self.tmp)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("unknown option '-e'", r.stderr)
                self.assertIn("put the command after `--`: plumb %s [OPTIONS] -- perl -e 'print 1'" % " ".join(cmd),
                              r.stderr)
        # a plain unknown option gets no such hint
        r = plumb("record", "--bogus", "--", "true", cwd=self.tmp)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertNotIn("put the command after", r.stderr)


class Grammar(TempDir):
    def test_one_sample_in_hot(self):
        one = self.path("one.folded")
        with open(one, "w") as f:
            f.write("main;work 1\n")
        r = plumb("hot", one)
        self.assertIn(": 1 sample in 1 thread", r.stdout)

    def test_one_metrics_sample(self):
        env = {"PLUMB_HOME": self.path("home")}
        r = plumb("metrics", "record", "--every", "5", "--name", "one", "--", "sleep", "0.5", extra_env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"metrics: 1 sample \(1 kept\)")
        r = plumb("metrics", "--name", "one", extra_env=env)
        self.assertIn(" 1 sample in the window", r.stdout)


class SaysWhy(TempDir):
    """Errors that have a likely cause name it; write errors name the path and the system's reason."""

    def full_device(self):
        """A character device that behaves as /dev/full (the atomic writer writes a device in place)."""
        path = self.path("full")
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 7))
        return path

    def big_folded(self):
        path = self.path("big.folded")
        with open(path, "w") as f:
            for i in range(3000):
                f.write("main;f%d;g%d;h%d %d\n" % (i, i * 7, i * 13, i + 1))
        return path

    def test_a_full_disk_names_the_path_and_the_reason(self):
        full, big = self.full_device(), self.big_folded()
        for args in (["convert", big, "-o", full, "--to", "folded"], ["convert", big, "-o", full, "--to", "gecko"],
                     ["convert", big, "-o", full, "--to", "pprof"], ["flame", big, "-o", full]):
            with self.subTest(args=args[0:1] + args[-1:]):
                r = plumb(*args)
                self.assertEqual(r.returncode, 6, r.stderr)
                self.assertIn("cannot write %s: No space left on device" % full, r.stderr)
                self.assertTrue(stat.S_ISCHR(os.stat(full).st_mode), "the device was replaced")
        r = plumb("record", "-o", full, "--", target("split"), "0.3")
        self.assertEqual(r.returncode, 6, r.stderr)
        self.assertIn("cannot write %s: No space left on device" % full, r.stderr)

    def test_kernel_thread_nothing_sampled_says_why(self):
        r = plumb("record", "--pid", "2", "--seconds", "1", "-o", self.path("k.folded"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("nothing was sampled: pid 2 (kthreadd) is a kernel thread, which has no user stack to sample",
                      r.stderr)

    def test_a_plumb_document_that_is_not_a_profile(self):
        rec = os.path.join(FIXTURES, "metrics_read", "recording.json")
        r = plumb("hot", rec)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("is a metrics recording (plumb.metrics.v1), not a profile: read it with `plumb metrics "
                      "--path %s`" % rec, r.stderr)
        self.assertNotIn("Firefox", r.stderr)
        art = self.path("a.json")
        with open(art, "w") as f:
            json.dump({"schema": "plumb.evidence.v1", "cases": [], "samples": []}, f)
        r = plumb("hot", art)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("is a bench evidence artifact (plumb.evidence.v1), not a profile: read it with `plumb bench "
                      "report %s`" % art, r.stderr)

    def test_summary_with_a_negative_total(self):
        doc = self.path("s.json")
        with open(doc, "w") as f:
            f.write(FOLDED)
        r = plumb("hot", doc, "--json")
        summary = json.loads(r.stdout)
        summary["total"] = -5
        with open(doc, "w") as f:
            json.dump(summary, f)
        r = plumb("hot", doc)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("summary.total is negative (-5)", r.stderr)

    def test_missing_stage_file(self):
        prof = os.path.join(FIXTURES, "gecko", "fxprof-profile_without_js.v66.json")
        r = plumb("hot", prof, "--stages", self.path("absent.json"))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("cannot read the stage file %s: No such file or directory" % self.path("absent.json"), r.stderr)
        self.assertNotIn("line -1", r.stderr)


if __name__ == "__main__":
    unittest.main()
