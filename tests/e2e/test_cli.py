"""plumb as a Unix tool (issue 16): hot and flame read what record wrote when given no input, a command line that
misses its `--` gets a hint, counts read right ("1 sample"), and `plumb --version` and `plumb CMD --version` agree."""
import os
import re
import shutil
import unittest

from plumbtest import ROOT, TempDir, plumb, target

FOLDED = "main;parse;lex 30\nmain;parse 20\nmain;eval 50\n"


class DefaultInput(TempDir):
    def test_hot_and_flame_read_records_default_output(self):
        r = plumb("hot", cwd=self.tmp)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("there is no ./plumb-profile.folded here", r.stderr)
        r = plumb("record", "--", target("split"), "0.3", cwd=self.tmp)
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
    def test_one_metrics_sample(self):
        env = {"PLUMB_HOME": self.path("home")}
        r = plumb("metrics", "record", "--every", "5", "--name", "one", "--", "sleep", "0.5", extra_env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stderr, r"metrics: 1 sample \(1 kept\)")
        r = plumb("metrics", "--name", "one", extra_env=env)
        self.assertIn(" 1 sample in the window", r.stdout)


if __name__ == "__main__":
    unittest.main()
