"""plumb convert: perf script text collapsed as stackcollapse-perf does, checked against FlameGraph's own suite
(78 cases plus its Rust and example-perf-stacks cases) and inferno's collapse-perf cases, under the comparison
rules in tests/fixtures/README.md."""
import glob
import gzip
import os
import unittest

from plumbtest import FIXTURES, TempDir, plumb

FG = os.path.join(FIXTURES, "flamegraph")
INF = os.path.join(FIXTURES, "inferno", "collapse-perf")
OPTS = ["pid", "tid", "kernel", "jit", "all", "addrs"]


def collapse(test, path, *opts):
    out = os.path.join(test.tmp, "out.folded")
    r = plumb("convert", path, "-o", out, "--to", "folded", *["--" + o for o in opts])
    test.assertEqual(r.returncode, 0, r.stderr)
    with open(out, encoding="utf-8", errors="surrogateescape") as f:
        return data_lines(f.read()), r.stderr


def data_lines(text):
    """The folded lines without plumb's "# plumb: samples=N unit=U" first line, which flamegraph.pl and
    speedscope skip as they skip every line that ends in no count (docs/design.md §6.1)."""
    lines = text.splitlines()
    return lines[1:] if lines and lines[0].startswith("# plumb: ") else lines


def expected_lines(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return [l.rstrip() for l in f.read().splitlines() if l.strip()]


class FlameGraphSuite(TempDir):
    """FlameGraph's suite: the peer removes every quote from the collapser's lines (not from the expected
    lines, and not for the Rust case) and trims trailing white space of expected lines."""

    def check(self, inp, exp, opts, strip_quotes=True):
        got, _ = collapse(self, inp, *opts)
        if strip_quotes:
            got = [l.replace('"', "").replace("'", "") for l in got]
        self.assertEqual(sorted(got), sorted(expected_lines(exp)), "%s %s" % (os.path.basename(inp), opts))

    def test_all_78_cases(self):
        cases = 0
        for inp in sorted(glob.glob(os.path.join(FG, "test", "*.txt"))):
            stem = os.path.basename(inp)[:-4]
            for opt in OPTS:
                exp = os.path.join(FG, "test", "results", "%s-collapsed-%s.txt" % (stem, opt))
                self.assertTrue(os.path.exists(exp), exp)
                with self.subTest(stem=stem, opt=opt):
                    if stem == "perf-rust-Yamakaky-dcpu":
                        # legacy Rust names demangled: the peer's own expected files, compared exactly
                        self.check(inp, os.path.join(FG, "results-extra", "%s-collapsed-%s.txt" % (stem, opt)),
                                   [opt], strip_quotes=False)
                    else:
                        self.check(inp, exp, [opt])
                cases += 1
        self.assertEqual(cases, 78)

    def test_example_perf_stacks_gzipped(self):
        self.check(os.path.join(FG, "example-perf-stacks.txt.gz"),
                   os.path.join(FG, "results-extra", "example-perf-stacks-collapsed.txt"), [])

    def test_stdin(self):
        inp = os.path.join(FG, "test", "perf-funcab-cmd-01.txt")
        with open(inp) as f:
            r = plumb("convert", "-", "-o", "-", "--pid", input=f.read())
        self.assertEqual(r.returncode, 0, r.stderr)
        exp = expected_lines(os.path.join(FG, "test", "results", "perf-funcab-cmd-01-collapsed-pid.txt"))
        self.assertEqual(sorted(data_lines(r.stdout)), sorted(exp))


class InfernoCollapsePerf(TempDir):
    CASES = [  # no-events.txt is an empty file: exit 5 (docs/design.md §3.2), ConvertErrors.test_empty_input
        ("single-line-stacks.txt", "single-line-stacks-collapsed.txt", []),
        ("single-event.txt", "single-event-collapsed.txt", []),
        ("go-stacks.txt", "go-stacks-collapsed.txt", []),
        ("java-inline.txt", "java-inline-collapsed.txt", []),
        ("cpp-stacks-std-function.txt", "cpp-stacks-std-function-collapsed.txt", []),
        ("versioned-vmlinux.txt", "versioned-vmlinux-collapsed-kernel.txt", ["kernel"]),
        ("sourcepawn-jitdump.txt", "sourcepawn-jitdump-collapsed-jit.txt", ["jit"]),
    ]

    def test_cases(self):
        for inp, exp, opts in self.CASES:
            with self.subTest(inp=inp):
                got, _ = collapse(self, os.path.join(INF, inp), *opts)
                self.assertEqual(sorted(got), sorted(expected_lines(os.path.join(INF, "results", exp))))

    def test_empty_line_warns_once(self):
        got, err = collapse(self, os.path.join(INF, "empty-line.txt"))
        self.assertEqual(err.count("Weird event line: "), 1, err)
        self.assertTrue(got, "the other events are still collapsed")

    def test_weird_stack_line_warns_once(self):
        got, err = collapse(self, os.path.join(INF, "weird-stack-line.txt"))
        self.assertEqual(err.count("Weird stack line: "), 1, err)
        self.assertTrue(got)

    def test_only_first_event_type(self):
        inp = os.path.join(FG, "test", "perf-cycles-instructions-01.txt")
        got, err = collapse(self, inp)
        self.assertIn("instructions", err)
        total = sum(int(l.rsplit(" ", 1)[1]) for l in got)
        with open(inp) as f:
            first = sum(1 for l in f if l.rstrip().endswith("instructions:"))
        self.assertEqual(total, first)


class BigInputs(TempDir):
    """Inputs of 16 MB and more are read by two threads (split at a blank line near the middle): the result
    must be the same as one pass would give."""

    def big(self, text, times, tail=""):
        path = self.path("big.txt")
        with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
            for _ in range(times):
                f.write(text)
            f.write(tail)
        self.assertGreater(os.path.getsize(path), 16 << 20)
        return path

    def scaled(self, exp_path, times):
        out = []
        for line in expected_lines(exp_path):
            stack, _, n = line.rpartition(" ")
            out.append("%s %d" % (stack, int(n) * times))
        return sorted(out)

    def test_example_repeated(self):
        with gzip.open(os.path.join(FG, "example-perf-stacks.txt.gz"), "rt", errors="surrogateescape") as f:
            text = f.read()
        if not text.endswith("\n\n"):
            text += "\n"
        got, err = collapse(self, self.big(text, 7))
        self.assertEqual(sorted(got), self.scaled(os.path.join(FG, "results-extra",
                                                               "example-perf-stacks-collapsed.txt"), 7))

    def test_first_event_type_reaches_the_second_half(self):
        with open(os.path.join(FG, "test", "perf-cycles-instructions-01.txt")) as f:
            text = f.read()
        with open(os.path.join(INF, "empty-line.txt")) as f:
            weird = f.read()  # other events, and a weird event line, at the very end
        times = (17 << 20) // len(text) + 1
        got, err = collapse(self, self.big(text, times, tail="\n" + weird), "all")
        got = [l.replace('"', "").replace("'", "") for l in got if not l.startswith("inline-counter")]
        self.assertEqual(sorted(got), self.scaled(os.path.join(FG, "test", "results",
                                                               "perf-cycles-instructions-01-collapsed-all.txt"),
                                                  times))
        self.assertEqual(err.count("Weird event line: "), 1, err)


class ConvertErrors(TempDir):
    def test_missing_input(self):
        r = plumb("convert", os.path.join(self.tmp, "nope.txt"), "-o", os.path.join(self.tmp, "x.folded"))
        self.assertEqual(r.returncode, 3, r.stderr)  # not there: 3; there but unusable: 5 (docs/design.md §3.2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)

    def test_empty_input(self):
        out = os.path.join(self.tmp, "x.folded")
        r = plumb("convert", os.path.join(INF, "no-events.txt"), "-o", out)
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("no-events.txt is empty", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_unknown_output_format(self):
        inp = os.path.join(INF, "go-stacks.txt")
        r = plumb("convert", inp, "-o", os.path.join(self.tmp, "x.weird"))
        self.assertEqual(r.returncode, 2, r.stderr)
        r = plumb("convert", inp, "-o", "-", "--to", "perf-script")
        self.assertEqual(r.returncode, 2, r.stderr)

    def test_sniffs_perf_script_with_header_comments(self):
        src = os.path.join(FG, "example-perf-stacks.txt.gz")
        with gzip.open(src, "rt") as f:
            text = f.read()
        inp = os.path.join(self.tmp, "perf.out")
        with open(inp, "w") as f:
            f.write("# ========\n# captured on: now\n# ========\n#\n" + text)
        r = plumb("convert", inp, "-o", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        exp = expected_lines(os.path.join(FG, "results-extra", "example-perf-stacks-collapsed.txt"))
        self.assertEqual(sorted(data_lines(r.stdout)), sorted(exp))


if __name__ == "__main__":
    unittest.main()
