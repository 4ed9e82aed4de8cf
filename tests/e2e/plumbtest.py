"""Shared helpers for plumb's end-to-end tests: where the binary and targets are, running plumb, and
reading folded profiles. Tests use Python's unittest so each file runs on its own (python3 test_x.py)."""
import os
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
    e.update({k: str(v) for k, v in extra.items()})
    return e


def plumb(*args, debug=True, timeout=120, input=None, extra_env=None, cwd=None):
    """Runs plumb; returns CompletedProcess with text stdout/stderr."""
    return subprocess.run([PLUMB, *args], env=env(debug, **(extra_env or {})), capture_output=True, text=True,
                          timeout=timeout, input=input, cwd=cwd)


def read_folded(path):
    """Returns [(frames list outermost first, count)] in file order."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
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


def main():
    unittest.main(verbosity=2)
