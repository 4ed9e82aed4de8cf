"""`plumb diff A B --folded`: inferno's diff-folded cases through the real binary (the unit test
test_diff_folded.c runs the same cases on the library, analyze/diff_folded.c; this one checks that `plumb diff`
hands --folded over, prints the library's warnings and owns the output file)."""
import os
import unittest

from plumbtest import FIXTURES, TempDir, plumb

D = os.path.join(FIXTURES, "inferno", "diff-folded")


def lines(text):
    return sorted(l.rstrip() for l in text.splitlines() if l.strip())


class DiffFolded(TempDir):
    def run_diff(self, before, *opts):
        r = plumb("diff", os.path.join(D, before), os.path.join(D, "after.txt"), "--folded", *opts)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def test_cases(self):
        for before, opts, expected in (("before.txt", [], "default.txt"), ("before.txt", ["--normalize"], "normalize.txt"),
                                       ("before.txt", ["--strip-hex"], "strip_hex.txt"),
                                       ("before_fractionals.txt", [], "fractionals.txt")):
            with self.subTest(expected=expected):
                r = self.run_diff(before, *opts)
                with open(os.path.join(D, "results", expected)) as f:
                    self.assertEqual(lines(r.stdout), lines(f.read()))
                if expected == "fractionals.txt":
                    self.assertEqual(r.stderr.count("fractional sample counts"), 1, r.stderr)

    def test_bad_line_warns_once(self):
        r = self.run_diff("bad_before.txt")
        self.assertEqual(r.stderr.count("Unable to parse line: "), 1, r.stderr)

    def test_output_file_and_missing_input(self):
        out = self.path("d.txt")
        r = plumb("diff", os.path.join(D, "before.txt"), os.path.join(D, "after.txt"), "--folded", "-o", out)
        self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)
        with open(out) as f, open(os.path.join(D, "results", "default.txt")) as g:
            self.assertEqual(lines(f.read()), lines(g.read()))
        r = plumb("diff", os.path.join(D, "no-such-file.txt"), os.path.join(D, "after.txt"), "--folded")
        self.assertEqual(r.returncode, 3, r.stderr)  # a path that is not there (docs/design.md §3.2)
        self.assertIn("no-such-file.txt", r.stderr)
        r = plumb("diff", os.path.join(D, "before.txt"), "--folded")
        self.assertEqual(r.returncode, 2, r.stderr)

    def test_differential_folded_draws(self):
        r = self.run_diff("before.txt")
        path = self.path("d.folded")
        with open(path, "w") as f:
            f.write(r.stdout)
        r = plumb("flame", path, "-o", self.path("d.svg"))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("d.svg")) as f:
            self.assertIn("Differential", f.read())

    def test_a_count_past_64_bits_is_refused_by_every_reader(self):
        """One folded splitter under every reader (format/folded_line.h): `flame`, `hot`, `diff` and `diff
        --folded` refuse a count past 2^64 - 1, whether it is the line's only count or the first of two, with exit
        5 and the line's number; none wraps it, none reads it as part of a frame's name."""
        ok = self.path("ok.folded")
        with open(ok, "w") as f:
            f.write("# a comment\r\nmain;a 5\r\n\nmain;b 2\n")
        for text in ("main;a 18446744073709551617 1\n", "main;a 1 18446744073709551616\n",
                     "main;b 1\nmain;a 99999999999999999999\n"):
            bad = self.path("bad.folded")
            with open(bad, "w") as f:
                f.write(text)
            line = text.count("\n")
            for args in (["flame", bad, "-o", self.path("x.svg")], ["hot", bad], ["diff", bad, ok], ["diff", ok, bad],
                         ["diff", bad, ok, "--folded"], ["diff", ok, bad, "--folded"]):
                with self.subTest(text=text, args=args[:1] + args[3:]):
                    r = plumb(*args)
                    self.assertEqual(r.returncode, 5, r.stderr)
                    self.assertIn("bad.folded: line %d: a count past 18446744073709551615" % line, r.stderr)
                    self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
                    self.assertEqual(r.stdout, "")
        self.assertFalse(os.path.exists(self.path("x.svg")))
        r = plumb("diff", ok, ok, "--folded")  # the same comment, CR and blank-line rules as the other readers
        self.assertEqual((r.returncode, r.stderr, lines(r.stdout)), (0, "", ["main;a 5 5", "main;b 2 2"]))


if __name__ == "__main__":
    unittest.main()
