"""Shared helpers for plumb's end-to-end tests: where the binary and targets are, running plumb, and
reading folded profiles. Tests use Python's unittest so each file runs on its own (python3 test_x.py).

tests/run-all runs each file through this module (python3 plumbtest.py FILE), whose result hook writes one line
per test case to $PLUMB_TEST_RESULTS so the runner counts cases and prints every skip with its reason. A test may
skip only when an optional tool is missing, through needs_tool() or skip_missing(), or when it needs root and is
not run as root, through needs_root() (docs/design.md §12); the runner counts any other skip as a failure."""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PLUMB = os.path.join(BUILD, "plumb")
TARGETS = os.path.join(BUILD, "targets")
FIXTURES = os.path.join(ROOT, "tests", "fixtures")
# Under `make asan` plumb itself runs several times slower: timing figures (effective rates) are not checked.
SANITIZED = os.environ.get("PLUMB_TEST_SANITIZED") == "1"


def target(name):
    """Path of a built test target (tests/targets/NAME.c, or NAME-nofp for the no-frame-pointer build)."""
    return os.path.join(TARGETS, name)


def env(debug=True, **extra):
    e = dict(os.environ)
    e.pop("PLUMB_DEBUG", None)
    if debug:
        e["PLUMB_DEBUG"] = "1"
    # each run names its frames afresh (a stripped copy of a test program shares its build-id with the
    # original, whose names the symbol cache would give it): test_symbol_cache turns the cache on
    e.setdefault("PLUMB_SYMBOL_CACHE", "0")
    e.update({k: str(v) for k, v in extra.items()})
    return e


def plumb(*args, debug=True, timeout=120, input=None, extra_env=None, cwd=None):
    """Runs plumb; returns CompletedProcess with text stdout/stderr."""
    return subprocess.run([PLUMB, *args], env=env(debug, **(extra_env or {})), capture_output=True, text=True,
                          timeout=timeout, input=input, cwd=cwd)


def read_folded(path):
    """Returns [(frames list outermost first, count)] in file order; comment lines (plumb's `# plumb:` unit line)
    are skipped, as flamegraph.pl skips them."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            stack, _, count = line.rpartition(" ")
            rows.append((stack.split(";"), int(count)))
    return rows


def shares(rows, names):
    """Share (0..100) of samples whose stack contains a frame starting with each name (inclusive)."""
    total = sum(c for _, c in rows)
    out = {}
    for n in names:
        hit = sum(c for fr, c in rows if any(f == n or f.startswith(n + " ") for f in fr))
        out[n] = 100.0 * hit / total if total else 0.0
    return out


def share_tolerance(rows, floor):
    """Points a measured share may stray from the truth: `floor` (the accuracy claimed on a quiet machine), or
    3.5 standard errors of a share estimated from this many samples when that is wider (a loaded machine gives a
    target less CPU, so fewer samples). rows as read_folded returns them; the worst case p = 0.5 is assumed."""
    n = sum(c for _, c in rows)
    return max(floor, 3.5 * 100 * (0.25 / n) ** 0.5) if n else floor


def wait_until(pred, timeout=10.0, step=0.02):
    """Polls pred() until it is true or the deadline passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(step)


class TempDir(unittest.TestCase):
    """A TestCase with self.tmp, a fresh directory removed afterwards."""

    def setUp(self):
        self._td = tempfile.TemporaryDirectory(prefix="plumb-test-")
        self.tmp = self._td.name

    def tearDown(self):
        self._td.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def run_unprivileged(self, *args):
        """Runs a copy of plumb with args as user nobody (setpriv), in self.tmp, with the kernel's
        perf_event_paranoid deciding what it may sample; returns (completed process, perf_event_paranoid)."""
        needs_root("runs plumb as user nobody through setpriv")
        tool = shutil.which("setpriv")
        self.assertIsNotNone(tool, "setpriv (util-linux) is part of every Debian system")
        exe = self.path("plumb")
        shutil.copy(PLUMB, exe)
        os.chmod(self.tmp, 0o755)
        os.chmod(exe, 0o755)
        r = subprocess.run([tool, "--reuid=65534", "--regid=65534", "--clear-groups", exe, *args],
                           env=env(HOME=self.tmp), capture_output=True, text=True, timeout=60, cwd=self.tmp)
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return r, int(f.read())


def skip_missing(tool, detail=""):
    """Skips the running test because an optional tool is not installed; the reason names it."""
    raise unittest.SkipTest("%s not installed%s" % (tool, " (%s)" % detail if detail else ""))


def needs_tool(name, detail=""):
    """The path of program name on PATH; skips the test when it is not installed."""
    path = shutil.which(name)
    if not path:
        skip_missing(name, detail)
    return path


def needs_root(why):
    """Skips the running test, visibly, when plumb's tests do not run as root: the reason says "prereq: root" and
    why (what the test must do that only root may). The runner lists such skips and allows them, except in CI
    (PLUMB_TEST_REQUIRE_ROOT=1), which runs as root, where one is a failure."""
    if os.geteuid() != 0:
        raise unittest.SkipTest("prereq: root (%s)" % why)


def skip_installed(tool, where):
    """Skips a test of what plumb does when tool is missing, on a machine where it is installed (in where, a
    place plumb searches that the test cannot hide)."""
    raise unittest.SkipTest("%s is installed (in %s): this test needs a machine without it" % (tool, where))


def skip_sanitized(why):
    """In a sanitizer build (`make asan`), skips a test that cannot work under a sanitizer; elsewhere runs it."""
    if SANITIZED:
        raise unittest.SkipTest("sanitizer build: " + why)


class CaseResult(unittest.TextTestResult):
    """Also appends "OUTCOME<TAB>TEST ID<TAB>REASON<TAB>SECONDS" (pass, fail or skip) per test case to
    $PLUMB_TEST_RESULTS."""

    def startTest(self, test):
        self._started = time.monotonic()
        super().startTest(test)

    def _record(self, outcome, test, reason=""):
        path = os.environ.get("PLUMB_TEST_RESULTS")
        if not path:
            return
        took = time.monotonic() - getattr(self, "_started", time.monotonic())
        line = "%s\t%s\t%s\t%.2f\n" % (outcome, test.id(), " ".join(str(reason).split())[:300], took)
        with open(path, "a") as f:
            f.write(line)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record("pass", test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record("fail", test, "%s: %s" % (err[0].__name__, err[1]))

    def addError(self, test, err):
        super().addError(test, err)
        self._record("fail", test, "%s: %s" % (err[0].__name__, err[1]))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record("skip", test, reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record("pass", test)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record("fail", test, "unexpected success")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._record("fail", test, "%s: %s: %s" % (subtest.id(), err[0].__name__, err[1]))


def main():
    unittest.main(verbosity=2, testRunner=unittest.TextTestRunner(verbosity=2, resultclass=CaseResult))


def run_file(path):
    """Loads the test file at path as its own module and runs its tests with CaseResult; returns the exit status."""
    name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    result = unittest.TextTestRunner(verbosity=2, resultclass=CaseResult).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    # `python3 plumbtest.py FILE`: the test files import this module as plumbtest, so run through that one.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plumbtest
    sys.exit(plumbtest.run_file(sys.argv[1]))
