#!/usr/bin/env python3
"""The truth matrix's slow part (docs/design.md §5.2; the fast part is tests/e2e/test_truth.py), run by
bench/truth.sh. Prints, beside the same measurement of perf in the same minutes:
  1. rounds (5/3/2 ms of CPU per 10 ms round, fixed order) attached at the default rate, 4 runs of 6 s with the
     other core busy: the RMS z of the three shares (the done-when figure: <= 1.3), and `perf record -F 200 -p`'s;
  2. bursty (0.2 ms on, 0.1 ms asleep) attached and launched, quiet and loaded: samples / (CPU time x rate) per
     run (within 15% in every run), and `perf record -e cpu-clock -c 5000000 -p`'s;
  3. the matrix: backends x launched/attached x fp/dwarf x rates on rounds, RMS z over 3 runs of 3 s;
  4. what randomizing costs the sampling thread: plumb's own CPU time recording the same CPU-bound run at 1 kHz,
     against PREV_PLUMB (an earlier plumb, e.g. main's, with fixed intervals) when it is given.
Usage: BUILD=build bench/truth.py [--quick]"""
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from truth import ROUNDS_TRUTH, Burner, Quiet, bursty_perf, bursty_run, rms, rounds_run, zscores  # noqa: E402

BUILD = os.path.join(ROOT, os.environ.get("BUILD", "build"))
PLUMB = os.path.join(BUILD, "plumb")
TARGETS = os.path.join(BUILD, "targets")
QUICK = "--quick" in sys.argv
status = 0


def rounds_rms(how, options, load, runs, seconds, tool="plumb", nofp=False):
    zs, shares = [], []
    with load():
        for _ in range(runs):
            total, hits, _ = rounds_run(PLUMB, TARGETS, how, seconds, options, tool=tool, nofp=nofp)
            zs += zscores(total, hits, ROUNDS_TRUTH)
            shares.append("%d:%s" % (total, "/".join("%.1f" % (100.0 * hits[k] / max(total, 1)) for k in ROUNDS_TRUTH)))
    return rms(zs), " ".join(shares)


def done_when():
    global status
    runs, secs = (2, 3) if QUICK else (4, 6)
    z, sh = rounds_rms("attach", ("--backend", "perf_event"), Burner, runs, secs)
    pz, psh = rounds_rms("attach", (200,), Burner, runs, secs, tool="perf")
    ok = z <= 1.3
    status |= 0 if ok else 1
    print("rounds attached, default rate, other core busy, %d x %d s: plumb RMS z %.2f (%s)  [%s, bound 1.3]" %
          (runs, secs, z, sh, "ok" if ok else "FAILED"))
    print("    perf record -F 200 -g -p beside it: RMS z %.2f (%s); plumb/perf %.2f" % (pz, psh, z / pz if pz else 0))


def bursty():
    global status
    runs = 2 if QUICK else 3
    for how in ("attach", "launch"):
        for name, load in (("quiet", Quiet), ("loaded", Burner)):
            ratios, bad = [], 0
            with load():
                for _ in range(runs):
                    ticks, cpu, rc, _ = bursty_run(PLUMB, TARGETS, how, 4, ("--backend", "perf_event"))
                    r = ticks / (cpu / 0.005) if cpu > 0 else 0
                    ratios.append(r)
                    bad += rc != 0 or abs(r - 1) >= 0.15
            perf = ""
            if how == "attach":
                with load():
                    n, cpu = bursty_perf(TARGETS, 4)
                perf = "; perf -e cpu-clock -c 5000000 -p: %.3f" % (n / (cpu / 0.005) if cpu else 0)
            status |= 1 if bad else 0
            print("bursty %s %s: samples / (CPU x rate) %s  [%s]%s" % (
                how, name, " ".join("%.3f" % r for r in ratios), "ok" if not bad else "FAILED", perf))


def matrix():
    runs, secs = (2, 2) if QUICK else (3, 3)
    cases = [
        ("perf_event", "attach", ("--unwind", "dwarf"), False),
        ("perf_event", "attach", ("--unwind", "fp", "--rate", "100"), False),
        ("perf_event", "launch", ("--unwind", "dwarf", "--rate", "100"), False),
        ("perf_event", "launch", ("--unwind", "fp"), False),
        ("perf_event", "attach", ("--unwind", "fp", "--mode", "wall"), False),
        ("inprocess", "launch", ("--unwind", "dwarf"), True),
        ("inprocess", "launch", ("--unwind", "fp", "--rate", "100"), False),
        ("ptrace", "attach", ("--unwind", "fp"), False),
        ("ptrace", "attach", ("--unwind", "dwarf", "--rate", "100"), True),
    ]
    for backend, how, opts, nofp in cases:
        for name, load in (("quiet", Quiet), ("loaded", Burner)):
            if "wall" in opts and load is Burner:
                continue  # wall time under load is not the CPU split: waiting for a CPU counts too
            try:
                z, sh = rounds_rms(how, ("--backend", backend) + opts, load, runs, secs, nofp=nofp)
                print("matrix %-10s %-6s %-28s %-6s RMS z %.2f (%s)" % (backend, how, " ".join(opts), name, z, sh))
            except AssertionError as e:
                print("matrix %-10s %-6s %-28s %-6s error: %s" % (backend, how, " ".join(opts), name, e))


def own_cpu(plumb, args):
    """CPU seconds (user + system) of plumb itself and its sampling thread, recording a launched command."""
    env = dict(os.environ, PLUMB_DEBUG="1", PLUMB_SYMBOL_CACHE="0")
    t0 = os.times()
    subprocess.run([plumb, "record", *args], env=env, capture_output=True, timeout=300)
    t1 = os.times()
    return (t1.children_user - t0.children_user) + (t1.children_system - t0.children_system)


def cost():
    prev = os.environ.get("PREV_PLUMB")
    split3 = os.path.join(TARGETS, "split3")
    for unwind in ("fp", "dwarf"):
        args = ["--rate", "1000", "--unwind", unwind, "-o", "/tmp/plumb-bench-truth.folded", "--", split3, "-n", "400"]
        mine = sorted(own_cpu(PLUMB, args) for _ in range(5))[2]
        line = "cost of the sampling thread, 1 kHz %s, launched split3: plumb %.3f s CPU" % (unwind, mine)
        if prev and os.access(prev, os.X_OK):
            theirs = sorted(own_cpu(prev, args) for _ in range(5))[2]
            line += "; PREV_PLUMB (fixed intervals) %.3f s; ratio %.2f" % (theirs, mine / theirs if theirs else 0)
        print(line)
    try:
        os.unlink("/tmp/plumb-bench-truth.folded")
    except OSError:
        pass


if __name__ == "__main__":
    t = time.monotonic()
    done_when()
    bursty()
    matrix()
    cost()
    print("truth matrix: %.0f s" % (time.monotonic() - t))
    sys.exit(status)
