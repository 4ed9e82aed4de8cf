"""Tests of tests/run-all and plumbtest's result hook (docs/design.md §12): test cases are counted from cmocka's
output and from the hook's lines, and a skip for any reason but a missing optional tool counts as a failure."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_run_all():
    loader = importlib.machinery.SourceFileLoader("run_all", os.path.join(ROOT, "tests", "run-all"))
    spec = importlib.util.spec_from_loader("run_all", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


run_all = load_run_all()

CMOCKA_LOG = """\
[==========] Running 6 test(s).
[ RUN      ] test_x__passes
[       OK ] test_x__passes
[ RUN      ] test_x__fails
[  ERROR   ] --- 0x1 != 0x2
[   LINE   ] --- tests/unit/test_x.c:10: error: Failure!
[  FAILED  ] test_x__fails
[ RUN      ] test_x__tool_missing
[ SKIP-WHY ] test_x__tool_missing: /usr/bin/python3.11 not installed
[  SKIPPED ] test_x__tool_missing
[ RUN      ] test_x__bare_skip
[  SKIPPED ] test_x__bare_skip
[ RUN      ] test_x__also_passes
[       OK ] test_x__also_passes
[ RUN      ] test_x__crashes
[==========] 6 test(s) run.
[  PASSED  ] 2 test(s).
[  FAILED  ] 1 test(s), listed below:
[  FAILED  ] test_x__fails
"""


class RunAll(unittest.TestCase):
    def setUp(self):
        self._td = tempfile.TemporaryDirectory(prefix="plumb-runall-")
        self.tmp = self._td.name

    def tearDown(self):
        self._td.cleanup()

    def test_cmocka_cases_are_counted_one_by_one(self):
        log = os.path.join(self.tmp, "test_x.log")
        with open(log, "w") as f:
            f.write(CMOCKA_LOG)
        cases = run_all.unit_cases(log)
        self.assertEqual({k: v[0] for k, v in cases.items()},
                         {"test_x__passes": "pass", "test_x__fails": "fail", "test_x__tool_missing": "skip",
                          "test_x__bare_skip": "skip", "test_x__also_passes": "pass", "test_x__crashes": "fail"})
        self.assertEqual(cases["test_x__tool_missing"][1], "/usr/bin/python3.11 not installed")
        tally = run_all.Tally()
        self.assertEqual(tally.add("test_x", cases), (2, 3, 1))  # the bare skip is a failure
        self.assertEqual(tally.skipped, [("test_x__tool_missing", "/usr/bin/python3.11 not installed")])
        self.assertIn("not a missing optional tool", dict((c, w) for _, c, w in tally.failed)["test_x__bare_skip"])

    def test_a_file_that_fails_without_a_failed_case_counts_once(self):
        tally = run_all.Tally()
        self.assertEqual(tally.add("test_y", {"a": ("pass", "")}, "exited 139"), (1, 1, 0))
        self.assertEqual(tally.failed, [("test_y", "(the whole file)", "exited 139")])

    def test_which_skips_are_allowed(self):
        self.assertTrue(run_all.skip_allowed("go not installed (Debian golang-go)"))
        self.assertTrue(run_all.skip_allowed("py-spy is installed (in /usr/local/bin): this test needs a machine "
                                             "without it"))
        self.assertFalse(run_all.skip_allowed("plumb record is not usable here"))
        self.assertFalse(run_all.skip_allowed("perf_event_open refused here"))
        self.assertFalse(run_all.skip_allowed("plumb record has no --stages in this build yet"))
        self.assertEqual(run_all.skip_allowed("sanitizer build: ASan owns SIGSEGV"), run_all.SANITIZED)

    def test_a_root_skip_is_allowed_and_listed_unless_ci_requires_root(self):
        reason = "prereq: root (mounts a small tmpfs to fill)"
        saved = run_all.REQUIRE_ROOT
        try:
            run_all.REQUIRE_ROOT = False
            tally = run_all.Tally()
            self.assertEqual(tally.add("t.py", {"a": ("skip", reason), "b": ("pass", "")}), (1, 0, 1))
            self.assertEqual(tally.skipped, [("a", reason)])
            run_all.REQUIRE_ROOT = True
            tally = run_all.Tally()
            self.assertEqual(tally.add("t.py", {"a": ("skip", reason)}), (0, 1, 0))
            self.assertIn("PLUMB_TEST_REQUIRE_ROOT=1", tally.failed[0][2])
        finally:
            run_all.REQUIRE_ROOT = saved
        self.assertFalse(run_all.skip_allowed("needs root"))  # only the prefix plumbtest.needs_root writes

    def test_one_file_then_the_summary(self):
        """--one runs a file and keeps its tally; --summary adds the tallies up, names the slowest files, ends with
        the closing line, and counts a file that left no result as a failure."""
        path = os.path.join(self.tmp, "test_two.py")
        with open(path, "w") as f:
            f.write("import unittest\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        pass\n\n"
                    "    def test_b(self):\n        self.assertEqual(1, 2)\n")
        build = os.path.join(self.tmp, "build")
        run = lambda *args: subprocess.run([sys.executable, os.path.join(ROOT, "tests", "run-all"), *args],
                                           env=dict(os.environ, BUILD=build), capture_output=True, text=True,
                                           timeout=60)
        r = run("--one", path)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"^FAIL .*test_two.py: 1 passed, 1 failed, 0 skipped \(\d+\.\d s, \d+\.\d s CPU\)\n")
        self.assertEqual(run("--one", path, "--keep-going").returncode, 0)
        r = run("--summary", path, os.path.join(self.tmp, "test_never_ran.py"))
        self.assertEqual(r.returncode, 1)
        lines = r.stdout.splitlines()
        self.assertIn("1 passed, 2 failed, 0 skipped", lines)
        self.assertTrue(any(l.startswith("slowest 2 of 2 files") for l in lines), r.stdout)
        self.assertTrue(any("test_never_ran.py: (the whole file) — left no result" in l for l in lines), r.stdout)
        self.assertEqual(lines[-1], "1 passed, 2 failed, 0 skipped")

    def test_python_hook_writes_one_line_per_case(self):
        path = os.path.join(self.tmp, "test_sample.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent('''\
                import unittest
                from plumbtest import needs_tool

                class Sample(unittest.TestCase):
                    def test_pass(self):
                        pass

                    def test_fail(self):
                        self.assertEqual(1, 2)

                    def test_tool(self):
                        needs_tool("no-such-tool-here", "Debian nothing")

                    def test_other_skip(self):
                        self.skipTest("command exited 3")

                    def test_subtests(self):
                        for i in range(3):
                            with self.subTest(i=i):
                                self.assertLess(i, 1)
                '''))
        results = os.path.join(self.tmp, "results")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "e2e", "plumbtest.py"), path],
                           env=dict(os.environ, PLUMB_TEST_RESULTS=results), capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        cases = run_all.python_cases(results)
        self.assertEqual({k.rsplit(".", 1)[1]: v[0] for k, v in cases.items()},
                         {"test_pass": "pass", "test_fail": "fail", "test_tool": "skip", "test_other_skip": "skip",
                          "test_subtests": "fail"})
        self.assertEqual(cases["test_sample.Sample.test_tool"][1], "no-such-tool-here not installed (Debian nothing)")
        tally = run_all.Tally()
        self.assertEqual(tally.add("test_sample.py", cases), (1, 3, 1))


if __name__ == "__main__":
    unittest.main(verbosity=2)
