#!/bin/bash
# The bench gate's false alarms and misses (issue 26), counted over PAIRS trials (default 20): each trial runs a
# suite of two CPU-bound cases and a sleeping one as a baseline, then unchanged with a burst of load (two busy
# loops started during the run and killed after it), with one CPU-bound case doing 25% more work, and with the
# sleeping case sleeping 25% longer; `compare --fail-on-regression` must pass the first and fail the other two
# naming that case, in at least 19 of 20. About 20 s a trial on a quiet two-core machine.
set -eu
BUILD=${BUILD:-build}
PAIRS=${PAIRS:-20}
[ -x "$BUILD/targets/benchwork" ] || { echo "$BUILD/targets/benchwork is not built (make check builds it); skipping"; exit 0; }
BUILD=$BUILD python3 tests/e2e/test_bench_gate.py --count "$PAIRS"
