"""Folded text read the way flamegraph.pl reads it, in every command that reads it (hot, diff, flame, convert;
docs/design.md §6.1): a line that is not "stack COUNT" is skipped and counted in one warning, `#` and `//` lines
are comments, CRLF line ends and UTF-16 (or UTF-8) with a byte-order mark read as the same stacks, and a file of comments
only has no samples (exit 5). An output name whose extension names no format is exit 2 (§6.5)."""
import json
import os
import unittest

from plumbtest import TempDir, plumb, target

TEXT = ("// a comment line, as in speedscope's sample corpus\n"
        "# another\n"
        "main;a;b 30\n"
        "not a folded line\n"
        "main;a;c 20\n"
        "main;d 50\n"
        "main;e\n")  # no count: skipped too
SKIPPED = 2


class FoldedRead(TempDir):
    def variants(self):
        """The same stacks as UTF-8, CRLF, UTF-16 LE and BE and UTF-8 with their byte-order marks."""
        out = {}
        for name, data in (("utf8", TEXT.encode()), ("crlf", TEXT.replace("\n", "\r\n").encode()),
                           ("utf16le", b"\xff\xfe" + TEXT.replace("\n", "\r\n").encode("utf-16-le")),
                           ("utf16be", b"\xfe\xff" + TEXT.encode("utf-16-be")),
                           ("utf8bom", b"\xef\xbb\xbf" + TEXT.encode())):
            path = self.path(name + ".folded")
            with open(path, "wb") as f:
                f.write(data)
            out[name] = path
        return out

    def check_warning(self, err):
        lines = [l for l in err.splitlines() if "not folded stacks" in l]
        self.assertEqual(len(lines), 1, err)
        self.assertIn("skipped %d lines" % SKIPPED, lines[0])

    def test_every_command_skips_bad_lines_in_one_warning(self):
        for name, path in self.variants().items():
            with self.subTest(variant=name, cmd="hot"):
                h = plumb("hot", path, "--json")
                self.assertEqual(h.returncode, 0, h.stderr)
                doc = json.loads(h.stdout)
                self.assertEqual(doc["samples"], 100)
                self.assertEqual({r["name"]: r["count"] for r in doc["leaf"]}, {"b": 30, "c": 20, "d": 50})
                self.check_warning(h.stderr)
            with self.subTest(variant=name, cmd="convert"):
                out = self.path(name + ".out.folded")
                r = plumb("convert", path, "-o", out)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.check_warning(r.stderr)
                with open(out) as f:
                    self.assertEqual(sorted(f.read().splitlines()), ["main;a;b 30", "main;a;c 20", "main;d 50"])
            with self.subTest(variant=name, cmd="flame"):
                svg = self.path(name + ".svg")
                r = plumb("flame", path, "-o", svg)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.check_warning(r.stderr)
                with open(svg) as f:
                    self.assertIn("100 samples", f.read())
            with self.subTest(variant=name, cmd="diff"):
                r = plumb("diff", path, self.variants()["utf8"], "--json")
                self.assertEqual(r.returncode, 0, r.stderr)
                rows = json.loads(r.stdout)["rows"]
                self.assertEqual(len(rows), 3)
                self.assertTrue(all(x["delta_count"] == 0 and not x["significant"] for x in rows), rows)
                self.assertEqual(sum("not folded stacks" in l for l in r.stderr.splitlines()), 2, r.stderr)

    def test_comments_only_is_no_samples(self):
        path = self.path("comments.folded")
        with open(path, "w") as f:
            f.write("// nothing but\n# comments\n\n")
        for args in (["hot", path], ["convert", path, "-o", self.path("x.folded")],
                     ["flame", path, "-o", self.path("x.svg")], ["diff", path, path]):
            with self.subTest(cmd=args[0]):
                r = plumb(*args)
                self.assertEqual(r.returncode, 5, r.stdout + r.stderr)
                self.assertIn("no stacks", r.stderr)

    def test_unit_line(self):
        """"# plumb: samples=N unit=U" gives the counts their unit; diff compares a time side with a sample side as
        samples, and refuses what has no common unit."""
        files = {}
        for name, text in (("ns", "# plumb: samples=5 unit=ns\nmain;a 3000000\nmain;b 2000000\n"),
                           ("ns-unknown", "# plumb: unit=ns\nmain;a 3000000\nmain;b 2000000\n"),
                           ("bytes", "# plumb: samples=5 unit=bytes\nmain;a 300\nmain;b 200\n"),
                           ("samples", "main;a 3\nmain;b 2\n")):
            files[name] = self.path(name + ".folded")
            with open(files[name], "w") as f:
                f.write(text)
        doc = json.loads(plumb("hot", files["ns"], "--json").stdout)
        self.assertEqual((doc["weight_unit"], doc["total"], doc["samples"], doc["interval_ns"]),
                         ("nanoseconds", 5000000, 5, 1000000))
        self.assertEqual(plumb("hot", files["ns"]).stdout.splitlines()[0], files["ns"] + " (folded): 5.000 ms (5 "
                         "samples) in 1 thread")
        doc = json.loads(plumb("hot", files["ns-unknown"], "--json").stdout)
        self.assertEqual((doc["weight_unit"], doc["samples"]), ("nanoseconds", 0))
        r = plumb("diff", files["ns"], files["samples"], "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("compared as numbers of samples", r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["before"]["total"], doc["after"]["total"]), (5, 5))
        self.assertEqual([x["delta_count"] for x in doc["rows"]], [0, 0])
        for a, b in (("ns", "bytes"), ("ns-unknown", "samples")):
            with self.subTest(before=a, after=b):
                r = plumb("diff", files[a], files[b])
                self.assertEqual(r.returncode, 5, r.stdout + r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_control_bytes_of_a_bad_line_are_escaped(self):
        path = self.path("esc.folded")
        with open(path, "w") as f:
            f.write("main;a 3\nbad \x1b[31mline\n")
        r = plumb("hot", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("\x1b", r.stderr)
        self.assertIn("\\x1b[31mline", r.stderr)


class OutputNames(TempDir):
    def test_unknown_extension_needs_the_format(self):
        folded = self.path("in.folded")
        with open(folded, "w") as f:
            f.write("main;a 3\n")
        r = plumb("record", "-o", self.path("a.xml"), "--", target("split"), "0.1")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--format", r.stderr)
        self.assertFalse(os.path.exists(self.path("a.xml")))
        for args in (["convert", folded, "-o", self.path("b.xml")], ["flame", folded, "-o", self.path("c.xml")],
                     ["flame", folded, "-o", self.path("c.folded")]):
            with self.subTest(args=args[0]):
                r = plumb(*args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertFalse(os.path.exists(args[-1]))
        r = plumb("convert", folded, "-o", self.path("b.xml"), "--to", "folded")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = plumb("record", "-o", self.path("a.xml"), "--format", "folded", "--", target("split"), "0.1")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.path("a.xml")) as f:
            self.assertIn("burn", f.read())


if __name__ == "__main__":
    unittest.main()
